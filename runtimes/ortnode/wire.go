package ortnode

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/onnxspec"
)

// MaxOpset is the highest ai.onnx opset ONNX Runtime 1.30 loads: it refuses
// models stamped with a later, unreleased one.
const MaxOpset = 26

// wireTypes are the element types onnxruntime-node cannot pass at a graph
// input or output, each with the type it crosses as instead: every value
// of the first is exactly a value of the second, so that a Cast inside the
// graph and the conversion in Go (wireIn, wireOut) lose nothing. Not
// float4e2m1: ONNX Runtime 1.30 has no Cast kernel for it.
var wireTypes = map[canonical.DataType]canonical.DataType{
	canonical.BFloat16:       canonical.Float,
	canonical.Float8E4M3FN:   canonical.Float,
	canonical.Float8E4M3FNUZ: canonical.Float,
	canonical.Float8E5M2:     canonical.Float,
	canonical.Float8E5M2FNUZ: canonical.Float,
	canonical.Float8E8M0:     canonical.Float,
	canonical.Int4:           canonical.Int8,
	canonical.Uint4:          canonical.Uint8,
	canonical.Int2:           canonical.Int8,
	canonical.Uint2:          canonical.Uint8,
}

// OpsetError is a model above MaxOpset with an op that changed after it:
// ONNX Runtime 1.30 refuses opsets it calls "under development", and a copy
// stamped MaxOpset would compute another version of the op.
type OpsetError struct{ Opset int64 }

func (e *OpsetError) Error() string {
	return fmt.Sprintf("the model is ai.onnx opset %d and %s %s loads opsets up to %d (an op of the model changed after %d); convert it with --target onnxruntime-1.30 to run it there",
		e.Opset, Package, PackageVersion, MaxOpset, MaxOpset)
}

// RuntimeLimit: the refusal is the runtime's, not the model's
// (runtimes.Limited).
func (e *OpsetError) RuntimeLimit() bool { return true }

// portable is what ONNX Runtime under Node is given instead of a model it
// would refuse as it is: a copy (Path) stamped with MaxOpset when the
// model's later opset changes none of its ops, and whose graph inputs and
// outputs of wireTypes cross as their wire type through Cast nodes. Types
// maps each such input or output to its own element type.
type portable struct {
	Path  string
	Types map[string]canonical.DataType
	Notes []string
}

// makePortable writes the portable copy of the model at path into dir, or
// returns nil when ONNX Runtime takes the model as it is (or when it cannot
// be read here: ONNX Runtime then says why itself).
func makePortable(path, dir string) (*portable, error) {
	m, err := canonical.Load(path, canonical.LoadOptions{SkipDataChecks: true})
	if err != nil {
		return nil, nil
	}
	defer m.Close()
	for _, vs := range [][]*canonical.Value{m.Graph.Inputs, m.Graph.Outputs} {
		for _, v := range vs {
			if v.Type.GetTensorType() == nil && v.Type != nil {
				return nil, &RunError{Model: path, Kind: "values", Detail: fmt.Sprintf("graph input or output %q is not a tensor: run the model with RunValues", v.Name)}
			}
		}
	}
	p := &portable{Types: map[string]canonical.DataType{}}
	if v := m.Opset(""); v > MaxOpset && !sameOpsAt(m, MaxOpset) {
		return nil, &OpsetError{Opset: v}
	} else if v > MaxOpset {
		m.SetOpset("", MaxOpset)
		p.Notes = append(p.Notes, fmt.Sprintf("ONNX Runtime ran a copy stamped opset %d: its ops are the same there as at %d", MaxOpset, v))
	}
	g := m.Graph
	for i, v := range g.Inputs {
		dt, dims, _, ok := canonical.TensorTypeOf(v.Type)
		w, wire := wireTypes[dt]
		if !ok || !wire || v.IsConst() {
			continue
		}
		name := v.Name
		if err := g.RenameValue(v, "ortnode_wire_in/"+name); err != nil {
			return nil, err
		}
		in, err := g.NewValue(name, canonical.TensorTypeDims(w, dims))
		if err != nil {
			return nil, err
		}
		n, err := g.AddNode("ortnode_wire_in/"+name, "", "Cast", []*canonical.Value{in}, []string{"ortnode_wire_cast/" + name}, canonical.IntAttr("to", int64(dt)))
		if err != nil {
			return nil, err
		}
		n.Outputs[0].Type = v.Type
		g.ReplaceAllUsesWith(v, n.Outputs[0])
		g.Inputs[i] = in
		if len(g.Nodes) > 1 {
			g.MoveNodes([]*canonical.Node{n}, g.Nodes[0])
		}
		p.Types[name] = dt
	}
	for i, v := range g.Outputs {
		dt, dims, _, ok := canonical.TensorTypeOf(v.Type)
		w, wire := wireTypes[dt]
		if !ok || !wire {
			continue
		}
		name := v.Name
		if err := g.RenameValue(v, "ortnode_wire_out/"+name); err != nil {
			return nil, err
		}
		n, err := g.AddNode("ortnode_wire_out/"+name, "", "Cast", []*canonical.Value{v}, []string{name}, canonical.IntAttr("to", int64(w)))
		if err != nil {
			return nil, err
		}
		n.Outputs[0].Type = canonical.TensorTypeDims(w, dims)
		g.Outputs[i] = n.Outputs[0]
		p.Types[name] = dt
	}
	if len(p.Notes) == 0 && len(p.Types) == 0 {
		return nil, nil
	}
	if len(p.Types) > 0 {
		p.Notes = append(p.Notes, "graph inputs and outputs of types onnxruntime-node cannot pass crossed as float32, int8 or uint8 through Cast nodes")
	}
	p.Path = filepath.Join(dir, "model.onnx")
	if err := canonical.Save(p.Path, m, canonical.SaveOptions{ExternalData: hasExternal(m)}); err != nil {
		return nil, fmt.Errorf("writing the copy ONNX Runtime runs: %w", err)
	}
	return p, nil
}

// sameOpsAt tells whether every ai.onnx node of m has the same schema at
// opset v as at the model's own opset.
func sameOpsAt(m *canonical.Model, v int) bool {
	at := int(m.Opset(""))
	same := true
	_ = canonical.Walk(m.Graph, func(_ *canonical.Graph, _ string, _ int, n *canonical.Node) error {
		if n.Domain != "" && n.Domain != "ai.onnx" {
			return nil
		}
		now, ok := onnxspec.Lookup("", n.OpType, at)
		old, okOld := onnxspec.Lookup("", n.OpType, v)
		if !ok || !okOld || now.SinceVersion != old.SinceVersion {
			same = false
		}
		return nil
	})
	return same && len(m.Functions) == 0
}

// prepackLimit is the size of an external-data initializer from which
// ONNX Runtime is asked not to prepack weights (session.disable_prepacking):
// while packing, its session holds such a weight twice — 6.2 GB at load
// for a 3 GiB weight, 3.2 GB without — for a gain only repeated runs see.
const prepackLimit = 256 << 20

// largeExternal tells whether the model at path has an initializer of at
// least prepackLimit bytes in external data (read lazily: no weight is
// loaded to tell).
func largeExternal(path string) bool {
	m, err := canonical.Load(path, canonical.LoadOptions{SkipDataChecks: true})
	if err != nil {
		return false
	}
	defer m.Close()
	for _, v := range m.Graph.Initializers {
		if v.Const == nil || !v.Const.IsExternal() {
			continue
		}
		if n, err := v.Const.ByteSize(); err == nil && n >= prepackLimit {
			return true
		}
	}
	return false
}

// hasExternal tells whether an initializer of the main graph is read from
// external data (the copy then keeps its weights outside too).
func hasExternal(m *canonical.Model) bool {
	for _, v := range m.Graph.Initializers {
		if v.Const != nil && v.Const.IsExternal() {
			return true
		}
	}
	return false
}

// wireIn is t as it crosses to ONNX Runtime: the same values in its wire
// type when t's type is one of wireTypes, else t.
func wireIn(t *canonical.Tensor) (*canonical.Tensor, error) {
	w, ok := wireTypes[t.DataType]
	if !ok {
		return t, nil
	}
	vals, err := t.Float64s()
	if err != nil {
		return nil, err
	}
	return canonical.NumberTensor(t.Name, w, t.Dims, vals), nil
}

// wireOut is the output t (of a wire type) back in its own type dt: every
// value is exactly one of dt's (ONNX Runtime cast it from dt).
func wireOut(t *canonical.Tensor, dt canonical.DataType) (*canonical.Tensor, error) {
	vals, err := t.Float64s()
	if err != nil {
		return nil, err
	}
	switch dt {
	case canonical.BFloat16:
		return canonical.NumberTensor(t.Name, dt, t.Dims, vals), nil
	case canonical.Int4, canonical.Uint4, canonical.Int2, canonical.Uint2:
		bits := canonical.ElemBits(dt)
		raw := make([]byte, (len(vals)*bits+7)/8)
		for i, v := range vals {
			c := uint8(int64(v)) & (1<<bits - 1)
			raw[i*bits/8] |= c << (uint(i*bits) % 8)
		}
		return canonical.NewTensor(t.Name, dt, t.Dims, raw), nil
	}
	codes := float8Codes(dt)
	raw := make([]byte, 0, len(vals))
	for i, v := range vals {
		c, ok := codes[math.Float64bits(v)]
		if math.IsNaN(v) {
			c, ok = codes[math.Float64bits(math.NaN())], true
		}
		if !ok {
			return nil, fmt.Errorf("element %d (%g) is not a %s value", i, v, dt)
		}
		raw = append(raw, c)
	}
	return canonical.NewTensor(t.Name, dt, t.Dims, raw), nil
}

// float8Codes maps each value of the float8 type dt (by its float64 bits;
// NaN by math.NaN's) to its code, the first code when two give the same
// value.
func float8Codes(dt canonical.DataType) map[uint64]uint8 {
	codes := make(map[uint64]uint8, 256)
	for c := range 256 {
		v := canonical.Float8ToFloat64(dt, uint8(c))
		if math.IsNaN(v) {
			v = math.NaN()
		}
		if _, dup := codes[math.Float64bits(v)]; !dup {
			codes[math.Float64bits(v)] = uint8(c)
		}
	}
	return codes
}

// tempDir is a folder for a portable copy.
func tempDir() (string, error) { return os.MkdirTemp("", "onnxconv-ortnode-*") }
