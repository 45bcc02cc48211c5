package canonical

import "fmt"

// Transpose returns a new tensor holding t's elements with their axes
// permuted as ONNX's Transpose does: output axis i is input axis perm[i].
// Sub-byte and string tensors are not supported.
func (t *Tensor) Transpose(perm []int) (*Tensor, error) {
	bits := ElemBits(t.DataType)
	if bits < 8 || t.DataType == String {
		return nil, fmt.Errorf("transpose %q: %s elements are not supported", t.Name, ElemTypeName(t.DataType))
	}
	raw, err := t.Bytes()
	if err != nil {
		return nil, fmt.Errorf("transpose %q: %w", t.Name, err)
	}
	out, dims, err := TransposeBytes(raw, bits/8, t.Dims, perm)
	if err != nil {
		return nil, fmt.Errorf("transpose %q: %w", t.Name, err)
	}
	return NewTensor(t.Name, t.DataType, dims, out), nil
}

// TransposeBytes permutes the axes of row-major data of the given dims,
// elements of size bytes each, as ONNX's Transpose does: output axis i is
// input axis perm[i]. It returns the new data and dims.
func TransposeBytes(data []byte, size int, dims []int64, perm []int) ([]byte, []int64, error) {
	return transpose(data, size, dims, perm)
}

// TransposeSlice is TransposeBytes for a slice of elements of any type.
func TransposeSlice[T any](data []T, dims []int64, perm []int) ([]T, []int64, error) {
	return transpose(data, 1, dims, perm)
}

// transpose is the one transpose of packed data in the project: elements
// are runs of size items of data.
func transpose[T any](data []T, size int, dims []int64, perm []int) ([]T, []int64, error) {
	rank := len(dims)
	if len(perm) != rank {
		return nil, nil, fmt.Errorf("permutation %v for rank %d", perm, rank)
	}
	seen := make([]bool, rank)
	for _, p := range perm {
		if p < 0 || p >= rank || seen[p] {
			return nil, nil, fmt.Errorf("%v is not a permutation of %d axes", perm, rank)
		}
		seen[p] = true
	}
	if size <= 0 {
		return nil, nil, fmt.Errorf("element size %d", size)
	}
	n, err := NumElements(dims)
	if err != nil {
		return nil, nil, err
	}
	if int64(len(data)) != n*int64(size) {
		return nil, nil, fmt.Errorf("%d items of data for %d elements of %d", len(data), n, size)
	}
	outDims := make([]int64, rank)
	for i, p := range perm {
		outDims[i] = dims[p]
	}
	// Input strides, in elements, read along the output's axis order.
	in := make([]int64, rank)
	s := int64(1)
	for i := rank - 1; i >= 0; i-- {
		in[i] = s
		s *= dims[i]
	}
	stride := make([]int64, rank)
	for i, p := range perm {
		stride[i] = in[p]
	}
	es := int64(size)
	out := make([]T, len(data))
	idx := make([]int64, rank)
	for o := int64(0); o < n; o++ {
		var src int64
		for i := range idx {
			src += idx[i] * stride[i]
		}
		copy(out[o*es:(o+1)*es], data[src*es:(src+1)*es])
		for i := rank - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < outDims[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out, outDims, nil
}
