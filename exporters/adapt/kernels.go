package adapt

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	"github.com/onnxconv/onnxconv/canonical/infer"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/exporters/profiles"
	"github.com/onnxconv/onnxconv/onnxspec"
)

// kernelMiss is one type variable of one node that the target's CPU
// kernels do not implement with the node's element type.
type kernelMiss struct {
	g       *canonical.Graph
	path    string
	idx     int
	n       *canonical.Node
	since   int
	param   string // type variable
	got     canonical.DataType
	allowed profiles.TypeSet
}

func (k kernelMiss) problem(p *profiles.Profile) string {
	return fmt.Sprintf("%s's CPU kernels of %s-%d implement %s as %s, not %s", p.Name, k.n.OpType, k.since, k.param, k.allowed, typeName(k.got))
}

// kernelMisses lists the nodes of the main graph (and its subgraphs) whose
// element types the CPU kernels of their operator version do not
// implement. Values without a known element type are skipped.
func kernelMisses(m *canonical.Model, k *profiles.CPUKernels) []kernelMiss {
	var out []kernelMiss
	walk(m.Graph, "main", func(g *canonical.Graph, path string, idx int, n *canonical.Node) {
		dom := n.Domain
		if dom == "ai.onnx" {
			dom = ""
		}
		if dom != "" && dom != canonical.MLDomain {
			return
		}
		s, ok := onnxspec.Lookup(dom, n.OpType, int(m.Opset(dom)))
		if !ok || s.Deprecated {
			return
		}
		seen := map[string]bool{}
		check := func(params []onnxspec.FormalParameter, vals []*canonical.Value) {
			for i, v := range vals {
				if v == nil || len(params) == 0 {
					continue
				}
				fp := params[min(i, len(params)-1)]
				if i >= len(params) && fp.Option != onnxspec.Variadic {
					continue
				}
				if seen[fp.TypeStr] {
					continue
				}
				dt, ok := elemType(v)
				if !ok || dt == canonical.Undefined {
					continue
				}
				yes, allowed := k.Implements(dom, n.OpType, s.SinceVersion, fp.TypeStr, dt)
				if yes {
					continue
				}
				seen[fp.TypeStr] = true
				out = append(out, kernelMiss{g: g, path: path, idx: idx, n: n, since: s.SinceVersion, param: fp.TypeStr, got: dt, allowed: allowed})
			}
		}
		check(s.Inputs, n.Inputs)
		check(s.Outputs, n.Outputs)
	})
	return out
}

// Operators for which computing in a wider type and casting the result
// back gives what the narrow kernel would: selections and comparisons
// (the values are only moved or compared; any type that holds the narrow
// one exactly will do) and integer arithmetic (with a wider integer type,
// the cast back wraps as the narrow arithmetic does).
var (
	selectOps = map[string]bool{
		"Where": true, "Max": true, "Min": true, "Clip": true, "Relu": true, "Sign": true,
		"Equal": true, "Less": true, "Greater": true, "LessOrEqual": true, "GreaterOrEqual": true,
		"ReduceMax": true, "ReduceMin": true, "ArgMax": true, "ArgMin": true, "MaxPool": true, "TopK": true,
		"Pad": true, "Concat": true, "Gather": true, "GatherElements": true, "GatherND": true, "Transpose": true,
		"Reshape": true, "Expand": true, "Tile": true, "Slice": true, "Split": true, "Squeeze": true,
		"Unsqueeze": true, "Flatten": true, "Identity": true, "ScatterElements": true, "ScatterND": true,
		"Trilu": true, "DepthToSpace": true, "SpaceToDepth": true, "ReverseSequence": true, "NonZero": true,
		"Compress": true, "OneHot": true,
	}
	intArithOps = map[string]bool{
		"Add": true, "Sub": true, "Mul": true, "Neg": true, "Abs": true, "Sum": true, "Div": true,
		"ReduceSum": true, "CumSum": true, "MatMul": true,
	}
	// typedByAttr are operators whose element types an attribute sets:
	// they are never computed in another type.
	typedByAttr = map[string]bool{
		"Cast": true, "CastLike": true, "ConstantOfShape": true, "EyeLike": true, "RandomNormal": true,
		"RandomUniform": true, "RandomNormalLike": true, "RandomUniformLike": true, "Multinomial": true,
		"Bernoulli": true, "QuantizeLinear": true, "DequantizeLinear": true,
	}
)

// isInt reports whether dt is an integer type (bool excluded).
func isInt(dt canonical.DataType) bool {
	switch dt {
	case canonical.Int8, canonical.Uint8, canonical.Int16, canonical.Uint16, canonical.Int32, canonical.Uint32, canonical.Int64, canonical.Uint64:
		return true
	}
	return false
}

// wideFor returns the types that hold every value of dt exactly, in the
// order a lowering prefers them.
func wideFor(dt canonical.DataType) []canonical.DataType {
	switch dt {
	case canonical.Bool, canonical.Int8, canonical.Uint8, canonical.Int16, canonical.Uint16:
		return []canonical.DataType{canonical.Int32, canonical.Int64, canonical.Float, canonical.Double}
	case canonical.Int32, canonical.Uint32:
		return []canonical.DataType{canonical.Int64, canonical.Double}
	case canonical.Float16, canonical.BFloat16:
		return []canonical.DataType{canonical.Float, canonical.Double}
	}
	return nil
}

// widen picks the type the node of miss is computed in, or says why none
// fits.
func widen(miss kernelMiss) (canonical.DataType, string) {
	op := miss.n.OpType
	float16 := miss.got == canonical.Float16 || miss.got == canonical.BFloat16
	switch {
	case typedByAttr[op]:
		return 0, "its element types are set by an attribute"
	case !selectOps[op] && !intArithOps[op] && !float16:
		return 0, fmt.Sprintf("onnxconv computes %s in another type only for selections, comparisons and integer arithmetic", op)
	}
	for _, w := range wideFor(miss.got) {
		if !miss.allowed.Has(w) {
			continue
		}
		if intArithOps[op] && isInt(miss.got) && !isInt(w) {
			continue // float arithmetic does not wrap like the integer kind
		}
		return w, ""
	}
	return 0, fmt.Sprintf("no type the kernel implements holds every %s value exactly", typeName(miss.got))
}

// retype returns a copy of tp with element type dt (nil stays nil).
func retype(tp *onnxpb.TypeProto, dt canonical.DataType) *onnxpb.TypeProto {
	if tp == nil || tp.GetTensorType() == nil {
		return canonical.TensorType(dt, nil)
	}
	c := proto.Clone(tp).(*onnxpb.TypeProto)
	c.GetTensorType().ElemType = new(int32(dt))
	return c
}

// castAround computes node miss.n in type w: Cast nodes turn its inputs
// of type variable miss.param into w and its outputs of that variable back
// into miss.got.
func castAround(m *canonical.Model, miss kernelMiss, w canonical.DataType, names *canonical.Namer) error {
	g, n := miss.g, miss.n
	s, _ := onnxspec.Lookup(normDom(n.Domain), n.OpType, int(m.Opset(normDom(n.Domain))))
	bound := func(params []onnxspec.FormalParameter, i int) bool {
		if len(params) == 0 {
			return false
		}
		fp := params[min(i, len(params)-1)]
		if i >= len(params) && fp.Option != onnxspec.Variadic {
			return false
		}
		return fp.TypeStr == miss.param
	}
	label := n.Name
	if label == "" {
		label = n.OpType
	}
	before := build.On(g, names, label+"_to_"+typeName(w))
	for i, in := range n.Inputs {
		if in == nil || !bound(s.Inputs, i) {
			continue
		}
		c := before.Op("Cast", []*canonical.Value{in}, canonical.IntAttr("to", int64(w)))
		if err := before.Err(); err != nil {
			return fmt.Errorf("adding a Cast before %s %q: %w", n.OpType, n.Name, err)
		}
		c.Type = retype(in.Type, w)
		if in.Type == nil && in.Const != nil {
			c.Type = canonical.TensorType(w, in.Const.Dims)
		}
		n.SetInput(i, c)
	}
	after := build.On(g, names, label+"_back_to_"+typeName(miss.got))
	for j, o := range n.Outputs {
		if o == nil || !bound(s.Outputs, j) {
			continue
		}
		orig := o.Name
		origType := o.Type
		if err := g.RenameValue(o, names.Fresh(orig+"_"+typeName(w))); err != nil {
			return fmt.Errorf("renaming output %q of %s %q: %w", orig, n.OpType, n.Name, err)
		}
		o.Type = retype(origType, w)
		c := after.OpTo("Cast", []*canonical.Value{o}, orig, canonical.IntAttr("to", int64(miss.got)))
		if err := after.Err(); err != nil {
			return fmt.Errorf("adding a Cast after %s %q: %w", n.OpType, n.Name, err)
		}
		c.Type = origType
		g.ReplaceAllUsesWith(o, c)
		after.Added[len(after.Added)-1].SetInput(0, o)
	}
	g.MoveNodes(before.Added, n)
	var next *canonical.Node
	for i, x := range g.Nodes {
		if x == n && i+1 < len(g.Nodes) {
			next = g.Nodes[i+1]
		}
	}
	if next != nil && len(after.Added) > 0 && next == after.Added[0] {
		return nil // already right after n (AddNode appended them)
	}
	g.MoveNodes(after.Added, next)
	return nil
}

func normDom(d string) string {
	if d == "ai.onnx" {
		return ""
	}
	return d
}

// fitKernels makes every node run on the target's CPU kernels: a node
// whose element type the kernel of its operator version lacks is computed
// in a wider type the kernel implements, between Casts, when that gives
// the same values (see widen); the others are violations naming the node,
// the operator, the type and the target (Adapt's *UnsupportedError, whose
// entries are the one unsupported-op shape). Element types come from the
// model's declarations and from shape inference (which adds no
// value_info).
func fitKernels(r *Report, m *canonical.Model, p *profiles.Profile, names *canonical.Namer) {
	k, err := p.CPUKernels()
	if err != nil {
		r.Notes = append(r.Notes, fmt.Sprintf("CPU kernel types not checked: %v", err))
		return
	}
	if k == nil {
		return
	}
	if _, err := infer.Infer(m, infer.Options{NoValueInfo: true}); err != nil {
		r.Notes = append(r.Notes, fmt.Sprintf("CPU kernel types checked on declared types only (shape inference failed: %v)", err))
	}
	var left []kernelMiss
	var why []string
	for range 4 { // a lowering can expose another miss on the same node
		misses := kernelMisses(m, k)
		left, why = nil, nil
		if len(misses) == 0 {
			break
		}
		changed := false
		for _, miss := range misses {
			w, reason := widen(miss)
			if reason == "" {
				if err := castAround(m, miss, w, names); err != nil {
					reason = err.Error()
				}
			}
			if reason != "" {
				left = append(left, miss)
				why = append(why, reason)
				continue
			}
			changed = true
			r.Actions = append(r.Actions, Action{Graph: miss.path, Node: miss.n.Name, OpType: miss.n.OpType, Index: miss.idx,
				What: fmt.Sprintf("computed in %s between Casts (%s)", typeName(w), miss.problem(p))})
		}
		if !changed {
			break
		}
	}
	for i, miss := range left {
		r.Violations = append(r.Violations, Violation{Graph: miss.path, Node: miss.n.Name, OpType: miss.n.OpType, Domain: miss.n.Domain, Index: miss.idx,
			Problem: miss.problem(p), Fix: "compute it in a type the kernel implements before export (" + why[i] + ")"})
	}
}
