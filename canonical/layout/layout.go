// Package layout holds the axis permutations between channels-last
// layouts (TensorFlow, Keras, TFLite: [N, spatial..., C]) and ONNX's
// channels-first ones ([N, C, spatial...]), the relayouts of convolution
// kernels between the formats' orders and ONNX's, and the moves of
// constants and axis attributes through them. Data itself is permuted by
// canonical's one transpose (canonical.TransposeBytes, TransposeSlice,
// Tensor.Transpose).
//
// A permutation p is read as ONNX's Transpose reads perm: axis i of the
// result is axis p[i] of the source. Each format decides where a value
// goes channels-first; this package only says how.
package layout

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
)

// Identity is the permutation that keeps r axes in place.
func Identity(r int) []int {
	p := make([]int, r)
	for i := range p {
		p[i] = i
	}
	return p
}

// ToFirst takes a channels-last value of rank r ([N, s..., C]) to
// channels-first ([N, C, s...]): [0, r-1, 1, ..., r-2]. For r = 4 it is
// NHWC → NCHW, [0, 3, 1, 2]. It is also the relayout of a kernel
// [O, k..., I] (TFLite's OHWI) to ONNX's [O, I, k...].
func ToFirst(r int) []int {
	if r < 2 {
		return Identity(r)
	}
	p := make([]int, 0, r)
	p = append(p, 0, r-1)
	for i := 1; i < r-1; i++ {
		p = append(p, i)
	}
	return p
}

// ToLast is the inverse of ToFirst: channels-first [N, C, s...] to
// channels-last [N, s..., C], [0, 2, ..., r-1, 1]. For r = 4 it is
// NCHW → NHWC, [0, 2, 3, 1]; for kernels, ONNX's [O, I, k...] to OHWI.
func ToLast(r int) []int {
	if r < 2 {
		return Identity(r)
	}
	p := make([]int, 0, r)
	p = append(p, 0)
	for i := 2; i < r; i++ {
		p = append(p, i)
	}
	return append(p, 1)
}

// FromHWIO relayouts a kernel of rank r in TensorFlow's and Keras's order
// [k..., I, O] to ONNX's Conv order [O, I, k...]: [r-1, r-2, 0, ..., r-3].
// The same permutation takes a transposed convolution's [k..., O, I] to
// ONNX ConvTranspose's [I, O, k...].
func FromHWIO(r int) []int {
	p := make([]int, 0, r)
	p = append(p, r-1, r-2)
	for i := 0; i < r-2; i++ {
		p = append(p, i)
	}
	return p
}

// ToHWIO is the inverse of FromHWIO: [O, I, k...] to [k..., I, O].
func ToHWIO(r int) []int { return Inverse(FromHWIO(r)) }

// FromIHWO relayouts a kernel of rank r whose last axis is the output
// ([I, k..., O], TFLite's depthwise [1, kh, kw, C·M]) to ONNX's
// [O, I, k...]: [r-1, 0, ..., r-2]. The same permutation takes TFLite's
// TRANSPOSE_CONV filter [O, kh, kw, I] to ConvTranspose's [I, O, kh, kw].
func FromIHWO(r int) []int {
	p := make([]int, 0, r)
	p = append(p, r-1)
	for i := 0; i < r-1; i++ {
		p = append(p, i)
	}
	return p
}

// ToIHWO is the inverse of FromIHWO: [O, I, k...] to [I, k..., O].
func ToIHWO(r int) []int { return Inverse(FromIHWO(r)) }

// DepthwiseHWIO gives the dims [k..., 1, C·M] under which a depthwise
// kernel [k..., C, M] (TensorFlow's and Keras's order) is an ordinary
// HWIO kernel of C·M outputs over one input channel per group; the data is
// the same, so FromHWIO then gives ONNX's [C·M, 1, k...].
func DepthwiseHWIO(dims []int64) ([]int64, error) {
	r := len(dims)
	if r < 3 {
		return nil, fmt.Errorf("depthwise kernel of shape %v: want rank 3 or more", dims)
	}
	out := append([]int64(nil), dims[:r-2]...)
	return append(out, 1, dims[r-2]*dims[r-1]), nil
}

// Inverse returns the permutation that undoes p, or nil when p is not a
// permutation of len(p) axes (which a transpose then refuses).
func Inverse(p []int) []int {
	inv := make([]int, len(p))
	seen := make([]bool, len(p))
	for i, v := range p {
		if v < 0 || v >= len(p) || seen[v] {
			return nil
		}
		seen[v] = true
		inv[v] = i
	}
	return inv
}

// Apply returns s permuted by p: out[i] = s[p[i]] (the dims, or any per-axis
// list, of a value transposed by p). A nil p gives a copy of s.
func Apply[T any](s []T, p []int) []T {
	if p == nil {
		return append([]T(nil), s...)
	}
	out := make([]T, len(p))
	for i, v := range p {
		out[i] = s[v]
	}
	return out
}

// Axis returns where axis a of the source stands after the permutation p
// (the i with p[i] == a): an axis attribute moved through a relayout. A nil
// p keeps a; an axis p does not hold gives -1.
func Axis(p []int, a int) int {
	if p == nil {
		return a
	}
	for i, v := range p {
		if v == a {
			return i
		}
	}
	return -1
}

// Int64s is p as the int64s of a Transpose's perm attribute.
func Int64s(p []int) []int64 {
	out := make([]int64, len(p))
	for i, v := range p {
		out[i] = int64(v)
	}
	return out
}

// Broadcast gives the dims of a constant aligned to rank r the way
// broadcasting aligns it (leading ones), so that it can be moved into
// channels-first next to activations of rank r.
func Broadcast(dims []int64, r int) ([]int64, error) {
	if len(dims) > r {
		return nil, fmt.Errorf("a constant of rank %d does not broadcast against rank %d", len(dims), r)
	}
	out := make([]int64, r-len(dims), r)
	for i := range out {
		out[i] = 1
	}
	return append(out, dims...), nil
}

// ConstToFirst moves a channels-last constant (row-major data of dims,
// elements of size bytes) next to channels-first activations of rank r:
// aligned to rank r as broadcasting does, then permuted by ToFirst(r). It
// returns the new data and dims.
func ConstToFirst(data []byte, size int, dims []int64, r int) ([]byte, []int64, error) {
	d, err := Broadcast(dims, r)
	if err != nil {
		return nil, nil, err
	}
	return canonical.TransposeBytes(data, size, d, ToFirst(r))
}
