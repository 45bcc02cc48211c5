package tflite

import (
	flatbuffers "github.com/google/flatbuffers/go"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// sparseCases are sparse constant weights (DENSIFY into FULLY_CONNECTED):
// CSR on the inner dimension, and 1x4 blocks.
func sparseCases() []oneOp {
	var cs []oneOp
	// A [4, 8] weight, rows: the nonzero columns of each.
	cols := [][]int32{{0, 3, 7}, {}, {1, 2, 3, 4, 5}, {6}}
	vals := randFloats(77, 9, -1, 1)
	csr := func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		segs := []int32{0}
		var idx []int32
		for _, r := range cols {
			idx = append(idx, r...)
			segs = append(segs, int32(len(idx)))
		}
		return sparsity(b, []int32{0, 1}, nil, []dimMeta{{dense: 4}, {segs: segs, idx: idx}})
	}
	// The same weight stored as 1x4 blocks: block columns {0, 1} per row.
	blocks := [][]int32{{0, 1}, {}, {0, 1}, {1}}
	var bvals []float32
	dense := make([]float32, 32)
	k := 0
	for r, cs := range cols {
		for _, c := range cs {
			dense[r*8+int(c)] = vals[k]
			k++
		}
	}
	for r, bs := range blocks {
		for _, bc := range bs {
			bvals = append(bvals, dense[r*8+int(bc)*4:r*8+int(bc)*4+4]...)
		}
	}
	blk := func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		segs := []int32{0}
		var idx []int32
		for _, r := range blocks {
			idx = append(idx, r...)
			segs = append(segs, int32(len(idx)))
		}
		return sparsity(b, []int32{0, 1, 2}, []int32{1}, []dimMeta{{dense: 4}, {segs: segs, idx: idx}, {dense: 4}})
	}
	for _, c := range []struct {
		name string
		sp   func(*flatbuffers.Builder) flatbuffers.UOffsetT
		v    []float32
	}{{"csr", csr, vals}, {"block_1x4", blk, bvals}} {
		var m mspec
		x := m.add(tspec{name: "x", typ: fb.TensorTypeFLOAT32, shape: []int32{2, 8}})
		w := m.add(tspec{name: "w_sparse", typ: fb.TensorTypeFLOAT32, shape: []int32{4, 8}, data: f32Bytes(c.v...), sparsity: c.sp})
		wd := m.add(tspec{name: "w", typ: fb.TensorTypeFLOAT32, shape: []int32{4, 8}})
		bias := m.add(constF([]int32{4}, 0.1, 0.2, 0.3, 0.4))
		m.tensors[bias].name = "bias"
		y := m.add(tspec{name: "y", typ: fb.TensorTypeFLOAT32, shape: []int32{2, 4}})
		ot, o := fcOpts(fb.ActivationFunctionTypeNONE, false)
		m.ops = []opspec{{code: fb.BuiltinOperatorDENSIFY, inputs: []int32{w}, outputs: []int32{wd}},
			{code: fb.BuiltinOperatorFULLY_CONNECTED, inputs: []int32{x, wd, bias}, outputs: []int32{y}, optType: ot, opts: o}}
		m.inputs, m.outputs = []int32{x}, []int32{y}
		cs = append(cs, oneOp{name: "densify/f32/" + c.name, m: m, lo: -2, hi: 2})
	}
	return cs
}

type dimMeta struct {
	dense     int32
	segs, idx []int32
}

func sparsity(b *flatbuffers.Builder, order, blockMap []int32, dims []dimMeta) flatbuffers.UOffsetT {
	ivec := func(v []int32) flatbuffers.UOffsetT {
		fb.Int32VectorStartValuesVector(b, len(v))
		for i := len(v) - 1; i >= 0; i-- {
			b.PrependInt32(v[i])
		}
		vv := b.EndVector(len(v))
		fb.Int32VectorStart(b)
		fb.Int32VectorAddValues(b, vv)
		return fb.Int32VectorEnd(b)
	}
	var mds []flatbuffers.UOffsetT
	for _, d := range dims {
		var s, i flatbuffers.UOffsetT
		if d.segs != nil {
			s, i = ivec(d.segs), ivec(d.idx)
		}
		fb.DimensionMetadataStart(b)
		if d.segs == nil {
			fb.DimensionMetadataAddFormat(b, fb.DimensionTypeDENSE)
			fb.DimensionMetadataAddDenseSize(b, d.dense)
		} else {
			fb.DimensionMetadataAddFormat(b, fb.DimensionTypeSPARSE_CSR)
			fb.DimensionMetadataAddArraySegmentsType(b, fb.SparseIndexVectorInt32Vector)
			fb.DimensionMetadataAddArraySegments(b, s)
			fb.DimensionMetadataAddArrayIndicesType(b, fb.SparseIndexVectorInt32Vector)
			fb.DimensionMetadataAddArrayIndices(b, i)
		}
		mds = append(mds, fb.DimensionMetadataEnd(b))
	}
	fb.SparsityParametersStartDimMetadataVector(b, len(mds))
	for i := len(mds) - 1; i >= 0; i-- {
		b.PrependUOffsetT(mds[i])
	}
	mv := b.EndVector(len(mds))
	fb.SparsityParametersStartTraversalOrderVector(b, len(order))
	for i := len(order) - 1; i >= 0; i-- {
		b.PrependInt32(order[i])
	}
	ov := b.EndVector(len(order))
	var bv flatbuffers.UOffsetT
	if blockMap != nil {
		fb.SparsityParametersStartBlockMapVector(b, len(blockMap))
		for i := len(blockMap) - 1; i >= 0; i-- {
			b.PrependInt32(blockMap[i])
		}
		bv = b.EndVector(len(blockMap))
	}
	fb.SparsityParametersStart(b)
	fb.SparsityParametersAddTraversalOrder(b, ov)
	if blockMap != nil {
		fb.SparsityParametersAddBlockMap(b, bv)
	}
	fb.SparsityParametersAddDimMetadata(b, mv)
	return fb.SparsityParametersEnd(b)
}
