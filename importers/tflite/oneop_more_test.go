package tflite

import (
	"encoding/binary"
	"fmt"

	flatbuffers "github.com/google/flatbuffers/go"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// moreCases are the builtins whose one-op check came last: WHERE (the
// coordinates form, a data-dependent output shape), float SVDF and float
// UNIDIRECTIONAL_SEQUENCE_LSTM.
func moreCases() []oneOp {
	var cs []oneOp
	add := func(name string, m mspec, lo, hi float64) {
		cs = append(cs, oneOp{name: name, m: m, lo: lo, hi: hi, exact: true})
	}
	coords := func(rank int32) tspec {
		return tspec{typ: fb.TensorTypeINT64, shape: []int32{1, rank}, sig: []int32{-1, rank}}
	}
	ot, o := noOpts()
	add("where/bool/rank2", single(fb.BuiltinOperatorWHERE, ot, o, []tspec{{typ: fb.TensorTypeBOOL, shape: []int32{3, 5}}}, coords(2)), -2, 2)
	add("where/bool/rank3", single(fb.BuiltinOperatorWHERE, ot, o, []tspec{{typ: fb.TensorTypeBOOL, shape: []int32{2, 3, 4}}}, coords(3)), -2, 2)
	// An int32 condition (inputs in [0, 4), so about a quarter are zero).
	add("where/int32/rank2", single(fb.BuiltinOperatorWHERE, ot, o, []tspec{{typ: fb.TensorTypeINT32, shape: []int32{4, 3}}}, coords(2)), -2, 2)
	// SVDF, float: one step from the zero state, and three steps through
	// the state variable.
	add("svdf/f32/rank1/relu", svdfModel(1, 1, fb.ActivationFunctionTypeRELU, true, false), -2, 2)
	add("svdf/f32/rank2/none", svdfModel(1, 2, fb.ActivationFunctionTypeNONE, true, false), -2, 2)
	add("svdf/f32/rank2/no_bias/3_steps", svdfModel(3, 2, fb.ActivationFunctionTypeNONE, false, false), -2, 2)
	add("svdf/f32/rank1/relu/3_steps", svdfModel(3, 1, fb.ActivationFunctionTypeRELU, true, false), -2, 2)
	add("svdf/hybrid_int8/rank2/3_steps", svdfModel(3, 2, fb.ActivationFunctionTypeNONE, true, true), -2, 2)
	add("svdf/hybrid_int8/rank1/relu", svdfModel(1, 1, fb.ActivationFunctionTypeRELU, false, true), -2, 2)
	add("svdf/int8/rank2/relu/3_steps", svdfIntModel(3, 2, fb.ActivationFunctionTypeRELU), -2, 2)
	add("svdf/int8/rank1/relu/3_steps", svdfIntModel(3, 1, fb.ActivationFunctionTypeRELU), -2, 2)
	// UNIDIRECTIONAL_SEQUENCE_LSTM, float: the forms the importer maps to
	// ONNX LSTM (plain, time-major, peephole) and the ones it unrolls (CIFG,
	// projection, cell and projection clip).
	for _, l := range []struct {
		name string
		v    lstmVariant
	}{
		{"plain", lstmVariant{}},
		{"time_major", lstmVariant{timeMajor: true}},
		{"peephole", lstmVariant{peephole: true}},
		{"cifg", lstmVariant{cifg: true}},
		{"cifg_peephole", lstmVariant{cifg: true, peephole: true}},
		{"projection", lstmVariant{projection: true}},
		{"cell_clip", lstmVariant{cellClip: 0.3}},
		{"projection_clip_time_major", lstmVariant{projection: true, projClip: 0.1, timeMajor: true}},
	} {
		add("unidirectional_sequence_lstm/f32/"+l.name, lstmModel(l.v), -2, 2)
	}
	return cs
}

func svdfOpts(rank int32, act fb.ActivationFunctionType) (fb.BuiltinOptions, optFn) {
	return fb.BuiltinOptionsSVDFOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.SVDFOptionsStart(b)
		fb.SVDFOptionsAddRank(b, rank)
		fb.SVDFOptionsAddFusedActivationFunction(b, act)
		return fb.SVDFOptionsEnd(b)
	}
}

// svdfModel is steps float SVDF ops sharing one zero-initialised state
// variable (batch 2, input 5, 4 filters of memory 3, rank 2 so 2 units):
// step i reads input i and writes output i, so from the second step on the
// output depends on the state the step before shifted in.
// With hybrid the weights are int8 (per tensor, zero point 0): TFLite's
// hybrid kernel, which quantizes the input per batch.
func svdfModel(steps int, rank int32, act fb.ActivationFunctionType, bias, hybrid bool) mspec {
	const batch, inSize, filters, memory = 2, 5, 4, 3
	units := filters / rank
	var m mspec
	wfs := tspec{name: "weights_feature", typ: fb.TensorTypeFLOAT32, shape: []int32{filters, inSize}, data: f32Bytes(randFloats(41, filters*inSize, -1, 1)...)}
	wts := tspec{name: "weights_time", typ: fb.TensorTypeFLOAT32, shape: []int32{filters, memory}, data: f32Bytes(randFloats(42, filters*memory, -1, 1)...)}
	if hybrid {
		wfs.typ, wfs.data, wfs.scale, wfs.zp = fb.TensorTypeINT8, i8Bytes(randInt8s(41, filters*inSize)...), []float32{0.008}, []int64{0}
		wts.typ, wts.data, wts.scale, wts.zp = fb.TensorTypeINT8, i8Bytes(randInt8s(42, filters*memory)...), []float32{0.007}, []int64{0}
	}
	wf, wt := m.add(wfs), m.add(wts)
	b := int32(-1)
	if bias {
		b = m.add(tspec{name: "bias", typ: fb.TensorTypeFLOAT32, shape: []int32{units}, data: f32Bytes(randFloats(43, int(units), -1, 1)...)})
	}
	st := m.add(tspec{name: "state", typ: fb.TensorTypeFLOAT32, shape: []int32{batch, filters * memory}, variable: true})
	ot, o := svdfOpts(rank, act)
	for i := range steps {
		x := m.add(tspec{name: fmt.Sprintf("x%d", i), typ: fb.TensorTypeFLOAT32, shape: []int32{batch, inSize}})
		y := m.add(tspec{name: fmt.Sprintf("y%d", i), typ: fb.TensorTypeFLOAT32, shape: []int32{batch, units}})
		m.inputs = append(m.inputs, x)
		m.outputs = append(m.outputs, y)
		m.ops = append(m.ops, opspec{code: fb.BuiltinOperatorSVDF, optType: ot, opts: o, inputs: []int32{x, wf, wt, b, st}, outputs: []int32{y}})
	}
	return m
}

// lstmVariant picks the optional parts of a float UNIDIRECTIONAL_SEQUENCE_LSTM.
type lstmVariant struct {
	timeMajor, cifg, peephole, projection bool
	cellClip, projClip                    float32
}

// lstmModel is one float UNIDIRECTIONAL_SEQUENCE_LSTM (batch 2, 5 steps,
// input 3, 4 cells; 2 outputs with a projection) over zero-initialised
// output and cell state variables, its 24 inputs in the schema's order.
func lstmModel(v lstmVariant) mspec {
	const batch, steps, nIn, nCell = 2, 5, 3, 4
	nOut := int32(nCell)
	if v.projection {
		nOut = 2
	}
	var m mspec
	seed := uint64(50)
	w := func(name string, shape ...int32) int32 {
		seed++
		return m.add(tspec{name: name, typ: fb.TensorTypeFLOAT32, shape: shape, data: f32Bytes(randFloats(seed, numel32(shape), -0.8, 0.8)...)})
	}
	xs := []int32{batch, steps, nIn}
	ys := []int32{batch, steps, nOut}
	if v.timeMajor {
		xs, ys = []int32{steps, batch, nIn}, []int32{steps, batch, nOut}
	}
	ins := make([]int32, 24)
	for i := range ins {
		ins[i] = -1
	}
	ins[0] = m.add(tspec{name: "x", typ: fb.TensorTypeFLOAT32, shape: xs})
	m.inputs = []int32{ins[0]}
	if !v.cifg {
		ins[1] = w("w_input", nCell, nIn)
	}
	ins[2], ins[3], ins[4] = w("w_forget", nCell, nIn), w("w_cell", nCell, nIn), w("w_output", nCell, nIn)
	if !v.cifg {
		ins[5] = w("r_input", nCell, nOut)
	}
	ins[6], ins[7], ins[8] = w("r_forget", nCell, nOut), w("r_cell", nCell, nOut), w("r_output", nCell, nOut)
	if v.peephole {
		if !v.cifg {
			ins[9] = w("p_input", nCell)
		}
		ins[10], ins[11] = w("p_forget", nCell), w("p_output", nCell)
	}
	if !v.cifg {
		ins[12] = w("b_input", nCell)
	}
	ins[13], ins[14], ins[15] = w("b_forget", nCell), w("b_cell", nCell), w("b_output", nCell)
	if v.projection {
		ins[16], ins[17] = w("projection", nOut, nCell), w("projection_bias", nOut)
	}
	ins[18] = m.add(tspec{name: "output_state", typ: fb.TensorTypeFLOAT32, shape: []int32{batch, nOut}, variable: true})
	ins[19] = m.add(tspec{name: "cell_state", typ: fb.TensorTypeFLOAT32, shape: []int32{batch, nCell}, variable: true})
	y := m.add(tspec{name: "y", typ: fb.TensorTypeFLOAT32, shape: ys})
	m.outputs = []int32{y}
	m.ops = []opspec{{code: fb.BuiltinOperatorUNIDIRECTIONAL_SEQUENCE_LSTM, inputs: ins, outputs: []int32{y},
		optType: fb.BuiltinOptionsUnidirectionalSequenceLSTMOptions, opts: func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.UnidirectionalSequenceLSTMOptionsStart(b)
			fb.UnidirectionalSequenceLSTMOptionsAddFusedActivationFunction(b, fb.ActivationFunctionTypeTANH)
			fb.UnidirectionalSequenceLSTMOptionsAddCellClip(b, v.cellClip)
			fb.UnidirectionalSequenceLSTMOptionsAddProjClip(b, v.projClip)
			fb.UnidirectionalSequenceLSTMOptionsAddTimeMajor(b, v.timeMajor)
			return fb.UnidirectionalSequenceLSTMOptionsEnd(b)
		}}}
	return m
}

// svdfIntModel is steps integer SVDF ops (TFLite's EvalIntegerSVDF: int8
// input and output, int8 weights_feature, int16 weights_time and state,
// int32 bias) sharing one zero-initialised state variable; shapes as in
// svdfModel. The interpreter's integer kernel runs only with RELU
// (svdf.cc: "params->activation != kTfLiteActRelu").
func svdfIntModel(steps int, rank int32, act fb.ActivationFunctionType) mspec {
	const batch, inSize, filters, memory = 2, 5, 4, 3
	units := filters / rank
	var m mspec
	wf := m.add(tspec{name: "weights_feature", typ: fb.TensorTypeINT8, shape: []int32{filters, inSize}, data: i8Bytes(randInt8s(44, filters*inSize)...),
		scale: []float32{0.01}, zp: []int64{0}})
	wtv := make([]byte, 2*filters*memory)
	for i, v := range randInt8s(45, filters*memory) {
		binary.LittleEndian.PutUint16(wtv[2*i:], uint16(int16(v)*97))
	}
	wt := m.add(tspec{name: "weights_time", typ: fb.TensorTypeINT16, shape: []int32{filters, memory}, data: wtv, scale: []float32{1.0 / 16384}, zp: []int64{0}})
	b := m.add(tspec{name: "bias", typ: fb.TensorTypeINT32, shape: []int32{units}, data: i32Bytes(randI32s(units, 300)...), scale: []float32{0.0005}, zp: []int64{0}})
	st := m.add(tspec{name: "state", typ: fb.TensorTypeINT16, shape: []int32{batch, filters * memory}, variable: true, scale: []float32{0.0004}, zp: []int64{0}})
	ot, o := svdfOpts(rank, act)
	for i := range steps {
		x := m.add(tspec{name: fmt.Sprintf("x%d", i), typ: fb.TensorTypeINT8, shape: []int32{batch, inSize}, scale: []float32{0.02}, zp: []int64{3}})
		y := m.add(tspec{name: fmt.Sprintf("y%d", i), typ: fb.TensorTypeINT8, shape: []int32{batch, units}, scale: []float32{0.08}, zp: []int64{-5}})
		m.inputs = append(m.inputs, x)
		m.outputs = append(m.outputs, y)
		m.ops = append(m.ops, opspec{code: fb.BuiltinOperatorSVDF, optType: ot, opts: o, inputs: []int32{x, wf, wt, b, st}, outputs: []int32{y}})
	}
	return m
}

// randI32s are n seeded int32 values in [-r, r].
func randI32s(n, r int32) []int32 {
	v := make([]int32, n)
	for i, x := range randFloats(46, int(n), -float32(r), float32(r)) {
		v[i] = int32(x)
	}
	return v
}
