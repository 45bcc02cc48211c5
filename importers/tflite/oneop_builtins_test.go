package tflite

import (
	"fmt"
	"strings"
	"testing"

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
	cs = append(cs, windowBuiltinCases()...)
	cs = append(cs, lookupBuiltinCases()...)
	cs = append(cs, rnnBuiltinCases()...)
	return cs
}

// rnnBuiltinCases are the float RNN ops, from the zero state of their
// hidden-state variables.
func rnnBuiltinCases() []oneOp {
	var cs []oneOp
	add := func(name string, m mspec) {
		cs = append(cs, oneOp{name: name, m: m, lo: -2, hi: 2, exact: true})
	}
	const in, hid = 3, 4
	weights := func(seed uint64) []tspec {
		return []tspec{constF([]int32{hid, in}, randFloats(seed, hid*in, -0.6, 0.6)...), constF([]int32{hid, hid}, randFloats(seed+1, hid*hid, -0.6, 0.6)...),
			constF([]int32{hid}, randFloats(seed+2, hid, -0.3, 0.3)...), {typ: fb.TensorTypeFLOAT32, shape: []int32{2, hid}, variable: true}}
	}
	for _, a := range []struct {
		name string
		act  fb.ActivationFunctionType
	}{{"tanh", fb.ActivationFunctionTypeTANH}, {"relu", fb.ActivationFunctionTypeRELU}} {
		add("rnn/f32/"+a.name, single(fb.BuiltinOperatorRNN, fb.BuiltinOptionsRNNOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.RNNOptionsStart(b)
			fb.RNNOptionsAddFusedActivationFunction(b, a.act)
			return fb.RNNOptionsEnd(b)
		}, append([]tspec{fshape(2, in)}, weights(41)...), fshape(2, hid)))
	}
	for _, tm := range []bool{false, true} {
		x, y := fshape(2, 5, in), fshape(2, 5, hid)
		if tm {
			x, y = fshape(5, 2, in), fshape(5, 2, hid)
		}
		name := map[bool]string{false: "batch_major", true: "time_major"}[tm]
		add("unidirectional_sequence_rnn/f32/"+name, single(fb.BuiltinOperatorUNIDIRECTIONAL_SEQUENCE_RNN, fb.BuiltinOptionsSequenceRNNOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.SequenceRNNOptionsStart(b)
			fb.SequenceRNNOptionsAddTimeMajor(b, tm)
			fb.SequenceRNNOptionsAddFusedActivationFunction(b, fb.ActivationFunctionTypeTANH)
			return fb.SequenceRNNOptionsEnd(b)
		}, append([]tspec{x}, weights(43)...), y))
		for _, merge := range []bool{false, true} {
			outs := []tspec{y, y}
			if merge {
				outs = []tspec{fshape(append(append([]int32{}, y.shape[:2]...), 2*hid)...)}
			}
			ins := append(append(append([]tspec{x}, weights(47)...), weights(51)...), tspec{}, tspec{}, tspec{})
			add(fmt.Sprintf("bidirectional_sequence_rnn/f32/%s/merge=%v", name, merge), single(fb.BuiltinOperatorBIDIRECTIONAL_SEQUENCE_RNN, fb.BuiltinOptionsBidirectionalSequenceRNNOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
				fb.BidirectionalSequenceRNNOptionsStart(b)
				fb.BidirectionalSequenceRNNOptionsAddTimeMajor(b, tm)
				fb.BidirectionalSequenceRNNOptionsAddMergeOutputs(b, merge)
				fb.BidirectionalSequenceRNNOptionsAddFusedActivationFunction(b, fb.ActivationFunctionTypeTANH)
				return fb.BidirectionalSequenceRNNOptionsEnd(b)
			}, ins, outs...))
		}
	}
	return cs
}

// lookupBuiltinCases are RFFT2D with the complex parts, and the lookups.
func lookupBuiltinCases() []oneOp {
	var cs []oneOp
	add := func(name string, m mspec, also ...fb.BuiltinOperator) {
		cs = append(cs, oneOp{name: name, m: m, lo: -2, hi: 2, exact: true, also: also})
	}
	// RFFT2D to a complex tensor, read by REAL, IMAG and COMPLEX_ABS.
	for _, r := range []struct {
		name   string
		in     []int32
		length []int32
	}{{"same_size", []int32{2, 4, 8}, []int32{4, 8}}, {"crop_and_pad", []int32{3, 6, 5}, []int32{4, 4}}} {
		var m mspec
		x := m.add(tspec{name: "x", shape: r.in})
		fl := m.add(constI32([]int32{2}, r.length...))
		cshape := append(append([]int32{}, r.in[:len(r.in)-2]...), r.length[0], r.length[1]/2+1)
		z := m.add(tspec{name: "z", typ: fb.TensorTypeCOMPLEX64, shape: cshape})
		re, im, ab := m.add(tspec{name: "re", shape: cshape}), m.add(tspec{name: "im", shape: cshape}), m.add(tspec{name: "abs", shape: cshape})
		m.ops = []opspec{{code: fb.BuiltinOperatorRFFT2D, inputs: []int32{x, fl}, outputs: []int32{z}},
			{code: fb.BuiltinOperatorREAL, inputs: []int32{z}, outputs: []int32{re}},
			{code: fb.BuiltinOperatorIMAG, inputs: []int32{z}, outputs: []int32{im}},
			{code: fb.BuiltinOperatorCOMPLEX_ABS, inputs: []int32{z}, outputs: []int32{ab}}}
		m.inputs, m.outputs = []int32{x}, []int32{re, im, ab}
		add("rfft2d/f32/"+r.name, m, fb.BuiltinOperatorREAL, fb.BuiltinOperatorIMAG, fb.BuiltinOperatorCOMPLEX_ABS)
	}
	ot, o := noOpts()
	// NMS: 12 random boxes (corners in either order) and scores.
	boxes, scores := fshape(12, 4), fshape(12)
	i32s := tspec{typ: fb.TensorTypeINT32, shape: []int32{}}
	add("non_max_suppression_v4/f32", single(fb.BuiltinOperatorNON_MAX_SUPPRESSION_V4, ot, o, []tspec{boxes, scores, constI32([]int32{}, 6), constF([]int32{}, 0.3), constF([]int32{}, -0.5)},
		tspec{typ: fb.TensorTypeINT32, shape: []int32{6}}, i32s))
	add("non_max_suppression_v5/f32", single(fb.BuiltinOperatorNON_MAX_SUPPRESSION_V5, ot, o, []tspec{boxes, scores, constI32([]int32{}, 8), constF([]int32{}, 0.2), constF([]int32{}, 0.1), constF([]int32{}, 0)},
		tspec{typ: fb.TensorTypeINT32, shape: []int32{8}}, fshape(8), i32s))
	for _, g := range []struct {
		name                                string
		operand, indices, out               []int32
		idx                                 []int32
		offset, collapsed, startMap, slices []int64
		ivd                                 int64
	}{
		{"rows", []int32{5, 3}, []int32{4, 1}, []int32{4, 3}, nil, []int64{1}, []int64{0}, []int64{0}, []int64{1, 3}, 1},
		{"windows_clamped", []int32{4, 6}, []int32{2, 2}, []int32{2, 2, 3}, []int32{1, 5, -1, 2}, []int64{1, 2}, nil, []int64{0, 1}, []int64{2, 3}, 1},
		{"offset_first", []int32{3, 5}, []int32{3, 1}, []int32{3, 3}, []int32{4, 0, 2}, []int64{0}, []int64{1}, []int64{1}, []int64{3, 1}, 1},
	} {
		it := tspec{typ: fb.TensorTypeINT32, shape: g.indices}
		if g.idx != nil {
			it = constI32(g.indices, g.idx...)
		}
		m := single(fb.BuiltinOperatorSTABLEHLO_GATHER, fb.BuiltinOptionsNONE, nil, []tspec{fshape(g.operand...), it}, fshape(g.out...))
		m.ops[0].optType2 = fb.BuiltinOptions2StablehloGatherOptions
		m.ops[0].opts2 = func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			off, col, sm, sl := i64vec(b, g.offset), i64vec(b, g.collapsed), i64vec(b, g.startMap), i64vec(b, g.slices)
			fb.StablehloGatherOptionsStart(b)
			fb.StablehloGatherOptionsAddOffsetDims(b, off)
			fb.StablehloGatherOptionsAddCollapsedSliceDims(b, col)
			fb.StablehloGatherOptionsAddStartIndexMap(b, sm)
			fb.StablehloGatherOptionsAddIndexVectorDim(b, g.ivd)
			fb.StablehloGatherOptionsAddSliceSizes(b, sl)
			return fb.StablehloGatherOptionsEnd(b)
		}
		add("stablehlo_gather/f32/"+g.name, m)
	}
	// Random ops with fixed seeds, added to an input (LiteRT.js leaves
	// outputs of constant inputs unwritten): 30 values, not a multiple of
	// Philox's 4.
	for _, code := range []fb.BuiltinOperator{fb.BuiltinOperatorRANDOM_UNIFORM, fb.BuiltinOperatorRANDOM_STANDARD_NORMAL} {
		for _, seeds := range [][2]int64{{7, 11}, {0, 5}, {5, 0}, {3, 1<<33 + 5}, {-9, 1}} {
			var m mspec
			sh := m.add(constI32([]int32{3}, 2, 3, 5))
			r, x, y := m.add(fshape(2, 3, 5)), m.add(tspec{name: "x", shape: []int32{2, 3, 5}}), m.add(tspec{name: "y", shape: []int32{2, 3, 5}})
			m.ops = []opspec{{code: code, inputs: []int32{sh}, outputs: []int32{r}, optType: fb.BuiltinOptionsRandomOptions, opts: func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
				fb.RandomOptionsStart(b)
				fb.RandomOptionsAddSeed(b, seeds[0])
				fb.RandomOptionsAddSeed2(b, seeds[1])
				return fb.RandomOptionsEnd(b)
			}}, {code: fb.BuiltinOperatorADD, inputs: []int32{r, x}, outputs: []int32{y}}}
			m.inputs, m.outputs = []int32{x}, []int32{y}
			add(fmt.Sprintf("%s/f32/seeds_%d_%d", strings.ToLower(code.String()), seeds[0], seeds[1]), m)
		}
	}
	for _, comb := range []fb.CombinerType{fb.CombinerTypeSUM, fb.CombinerTypeMEAN, fb.CombinerTypeSQRTN} {
		// 5 ids into rows (0,0), (0,0), (1,2), (3,1), (3,1) of a [4, 3]
		// dense shape: rows (0,1), (1,0) ... stay empty.
		add("embedding_lookup_sparse/f32/"+strings.ToLower(comb.String()), single(fb.BuiltinOperatorEMBEDDING_LOOKUP_SPARSE, fb.BuiltinOptionsEmbeddingLookupSparseOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.EmbeddingLookupSparseOptionsStart(b)
			fb.EmbeddingLookupSparseOptionsAddCombiner(b, comb)
			return fb.EmbeddingLookupSparseOptionsEnd(b)
		}, []tspec{{typ: fb.TensorTypeINT32, shape: []int32{5}}, constI32([]int32{5, 3}, 0, 0, 0, 0, 0, 1, 1, 2, 0, 3, 1, 0, 3, 1, 2), constI32([]int32{3}, 4, 3, 7),
			constF([]int32{5}, 0.5, 1.5, 2, 0.25, 1), fshape(4, 2)}, fshape(4, 3, 2)))
	}
	// STABLEHLO_SCATTER: rows 1 and 3 (and 1 again for the reductions)
	// of a [5, 3] operand, the update computation a subgraph.
	for _, sc := range []struct {
		name string
		body fb.BuiltinOperator // 0: return the update
		idx  []int32
	}{{"replace", 0, []int32{1, 3}}, {"add", fb.BuiltinOperatorSTABLEHLO_ADD, []int32{1, 3, 1}}, {"max", fb.BuiltinOperatorSTABLEHLO_MAXIMUM, []int32{4, 1, 4}}} {
		n := int32(len(sc.idx))
		m := single(fb.BuiltinOperatorSTABLEHLO_SCATTER, fb.BuiltinOptionsNONE, nil, []tspec{fshape(5, 3), constI32([]int32{n, 1}, sc.idx...), fshape(n, 3)}, fshape(5, 3))
		body := mspec{}
		a, b := body.add(tspec{name: "a", shape: []int32{}}), body.add(tspec{name: "b", shape: []int32{}})
		body.inputs, body.outputs = []int32{a, b}, []int32{b}
		if sc.body != 0 {
			y := body.add(tspec{name: "y", shape: []int32{}})
			body.ops = []opspec{{code: sc.body, inputs: []int32{a, b}, outputs: []int32{y}}}
			body.outputs = []int32{y}
		}
		m.subgraphs = []mspec{body}
		m.ops[0].optType2 = fb.BuiltinOptions2StablehloScatterOptions
		m.ops[0].opts2 = func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			uw, iw, sd := i64vec(b, []int64{1}), i64vec(b, []int64{0}), i64vec(b, []int64{0})
			fb.StablehloScatterOptionsStart(b)
			fb.StablehloScatterOptionsAddUpdateWindowDims(b, uw)
			fb.StablehloScatterOptionsAddInsertedWindowDims(b, iw)
			fb.StablehloScatterOptionsAddScatterDimsToOperandDims(b, sd)
			fb.StablehloScatterOptionsAddIndexVectorDim(b, 1)
			fb.StablehloScatterOptionsAddUpdateComputationSubgraphIndex(b, 1)
			return fb.StablehloScatterOptionsEnd(b)
		}
		add("stablehlo_scatter/f32/"+sc.name, m)
	}
	add("hashtable_lookup/f32", single(fb.BuiltinOperatorHASHTABLE_LOOKUP, ot, o, []tspec{{typ: fb.TensorTypeINT32, shape: []int32{6}},
		constI32([]int32{3}, 0, 2, 3), constF([]int32{3, 2}, 1, 2, 3, 4, 5, 6)}, fshape(6, 2), tspec{typ: fb.TensorTypeUINT8, shape: []int32{6}}))
	return cs
}

// conv3dOpts are CONV_3D's options.
func conv3dOpts(pad fb.Padding, s, d int32, act fb.ActivationFunctionType) (fb.BuiltinOptions, optFn) {
	return fb.BuiltinOptionsConv3DOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.Conv3DOptionsStart(b)
		fb.Conv3DOptionsAddPadding(b, pad)
		fb.Conv3DOptionsAddStrideD(b, s)
		fb.Conv3DOptionsAddStrideH(b, s)
		fb.Conv3DOptionsAddStrideW(b, s)
		fb.Conv3DOptionsAddDilationDFactor(b, d)
		fb.Conv3DOptionsAddDilationHFactor(b, d)
		fb.Conv3DOptionsAddDilationWFactor(b, d)
		fb.Conv3DOptionsAddFusedActivationFunction(b, act)
		return fb.Conv3DOptionsEnd(b)
	}
}

// windowBuiltinCases are the 3-D convolutions, the reduce-windows and the
// StableHLO ops that call subgraphs (COMPOSITE, CASE).
func windowBuiltinCases() []oneOp {
	var cs []oneOp
	add := func(name string, m mspec, also ...fb.BuiltinOperator) {
		cs = append(cs, oneOp{name: name, m: m, lo: -2, hi: 2, exact: true, also: also})
	}
	for _, p := range []struct {
		name string
		pad  fb.Padding
		s, d int32
		act  fb.ActivationFunctionType
	}{{"same", fb.PaddingSAME, 1, 1, fb.ActivationFunctionTypeNONE}, {"valid_s2_relu", fb.PaddingVALID, 2, 1, fb.ActivationFunctionTypeRELU}, {"same_d2", fb.PaddingSAME, 1, 2, fb.ActivationFunctionTypeNONE}} {
		od := func(n int32) int32 { return outSize(n, 3, p.s, p.d, p.pad) }
		ot, o := conv3dOpts(p.pad, p.s, p.d, p.act)
		w := constF([]int32{3, 3, 3, 2, 4}, randFloats(31, 216, -1, 1)...)
		bias := constF([]int32{4}, 0.1, -0.2, 0.3, 0)
		add("conv_3d/f32/"+p.name, single(fb.BuiltinOperatorCONV_3D, ot, o, []tspec{fshape(1, 5, 6, 7, 2), w, bias}, fshape(1, od(5), od(6), od(7), 4)))
	}
	for _, p := range []struct {
		name string
		pad  fb.Padding
		s    int32
		in   []int32
		out  []int32
	}{{"same_s2", fb.PaddingSAME, 2, []int32{1, 2, 3, 3, 4}, []int32{1, 4, 6, 5, 3}}, {"valid_s1", fb.PaddingVALID, 1, []int32{1, 2, 3, 3, 4}, []int32{1, 4, 5, 5, 3}}} {
		ot, o := conv3dOpts(p.pad, p.s, 1, fb.ActivationFunctionTypeNONE)
		w := constF([]int32{3, 3, 3, 3, 4}, randFloats(32, 324, -1, 1)...)
		add("conv_3d_transpose/f32/"+p.name, single(fb.BuiltinOperatorCONV_3D_TRANSPOSE, ot, o,
			[]tspec{constI32([]int32{5}, p.out...), w, fshape(p.in...), constF([]int32{3}, 0.5, -0.5, 0.25)}, fshape(p.out...)))
	}
	for _, rw := range []struct {
		name string
		f    fb.ReduceWindowFunction
	}{{"add", fb.ReduceWindowFunctionADD}, {"max", fb.ReduceWindowFunctionMAXIMUM}, {"min", fb.ReduceWindowFunctionMINIMUM}, {"mul", fb.ReduceWindowFunctionMUL}} {
		m := single(fb.BuiltinOperatorREDUCE_WINDOW, fb.BuiltinOptionsNONE, nil, []tspec{fshape(2, 7, 6), constF(nil, 0.5),
			constI64s([]int32{3}, 1, 3, 2), constI64s([]int32{3}, 1, 2, 1), constI64s([]int32{3}, 1, 1, 2)}, fshape(2, 3, 4))
		m.ops[0].optType2 = fb.BuiltinOptions2ReduceWindowOptions
		m.ops[0].opts2 = func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.ReduceWindowOptionsStart(b)
			fb.ReduceWindowOptionsAddReduceFunction(b, rw.f)
			return fb.ReduceWindowOptionsEnd(b)
		}
		add("reduce_window/f32/"+rw.name, m)
	}
	// scalarBody is a subgraph (a, b) -> code(a, b) on float scalars.
	scalarBody := func(code fb.BuiltinOperator) mspec {
		g := mspec{}
		a, b := g.add(tspec{name: "a", shape: []int32{}}), g.add(tspec{name: "b", shape: []int32{}})
		y := g.add(tspec{name: "y", shape: []int32{}})
		g.ops = []opspec{{code: code, inputs: []int32{a, b}, outputs: []int32{y}}}
		g.inputs, g.outputs = []int32{a, b}, []int32{y}
		return g
	}
	for _, rw := range []struct {
		name                          string
		body                          fb.BuiltinOperator
		init                          float32
		win, strides, base, dil, pads []int64
		in, out                       []int32
	}{
		{"max_pool", fb.BuiltinOperatorSTABLEHLO_MAXIMUM, -1e30, []int64{1, 3, 3, 1}, []int64{1, 2, 2, 1}, nil, nil, []int64{0, 0, 1, 1, 1, 1, 0, 0}, []int32{1, 7, 8, 3}, []int32{1, 4, 4, 3}},
		{"sum_base_dilated", fb.BuiltinOperatorSTABLEHLO_ADD, 0, []int64{2, 2}, []int64{1, 1}, []int64{2, 1}, nil, nil, []int32{4, 6}, []int32{6, 5}},
		{"min_window_dilated", fb.BuiltinOperatorSTABLEHLO_MINIMUM, 1e30, []int64{2, 2}, []int64{1, 1}, nil, []int64{1, 2}, nil, []int32{4, 6}, []int32{3, 4}},
	} {
		m := single(fb.BuiltinOperatorSTABLEHLO_REDUCE_WINDOW, fb.BuiltinOptionsNONE, nil, []tspec{fshape(rw.in...), constF([]int32{}, rw.init)}, fshape(rw.out...))
		m.subgraphs = []mspec{scalarBody(rw.body)}
		m.ops[0].optType2 = fb.BuiltinOptions2StablehloReduceWindowOptions
		m.ops[0].opts2 = func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			win, st := i64vec(b, rw.win), i64vec(b, rw.strides)
			var base, dil, pads flatbuffers.UOffsetT
			if rw.base != nil {
				base = i64vec(b, rw.base)
			}
			if rw.dil != nil {
				dil = i64vec(b, rw.dil)
			}
			if rw.pads != nil {
				pads = i64vec(b, rw.pads)
			}
			fb.StablehloReduceWindowOptionsStart(b)
			fb.StablehloReduceWindowOptionsAddWindowDimensions(b, win)
			fb.StablehloReduceWindowOptionsAddWindowStrides(b, st)
			if rw.base != nil {
				fb.StablehloReduceWindowOptionsAddBaseDilations(b, base)
			}
			if rw.dil != nil {
				fb.StablehloReduceWindowOptionsAddWindowDilations(b, dil)
			}
			if rw.pads != nil {
				fb.StablehloReduceWindowOptionsAddPadding(b, pads)
			}
			fb.StablehloReduceWindowOptionsAddBodySubgraphIndex(b, 1)
			return fb.StablehloReduceWindowOptionsEnd(b)
		}
		add("stablehlo_reduce_window/f32/"+rw.name, m)
	}
	// COMPOSITE: a decomposition subgraph x -> tanh(x) * x + y.
	{
		d := mspec{}
		x, y := d.add(fshape(2, 3)), d.add(fshape(2, 3))
		t, p, s := d.add(fshape(2, 3)), d.add(fshape(2, 3)), d.add(fshape(2, 3))
		d.ops = []opspec{{code: fb.BuiltinOperatorTANH, inputs: []int32{x}, outputs: []int32{t}},
			{code: fb.BuiltinOperatorMUL, inputs: []int32{t, x}, outputs: []int32{p}},
			{code: fb.BuiltinOperatorADD, inputs: []int32{p, y}, outputs: []int32{s}}}
		d.inputs, d.outputs = []int32{x, y}, []int32{s}
		m := single(fb.BuiltinOperatorSTABLEHLO_COMPOSITE, fb.BuiltinOptionsNONE, nil, []tspec{fshape(2, 3), fshape(2, 3)}, fshape(2, 3))
		m.subgraphs = []mspec{d}
		m.ops[0].optType2 = fb.BuiltinOptions2StableHLOCompositeOptions
		m.ops[0].opts2 = func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			n := b.CreateString("odml.tanh_gate")
			// An empty flexbuffers map: keys vector (length 0), the map
			// (keys offset, keys width, length 0), the root (offset, type
			// map, width 1).
			attrs := b.CreateByteVector([]byte{0, 0, 1, 0, 0, 9 << 2, 1})
			fb.StableHLOCompositeOptionsStart(b)
			fb.StableHLOCompositeOptionsAddName(b, n)
			fb.StableHLOCompositeOptionsAddCompositeAttributes(b, attrs)
			fb.StableHLOCompositeOptionsAddDecompositionSubgraphIndex(b, 1)
			return fb.StableHLOCompositeOptionsEnd(b)
		}
		add("stablehlo_composite/f32", m)
	}
	// CASE: three branches of x (square, negate, exp), the index an input
	// in [0, 4): 3 is out of range (the last branch).
	{
		unary := func(code fb.BuiltinOperator) mspec {
			g := mspec{}
			a, b := g.add(fshape(2, 3)), g.add(fshape(2, 3))
			g.ops = []opspec{{code: code, inputs: []int32{a}, outputs: []int32{b}}}
			g.inputs, g.outputs = []int32{a}, []int32{b}
			return g
		}
		m := single(fb.BuiltinOperatorSTABLEHLO_CASE, fb.BuiltinOptionsNONE, nil, []tspec{{typ: fb.TensorTypeINT32, shape: []int32{}}, fshape(2, 3)}, fshape(2, 3))
		m.subgraphs = []mspec{unary(fb.BuiltinOperatorSQUARE), unary(fb.BuiltinOperatorNEG), unary(fb.BuiltinOperatorEXP)}
		m.ops[0].optType2 = fb.BuiltinOptions2StablehloCaseOptions
		m.ops[0].opts2 = func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.StablehloCaseOptionsStartBranchSubgraphIndicesVector(b, 3)
			for _, i := range []int32{3, 2, 1} {
				b.PrependInt32(i)
			}
			v := b.EndVector(3)
			fb.StablehloCaseOptionsStart(b)
			fb.StablehloCaseOptionsAddBranchSubgraphIndices(b, v)
			return fb.StablehloCaseOptionsEnd(b)
		}
		add("stablehlo_case/f32", m)
	}
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
	// LSTM: one step of the sequence model's cell, [batch, input].
	for _, v := range []struct {
		name string
		v    lstmVariant
	}{{"plain", lstmVariant{}}, {"peephole", lstmVariant{peephole: true}}} {
		m := lstmModel(v.v)
		m.tensors[m.ops[0].inputs[0]].shape = []int32{2, 3}
		m.tensors[m.ops[0].outputs[0]].shape = []int32{2, 4}
		m.ops[0].code, m.ops[0].optType = fb.BuiltinOperatorLSTM, fb.BuiltinOptionsLSTMOptions
		m.ops[0].opts = func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.LSTMOptionsStart(b)
			fb.LSTMOptionsAddFusedActivationFunction(b, fb.ActivationFunctionTypeTANH)
			return fb.LSTMOptionsEnd(b)
		}
		add("lstm/f32/"+v.name, m, -2, 2)
	}
	for _, b := range []struct {
		name                   string
		timeMajor, merge, peep bool
	}{{"batch_major", false, false, false}, {"batch_major/merged/peephole", false, true, true}, {"time_major", true, false, false}} {
		add("bidirectional_sequence_lstm/f32/"+b.name, bidiLSTMModel(b.timeMajor, b.merge, b.peep), -2, 2)
	}
	return cs
}

// bidiLSTMModel is one float BIDIRECTIONAL_SEQUENCE_LSTM (batch 2, 5 steps,
// input 3, 4 cells per direction) over zero-initialised state variables,
// its 48 inputs in the schema's order.
func bidiLSTMModel(timeMajor, merge, peep bool) mspec {
	const batch, steps, nIn, nCell = 2, 5, 3, 4
	var m mspec
	seed := uint64(70)
	w := func(shape ...int32) int32 {
		seed++
		return m.add(tspec{typ: fb.TensorTypeFLOAT32, shape: shape, data: f32Bytes(randFloats(seed, numel32(shape), -0.8, 0.8)...)})
	}
	ins := make([]int32, 48)
	for i := range ins {
		ins[i] = -1
	}
	xs, ys := []int32{batch, steps, nIn}, []int32{batch, steps, nCell}
	if timeMajor {
		xs, ys = []int32{steps, batch, nIn}, []int32{steps, batch, nCell}
	}
	ins[0] = m.add(tspec{name: "x", shape: xs})
	for dir := int32(0); dir < 2; dir++ {
		off := 17 * dir
		for g := int32(0); g < 4; g++ {
			ins[1+off+g], ins[5+off+g], ins[12+off+g] = w(nCell, nIn), w(nCell, nCell), w(nCell)
		}
		if peep {
			ins[9+off], ins[10+off], ins[11+off] = w(nCell), w(nCell), w(nCell)
		}
		ins[35+2*dir] = m.add(tspec{typ: fb.TensorTypeFLOAT32, shape: []int32{batch, nCell}, variable: true})
		ins[36+2*dir] = m.add(tspec{typ: fb.TensorTypeFLOAT32, shape: []int32{batch, nCell}, variable: true})
	}
	var outs []int32
	if merge {
		outs = []int32{m.add(tspec{name: "y", shape: append(append([]int32{}, ys[:2]...), 2*nCell)})}
	} else {
		outs = []int32{m.add(tspec{name: "fw", shape: ys}), m.add(tspec{name: "bw", shape: ys})}
	}
	m.inputs, m.outputs = []int32{ins[0]}, outs
	m.ops = []opspec{{code: fb.BuiltinOperatorBIDIRECTIONAL_SEQUENCE_LSTM, inputs: ins, outputs: outs,
		optType: fb.BuiltinOptionsBidirectionalSequenceLSTMOptions, opts: func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.BidirectionalSequenceLSTMOptionsStart(b)
			fb.BidirectionalSequenceLSTMOptionsAddFusedActivationFunction(b, fb.ActivationFunctionTypeTANH)
			fb.BidirectionalSequenceLSTMOptionsAddMergeOutputs(b, merge)
			fb.BidirectionalSequenceLSTMOptionsAddTimeMajor(b, timeMajor)
			return fb.BidirectionalSequenceLSTMOptionsEnd(b)
		}}}
	return m
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

func constI64s(shape []int32, v ...int64) tspec {
	return tspec{typ: fb.TensorTypeINT64, shape: shape, data: i64Bytes(v...)}
}

// TestBuiltinBounds: files whose static shapes would make the importer
// write huge constants are refused with an error naming the limit, before
// allocating.
func TestBuiltinBounds(t *testing.T) {
	ot, o := noOpts()
	randomBig := single(fb.BuiltinOperatorRANDOM_UNIFORM, fb.BuiltinOptionsRandomOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.RandomOptionsStart(b)
		fb.RandomOptionsAddSeed(b, 1)
		return fb.RandomOptionsEnd(b)
	}, []tspec{constI32([]int32{2}, 1<<15, 1<<15)}, fshape(1<<15, 1<<15))
	for _, c := range []struct {
		name string
		m    mspec
		want string
	}{
		{"matrix_diag", single(fb.BuiltinOperatorMATRIX_DIAG, ot, o, []tspec{fshape(1 << 13)}, fshape(1<<13, 1<<13)), "too large"},
		{"broadcast_args", single(fb.BuiltinOperatorBROADCAST_ARGS, ot, o, []tspec{{typ: fb.TensorTypeINT32, shape: []int32{1 << 30}}, constI32([]int32{1}, 1)}, tspec{typ: fb.TensorTypeINT32, shape: []int32{1 << 30}}), "static length up to"},
		{"random_uniform", randomBig, "more than"},
		{"dynamic_update_slice", single(fb.BuiltinOperatorDYNAMIC_UPDATE_SLICE, ot, o, []tspec{fshape(1<<12, 1<<12), fshape(1<<12, 1<<12), constI32([]int32{2}, 0, 0)}, fshape(1<<12, 1<<12)), "too large"},
	} {
		_, err := Import(c.m.bytes(), Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
