package tflite

import (
	flatbuffers "github.com/google/flatbuffers/go"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// builtinCases are the builtins of the second wave (issue 40): math and
// bitwise ops, segment reductions, matrix diagonals, the elementwise
// StableHLO builtins LiteRT.js runs.
func builtinCases() []oneOp {
	var cs []oneOp
	add := func(name string, m mspec, lo, hi float64) {
		cs = append(cs, oneOp{name: name, m: m, lo: lo, hi: hi, exact: true})
	}
	i32 := func(s ...int32) tspec { return tspec{typ: fb.TensorTypeINT32, shape: s} }
	u8 := func(s ...int32) tspec { return tspec{typ: fb.TensorTypeUINT8, shape: s} }
	ot, o := noOpts()
	one := func(code fb.BuiltinOperator, ins []tspec, outs ...tspec) mspec {
		return single(code, ot, o, ins, outs...)
	}

	add("atan2/f32", one(fb.BuiltinOperatorATAN2, []tspec{fshape(3, 4), fshape(3, 4)}, fshape(3, 4)), -2, 2)
	add("right_shift/int32/shift_const", one(fb.BuiltinOperatorRIGHT_SHIFT, []tspec{i32(2, 6), constI32([]int32{6}, 0, 1, 2, 3, 31, 40)}, i32(2, 6)), 0, 0)
	add("right_shift/int32/negative_values", one(fb.BuiltinOperatorRIGHT_SHIFT, []tspec{constI32([]int32{6}, -7, -1, 5, 100, -100000, -2147483648), i32(6)}, i32(6)), 0, 0)
	add("right_shift/uint8", one(fb.BuiltinOperatorRIGHT_SHIFT, []tspec{u8(2, 5), {typ: fb.TensorTypeUINT8, shape: []int32{5}, data: []byte{0, 1, 3, 7, 9}}}, u8(2, 5)), 0, 0)
	add("bitwise_xor/int32", one(fb.BuiltinOperatorBITWISE_XOR, []tspec{i32(3, 4), constI32([]int32{4}, 5, -1, 0, 1<<30)}, i32(3, 4)), 0, 0)
	add("bitwise_xor/uint8", one(fb.BuiltinOperatorBITWISE_XOR, []tspec{u8(3, 4), u8(3, 4)}, u8(3, 4)), 0, 0)
	for _, b := range []struct {
		code fb.BuiltinOperator
		name string
	}{{fb.BuiltinOperatorSTABLEHLO_ADD, "stablehlo_add"}, {fb.BuiltinOperatorSTABLEHLO_MULTIPLY, "stablehlo_multiply"},
		{fb.BuiltinOperatorSTABLEHLO_MAXIMUM, "stablehlo_maximum"}, {fb.BuiltinOperatorSTABLEHLO_MINIMUM, "stablehlo_minimum"}} {
		add(b.name+"/f32", one(b.code, []tspec{fshape(2, 3, 4), fshape(2, 3, 4)}, fshape(2, 3, 4)), -3, 3)
		add(b.name+"/int32", one(b.code, []tspec{i32(2, 5), constI32([]int32{2, 5}, -3, 0, 7, 1, 2, 9, -9, 4, 3, 100)}, i32(2, 5)), 0, 0)
	}
	cs = append(cs, oneOp{name: "stablehlo_and/bool", m: boolIO(fb.BuiltinOperatorSTABLEHLO_AND, 3, 4), lo: -2, hi: 2, also: []fb.BuiltinOperator{fb.BuiltinOperatorSTABLEHLO_AND}})
	add("stablehlo_and/int32", one(fb.BuiltinOperatorSTABLEHLO_AND, []tspec{i32(5), constI32([]int32{5}, 3, -1, 6, 2, 1)}, i32(5)), 0, 0)
	add("stablehlo_shift_left/int32", one(fb.BuiltinOperatorSTABLEHLO_SHIFT_LEFT, []tspec{i32(2, 5), constI32([]int32{2, 5}, 0, 1, 2, 3, 30, 4, 5, 6, 7, 8)}, i32(2, 5)), 0, 0)
	add("bucketize/f32", single(fb.BuiltinOperatorBUCKETIZE, fb.BuiltinOptionsBucketizeOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		bounds := []float32{-1, 0, 0.5, 1.5}
		fb.BucketizeOptionsStartBoundariesVector(b, len(bounds))
		for i := len(bounds) - 1; i >= 0; i-- {
			b.PrependFloat32(bounds[i])
		}
		v := b.EndVector(len(bounds))
		fb.BucketizeOptionsStart(b)
		fb.BucketizeOptionsAddBoundaries(b, v)
		return fb.BucketizeOptionsEnd(b)
	}, []tspec{fshape(4, 5)}, i32(4, 5)), -2, 2)
	for _, fq := range []struct {
		name     string
		lo, hi   float32
		bits     int32
		narrowed bool
	}{{"8bit", -1.3, 1.7, 8, false}, {"8bit_asymmetric", -0.6, 1.1, 8, false}, {"16bit", -1, 1, 16, false}} {
		add("fake_quant/f32/"+fq.name, single(fb.BuiltinOperatorFAKE_QUANT, fb.BuiltinOptionsFakeQuantOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.FakeQuantOptionsStart(b)
			fb.FakeQuantOptionsAddMin(b, fq.lo)
			fb.FakeQuantOptionsAddMax(b, fq.hi)
			fb.FakeQuantOptionsAddNumBits(b, fq.bits)
			fb.FakeQuantOptionsAddNarrowRange(b, fq.narrowed)
			return fb.FakeQuantOptionsEnd(b)
		}, []tspec{fshape(4, 25)}, fshape(4, 25)), -2, 2)
	}
	// Segment reductions: sorted ids (TFLite takes ids from 0 in steps of 0
	// or 1; the sum goes through an ADD: LiteRT.js does not write a
	// resized graph output); unsorted ids from the input (some segments
	// empty: their fill value) or fixed.
	seg := one(fb.BuiltinOperatorSEGMENT_SUM, []tspec{fshape(6, 3), constI32([]int32{6}, 0, 0, 1, 2, 2, 3)}, fshape(4, 3))
	seg.outputs = nil
	sum := seg.add(fshape(4, 3))
	seg.ops = append(seg.ops, opspec{code: fb.BuiltinOperatorADD, inputs: []int32{2, seg.add(constF([]int32{3}, 0, 0, 0))}, outputs: []int32{sum}})
	seg.outputs = []int32{sum}
	add("segment_sum/f32", seg, -2, 2)
	for _, u := range []struct {
		code fb.BuiltinOperator
		name string
	}{{fb.BuiltinOperatorUNSORTED_SEGMENT_SUM, "unsorted_segment_sum"}, {fb.BuiltinOperatorUNSORTED_SEGMENT_PROD, "unsorted_segment_prod"},
		{fb.BuiltinOperatorUNSORTED_SEGMENT_MAX, "unsorted_segment_max"}, {fb.BuiltinOperatorUNSORTED_SEGMENT_MIN, "unsorted_segment_min"}} {
		ids := constI32([]int32{2, 3}, 3, 0, 1, 0, 2, 3)
		add(u.name+"/f32", one(u.code, []tspec{fshape(2, 3, 4), ids, constI32(nil, 4)}, fshape(4, 4)), -2, 2)
		add(u.name+"/int32/empty_segment", one(u.code, []tspec{i32(6, 2), constI32([]int32{6}, 3, 0, 1, 0, 2, 3), constI32(nil, 5)}, i32(5, 2)), 0, 0)
		if u.code == fb.BuiltinOperatorUNSORTED_SEGMENT_SUM || u.code == fb.BuiltinOperatorUNSORTED_SEGMENT_PROD {
			add(u.name+"/f32/ids_input", one(u.code, []tspec{fshape(8, 3), i32(8), constI32(nil, 5)}, fshape(5, 3)), -2, 2)
		}
	}
	add("unique/int32", single(fb.BuiltinOperatorUNIQUE, fb.BuiltinOptionsUniqueOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.UniqueOptionsStart(b)
		fb.UniqueOptionsAddIdxOutType(b, fb.TensorTypeINT32)
		return fb.UniqueOptionsEnd(b)
	}, []tspec{i32(12)}, tspec{typ: fb.TensorTypeINT32, shape: []int32{12}, sig: []int32{-1}}, i32(12)), 0, 0)
	add("unique/f32", single(fb.BuiltinOperatorUNIQUE, fb.BuiltinOptionsUniqueOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.UniqueOptionsStart(b)
		fb.UniqueOptionsAddIdxOutType(b, fb.TensorTypeINT32)
		return fb.UniqueOptionsEnd(b)
	}, []tspec{constF([]int32{7}, 1.5, -2, 1.5, 0, 3, -2, 1.5)}, tspec{typ: fb.TensorTypeFLOAT32, shape: []int32{7}, sig: []int32{-1}}, i32(7)), 0, 0)
	add("matrix_diag/f32", one(fb.BuiltinOperatorMATRIX_DIAG, []tspec{fshape(2, 4)}, fshape(2, 4, 4)), -2, 2)
	add("matrix_set_diag/f32/wide", one(fb.BuiltinOperatorMATRIX_SET_DIAG, []tspec{fshape(2, 3, 4), fshape(2, 3)}, fshape(2, 3, 4)), -2, 2)
	add("matrix_set_diag/f32/tall", one(fb.BuiltinOperatorMATRIX_SET_DIAG, []tspec{fshape(2, 4, 3), fshape(2, 3)}, fshape(2, 4, 3)), -2, 2)
	add("broadcast_args/int32", one(fb.BuiltinOperatorBROADCAST_ARGS, []tspec{i32(2), constI32([]int32{3}, 1, 1, 1)}, i32(3)), 0, 0)
	add("broadcast_args/int32/ones_give_way", one(fb.BuiltinOperatorBROADCAST_ARGS, []tspec{constI32([]int32{4}, 5, 1, 3, 1), i32(1)}, i32(4)), 0, 0)
	cs = append(cs, shapeBuiltinCases()...)
	return cs
}

// i64vec writes a vector of int64 in a flatbuffers options table.
func i64vec(b *flatbuffers.Builder, v []int64) flatbuffers.UOffsetT {
	b.StartVector(8, len(v), 8)
	for i := len(v) - 1; i >= 0; i-- {
		b.PrependInt64(v[i])
	}
	return b.EndVector(len(v))
}

// shapeBuiltinCases are the layout builtins of the second wave.
func shapeBuiltinCases() []oneOp {
	var cs []oneOp
	add := func(name string, m mspec, lo, hi float64) {
		cs = append(cs, oneOp{name: name, m: m, lo: lo, hi: hi, exact: true})
	}
	i32 := func(s ...int32) tspec { return tspec{typ: fb.TensorTypeINT32, shape: s} }
	ot, o := noOpts()
	one := func(code fb.BuiltinOperator, ins []tspec, outs ...tspec) mspec {
		return single(code, ot, o, ins, outs...)
	}
	add("space_to_batch_nd/f32/2d", one(fb.BuiltinOperatorSPACE_TO_BATCH_ND, []tspec{fshape(1, 5, 4, 3), constI32([]int32{2}, 2, 2), constI32([]int32{2, 2}, 1, 0, 0, 2)}, fshape(4, 3, 3, 3)), -2, 2)
	add("space_to_batch_nd/f32/1d", one(fb.BuiltinOperatorSPACE_TO_BATCH_ND, []tspec{fshape(2, 6, 3), constI32([]int32{1}, 3), constI32([]int32{1, 2}, 0, 0)}, fshape(6, 2, 3)), -2, 2)
	add("batch_to_space_nd/f32/2d", one(fb.BuiltinOperatorBATCH_TO_SPACE_ND, []tspec{fshape(4, 3, 3, 2), constI32([]int32{2}, 2, 2), constI32([]int32{2, 2}, 1, 0, 0, 2)}, fshape(1, 5, 4, 2)), -2, 2)
	add("batch_to_space_nd/f32/1d", one(fb.BuiltinOperatorBATCH_TO_SPACE_ND, []tspec{fshape(6, 2, 3), constI32([]int32{1}, 3), constI32([]int32{1, 2}, 0, 1)}, fshape(2, 5, 3)), -2, 2)
	for _, rs := range []struct {
		name       string
		seq, batch int32
		shape      []int32
	}{{"seq1_batch0", 1, 0, []int32{3, 5, 2}}, {"seq0_batch1", 0, 1, []int32{5, 3, 2}}, {"seq2_batch0", 2, 0, []int32{3, 2, 5}}} {
		add("reverse_sequence/f32/"+rs.name, single(fb.BuiltinOperatorREVERSE_SEQUENCE, fb.BuiltinOptionsReverseSequenceOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.ReverseSequenceOptionsStart(b)
			fb.ReverseSequenceOptionsAddSeqDim(b, rs.seq)
			fb.ReverseSequenceOptionsAddBatchDim(b, rs.batch)
			return fb.ReverseSequenceOptionsEnd(b)
		}, []tspec{fshape(rs.shape...), constI32([]int32{3}, 2, 5, 0)}, fshape(rs.shape...)), -2, 2)
	}
	add("sparse_to_dense/f32/2d_indices", one(fb.BuiltinOperatorSPARSE_TO_DENSE, []tspec{constI32([]int32{3, 2}, 0, 1, 2, 3, 1, 0), constI32([]int32{2}, 3, 4), fshape(3), constF(nil, -0.5)}, fshape(3, 4)), -2, 2)
	add("sparse_to_dense/f32/1d_indices_scalar_value", one(fb.BuiltinOperatorSPARSE_TO_DENSE, []tspec{constI32([]int32{3}, 4, 0, 2), constI32([]int32{1}, 6), {typ: fb.TensorTypeFLOAT32, shape: []int32{}}, constF(nil, 1.5)}, fshape(6)), -2, 2)
	add("dynamic_update_slice/f32", one(fb.BuiltinOperatorDYNAMIC_UPDATE_SLICE, []tspec{fshape(4, 5), fshape(2, 3), constI32([]int32{2}, 1, 1)}, fshape(4, 5)), -2, 2)
	add("dynamic_update_slice/f32/clamped", one(fb.BuiltinOperatorDYNAMIC_UPDATE_SLICE, []tspec{fshape(4, 5), fshape(2, 3), constI32([]int32{2}, 3, -2)}, fshape(4, 5)), -2, 2)
	add("dynamic_update_slice/f32/start_input", one(fb.BuiltinOperatorDYNAMIC_UPDATE_SLICE, []tspec{fshape(6, 5, 2), fshape(2, 3, 2), i32(3)}, fshape(6, 5, 2)), -2, 2)
	add("dilate/f32", one(fb.BuiltinOperatorDILATE, []tspec{fshape(2, 3, 4), constI32([]int32{3}, 1, 3, 2), constF(nil, -7)}, fshape(2, 7, 7)), -2, 2)
	for _, p := range []struct {
		name          string
		lo, hi, inner []int64
		in            []int32
		out           []int32
	}{
		{"edges", []int64{1, 0, 2}, []int64{0, 3, 1}, []int64{0, 0, 0}, []int32{2, 3, 4}, []int32{3, 6, 7}},
		{"interior", []int64{0, 0}, []int64{0, 0}, []int64{1, 2}, []int32{3, 4}, []int32{5, 10}},
		{"negative_edges", []int64{-1, 2}, []int64{1, -2}, []int64{1, 0}, []int32{3, 4}, []int32{5, 4}},
	} {
		m := single(fb.BuiltinOperatorSTABLEHLO_PAD, fb.BuiltinOptionsNONE, nil, []tspec{fshape(p.in...), constF(nil, 0.25)}, fshape(p.out...))
		m.ops[0].optType2 = fb.BuiltinOptions2StablehloPadOptions
		m.ops[0].opts2 = func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			lo, hi, in := i64vec(b, p.lo), i64vec(b, p.hi), i64vec(b, p.inner)
			fb.StablehloPadOptionsStart(b)
			fb.StablehloPadOptionsAddEdgePaddingLow(b, lo)
			fb.StablehloPadOptionsAddEdgePaddingHigh(b, hi)
			fb.StablehloPadOptionsAddInteriorPadding(b, in)
			return fb.StablehloPadOptionsEnd(b)
		}
		add("stablehlo_pad/f32/"+p.name, m, -2, 2)
	}
	return cs
}

// boolIO is a model of the binary boolean op code between float inputs
// and a float output (LiteRT.js takes no bool inputs or outputs):
// CAST(code(LESS(a, 0), LESS(b, 0))).
func boolIO(code fb.BuiltinOperator, shape ...int32) mspec {
	var m mspec
	a, b := m.add(tspec{name: "a", typ: fb.TensorTypeFLOAT32, shape: shape}), m.add(tspec{name: "b", typ: fb.TensorTypeFLOAT32, shape: shape})
	zero := m.add(constF(nil, 0))
	ab, bb := m.add(tspec{name: "a_neg", typ: fb.TensorTypeBOOL, shape: shape}), m.add(tspec{name: "b_neg", typ: fb.TensorTypeBOOL, shape: shape})
	y := m.add(tspec{name: "y", typ: fb.TensorTypeBOOL, shape: shape})
	out := m.add(tspec{name: "out", typ: fb.TensorTypeFLOAT32, shape: shape})
	m.ops = []opspec{
		{code: fb.BuiltinOperatorLESS, inputs: []int32{a, zero}, outputs: []int32{ab}},
		{code: fb.BuiltinOperatorLESS, inputs: []int32{b, zero}, outputs: []int32{bb}},
		{code: code, inputs: []int32{ab, bb}, outputs: []int32{y}},
		{code: fb.BuiltinOperatorCAST, inputs: []int32{y}, outputs: []int32{out}},
	}
	m.inputs, m.outputs = []int32{a, b}, []int32{out}
	return m
}
