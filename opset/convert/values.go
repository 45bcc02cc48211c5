package convert

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
)

// constValue returns the tensor v always holds: an initializer that is not
// also a graph input (which a caller could override), or the output of a
// Constant node holding a tensor. It returns nil otherwise.
func constValue(v *canonical.Value) *canonical.Tensor {
	if v == nil {
		return nil
	}
	if v.Const != nil {
		for _, in := range v.Graph().Inputs {
			if in == v {
				return nil
			}
		}
		return v.Const
	}
	p, _ := v.Producer()
	if p == nil || p.OpType != "Constant" || (p.Domain != "" && p.Domain != "ai.onnx") {
		return nil
	}
	if a := p.Attr("value"); a != nil && a.T != nil {
		return a.T
	}
	if a := p.Attr("value_int"); a != nil {
		return canonical.Int64Tensor(v.Name, nil, []int64{a.I})
	}
	if a := p.Attr("value_ints"); a != nil {
		return canonical.Int64Tensor(v.Name, []int64{int64(len(a.Ints))}, a.Ints)
	}
	if a := p.Attr("value_float"); a != nil {
		return canonical.NumberTensor(v.Name, canonical.Float, nil, []float64{float64(a.F)})
	}
	if a := p.Attr("value_floats"); a != nil {
		return canonical.NumberTensor(v.Name, canonical.Float, []int64{int64(len(a.Floats))}, toF64(a.Floats))
	}
	return nil
}

func toF64(fs []float32) []float64 {
	out := make([]float64, len(fs))
	for i, f := range fs {
		out[i] = float64(f)
	}
	return out
}

// tensorInts reads an integer tensor.
func tensorInts(t *canonical.Tensor) ([]int64, error) {
	b, err := t.Bytes()
	if err != nil {
		return nil, err
	}
	var out []int64
	switch t.DataType {
	case canonical.Int64:
		for i := 0; i+8 <= len(b); i += 8 {
			out = append(out, int64(binary.LittleEndian.Uint64(b[i:])))
		}
	case canonical.Int32:
		for i := 0; i+4 <= len(b); i += 4 {
			out = append(out, int64(int32(binary.LittleEndian.Uint32(b[i:]))))
		}
	default:
		return nil, fmt.Errorf("tensor %q is %v, not an integer type", t.Name, t.DataType)
	}
	return out, nil
}

// tensorFloats reads a floating-point tensor.
func tensorFloats(t *canonical.Tensor) ([]float64, error) {
	b, err := t.Bytes()
	if err != nil {
		return nil, err
	}
	var out []float64
	switch t.DataType {
	case canonical.Float:
		for i := 0; i+4 <= len(b); i += 4 {
			out = append(out, float64(math.Float32frombits(binary.LittleEndian.Uint32(b[i:]))))
		}
	case canonical.Double:
		for i := 0; i+8 <= len(b); i += 8 {
			out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(b[i:])))
		}
	case canonical.Float16:
		for i := 0; i+2 <= len(b); i += 2 {
			out = append(out, canonical.Float16ToFloat64(binary.LittleEndian.Uint16(b[i:])))
		}
	case canonical.BFloat16:
		for i := 0; i+2 <= len(b); i += 2 {
			out = append(out, float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[i:]))<<16)))
		}
	default:
		return nil, fmt.Errorf("tensor %q is %v, not a floating-point type", t.Name, t.DataType)
	}
	return out, nil
}

// elemType returns the element type of v, or Undefined when unknown.
func elemType(v *canonical.Value) canonical.DataType {
	if v == nil {
		return canonical.Undefined
	}
	if v.Const != nil {
		return v.Const.DataType
	}
	dt, _, _, ok := canonical.TensorTypeOf(v.Type)
	if !ok {
		return canonical.Undefined
	}
	return dt
}

// rankOf returns the rank of v when known.
func rankOf(v *canonical.Value) (int, bool) {
	if v == nil {
		return 0, false
	}
	if v.Const != nil {
		return len(v.Const.Dims), true
	}
	_, dims, hasShape, ok := canonical.TensorTypeOf(v.Type)
	if !ok || !hasShape {
		return 0, false
	}
	return len(dims), true
}

// shapeOf returns the dims of v when all are known.
func shapeOf(v *canonical.Value) ([]int64, bool) {
	dims, ok := rankedShapeOf(v)
	if !ok || slices.Contains(dims, -1) {
		return nil, false
	}
	return dims, true
}

// rankedShapeOf returns v's dims with -1 for each one that is not known,
// or false when its rank is not known.
func rankedShapeOf(v *canonical.Value) ([]int64, bool) {
	if v == nil {
		return nil, false
	}
	if v.Const != nil {
		return v.Const.Dims, true
	}
	_, dims, hasShape, ok := canonical.TensorTypeOf(v.Type)
	if !ok || !hasShape {
		return nil, false
	}
	out := make([]int64, len(dims))
	for i, d := range dims {
		out[i] = -1
		if d.Known {
			out[i] = d.Value
		}
	}
	return out, true
}

// constant adds an initializer named after base holding t to the node's
// graph and returns its value.
func (sc *stepCtx) constant(base string, t *canonical.Tensor) (*canonical.Value, error) {
	prefix := sc.n.Name
	if prefix == "" {
		prefix = sc.n.OpType
	}
	t.Name = sc.c.names.Fresh(prefix + "_" + base)
	v, err := sc.g.AddInitializer(t)
	if err != nil {
		return nil, fmt.Errorf("adding constant %q: %w", t.Name, err)
	}
	return v, nil
}

// dropIfUnused removes an initializer or Constant node that the conversion
// left without consumers.
func (sc *stepCtx) dropIfUnused(v *canonical.Value) {
	if v == nil || len(v.Uses()) > 0 || isGraphOutput(v.Graph(), v) {
		return
	}
	g := v.Graph()
	if v.Const != nil {
		for _, in := range g.Inputs {
			if in == v {
				return
			}
		}
		// Removed in one pass at the end (a list scan per removal would be
		// quadratic on large models).
		if sc.c.dropped[g] == nil {
			sc.c.dropped[g] = map[*canonical.Value]bool{}
		}
		sc.c.dropped[g][v] = true
		return
	}
	if p, _ := v.Producer(); p != nil && p.OpType == "Constant" {
		g.RemoveNode(p)
	}
}
