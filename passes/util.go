package passes

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
)

// constOf returns the tensor of v when v is a constant the graph cannot
// override: an initializer that is not also a graph input.
func constOf(v *canonical.Value) *canonical.Tensor {
	if v == nil || v.Const == nil {
		return nil
	}
	g := v.Graph()
	if g != nil {
		for _, in := range g.Inputs {
			if in == v {
				return nil
			}
		}
	}
	return v.Const
}

// isGraphOutput reports whether v is an output of its graph.
func isGraphOutput(v *canonical.Value) bool {
	g := v.Graph()
	if g == nil {
		return false
	}
	for _, o := range g.Outputs {
		if o == v {
			return true
		}
	}
	return false
}

// singleUse reports whether v has exactly one consumer and is not a graph
// output (so the producer can be fused into it).
func singleUse(v *canonical.Value) bool {
	return v != nil && len(v.Uses()) == 1 && !isGraphOutput(v)
}

// consumer returns the only node using v, or nil.
func consumer(v *canonical.Value) *canonical.Node {
	if !singleUse(v) {
		return nil
	}
	return v.Uses()[0].Node
}

// producer returns the node computing v (nil for inputs and constants).
func producer(v *canonical.Value) *canonical.Node {
	if v == nil {
		return nil
	}
	n, _ := v.Producer()
	return n
}

// isOp reports whether n is the ai.onnx op named op.
func isOp(n *canonical.Node, op string) bool {
	return n != nil && n.OpType == op && (n.Domain == "" || n.Domain == "ai.onnx")
}

// floats returns a float tensor's elements as float64 (nil, false when t is
// not a float32/float64/float16 tensor).
// floatReader returns the i-th value of a float tensor and its count: a
// float32 tensor read from its bytes in place (a mapped external weight
// is not copied; through floats a 2 GiB weight took 4 GiB more), any
// other float type through floats.
func floatReader(t *canonical.Tensor) (func(int) float64, int, error) {
	if t != nil && t.DataType == canonical.Float {
		raw, err := t.Bytes()
		if err != nil {
			return nil, 0, err
		}
		return func(i int) float64 {
			return float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
		}, len(raw) / 4, nil
	}
	f, ok := floats(t)
	if !ok {
		return nil, 0, errors.New("not float")
	}
	return func(i int) float64 { return f[i] }, len(f), nil
}

func floats(t *canonical.Tensor) ([]float64, bool) {
	if t == nil {
		return nil, false
	}
	switch t.DataType {
	case canonical.Float, canonical.Double, canonical.Float16:
	default:
		return nil, false
	}
	f, err := t.Float64s()
	if err != nil {
		return nil, false
	}
	return f, true
}

// scalarValue returns the single value of a one-element float or int
// tensor.
func scalarValue(t *canonical.Tensor) (float64, bool) {
	if t == nil {
		return 0, false
	}
	n, err := t.NumElements()
	if err != nil || n != 1 {
		return 0, false
	}
	f, err := t.Float64s()
	if err != nil || len(f) != 1 {
		return 0, false
	}
	return f[0], true
}

// allEqual reports whether every element of t equals x (t may broadcast).
func allEqual(t *canonical.Tensor, x float64) bool {
	if t == nil || t.DataType == canonical.String {
		return false
	}
	f, err := t.Float64s()
	if err != nil || len(f) == 0 {
		return false
	}
	for _, v := range f {
		if v != x {
			return false
		}
	}
	return true
}

// removeNodes deletes nodes from their graph, after their outputs' uses
// were replaced.
func removeNodes(g *canonical.Graph, nodes ...*canonical.Node) {
	for _, n := range nodes {
		g.RemoveNode(n)
	}
}

// replaceValue makes every use of old (and graph outputs listing it) use
// nw. When old is a graph output, nw takes old's name so the model's
// interface keeps its names: the caller then must remove old's producer.
func replaceValue(g *canonical.Graph, old, nw *canonical.Value) error {
	out := isGraphOutput(old)
	g.ReplaceAllUsesWith(old, nw)
	if out && nw.Name != old.Name {
		name := old.Name
		typ := old.Type
		// Free the name: old is about to lose its producer.
		if err := g.RenameValue(old, name+"__replaced"); err != nil {
			return err
		}
		if err := g.RenameValue(nw, name); err != nil {
			return err
		}
		if nw.Type == nil {
			nw.Type = typ
		}
	}
	return nil
}

// tensorDims returns the static dims of v's declared type, or false.
func tensorDims(v *canonical.Value) ([]int64, canonical.DataType, bool) {
	if v == nil {
		return nil, 0, false
	}
	if t := constOf(v); t != nil {
		return t.Dims, t.DataType, true
	}
	if v.Type == nil {
		return nil, 0, false
	}
	dt, dims, has, ok := canonical.TensorTypeOf(v.Type)
	if !ok || !has {
		return nil, dt, false
	}
	out := make([]int64, len(dims))
	for i, d := range dims {
		if !d.Known {
			return nil, dt, false
		}
		out[i] = d.Value
	}
	return out, dt, true
}

// elemType returns v's element type, or Undefined.
func elemType(v *canonical.Value) canonical.DataType {
	if v == nil {
		return canonical.Undefined
	}
	if v.Const != nil {
		return v.Const.DataType
	}
	if v.Type == nil {
		return canonical.Undefined
	}
	dt, _, _, ok := canonical.TensorTypeOf(v.Type)
	if !ok {
		return canonical.Undefined
	}
	return dt
}

func sameDims(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
