package tflite

import (
	"fmt"

	flatbuffers "github.com/google/flatbuffers/go"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// densify expands a sparse constant tensor (TFLite's sparsity parameters:
// traversal order, block map, per-level DENSE or SPARSE_CSR metadata) into
// its dense bytes, as TFLite's FormatConverter (and the DENSIFY op) does:
// the levels are walked in traversal order, a DENSE level over its size, a
// CSR level over the indices of its segment; each value lands at the
// original index, block levels scaled into their dimension.
func densify(sp *fb.SparsityParameters, shape []int64, es int, data []byte) ([]byte, error) {
	n := len(shape)
	levels := sp.TraversalOrderLength()
	if levels < n || levels != sp.DimMetadataLength() || levels-n != sp.BlockMapLength() {
		return nil, fmt.Errorf("sparsity: %d traversal levels, %d metadata, %d block dims for rank %d", levels, sp.DimMetadataLength(), sp.BlockMapLength(), n)
	}
	total := int64(1)
	for _, d := range shape {
		if d < 0 || d > 1<<31 {
			return nil, fmt.Errorf("sparsity: shape %v", shape)
		}
		total *= d
		if total*int64(es) > 1<<31 {
			return nil, fmt.Errorf("sparsity: dense size of %v is over 2 GiB", shape)
		}
	}
	order := make([]int, levels)
	seen := make([]bool, levels)
	for i := range order {
		order[i] = int(sp.TraversalOrder(i))
		if order[i] < 0 || order[i] >= levels || seen[order[i]] {
			return nil, fmt.Errorf("sparsity: traversal order is not a permutation of 0..%d", levels-1)
		}
		seen[order[i]] = true
	}
	type level struct {
		dense         bool
		size          int64
		segs, indices []int64
	}
	ls := make([]level, levels)
	var md fb.DimensionMetadata
	for i := range ls {
		if !sp.DimMetadata(&md, i) {
			return nil, fmt.Errorf("sparsity: dim_metadata %d missing", i)
		}
		switch md.Format() {
		case fb.DimensionTypeDENSE:
			ls[i] = level{dense: true, size: int64(md.DenseSize())}
			if ls[i].size < 0 {
				return nil, fmt.Errorf("sparsity: level %d dense size %d", i, ls[i].size)
			}
		case fb.DimensionTypeSPARSE_CSR:
			var err error
			if ls[i].segs, err = indexVector(&md, md.ArraySegmentsType(), md.ArraySegments); err != nil {
				return nil, fmt.Errorf("sparsity: level %d segments: %w", i, err)
			}
			if ls[i].indices, err = indexVector(&md, md.ArrayIndicesType(), md.ArrayIndices); err != nil {
				return nil, fmt.Errorf("sparsity: level %d indices: %w", i, err)
			}
		default:
			return nil, fmt.Errorf("sparsity: level %d format %d", i, md.Format())
		}
	}
	blockMap := make([]int, levels-n)
	blockSize := make([]int64, levels-n)
	for j := range blockMap {
		blockMap[j] = int(sp.BlockMap(j))
		if blockMap[j] < 0 || blockMap[j] >= n {
			return nil, fmt.Errorf("sparsity: block map %d out of range", blockMap[j])
		}
		for l, o := range order {
			if o == n+j {
				if !ls[l].dense {
					return nil, fmt.Errorf("sparsity: block dimension %d is not dense", j)
				}
				blockSize[j] = ls[l].size
			}
		}
	}
	out := make([]byte, total*int64(es))
	idx := make([]int64, levels)
	orig := make([]int64, n)
	src := 0
	var walk func(l int, prev int64) error
	walk = func(l int, prev int64) error {
		if l == levels {
			for i := 0; i < n; i++ {
				orig[order[i]] = idx[i]
			}
			for i := n; i < levels; i++ {
				b := order[i] - n
				if b < 0 {
					return fmt.Errorf("sparsity: original dimension %d after a block level", order[i])
				}
				d := blockMap[b]
				orig[d] = orig[d]*blockSize[b] + idx[i]
			}
			flat := int64(0)
			for i, d := range shape {
				if orig[i] < 0 || orig[i] >= d {
					return fmt.Errorf("sparsity: index %v outside %v", orig, shape)
				}
				flat = flat*d + orig[i]
			}
			if (src+1)*es > len(data) {
				return fmt.Errorf("sparsity: the buffer holds %d values, the metadata address more", len(data)/es)
			}
			copy(out[flat*int64(es):], data[src*es:(src+1)*es])
			src++
			return nil
		}
		lv := ls[l]
		if lv.dense {
			for i := int64(0); i < lv.size; i++ {
				idx[l] = i
				if err := walk(l+1, prev*lv.size+i); err != nil {
					return err
				}
			}
			return nil
		}
		if prev < 0 || prev+1 >= int64(len(lv.segs)) {
			return fmt.Errorf("sparsity: segment %d out of range (%d segments)", prev, len(lv.segs)-1)
		}
		lo, hi := lv.segs[prev], lv.segs[prev+1]
		if lo < 0 || hi < lo || hi > int64(len(lv.indices)) {
			return fmt.Errorf("sparsity: segment [%d, %d) outside %d indices", lo, hi, len(lv.indices))
		}
		for i := lo; i < hi; i++ {
			idx[l] = lv.indices[i]
			if err := walk(l+1, i); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(0, 0); err != nil {
		return nil, err
	}
	if src*es != len(data) {
		return nil, fmt.Errorf("sparsity: the metadata address %d values, the buffer holds %d", src, len(data)/es)
	}
	return out, nil
}

// indexVector reads a sparse index vector union (int32, uint16, uint8).
func indexVector(md *fb.DimensionMetadata, typ fb.SparseIndexVector, get func(*flatbuffers.Table) bool) ([]int64, error) {
	var tab flatbuffers.Table
	if !get(&tab) {
		return nil, fmt.Errorf("missing")
	}
	var out []int64
	switch typ {
	case fb.SparseIndexVectorInt32Vector:
		var v fb.Int32Vector
		v.Init(tab.Bytes, tab.Pos)
		for i := 0; i < v.ValuesLength(); i++ {
			out = append(out, int64(v.Values(i)))
		}
	case fb.SparseIndexVectorUint16Vector:
		var v fb.Uint16Vector
		v.Init(tab.Bytes, tab.Pos)
		for i := 0; i < v.ValuesLength(); i++ {
			out = append(out, int64(v.Values(i)))
		}
	case fb.SparseIndexVectorUint8Vector:
		var v fb.Uint8Vector
		v.Init(tab.Bytes, tab.Pos)
		for _, b := range v.ValuesBytes() {
			out = append(out, int64(b))
		}
	default:
		return nil, fmt.Errorf("index vector type %d", typ)
	}
	return out, nil
}
