package tflite

import (
	"fmt"
	"strings"

	flatbuffers "github.com/google/flatbuffers/go"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// int8Cases are integer-quantized cases of the ops int8 models use most:
// convolutions with per-channel weights and long accumulations,
// elementwise ops with different input and output scales, pooling,
// reductions, activations and requantization.
func int8Cases() []oneOp {
	var cs []oneOp
	add := func(name string, m mspec) { cs = append(cs, oneOp{name: name, m: m, lo: -2, hi: 2}) }
	perChannel := func(seed uint64, shape []int32, dim int32) tspec {
		n := numel32(shape)
		ch := shape[dim]
		sc := make([]float32, ch)
		for i := range sc {
			sc[i] = 0.002 + 0.0007*float32(i%5)
		}
		return tspec{typ: fb.TensorTypeINT8, shape: shape, data: i8Bytes(randInt8s(seed, n)...), scale: sc, zp: make([]int64, ch), qdim: dim}
	}
	bias := func(seed uint64, inScale float32, w tspec) tspec {
		n := len(w.scale)
		if w.qdim == 0 {
			n = int(w.shape[0])
		} else {
			n = int(w.shape[w.qdim])
		}
		sc := make([]float32, len(w.scale))
		for i := range sc {
			sc[i] = inScale * w.scale[i]
		}
		v := make([]int32, n)
		for i, r := range randInt8s(seed, n) {
			v[i] = int32(r) * 97
		}
		return tspec{typ: fb.TensorTypeINT32, shape: []int32{int32(n)}, data: i32Bytes(v...), scale: sc, zp: make([]int64, len(sc))}
	}
	for _, cin := range []int32{3, 64} {
		for _, p := range []struct {
			name string
			pad  fb.Padding
			s    int32
		}{{"same", fb.PaddingSAME, 1}, {"valid_s2", fb.PaddingVALID, 2}} {
			for _, ac := range acts[:3] {
				in := q8(0.02, -5, 1, 7, 7, cin)
				oh := outSize(7, 3, p.s, 1, p.pad)
				w := perChannel(uint64(cin)+31, []int32{6, 3, 3, cin}, 0)
				ot, o := convOpts(p.pad, p.s, 1, ac.a)
				add(fmt.Sprintf("conv_2d/int8/cin%d/%s/%s", cin, p.name, ac.name), single(fb.BuiltinOperatorCONV_2D, ot, o,
					[]tspec{in, w, bias(5, 0.02, w)}, q8(0.05, 7, 1, oh, oh, 6)))
			}
		}
	}
	for _, mult := range []int32{1, 2} {
		in := q8(0.03, 2, 1, 6, 6, 4)
		w := perChannel(41, []int32{1, 3, 3, 4 * mult}, 3)
		ot, o := dwOpts(fb.PaddingSAME, 1, 1, mult, fb.ActivationFunctionTypeRELU)
		add(fmt.Sprintf("depthwise_conv_2d/int8/mult%d", mult), single(fb.BuiltinOperatorDEPTHWISE_CONV_2D, ot, o,
			[]tspec{in, w, bias(6, 0.03, w)}, q8(0.02, -128, 1, 6, 6, 4*mult)))
	}
	for _, k := range []int32{16, 256, 2048} {
		in := q8(0.025, 1, 2, k)
		w := tspec{typ: fb.TensorTypeINT8, shape: []int32{10, k}, data: i8Bytes(randInt8s(uint64(k), int(10*k))...), scale: []float32{0.004}, zp: []int64{0}}
		b := tspec{typ: fb.TensorTypeINT32, shape: []int32{10}, data: i32Bytes(3, -5, 100, 0, 7, -300, 12, 9, -1, 40), scale: []float32{0.025 * 0.004}, zp: []int64{0}}
		ot, o := fcOpts(fb.ActivationFunctionTypeNONE, false)
		add(fmt.Sprintf("fully_connected/int8/k%d", k), single(fb.BuiltinOperatorFULLY_CONNECTED, ot, o, []tspec{in, w, b}, q8(0.1, -3, 2, 10)))
	}
	// Elementwise, scales and zero points differing.
	a, b := q8(0.02, -10, 1, 4, 4, 8), q8(0.035, 5, 1, 4, 4, 8)
	for _, ac := range acts[:3] {
		ot, o := addOpts(ac.a)
		add("add/int8/"+ac.name, single(fb.BuiltinOperatorADD, ot, o, []tspec{a, b}, q8(0.04, 3, 1, 4, 4, 8)))
		ot, o = subOpts(ac.a)
		add("sub/int8/"+ac.name, single(fb.BuiltinOperatorSUB, ot, o, []tspec{a, b}, q8(0.04, 3, 1, 4, 4, 8)))
		ot, o = mulOpts(ac.a)
		add("mul/int8/"+ac.name, single(fb.BuiltinOperatorMUL, ot, o, []tspec{a, b}, q8(0.01, -2, 1, 4, 4, 8)))
	}
	ot, o := addOpts(fb.ActivationFunctionTypeNONE)
	add("add/int8/broadcast", single(fb.BuiltinOperatorADD, ot, o, []tspec{a, q8(0.01, 0, 8)}, q8(0.03, 0, 1, 4, 4, 8)))
	for _, code := range []fb.BuiltinOperator{fb.BuiltinOperatorMAXIMUM, fb.BuiltinOperatorMINIMUM} {
		ot, o := noOpts()
		add(strings.ToLower(code.String())+"/int8", single(code, ot, o, []tspec{a, a}, a))
	}
	for _, code := range []fb.BuiltinOperator{fb.BuiltinOperatorAVERAGE_POOL_2D, fb.BuiltinOperatorMAX_POOL_2D} {
		for _, p := range []fb.Padding{fb.PaddingSAME, fb.PaddingVALID} {
			ot, o := poolOpts(p, 2, 2, fb.ActivationFunctionTypeNONE)
			oh := outSize(5, 2, 2, 1, p)
			add(fmt.Sprintf("%s/int8/%v", strings.ToLower(code.String()), strings.ToLower(p.String())), single(code, ot, o, []tspec{q8(0.02, 4, 1, 5, 5, 3)}, q8(0.02, 4, 1, oh, oh, 3)))
		}
	}
	// Activations with their TFLite output scales.
	x := q8(0.05, 0, 1, 4, 4, 8)
	for _, u := range []struct {
		code fb.BuiltinOperator
		out  tspec
	}{
		{fb.BuiltinOperatorRELU, q8(0.03, -128, 1, 4, 4, 8)}, {fb.BuiltinOperatorRELU6, q8(6.0/255, -128, 1, 4, 4, 8)},
		{fb.BuiltinOperatorLOGISTIC, q8(1.0/256, -128, 1, 4, 4, 8)}, {fb.BuiltinOperatorTANH, q8(1.0/128, 0, 1, 4, 4, 8)},
		{fb.BuiltinOperatorHARD_SWISH, q8(0.04, -40, 1, 4, 4, 8)}, {fb.BuiltinOperatorABS, q8(0.05, -128, 1, 4, 4, 8)},
	} {
		ot, o := noOpts()
		add(strings.ToLower(u.code.String())+"/int8", single(u.code, ot, o, []tspec{x}, u.out))
	}
	add("leaky_relu/int8", single(fb.BuiltinOperatorLEAKY_RELU, fb.BuiltinOptionsLeakyReluOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.LeakyReluOptionsStart(b)
		fb.LeakyReluOptionsAddAlpha(b, 0.1)
		return fb.LeakyReluOptionsEnd(b)
	}, []tspec{x}, q8(0.03, -20, 1, 4, 4, 8)))
	add("softmax/int8", single(fb.BuiltinOperatorSOFTMAX, fb.BuiltinOptionsSoftmaxOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.SoftmaxOptionsStart(b)
		fb.SoftmaxOptionsAddBeta(b, 1)
		return fb.SoftmaxOptionsEnd(b)
	}, []tspec{q8(0.1, 0, 2, 10)}, q8(1.0/256, -128, 2, 10)))
	add("mean/int8", single(fb.BuiltinOperatorMEAN, fb.BuiltinOptionsReducerOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.ReducerOptionsStart(b)
		fb.ReducerOptionsAddKeepDims(b, true)
		return fb.ReducerOptionsEnd(b)
	}, []tspec{q8(0.02, 3, 1, 4, 4, 8), constI32([]int32{2}, 1, 2)}, q8(0.01, -1, 1, 1, 1, 8)))
	add("concatenation/int8", single(fb.BuiltinOperatorCONCATENATION, fb.BuiltinOptionsConcatenationOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.ConcatenationOptionsStart(b)
		fb.ConcatenationOptionsAddAxis(b, 3)
		return fb.ConcatenationOptionsEnd(b)
	}, []tspec{q8(0.02, 3, 1, 2, 2, 3), q8(0.02, 3, 1, 2, 2, 4)}, q8(0.02, 3, 1, 2, 2, 7)))
	add("quantize/f32_to_int8", single(fb.BuiltinOperatorQUANTIZE, fb.BuiltinOptionsNONE, nil, []tspec{fshape(2, 9)}, q8(0.013, 4, 2, 9)))
	add("quantize/int8_requantize", single(fb.BuiltinOperatorQUANTIZE, fb.BuiltinOptionsNONE, nil, []tspec{q8(0.02, 3, 2, 9)}, q8(0.03, -9, 2, 9)))
	add("quantize/f32_to_int16", single(fb.BuiltinOperatorQUANTIZE, fb.BuiltinOptionsNONE, nil, []tspec{fshape(2, 9)}, q16(0.0003, 2, 9)))
	add("dequantize/int8", single(fb.BuiltinOperatorDEQUANTIZE, fb.BuiltinOptionsNONE, nil, []tspec{q8(0.02, 3, 2, 9)}, fshape(2, 9)))
	add("dequantize/int16", single(fb.BuiltinOperatorDEQUANTIZE, fb.BuiltinOptionsNONE, nil, []tspec{q16(0.001, 2, 9)}, fshape(2, 9)))
	// int16 elementwise.
	a16, b16 := q16(0.0005, 1, 4, 4, 8), q16(0.0007, 1, 4, 4, 8)
	ot, o = addOpts(fb.ActivationFunctionTypeNONE)
	add("add/int16", single(fb.BuiltinOperatorADD, ot, o, []tspec{a16, b16}, q16(0.001, 1, 4, 4, 8)))
	ot, o = mulOpts(fb.ActivationFunctionTypeNONE)
	add("mul/int16", single(fb.BuiltinOperatorMUL, ot, o, []tspec{a16, b16}, q16(0.0002, 1, 4, 4, 8)))
	ot, o = noOpts()
	add("relu/int16", single(fb.BuiltinOperatorRELU, ot, o, []tspec{a16}, q16(0.0005, 1, 4, 4, 8)))
	// Every integer output exact but these, within one step: the float
	// graph (QuantizeLinear of the float result) rounds differently from
	// TFLite's integer kernels on a few values.
	withinOne := map[string]bool{"relu6/int8": true, "hard_swish/int8": true, "leaky_relu/int8": true}
	for i := range cs {
		cs[i].exact = !withinOne[cs[i].name]
	}
	return cs
}
