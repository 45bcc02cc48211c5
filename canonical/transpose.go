package canonical

import "fmt"

// Transpose returns a new tensor holding t's elements with their axes
// permuted as ONNX's Transpose does: output axis i is input axis perm[i].
// Sub-byte and string tensors are not supported.
func (t *Tensor) Transpose(perm []int) (*Tensor, error) {
	rank := len(t.Dims)
	if len(perm) != rank {
		return nil, fmt.Errorf("transpose %q: permutation %v for rank %d", t.Name, perm, rank)
	}
	seen := make([]bool, rank)
	for _, p := range perm {
		if p < 0 || p >= rank || seen[p] {
			return nil, fmt.Errorf("transpose %q: %v is not a permutation of %d axes", t.Name, perm, rank)
		}
		seen[p] = true
	}
	bits := ElemBits(t.DataType)
	if bits < 8 || t.DataType == String {
		return nil, fmt.Errorf("transpose %q: %s elements are not supported", t.Name, ElemTypeName(t.DataType))
	}
	size := bits / 8
	raw, err := t.Bytes()
	if err != nil {
		return nil, fmt.Errorf("transpose %q: %w", t.Name, err)
	}
	n, err := t.NumElements()
	if err != nil {
		return nil, fmt.Errorf("transpose %q: %w", t.Name, err)
	}
	if int64(len(raw)) != n*int64(size) {
		return nil, fmt.Errorf("transpose %q: %d bytes for %d elements of %d bytes", t.Name, len(raw), n, size)
	}
	dims := make([]int64, rank)
	for i, p := range perm {
		dims[i] = t.Dims[p]
	}
	// Input strides, in elements, read along the output's axis order.
	in := make([]int64, rank)
	s := int64(1)
	for i := rank - 1; i >= 0; i-- {
		in[i] = s
		s *= t.Dims[i]
	}
	stride := make([]int64, rank)
	for i, p := range perm {
		stride[i] = in[p]
	}
	out := make([]byte, len(raw))
	idx := make([]int64, rank)
	for o := int64(0); o < n; o++ {
		var src int64
		for i := range idx {
			src += idx[i] * stride[i]
		}
		copy(out[o*int64(size):(o+1)*int64(size)], raw[src*int64(size):(src+1)*int64(size)])
		for i := rank - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < dims[i] {
				break
			}
			idx[i] = 0
		}
	}
	return NewTensor(t.Name, t.DataType, dims, out), nil
}
