package tflite

import (
	flatbuffers "github.com/google/flatbuffers/go"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// controlCases are the one-op cases of the builtins that call subgraphs or
// use resource variables: IF (constant and input conditions), WHILE (a
// trip count that depends on the input), CALL_ONCE initialising a variable,
// and VAR_HANDLE / ASSIGN_VARIABLE / READ_VARIABLE in the main graph.
func controlCases() []oneOp {
	var cs []oneOp
	add := func(name string, m mspec, also ...fb.BuiltinOperator) {
		cs = append(cs, oneOp{name: name, m: m, lo: -2, hi: 2, exact: true, also: also})
	}
	f23 := func(name string) tspec { return tspec{name: name, typ: fb.TensorTypeFLOAT32, shape: []int32{2, 3}} }
	// unary is a subgraph of one input-less-options op from a to b.
	unary := func(code fb.BuiltinOperator) mspec {
		g := mspec{}
		a, b := g.add(f23("a")), g.add(f23("b"))
		g.ops = []opspec{{code: code, inputs: []int32{a}, outputs: []int32{b}}}
		g.inputs, g.outputs = []int32{a}, []int32{b}
		return g
	}
	ifModel := func(cond tspec) mspec {
		m := mspec{subgraphs: []mspec{unary(fb.BuiltinOperatorSQUARE), unary(fb.BuiltinOperatorNEG)}}
		cond.name = "cond"
		c := m.add(cond)
		x, y := m.add(f23("x")), m.add(f23("y"))
		m.ops = []opspec{{code: fb.BuiltinOperatorIF, inputs: []int32{c, x}, outputs: []int32{y}, optType: fb.BuiltinOptionsIfOptions,
			opts: func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
				fb.IfOptionsStart(b)
				fb.IfOptionsAddThenSubgraphIndex(b, 1)
				fb.IfOptionsAddElseSubgraphIndex(b, 2)
				return fb.IfOptionsEnd(b)
			}}}
		m.outputs = []int32{y}
		if cond.data == nil {
			m.inputs = []int32{c, x}
		} else {
			m.inputs = []int32{x}
		}
		return m
	}
	add("if/f32/cond_true", ifModel(tspec{typ: fb.TensorTypeBOOL, shape: []int32{}, data: []byte{1}}))
	add("if/f32/cond_false", ifModel(tspec{typ: fb.TensorTypeBOOL, shape: []int32{}, data: []byte{0}}))
	add("if/f32/cond_input", ifModel(tspec{typ: fb.TensorTypeBOOL, shape: []int32{1}}))

	// WHILE i < 4 { i += 1; x *= 1.5 }, i and x inputs (i in [0, 4)).
	i32 := func(name string) tspec { return tspec{name: name, typ: fb.TensorTypeINT32, shape: []int32{}} }
	cond := mspec{}
	{
		i, x := cond.add(i32("i")), cond.add(f23("x"))
		lim := cond.add(tspec{name: "limit", typ: fb.TensorTypeINT32, shape: []int32{}, data: i32Bytes(4)})
		c := cond.add(tspec{name: "c", typ: fb.TensorTypeBOOL, shape: []int32{}})
		cond.ops = []opspec{{code: fb.BuiltinOperatorLESS, inputs: []int32{i, lim}, outputs: []int32{c}}}
		cond.inputs, cond.outputs = []int32{i, x}, []int32{c}
	}
	body := mspec{}
	{
		i, x := body.add(i32("i")), body.add(f23("x"))
		one := body.add(tspec{name: "one", typ: fb.TensorTypeINT32, shape: []int32{}, data: i32Bytes(1)})
		k := body.add(tspec{name: "k", typ: fb.TensorTypeFLOAT32, shape: []int32{}, data: f32Bytes(1.5)})
		i2, x2 := body.add(i32("i_next")), body.add(f23("x_next"))
		aot, ao := addOpts(fb.ActivationFunctionTypeNONE)
		mot, mo := mulOpts(fb.ActivationFunctionTypeNONE)
		body.ops = []opspec{{code: fb.BuiltinOperatorADD, inputs: []int32{i, one}, outputs: []int32{i2}, optType: aot, opts: ao},
			{code: fb.BuiltinOperatorMUL, inputs: []int32{x, k}, outputs: []int32{x2}, optType: mot, opts: mo}}
		body.inputs, body.outputs = []int32{i, x}, []int32{i2, x2}
	}
	for _, name := range []string{"while/int32_f32/counter", "while/int32_f32/counter_b", "while/int32_f32/counter_cc"} {
		m := mspec{subgraphs: []mspec{cond, body}}
		i, x := m.add(i32("i")), m.add(f23("x"))
		io, xo := m.add(i32("i_out")), m.add(f23("x_out"))
		m.ops = []opspec{{code: fb.BuiltinOperatorWHILE, inputs: []int32{i, x}, outputs: []int32{io, xo}, optType: fb.BuiltinOptionsWhileOptions,
			opts: func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
				fb.WhileOptionsStart(b)
				fb.WhileOptionsAddCondSubgraphIndex(b, 1)
				fb.WhileOptionsAddBodySubgraphIndex(b, 2)
				return fb.WhileOptionsEnd(b)
			}}}
		m.inputs, m.outputs = []int32{i, x}, []int32{io, xo}
		add(name, m)
	}

	// Resource variables.
	handle := func(g *mspec) (int32, opspec) {
		h := g.add(tspec{name: "handle", typ: fb.TensorTypeRESOURCE, shape: []int32{}})
		return h, opspec{code: fb.BuiltinOperatorVAR_HANDLE, outputs: []int32{h}, optType: fb.BuiltinOptionsVarHandleOptions,
			opts: func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
				cn, sn := b.CreateString(""), b.CreateString("offset")
				fb.VarHandleOptionsStart(b)
				fb.VarHandleOptionsAddContainer(b, cn)
				fb.VarHandleOptionsAddSharedName(b, sn)
				return fb.VarHandleOptionsEnd(b)
			}}
	}
	// CALL_ONCE: the init subgraph assigns a constant to the variable; the
	// main graph reads it and adds it to x.
	{
		init := mspec{}
		h, vh := handle(&init)
		v := init.add(tspec{name: "offset_init", typ: fb.TensorTypeFLOAT32, shape: []int32{2, 3}, data: f32Bytes(randFloats(61, 6, -1, 1)...)})
		init.ops = []opspec{vh, {code: fb.BuiltinOperatorASSIGN_VARIABLE, inputs: []int32{h, v}}}
		m := mspec{subgraphs: []mspec{init}}
		x := m.add(f23("x"))
		mh, mvh := handle(&m)
		val, y := m.add(f23("offset_value")), m.add(f23("y"))
		aot, ao := addOpts(fb.ActivationFunctionTypeNONE)
		m.ops = []opspec{callOnce(1), mvh,
			{code: fb.BuiltinOperatorREAD_VARIABLE, inputs: []int32{mh}, outputs: []int32{val}},
			{code: fb.BuiltinOperatorADD, inputs: []int32{x, val}, outputs: []int32{y}, optType: aot, opts: ao}}
		m.inputs, m.outputs = []int32{x}, []int32{y}
		add("call_once/f32/init_variable", m, fb.BuiltinOperatorVAR_HANDLE, fb.BuiltinOperatorREAD_VARIABLE, fb.BuiltinOperatorASSIGN_VARIABLE)
	}
	// VAR_HANDLE, ASSIGN_VARIABLE of the input, READ_VARIABLE.
	{
		m := mspec{}
		x := m.add(f23("x"))
		h, vh := handle(&m)
		y := m.add(f23("y"))
		m.ops = []opspec{vh, {code: fb.BuiltinOperatorASSIGN_VARIABLE, inputs: []int32{h, x}},
			{code: fb.BuiltinOperatorREAD_VARIABLE, inputs: []int32{h}, outputs: []int32{y}}}
		m.inputs, m.outputs = []int32{x}, []int32{y}
		add("var_handle/f32/assign_read", m, fb.BuiltinOperatorASSIGN_VARIABLE, fb.BuiltinOperatorREAD_VARIABLE)
	}
	return cs
}
