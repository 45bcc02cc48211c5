package tflite

import (
	"fmt"

	flatbuffers "github.com/google/flatbuffers/go"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// moreCases are the builtins whose one-op check came last: WHERE (the
// coordinates form, a data-dependent output shape) and float SVDF.
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
	add("svdf/f32/rank1/relu", svdfModel(1, 1, fb.ActivationFunctionTypeRELU, true), -2, 2)
	add("svdf/f32/rank2/none", svdfModel(1, 2, fb.ActivationFunctionTypeNONE, true), -2, 2)
	add("svdf/f32/rank2/no_bias/3_steps", svdfModel(3, 2, fb.ActivationFunctionTypeNONE, false), -2, 2)
	add("svdf/f32/rank1/relu/3_steps", svdfModel(3, 1, fb.ActivationFunctionTypeRELU, true), -2, 2)
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
func svdfModel(steps int, rank int32, act fb.ActivationFunctionType, bias bool) mspec {
	const batch, inSize, filters, memory = 2, 5, 4, 3
	units := filters / rank
	var m mspec
	wf := m.add(tspec{name: "weights_feature", typ: fb.TensorTypeFLOAT32, shape: []int32{filters, inSize}, data: f32Bytes(randFloats(41, filters*inSize, -1, 1)...)})
	wt := m.add(tspec{name: "weights_time", typ: fb.TensorTypeFLOAT32, shape: []int32{filters, memory}, data: f32Bytes(randFloats(42, filters*memory, -1, 1)...)})
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
