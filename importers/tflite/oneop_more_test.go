package tflite

import (
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// moreCases are the builtins whose one-op check came last: WHERE (the
// coordinates form, a data-dependent output shape).
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
	return cs
}
