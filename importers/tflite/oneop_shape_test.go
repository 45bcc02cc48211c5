package tflite

import (
	"fmt"
	"strings"

	flatbuffers "github.com/google/flatbuffers/go"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// shapeCases are the layout, indexing, reduction and other builtins, float
// unless named otherwise.
func shapeCases() []oneOp {
	var cs []oneOp
	add := func(name string, m mspec, lohi ...float64) {
		c := oneOp{name: name, m: m, lo: -2, hi: 2}
		if len(lohi) == 2 {
			c.lo, c.hi = lohi[0], lohi[1]
		}
		cs = append(cs, c)
	}
	none := func() (fb.BuiltinOptions, optFn) { return fb.BuiltinOptionsNONE, nil }
	i32 := func(s ...int32) tspec { return tspec{typ: fb.TensorTypeINT32, shape: s} }
	boolT := func(s ...int32) tspec { return tspec{typ: fb.TensorTypeBOOL, shape: s} }
	x4 := fshape(1, 4, 6, 3)

	ot, o := none()
	add("reshape/f32/const_shape", single(fb.BuiltinOperatorRESHAPE, ot, o, []tspec{x4, constI32([]int32{2}, 4, 18)}, fshape(4, 18)))
	add("reshape/f32/minus_one", single(fb.BuiltinOperatorRESHAPE, ot, o, []tspec{x4, constI32([]int32{3}, 1, -1, 3)}, fshape(1, 24, 3)))
	add("squeeze/f32", single(fb.BuiltinOperatorSQUEEZE, fb.BuiltinOptionsSqueezeOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		v := []int32{0}
		fb.SqueezeOptionsStartSqueezeDimsVector(b, 1)
		b.PrependInt32(v[0])
		d := b.EndVector(1)
		fb.SqueezeOptionsStart(b)
		fb.SqueezeOptionsAddSqueezeDims(b, d)
		return fb.SqueezeOptionsEnd(b)
	}, []tspec{x4}, fshape(4, 6, 3)))
	add("expand_dims/f32", single(fb.BuiltinOperatorEXPAND_DIMS, ot, o, []tspec{fshape(4, 6), constI32([]int32{}, 1)}, fshape(4, 1, 6)))
	for _, p := range [][]int32{{0, 3, 1, 2}, {0, 2, 1, 3}, {3, 2, 1, 0}} {
		add(fmt.Sprintf("transpose/f32/%v", p), single(fb.BuiltinOperatorTRANSPOSE, ot, o, []tspec{x4, constI32([]int32{4}, p...)},
			fshape(x4.shape[p[0]], x4.shape[p[1]], x4.shape[p[2]], x4.shape[p[3]])))
	}
	for _, ax := range []int32{1, 3, -1} {
		osh := []int32{1, 4, 6, 3}
		a := ax
		if a < 0 {
			a += 4
		}
		osh[a] *= 2
		add(fmt.Sprintf("concatenation/f32/axis%d", ax), single(fb.BuiltinOperatorCONCATENATION, fb.BuiltinOptionsConcatenationOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.ConcatenationOptionsStart(b)
			fb.ConcatenationOptionsAddAxis(b, ax)
			return fb.ConcatenationOptionsEnd(b)
		}, []tspec{x4, x4}, fshape(osh...)))
	}
	add("pack/f32", single(fb.BuiltinOperatorPACK, fb.BuiltinOptionsPackOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.PackOptionsStart(b)
		fb.PackOptionsAddValuesCount(b, 2)
		fb.PackOptionsAddAxis(b, 1)
		return fb.PackOptionsEnd(b)
	}, []tspec{fshape(3, 5), fshape(3, 5)}, fshape(3, 2, 5)))
	add("unpack/f32", single(fb.BuiltinOperatorUNPACK, fb.BuiltinOptionsUnpackOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.UnpackOptionsStart(b)
		fb.UnpackOptionsAddNum(b, 3)
		fb.UnpackOptionsAddAxis(b, 0)
		return fb.UnpackOptionsEnd(b)
	}, []tspec{fshape(3, 5)}, fshape(5), fshape(5), fshape(5)))
	add("split/f32", single(fb.BuiltinOperatorSPLIT, fb.BuiltinOptionsSplitOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.SplitOptionsStart(b)
		fb.SplitOptionsAddNumSplits(b, 2)
		return fb.SplitOptionsEnd(b)
	}, []tspec{constI32([]int32{}, 2), x4}, fshape(1, 4, 3, 3), fshape(1, 4, 3, 3)))
	add("split_v/f32", single(fb.BuiltinOperatorSPLIT_V, fb.BuiltinOptionsSplitVOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.SplitVOptionsStart(b)
		fb.SplitVOptionsAddNumSplits(b, 3)
		return fb.SplitVOptionsEnd(b)
	}, []tspec{x4, constI32([]int32{3}, 1, 3, 2), constI32([]int32{}, 2)}, fshape(1, 4, 1, 3), fshape(1, 4, 3, 3), fshape(1, 4, 2, 3)))
	add("tile/f32", single(fb.BuiltinOperatorTILE, ot, o, []tspec{fshape(2, 3), constI32([]int32{2}, 2, 3)}, fshape(4, 9)))
	add("slice/f32", single(fb.BuiltinOperatorSLICE, ot, o, []tspec{x4, constI32([]int32{4}, 0, 1, 2, 0), constI32([]int32{4}, 1, 2, -1, 2)}, fshape(1, 2, 4, 2)))
	for _, ss := range []struct {
		name                       string
		begin, end, stride         []int32
		beginMask, endMask, shrink int32
		out                        []int32
	}{
		{"basic", []int32{0, 1, 0, 0}, []int32{1, 3, 6, 3}, []int32{1, 1, 2, 1}, 0, 0, 0, []int32{1, 2, 3, 3}},
		{"masks", []int32{0, 1, 0, 0}, []int32{0, 0, 4, 0}, []int32{1, 1, 1, 1}, 9, 11, 0, []int32{1, 3, 4, 3}},
		{"negative_stride", []int32{0, -1, 0, 0}, []int32{1, -5, 6, 3}, []int32{1, -1, 1, 1}, 0, 0, 0, []int32{1, 4, 6, 3}},
		{"shrink", []int32{0, 2, 0, 0}, []int32{1, 3, 6, 3}, []int32{1, 1, 1, 1}, 0, 0, 2, []int32{1, 6, 3}},
	} {
		bm, em, sm := ss.beginMask, ss.endMask, ss.shrink
		add("strided_slice/f32/"+ss.name, single(fb.BuiltinOperatorSTRIDED_SLICE, fb.BuiltinOptionsStridedSliceOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.StridedSliceOptionsStart(b)
			fb.StridedSliceOptionsAddBeginMask(b, bm)
			fb.StridedSliceOptionsAddEndMask(b, em)
			fb.StridedSliceOptionsAddShrinkAxisMask(b, sm)
			return fb.StridedSliceOptionsEnd(b)
		}, []tspec{x4, constI32([]int32{4}, ss.begin...), constI32([]int32{4}, ss.end...), constI32([]int32{4}, ss.stride...)}, fshape(ss.out...)))
	}
	for _, ax := range []int32{0, 1} {
		osh := []int32{4, 3}
		if ax == 1 {
			osh = []int32{5, 4}
		}
		in := fshape(5, 3)
		add(fmt.Sprintf("gather/f32/axis%d", ax), single(fb.BuiltinOperatorGATHER, fb.BuiltinOptionsGatherOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.GatherOptionsStart(b)
			fb.GatherOptionsAddAxis(b, ax)
			return fb.GatherOptionsEnd(b)
		}, []tspec{in, constI32([]int32{4}, 2, 0, 1, 2)}, fshape(osh...)))
	}
	pads := constI32([]int32{4, 2}, 0, 0, 1, 2, 2, 1, 0, 0)
	add("pad/f32", single(fb.BuiltinOperatorPAD, ot, o, []tspec{x4, pads}, fshape(1, 7, 9, 3)))
	add("padv2/f32", single(fb.BuiltinOperatorPADV2, ot, o, []tspec{x4, pads, constF([]int32{}, 0.75)}, fshape(1, 7, 9, 3)))
	for _, mode := range []fb.MirrorPadMode{fb.MirrorPadModeREFLECT, fb.MirrorPadModeSYMMETRIC} {
		md := mode
		add("mirror_pad/f32/"+strings.ToLower(mode.String()), single(fb.BuiltinOperatorMIRROR_PAD, fb.BuiltinOptionsMirrorPadOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.MirrorPadOptionsStart(b)
			fb.MirrorPadOptionsAddMode(b, md)
			return fb.MirrorPadOptionsEnd(b)
		}, []tspec{x4, pads}, fshape(1, 7, 9, 3)))
	}
	for _, code := range []fb.BuiltinOperator{fb.BuiltinOperatorMEAN, fb.BuiltinOperatorSUM, fb.BuiltinOperatorREDUCE_MAX, fb.BuiltinOperatorREDUCE_MIN, fb.BuiltinOperatorREDUCE_PROD} {
		for _, keep := range []bool{false, true} {
			k := keep
			osh := []int32{1, 3}
			if keep {
				osh = []int32{1, 1, 1, 3}
			}
			add(fmt.Sprintf("%s/f32/keep=%v", strings.ToLower(code.String()), keep), single(code, fb.BuiltinOptionsReducerOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
				fb.ReducerOptionsStart(b)
				fb.ReducerOptionsAddKeepDims(b, k)
				return fb.ReducerOptionsEnd(b)
			}, []tspec{x4, constI32([]int32{2}, 1, 2)}, fshape(osh...)), 0.5, 1.5)
		}
	}
	add("arg_max/f32", single(fb.BuiltinOperatorARG_MAX, fb.BuiltinOptionsArgMaxOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.ArgMaxOptionsStart(b)
		fb.ArgMaxOptionsAddOutputType(b, fb.TensorTypeINT32)
		return fb.ArgMaxOptionsEnd(b)
	}, []tspec{x4, constI32([]int32{1}, 3)}, i32(1, 4, 6)))
	add("arg_min/f32", single(fb.BuiltinOperatorARG_MIN, fb.BuiltinOptionsArgMinOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.ArgMinOptionsStart(b)
		fb.ArgMinOptionsAddOutputType(b, fb.TensorTypeINT32)
		return fb.ArgMinOptionsEnd(b)
	}, []tspec{x4, constI32([]int32{1}, 1)}, i32(1, 6, 3)))
	add("shape/f32", single(fb.BuiltinOperatorSHAPE, fb.BuiltinOptionsShapeOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.ShapeOptionsStart(b)
		fb.ShapeOptionsAddOutType(b, fb.TensorTypeINT32)
		return fb.ShapeOptionsEnd(b)
	}, []tspec{x4}, i32(4)))
	add("cast/f32_to_int32", single(fb.BuiltinOperatorCAST, ot, o, []tspec{fshape(3, 4)}, i32(3, 4)), -20, 20)
	add("cast/int32_to_f32", single(fb.BuiltinOperatorCAST, ot, o, []tspec{i32(3, 4)}, fshape(3, 4)))
	add("select/f32", single(fb.BuiltinOperatorSELECT, ot, o, []tspec{boolT(3, 4), fshape(3, 4), fshape(3, 4)}, fshape(3, 4)))
	add("select_v2/f32/broadcast", single(fb.BuiltinOperatorSELECT_V2, ot, o, []tspec{boolT(3, 1), fshape(3, 4), fshape(4)}, fshape(3, 4)))
	add("add_n/f32", single(fb.BuiltinOperatorADD_N, ot, o, []tspec{fshape(3, 4), fshape(3, 4), fshape(3, 4)}, fshape(3, 4)))
	for _, adj := range [][2]bool{{false, false}, {true, false}, {false, true}} {
		ax, ay := adj[0], adj[1]
		a, b := fshape(2, 3, 4), fshape(2, 4, 5)
		if ax {
			a = fshape(2, 4, 3)
		}
		if ay {
			b = fshape(2, 5, 4)
		}
		add(fmt.Sprintf("batch_matmul/f32/adj_x=%v,adj_y=%v", ax, ay), single(fb.BuiltinOperatorBATCH_MATMUL, fb.BuiltinOptionsBatchMatMulOptions, func(bd *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.BatchMatMulOptionsStart(bd)
			fb.BatchMatMulOptionsAddAdjX(bd, ax)
			fb.BatchMatMulOptionsAddAdjY(bd, ay)
			return fb.BatchMatMulOptionsEnd(bd)
		}, []tspec{a, b}, fshape(2, 3, 5)))
	}
	add("depth_to_space/f32", single(fb.BuiltinOperatorDEPTH_TO_SPACE, fb.BuiltinOptionsDepthToSpaceOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.DepthToSpaceOptionsStart(b)
		fb.DepthToSpaceOptionsAddBlockSize(b, 2)
		return fb.DepthToSpaceOptionsEnd(b)
	}, []tspec{fshape(1, 2, 3, 8)}, fshape(1, 4, 6, 2)))
	add("space_to_depth/f32", single(fb.BuiltinOperatorSPACE_TO_DEPTH, fb.BuiltinOptionsSpaceToDepthOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.SpaceToDepthOptionsStart(b)
		fb.SpaceToDepthOptionsAddBlockSize(b, 2)
		return fb.SpaceToDepthOptionsEnd(b)
	}, []tspec{fshape(1, 4, 6, 2)}, fshape(1, 2, 3, 8)))
	for _, rs := range []struct {
		code        fb.BuiltinOperator
		align, half bool
	}{
		{fb.BuiltinOperatorRESIZE_BILINEAR, false, false}, {fb.BuiltinOperatorRESIZE_BILINEAR, true, false}, {fb.BuiltinOperatorRESIZE_BILINEAR, false, true},
		{fb.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR, false, false}, {fb.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR, true, false}, {fb.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR, false, true},
	} {
		al, hp := rs.align, rs.half
		var ot fb.BuiltinOptions
		var opts optFn
		if rs.code == fb.BuiltinOperatorRESIZE_BILINEAR {
			ot, opts = fb.BuiltinOptionsResizeBilinearOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
				fb.ResizeBilinearOptionsStart(b)
				fb.ResizeBilinearOptionsAddAlignCorners(b, al)
				fb.ResizeBilinearOptionsAddHalfPixelCenters(b, hp)
				return fb.ResizeBilinearOptionsEnd(b)
			}
		} else {
			ot, opts = fb.BuiltinOptionsResizeNearestNeighborOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
				fb.ResizeNearestNeighborOptionsStart(b)
				fb.ResizeNearestNeighborOptionsAddAlignCorners(b, al)
				fb.ResizeNearestNeighborOptionsAddHalfPixelCenters(b, hp)
				return fb.ResizeNearestNeighborOptionsEnd(b)
			}
		}
		add(fmt.Sprintf("%s/f32/align=%v,half=%v", strings.ToLower(rs.code.String()), al, hp), single(rs.code, ot, opts, []tspec{x4, constI32([]int32{2}, 7, 9)}, fshape(1, 7, 9, 3)))
	}
	for _, beta := range []float32{1, 0.5} {
		bt := beta
		add(fmt.Sprintf("softmax/f32/beta=%g", beta), single(fb.BuiltinOperatorSOFTMAX, fb.BuiltinOptionsSoftmaxOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.SoftmaxOptionsStart(b)
			fb.SoftmaxOptionsAddBeta(b, bt)
			return fb.SoftmaxOptionsEnd(b)
		}, []tspec{fshape(3, 7)}, fshape(3, 7)), -4, 4)
	}
	add("log_softmax/f32", single(fb.BuiltinOperatorLOG_SOFTMAX, ot, o, []tspec{fshape(3, 7)}, fshape(3, 7)), -4, 4)
	for _, code := range []fb.BuiltinOperator{fb.BuiltinOperatorLOGICAL_AND, fb.BuiltinOperatorLOGICAL_OR} {
		add(strings.ToLower(code.String())+"/bool", single(code, ot, o, []tspec{boolT(3, 4), boolT(3, 4)}, boolT(3, 4)))
	}
	add("logical_not/bool", single(fb.BuiltinOperatorLOGICAL_NOT, ot, o, []tspec{boolT(3, 4)}, boolT(3, 4)))
	// TRANSPOSE_CONV, SAME and VALID.
	for _, p := range []fb.Padding{fb.PaddingSAME, fb.PaddingVALID} {
		pd := p
		oh := int32(8)
		if p == fb.PaddingVALID {
			oh = 9
		}
		add("transpose_conv/f32/"+strings.ToLower(p.String()), single(fb.BuiltinOperatorTRANSPOSE_CONV, fb.BuiltinOptionsTransposeConvOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.TransposeConvOptionsStart(b)
			fb.TransposeConvOptionsAddPadding(b, pd)
			fb.TransposeConvOptionsAddStrideH(b, 2)
			fb.TransposeConvOptionsAddStrideW(b, 2)
			return fb.TransposeConvOptionsEnd(b)
		}, []tspec{constI32([]int32{4}, 1, oh, oh, 5), constF([]int32{5, 3, 3, 3}, randFloats(9, 135, -1, 1)...), fshape(1, 4, 4, 3)}, fshape(1, oh, oh, 5)))
	}
	// Builtins added with this table.
	add("topk_v2/f32", single(fb.BuiltinOperatorTOPK_V2, ot, o, []tspec{fshape(3, 10), constI32([]int32{}, 4)}, fshape(3, 4), i32(3, 4)))
	bt := single(fb.BuiltinOperatorBROADCAST_TO, ot, o, []tspec{fshape(3, 1), constI32([]int32{3}, 2, 3, 4)}, fshape(2, 3, 4))
	bt.ops[0].version = 2 // registered from version 2
	add("broadcast_to/f32", bt)
	for _, ex := range [][2]bool{{false, false}, {true, false}, {false, true}} {
		e, r := ex[0], ex[1]
		add(fmt.Sprintf("cumsum/f32/exclusive=%v,reverse=%v", e, r), single(fb.BuiltinOperatorCUMSUM, fb.BuiltinOptionsCumsumOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.CumsumOptionsStart(b)
			fb.CumsumOptionsAddExclusive(b, e)
			fb.CumsumOptionsAddReverse(b, r)
			return fb.CumsumOptionsEnd(b)
		}, []tspec{fshape(3, 6), constI32([]int32{}, 1)}, fshape(3, 6)))
	}
	add("range/int32", single(fb.BuiltinOperatorRANGE, ot, o, []tspec{constI32([]int32{}, 2), constI32([]int32{}, 17), constI32([]int32{}, 3)}, i32(5)).withInput(fshape(1)))
	add("gather_nd/f32", single(fb.BuiltinOperatorGATHER_ND, ot, o, []tspec{fshape(4, 5, 3), constI32([]int32{3, 2}, 0, 1, 3, 4, 2, 0)}, fshape(3, 3)))
	add("zeros_like/f32", single(fb.BuiltinOperatorZEROS_LIKE, ot, o, []tspec{fshape(3, 4)}, fshape(3, 4)))
	add("fill/f32", single(fb.BuiltinOperatorFILL, ot, o, []tspec{constI32([]int32{2}, 2, 3), {typ: fb.TensorTypeFLOAT32, shape: []int32{}}}, fshape(2, 3)))
	add("reverse_v2/f32", single(fb.BuiltinOperatorREVERSE_V2, ot, o, []tspec{fshape(3, 4, 2), constI32([]int32{1}, 1)}, fshape(3, 4, 2)))
	add("floor_mod/f32", single(fb.BuiltinOperatorFLOOR_MOD, ot, o, []tspec{fshape(3, 4), fshape(3, 4)}, fshape(3, 4)), 0.3, 3)
	add("floor_mod/int32", single(fb.BuiltinOperatorFLOOR_MOD, ot, o, []tspec{i32(3, 4), constI32([]int32{4}, 3, -2, 5, 2)}, i32(3, 4)))
	add("l2_normalization/f32", single(fb.BuiltinOperatorL2_NORMALIZATION, fb.BuiltinOptionsL2NormOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.L2NormOptionsStart(b)
		return fb.L2NormOptionsEnd(b)
	}, []tspec{fshape(3, 8)}, fshape(3, 8)))
	add("scatter_nd/f32", single(fb.BuiltinOperatorSCATTER_ND, ot, o, []tspec{constI32([]int32{3, 1}, 4, 0, 2), fshape(3, 2), constI32([]int32{2}, 6, 2)}, fshape(6, 2)))
	add("rank/f32", single(fb.BuiltinOperatorRANK, ot, o, []tspec{x4}, i32()))
	add("local_response_normalization/f32", single(fb.BuiltinOperatorLOCAL_RESPONSE_NORMALIZATION, fb.BuiltinOptionsLocalResponseNormalizationOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.LocalResponseNormalizationOptionsStart(b)
		fb.LocalResponseNormalizationOptionsAddRadius(b, 2)
		fb.LocalResponseNormalizationOptionsAddBias(b, 1.5)
		fb.LocalResponseNormalizationOptionsAddAlpha(b, 0.3)
		fb.LocalResponseNormalizationOptionsAddBeta(b, 0.75)
		return fb.LocalResponseNormalizationOptionsEnd(b)
	}, []tspec{fshape(1, 3, 4, 7)}, fshape(1, 3, 4, 7)))
	for _, ax := range []int32{-1, 0} {
		a := ax
		osh := []int32{3, 5}
		if ax == 0 {
			osh = []int32{5, 3}
		}
		add(fmt.Sprintf("one_hot/f32/axis%d", ax), single(fb.BuiltinOperatorONE_HOT, fb.BuiltinOptionsOneHotOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.OneHotOptionsStart(b)
			fb.OneHotOptionsAddAxis(b, a)
			return fb.OneHotOptionsEnd(b)
		}, []tspec{i32(3), constI32([]int32{}, 5), constF([]int32{}, 2.5), constF([]int32{}, -1)}, fshape(osh...)))
	}
	add("embedding_lookup/f32", single(fb.BuiltinOperatorEMBEDDING_LOOKUP, ot, o, []tspec{constI32([]int32{4}, 3, 0, 2, 3), fshape(5, 6)}, fshape(4, 6)))
	for _, code := range []fb.BuiltinOperator{fb.BuiltinOperatorREDUCE_ANY, fb.BuiltinOperatorREDUCE_ALL} {
		add(strings.ToLower(code.String())+"/bool", single(code, fb.BuiltinOptionsReducerOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.ReducerOptionsStart(b)
			return fb.ReducerOptionsEnd(b)
		}, []tspec{boolT(3, 4), constI32([]int32{1}, 1)}, boolT(3)))
	}
	return cs
}

// withInput adds an unused graph input (the interpreter needs one to
// bind) to a model whose op reads constants only.
func (m mspec) withInput(t tspec) mspec {
	t.name = "unused"
	idx := m.add(t)
	m.inputs = append(m.inputs, idx)
	return m
}

// dynamicCases have a dynamic (-1) dim in shape_signature: the importer
// keeps it symbolic, the interpreter runs the static shape.
func dynamicCases() []oneOp {
	var cs []oneOp
	dyn := func(t tspec, sig ...int32) tspec { t.sig = sig; return t }
	add := func(name string, m mspec) { cs = append(cs, oneOp{name: name, m: m, lo: -2, hi: 2}) }
	ot, o := convOpts(fb.PaddingSAME, 1, 1, fb.ActivationFunctionTypeRELU)
	add("conv_2d/f32/dynamic_batch", single(fb.BuiltinOperatorCONV_2D, ot, o, []tspec{dyn(fshape(1, 6, 6, 3), -1, 6, 6, 3),
		constF([]int32{4, 3, 3, 3}, randFloats(31, 108, -1, 1)...), constF([]int32{4}, 0.1, 0.2, -0.1, 0)}, dyn(fshape(1, 6, 6, 4), -1, 6, 6, 4)))
	ot, o = addOpts(fb.ActivationFunctionTypeNONE)
	add("add/f32/dynamic_dims", single(fb.BuiltinOperatorADD, ot, o, []tspec{dyn(fshape(1, 5, 3), -1, -1, 3), constF([]int32{3}, 1, 2, 3)}, dyn(fshape(1, 5, 3), -1, -1, 3)))
	ot, o = fcOpts(fb.ActivationFunctionTypeNONE, false)
	add("fully_connected/f32/dynamic_batch", single(fb.BuiltinOperatorFULLY_CONNECTED, ot, o, []tspec{dyn(fshape(2, 4), -1, 4),
		constF([]int32{3, 4}, randFloats(32, 12, -1, 1)...), constF([]int32{3}, 0.5, -0.5, 0)}, dyn(fshape(2, 3), -1, 3)))
	add("softmax/f32/dynamic_batch", single(fb.BuiltinOperatorSOFTMAX, fb.BuiltinOptionsSoftmaxOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.SoftmaxOptionsStart(b)
		fb.SoftmaxOptionsAddBeta(b, 1)
		return fb.SoftmaxOptionsEnd(b)
	}, []tspec{dyn(fshape(2, 6), -1, 6)}, dyn(fshape(2, 6), -1, 6)))
	add("mean/f32/dynamic_spatial", single(fb.BuiltinOperatorMEAN, fb.BuiltinOptionsReducerOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.ReducerOptionsStart(b)
		fb.ReducerOptionsAddKeepDims(b, false)
		return fb.ReducerOptionsEnd(b)
	}, []tspec{dyn(fshape(1, 4, 4, 3), 1, -1, -1, 3), constI32([]int32{2}, 1, 2)}, fshape(1, 3)))
	ot, o = addOpts(fb.ActivationFunctionTypeNONE)
	add("add/int8/dynamic_batch", single(fb.BuiltinOperatorADD, ot, o, []tspec{dyn(q8(0.02, 1, 2, 6), -1, 6), dyn(q8(0.03, -2, 2, 6), -1, 6)}, dyn(q8(0.05, 0, 2, 6), -1, 6)))
	for i := range cs {
		cs[i].exact = true
	}
	return cs
}
