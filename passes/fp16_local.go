package passes

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/verify"
)

// localError is the error a node makes on its own in the low precision:
// the node run in float16 (bfloat16) on its float32 inputs (rounded to
// the low type, as the converted model feeds it) against its float32
// output.
type localError struct {
	Index  int     // position in the topological order
	MaxAbs float64 // largest absolute difference over the node's float outputs
	// Ratio is MaxAbs over the tolerance at the output's scale,
	// atol + rtol * max |float32 output|; +Inf on a NaN or Inf mismatch.
	Ratio  float64
	Output string
}

// tolerance resolves the rtol/atol a Check compares with.
func (c *Check) tolerance(fallback string) (rtol, atol float64) {
	name := c.Profile
	if name == "" {
		name = fallback
	}
	if tol, err := verify.LookupProfile(name); err == nil {
		rtol, atol = tol.RTol, tol.ATol
	}
	if c.RTol != nil {
		rtol = *c.RTol
	}
	if c.ATol != nil {
		atol = *c.ATol
	}
	return rtol, atol
}

// convertible reports whether convertFloat would compute n (a node of
// the typed model m) in dt: not blocked, not kept, ai.onnx, no
// subgraphs, a float input, and a schema that admits dt.
func convertible(m *canonical.Model, n *canonical.Node, i int, dt canonical.DataType, block map[string]bool, keep map[int]bool,
	runs func(domain, op string, since int, param string, dt canonical.DataType) bool) bool {
	if keep[i] || block[n.OpType] || (n.Domain != "" && n.Domain != "ai.onnx") || len(n.Subgraphs()) > 0 {
		return false
	}
	for _, in := range n.Inputs {
		if elemType(in) == canonical.Float {
			return schemaAllowsLow(m, n, dt, func(v *canonical.Value) bool { return elemType(v) == canonical.Float }, runs)
		}
	}
	return false
}

// localErrors measures, on one sample, the error every node that would be
// converted makes on its own: m is run in float32 capturing every value
// these nodes read and write; then one model holding a copy of each such
// node, its inputs graph inputs fed with the captured float32 values, is
// converted (every node computes in dt, with Casts at the edges) and run;
// each node's outputs are compared with the captured ones. A node whose
// float32 inputs already overflow dt shows as diverging, as it does in
// the converted model. The result is sorted by Ratio, largest first.
func localErrors(ctx context.Context, m *canonical.Model, order []*canonical.Node, dt canonical.DataType,
	block map[string]bool, keep map[int]bool, runs func(domain, op string, since int, param string, dt canonical.DataType) bool, sample []*canonical.Tensor, backend string, rtol, atol float64) ([]localError, error) {
	var cand []int
	need := map[string]bool{}
	var names []string
	want := func(v *canonical.Value) {
		if v != nil && v.Name != "" && constOf(v) == nil && !need[v.Name] {
			need[v.Name] = true
			names = append(names, v.Name)
		}
	}
	for i, n := range order {
		if !convertible(m, n, i, dt, block, keep, runs) {
			continue
		}
		cand = append(cand, i)
		for _, in := range n.Inputs {
			want(in)
		}
		for _, o := range n.Outputs {
			if elemType(o) == canonical.Float || o != nil && o.Type == nil {
				want(o)
			}
		}
	}
	if len(cand) == 0 {
		return nil, nil
	}
	ex, err := executor.New(m, executor.Options{Backend: backend})
	if err != nil {
		return nil, err
	}
	caps, err := ex.RunCapture(ctx, sample, names)
	_ = ex.Close()
	if err != nil {
		return nil, err
	}

	iso := &canonical.Model{IRVersion: m.IRVersion, OpsetImports: append([]canonical.OpsetID(nil), m.OpsetImports...),
		Functions: m.Functions, Graph: canonical.NewGraph("isolated")}
	defer func() { _ = iso.Close() }()
	g := iso.Graph
	vals := map[string]*canonical.Value{}
	var feed []*canonical.Tensor
	valueOf := func(v *canonical.Value) (*canonical.Value, error) {
		if v == nil {
			return nil, nil
		}
		if w := vals[v.Name]; w != nil {
			return w, nil
		}
		var w *canonical.Value
		var err error
		if t := constOf(v); t != nil {
			w, err = g.AddInitializer(t)
		} else {
			t := caps[v.Name]
			if t == nil {
				return nil, fmt.Errorf("value %q was not captured", v.Name)
			}
			if w, err = g.AddInput(v.Name, canonical.TensorType(t.DataType, t.Dims)); err == nil {
				feed = append(feed, t)
			}
		}
		if err != nil {
			return nil, err
		}
		vals[v.Name] = w
		return w, nil
	}
	type probe struct {
		index int
		out   string // the output's name in m
	}
	var probes []probe
	// m's Namer: the copies' names clash with none of the inputs and
	// constants taken from m.
	e := build.On(g, canonical.NewNamer(m), "local")
	for _, i := range cand {
		n := order[i]
		ins := make([]*canonical.Value, len(n.Inputs))
		for j, in := range n.Inputs {
			if ins[j], err = valueOf(in); err != nil {
				return nil, err
			}
		}
		outs := e.Copy(n, ins)
		if err := e.Err(); err != nil {
			return nil, err
		}
		for j, o := range n.Outputs {
			t := caps[nameOf(o)]
			if o == nil || t == nil || t.DataType != canonical.Float {
				continue
			}
			co := outs[j]
			co.Type = canonical.TensorType(canonical.Float, t.Dims)
			g.Outputs = append(g.Outputs, co)
			probes = append(probes, probe{i, o.Name})
		}
	}
	low, _, err := convertFloat(iso, dt, nil, nil, true, runs)
	if err != nil {
		return nil, err
	}
	defer func() { _ = low.Close() }()
	lx, err := executor.New(low, executor.Options{Backend: backend})
	if err != nil {
		return nil, err
	}
	defer func() { _ = lx.Close() }()
	got, err := lx.Run(ctx, feed)
	if err != nil {
		return nil, err
	}
	by := map[int]*localError{}
	for p, pr := range probes {
		a, okA := floats(caps[pr.out])
		b, okB := floats(got[p])
		if !okA || !okB || len(a) != len(b) {
			return nil, fmt.Errorf("node %s: output %q not comparable", canonical.NodeLabel(order[pr.index], pr.index), pr.out)
		}
		scale, abs, bad := 0.0, 0.0, false
		for e := range a {
			fa, fb := a[e], b[e]
			if math.IsNaN(fa) || math.IsInf(fa, 0) {
				continue // the float32 model itself is not finite here
			}
			if math.IsNaN(fb) || math.IsInf(fb, 0) {
				bad = true
				continue
			}
			scale = math.Max(scale, math.Abs(fa))
			abs = math.Max(abs, math.Abs(fa-fb))
		}
		ratio := abs / (atol + rtol*scale)
		if bad {
			ratio = math.Inf(1)
		}
		le := by[pr.index]
		if le == nil {
			le = &localError{Index: pr.index, Ratio: -1}
			by[pr.index] = le
		}
		if ratio > le.Ratio {
			le.Ratio, le.MaxAbs, le.Output = ratio, abs, pr.out
		}
	}
	out := make([]localError, 0, len(by))
	for _, le := range by {
		out = append(out, *le)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Ratio != out[j].Ratio {
			return out[i].Ratio > out[j].Ratio
		}
		return out[i].Index < out[j].Index
	})
	return out, nil
}

func nameOf(v *canonical.Value) string {
	if v == nil {
		return ""
	}
	return v.Name
}

// pickLocal chooses the nodes of one fallback round from the local
// errors: every node whose own error exceeds the tolerance (Ratio > 1),
// and at least batch nodes, the worst first (a model whose error is the
// sum of many small ones needs several).
func pickLocal(errs []localError, batch int) []localError {
	k := 0
	for k < len(errs) && errs[k].Ratio > 1 {
		k++
	}
	k = min(max(k, batch), len(errs))
	return errs[:k]
}
