package executor

import (
	"errors"
	"fmt"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/onnxconv/onnxconv/canonical"
)

// errUseHost is returned by a lowering for a case GoMLX cannot express:
// the builder then materializes the inputs and runs the host kernel.
var errUseHost = errors.New("executor: case runs on the host")

// bcastShape is the numpy broadcast of shapes.
func bcastShape(shs ...[]int) ([]int, error) {
	r := 0
	for _, s := range shs {
		if len(s) > r {
			r = len(s)
		}
	}
	out := make([]int, r)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shs {
		off := r - len(s)
		for i, d := range s {
			o := out[off+i]
			switch {
			case d == o || d == 1:
			case o == 1:
				out[off+i] = d
			default:
				return nil, fmt.Errorf("shapes %v cannot be broadcast together", shs)
			}
		}
	}
	return out, nil
}

// bcastIdx maps each flat index of out to the flat index of in (in
// broadcast to out).
func bcastIdx(out, in []int) []int {
	n := numel(out)
	idx := make([]int, n)
	r := len(out)
	off := r - len(in)
	// strides of in in out coordinates (0 where broadcast)
	st := make([]int, r)
	s := 1
	for i := len(in) - 1; i >= 0; i-- {
		if in[i] != 1 {
			st[off+i] = s
		}
		s *= in[i]
	}
	coord := make([]int, r)
	cur := 0
	for k := 0; k < n; k++ {
		idx[k] = cur
		for d := r - 1; d >= 0; d-- {
			coord[d]++
			cur += st[d]
			if coord[d] < out[d] {
				break
			}
			cur -= st[d] * coord[d]
			coord[d] = 0
		}
	}
	return idx
}

// bcastNodes broadcasts GoMLX nodes numpy-style.
func bcastNodes(xs ...*graph.Node) []*graph.Node {
	shs := make([][]int, len(xs))
	for i, x := range xs {
		shs[i] = x.Shape().Dimensions
	}
	out, err := bcastShape(shs...)
	if err != nil {
		panic(err)
	}
	res := make([]*graph.Node, len(xs))
	for i, x := range xs {
		res[i] = bcastTo(x, out)
	}
	return res
}

func bcastTo(x *graph.Node, out []int) *graph.Node {
	d := x.Shape().Dimensions
	if shapeEq(d, out) {
		return x
	}
	if len(d) < len(out) {
		nd := make([]int, len(out))
		for i := range nd {
			nd[i] = 1
		}
		copy(nd[len(out)-len(d):], d)
		x = graph.Reshape(x, nd...)
	}
	return graph.BroadcastToDims(x, out...)
}

func normAxis(a int64, rank int) (int, error) {
	if a < 0 {
		a += int64(rank)
	}
	if a < 0 || a >= int64(rank) && !(rank == 0 && a == 0) {
		return 0, fmt.Errorf("axis %d out of range for rank %d", a, rank)
	}
	return int(a), nil
}

func gdt(dt canonical.DataType) dtypes.DType {
	d, ok := gomlxDType(dt)
	if !ok {
		panic(fmt.Errorf("type %v cannot be computed with GoMLX", dt))
	}
	return d
}

// scalarLike makes a scalar constant of x's dtype.
func scalarLike(x *graph.Node, v float64) *graph.Node {
	return graph.Scalar(x.Graph(), x.DType(), v)
}

// take gathers elements of a typed slice by flat index.
func takeAny(data any, idx []int) any {
	switch s := data.(type) {
	case []float32:
		return takeT(s, idx)
	case []float64:
		return takeT(s, idx)
	case []int8:
		return takeT(s, idx)
	case []int16:
		return takeT(s, idx)
	case []int32:
		return takeT(s, idx)
	case []int64:
		return takeT(s, idx)
	case []uint8:
		return takeT(s, idx)
	case []uint16:
		return takeT(s, idx)
	case []uint32:
		return takeT(s, idx)
	case []uint64:
		return takeT(s, idx)
	case []bool:
		return takeT(s, idx)
	case []string:
		return takeT(s, idx)
	case []complex64:
		return takeT(s, idx)
	case []complex128:
		return takeT(s, idx)
	}
	panic(fmt.Errorf("unsupported storage %T", data))
}

func takeT[T any](s []T, idx []int) []T {
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = s[j]
	}
	return out
}

// hTake builds a tensor of shape from the elements of h at idx.
func hTake(h *htensor, shape []int, idx []int) *htensor {
	return &htensor{dt: h.dt, shape: append([]int{}, shape...), data: takeAny(h.data, idx)}
}

// concatAny appends typed slices of the same type.
func concatAny(parts []any) any {
	switch parts[0].(type) {
	case []float32:
		return concatT[float32](parts)
	case []float64:
		return concatT[float64](parts)
	case []int8:
		return concatT[int8](parts)
	case []int16:
		return concatT[int16](parts)
	case []int32:
		return concatT[int32](parts)
	case []int64:
		return concatT[int64](parts)
	case []uint8:
		return concatT[uint8](parts)
	case []uint16:
		return concatT[uint16](parts)
	case []uint32:
		return concatT[uint32](parts)
	case []uint64:
		return concatT[uint64](parts)
	case []bool:
		return concatT[bool](parts)
	case []string:
		return concatT[string](parts)
	case []complex64:
		return concatT[complex64](parts)
	case []complex128:
		return concatT[complex128](parts)
	}
	panic(fmt.Errorf("unsupported storage %T", parts[0]))
}

func concatT[T any](parts []any) []T {
	var out []T
	for _, p := range parts {
		out = append(out, p.([]T)...)
	}
	if out == nil {
		out = []T{}
	}
	return out
}

func strides(shape []int) []int {
	st := make([]int, len(shape))
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = s
		s *= shape[i]
	}
	return st
}

// forEachIndex calls f with each multi-index of shape in row-major order.
func forEachIndex(shape []int, f func(idx []int)) {
	n := numel(shape)
	idx := make([]int, len(shape))
	for k := 0; k < n; k++ {
		f(idx)
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// transposeIdx returns the flat source indices of x transposed by perm.
func transposeIdx(shape []int, perm []int) ([]int, []int) {
	out := make([]int, len(perm))
	for i, p := range perm {
		out[i] = shape[p]
	}
	st := strides(shape)
	idx := make([]int, 0, numel(out))
	forEachIndex(out, func(o []int) {
		k := 0
		for i, p := range perm {
			k += o[i] * st[p]
		}
		idx = append(idx, k)
	})
	return out, idx
}

func toInts(v []int64) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

func clampI(v, lo, hi int64) int64 {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

func shapesOf(x *graph.Node, dt dtypes.DType) shapes.Shape {
	return shapes.Make(dt, x.Shape().Dimensions...)
}

// maxHostElems bounds tensors that kernels allocate from sizes read out of
// the model or its inputs (ConstantOfShape, Range, Expand, Tile, Pad,
// Resize), so that a hostile size fails instead of exhausting memory.
const maxHostElems = 1 << 31

func checkSize(shape []int) error {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return fmt.Errorf("negative dimension in shape %v", shape)
		}
		if d != 0 && n > maxHostElems/d {
			return fmt.Errorf("shape %v has more than %d elements", shape, maxHostElems)
		}
		n *= d
	}
	return nil
}
