package tflite

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// strBytes is a TFLite string tensor's buffer: the count, the offsets,
// the bytes.
func strBytes(ss ...string) []byte {
	head := 4 * (len(ss) + 2)
	b := make([]byte, head)
	binary.LittleEndian.PutUint32(b, uint32(len(ss)))
	off := head
	for i, s := range ss {
		binary.LittleEndian.PutUint32(b[4+4*i:], uint32(off))
		b = append(b, s...)
		off += len(s)
	}
	binary.LittleEndian.PutUint32(b[4+4*len(ss):], uint32(off))
	return b
}

// callOnce is a CALL_ONCE of init subgraph sub.
func callOnce(sub int32) opspec {
	return opspec{code: fb.BuiltinOperatorCALL_ONCE, optType: fb.BuiltinOptionsCallOnceOptions,
		opts: func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.CallOnceOptionsStart(b)
			fb.CallOnceOptionsAddInitSubgraphIndex(b, sub)
			return fb.CallOnceOptionsEnd(b)
		}}
}

func u64Bytes(v ...uint64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return b
}

// resourceCases are the hash table, MULTINOMIAL,
// STABLEHLO_RNG_BIT_GENERATOR and BITCAST cases.
func resourceCases() []oneOp {
	var cs []oneOp
	add := func(name string, m mspec, also ...fb.BuiltinOperator) {
		cs = append(cs, oneOp{name: name, m: m, lo: -2, hi: 2, exact: true, also: also})
	}
	// Hash tables: the init subgraph creates table 1 (int64 -> string) and
	// table 2 (string -> int64) and imports constant contents (key 2
	// repeated: the first value wins); the main graph looks the int32
	// input (0..3, key 1 absent: the default) up in table 1, the strings
	// in table 2 (the default "?" absent there too), and adds table 1's
	// size.
	tableOp := func(g *mspec, id int32, k, v fb.TensorType) (int32, opspec) {
		h := g.add(tspec{name: fmt.Sprintf("table%d", id), typ: fb.TensorTypeRESOURCE, shape: []int32{1}})
		return h, opspec{code: fb.BuiltinOperatorHASHTABLE, outputs: []int32{h}, optType: fb.BuiltinOptionsHashtableOptions,
			opts: func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
				fb.HashtableOptionsStart(b)
				fb.HashtableOptionsAddTableId(b, id)
				fb.HashtableOptionsAddKeyDtype(b, k)
				fb.HashtableOptionsAddValueDtype(b, v)
				return fb.HashtableOptionsEnd(b)
			}}
	}
	{
		init := mspec{}
		h1, t1 := tableOp(&init, 1, fb.TensorTypeINT64, fb.TensorTypeSTRING)
		h2, t2 := tableOp(&init, 2, fb.TensorTypeSTRING, fb.TensorTypeINT64)
		k1 := init.add(tspec{name: "keys1", typ: fb.TensorTypeINT64, shape: []int32{5}, data: i64Bytes(0, 2, 3, 2, 9)})
		v1 := init.add(tspec{name: "values1", typ: fb.TensorTypeSTRING, shape: []int32{5}, data: strBytes("zero", "two", "three", "deux", "nine")})
		k2 := init.add(tspec{name: "keys2", typ: fb.TensorTypeSTRING, shape: []int32{4}, data: strBytes("three", "zero", "two", "nine")})
		v2 := init.add(tspec{name: "values2", typ: fb.TensorTypeINT64, shape: []int32{4}, data: i64Bytes(30, -1, 1<<40+20, 90)})
		init.ops = []opspec{t1, t2, {code: fb.BuiltinOperatorHASHTABLE_IMPORT, inputs: []int32{h1, k1, v1}},
			{code: fb.BuiltinOperatorHASHTABLE_IMPORT, inputs: []int32{h2, k2, v2}}}
		m := mspec{subgraphs: []mspec{init}}
		x := m.add(tspec{name: "x", typ: fb.TensorTypeINT32, shape: []int32{8}})
		mh1, mt1 := tableOp(&m, 1, fb.TensorTypeINT64, fb.TensorTypeSTRING)
		mh2, mt2 := tableOp(&m, 2, fb.TensorTypeSTRING, fb.TensorTypeINT64)
		x64 := m.add(tspec{name: "x64", typ: fb.TensorTypeINT64, shape: []int32{8}})
		d1 := m.add(tspec{name: "default1", typ: fb.TensorTypeSTRING, shape: []int32{1}, data: strBytes("?")})
		names := m.add(tspec{name: "names", typ: fb.TensorTypeSTRING, shape: []int32{8}})
		d2 := m.add(tspec{name: "default2", typ: fb.TensorTypeINT64, shape: []int32{1}, data: i64Bytes(-7)})
		ids := m.add(tspec{name: "ids", typ: fb.TensorTypeINT64, shape: []int32{8}})
		size := m.add(tspec{name: "size", typ: fb.TensorTypeINT64, shape: []int32{1}})
		ids32 := m.add(tspec{name: "ids32", typ: fb.TensorTypeINT32, shape: []int32{8}})
		size32 := m.add(tspec{name: "size32", typ: fb.TensorTypeINT32, shape: []int32{1}})
		y := m.add(tspec{name: "y", typ: fb.TensorTypeINT32, shape: []int32{8}})
		aot, ao := addOpts(fb.ActivationFunctionTypeNONE)
		m.ops = []opspec{callOnce(1), mt1, mt2,
			{code: fb.BuiltinOperatorCAST, inputs: []int32{x}, outputs: []int32{x64}},
			{code: fb.BuiltinOperatorHASHTABLE_FIND, inputs: []int32{mh1, x64, d1}, outputs: []int32{names}},
			{code: fb.BuiltinOperatorHASHTABLE_FIND, inputs: []int32{mh2, names, d2}, outputs: []int32{ids}},
			{code: fb.BuiltinOperatorHASHTABLE_SIZE, inputs: []int32{mh1}, outputs: []int32{size}},
			{code: fb.BuiltinOperatorCAST, inputs: []int32{ids}, outputs: []int32{ids32}},
			{code: fb.BuiltinOperatorCAST, inputs: []int32{size}, outputs: []int32{size32}},
			{code: fb.BuiltinOperatorADD, inputs: []int32{ids32, size32}, outputs: []int32{y}, optType: aot, opts: ao}}
		m.inputs, m.outputs = []int32{x}, []int32{y}
		// The case's first op is CALL_ONCE; it counts for the table ops.
		add("hashtable/int64_string_int64", m, fb.BuiltinOperatorHASHTABLE, fb.BuiltinOperatorHASHTABLE_IMPORT,
			fb.BuiltinOperatorHASHTABLE_FIND, fb.BuiltinOperatorHASHTABLE_SIZE)
	}
	// MULTINOMIAL: 7 samples from each of 3 rows of 5 logits in [-2, 2]
	// (an odd count: a row's last sample and the next row's first share
	// one Philox draw), and 101 from each of 4 rows of 12 with other
	// seeds (seed 0, a negative seed2).
	for _, mc := range []struct {
		name              string
		out               fb.TensorType
		rows, cols, draws int32
		seed, seed2       int64
	}{
		{"int32", fb.TensorTypeINT32, 3, 5, 7, 5, 9},
		{"int64", fb.TensorTypeINT64, 3, 5, 7, 5, 9},
		{"int32/4x12x101", fb.TensorTypeINT32, 4, 12, 101, 0, -3},
	} {
		add("multinomial/f32/"+mc.name,
			single(fb.BuiltinOperatorMULTINOMIAL, fb.BuiltinOptionsRandomOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
				fb.RandomOptionsStart(b)
				fb.RandomOptionsAddSeed(b, mc.seed)
				fb.RandomOptionsAddSeed2(b, mc.seed2)
				return fb.RandomOptionsEnd(b)
			}, []tspec{fshape(mc.rows, mc.cols), {typ: fb.TensorTypeINT32, shape: []int32{}, data: i32Bytes(mc.draws)}}, tspec{typ: mc.out, shape: []int32{mc.rows, mc.draws}}))
	}
	// STABLEHLO_RNG_BIT_GENERATOR with a constant state, its bits added to
	// an input (LiteRT.js leaves outputs of constant inputs unwritten): 30
	// words, not a multiple of Philox's 4; counters that carry.
	for _, r := range []struct {
		name  string
		alg   fb.RngAlgorithm
		state []uint64
		out   fb.TensorType
	}{
		{"philox/state2", fb.RngAlgorithmPHILOX, []uint64{7<<32 | 11, 1<<32 - 2}, fb.TensorTypeINT32},
		{"philox/state3", fb.RngAlgorithmPHILOX, []uint64{3, 5, 1<<63 + 9}, fb.TensorTypeINT32},
		{"default/state2", fb.RngAlgorithmDEFAULT, []uint64{42, 0}, fb.TensorTypeINT32},
		{"threefry", fb.RngAlgorithmTHREEFRY, []uint64{0x1234_5678_9abc_def0, 1<<32 - 1}, fb.TensorTypeINT32},
	} {
		var m mspec
		st := m.add(tspec{name: "state", typ: fb.TensorTypeUINT64, shape: []int32{int32(len(r.state))}, data: u64Bytes(r.state...)})
		key := m.add(tspec{name: "new_state", typ: fb.TensorTypeUINT64, shape: []int32{int32(len(r.state))}})
		bits := m.add(tspec{name: "bits", typ: r.out, shape: []int32{2, 3, 5}})
		x, y := m.add(tspec{name: "x", typ: r.out, shape: []int32{2, 3, 5}}), m.add(tspec{name: "y", typ: r.out, shape: []int32{2, 3, 5}})
		alg := r.alg
		aot, ao := addOpts(fb.ActivationFunctionTypeNONE)
		m.ops = []opspec{{code: fb.BuiltinOperatorSTABLEHLO_RNG_BIT_GENERATOR, inputs: []int32{st}, outputs: []int32{key, bits},
			optType2: fb.BuiltinOptions2StablehloRngBitGeneratorOptions, opts2: func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
				fb.StablehloRngBitGeneratorOptionsStart(b)
				fb.StablehloRngBitGeneratorOptionsAddAlgorithm(b, alg)
				return fb.StablehloRngBitGeneratorOptionsEnd(b)
			}}, {code: fb.BuiltinOperatorADD, inputs: []int32{bits, x}, outputs: []int32{y}, optType: aot, opts: ao}}
		m.inputs, m.outputs = []int32{x}, []int32{y}
		add("stablehlo_rng_bit_generator/"+r.name, m)
	}
	// BITCAST: uint8 bytes joined into int32 (negative where the top
	// byte is 128 or more); joined, raised to at least 2^23 by MAXIMUM
	// (the negative words and the small ones change) and split again.
	// (LiteRT.js takes no int8 or int16 output, tfjs-tflite has no BITCAST.)
	{
		var m mspec
		x := m.add(tspec{name: "x", typ: fb.TensorTypeUINT8, shape: []int32{2, 3, 4}})
		y := m.add(tspec{name: "y", typ: fb.TensorTypeINT32, shape: []int32{2, 3}})
		m.ops = []opspec{{code: fb.BuiltinOperatorBITCAST, inputs: []int32{x}, outputs: []int32{y}}}
		m.inputs, m.outputs = []int32{x}, []int32{y}
		add("bitcast/uint8_to_int32", m)
	}
	{
		var m mspec
		x := m.add(tspec{name: "x", typ: fb.TensorTypeUINT8, shape: []int32{4, 5, 4}})
		w := m.add(tspec{name: "words", typ: fb.TensorTypeINT32, shape: []int32{4, 5}})
		floor := m.add(tspec{name: "floor", typ: fb.TensorTypeINT32, shape: []int32{}, data: i32Bytes(1 << 23)})
		wm := m.add(tspec{name: "raised", typ: fb.TensorTypeINT32, shape: []int32{4, 5}})
		y := m.add(tspec{name: "y", typ: fb.TensorTypeUINT8, shape: []int32{4, 5, 4}})
		m.ops = []opspec{{code: fb.BuiltinOperatorBITCAST, inputs: []int32{x}, outputs: []int32{w}},
			{code: fb.BuiltinOperatorMAXIMUM, inputs: []int32{w, floor}, outputs: []int32{wm}},
			{code: fb.BuiltinOperatorBITCAST, inputs: []int32{wm}, outputs: []int32{y}}}
		m.inputs, m.outputs = []int32{x}, []int32{y}
		add("bitcast/uint8_to_int32_to_uint8", m)
	}
	return cs
}

// TestResourceRefusals: what the new mappings cannot write is refused
// with an error naming the tensor or the reason.
func TestResourceRefusals(t *testing.T) {
	tableOpts := func(k, v fb.TensorType) (fb.BuiltinOptions, optFn) {
		return fb.BuiltinOptionsHashtableOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.HashtableOptionsStart(b)
			fb.HashtableOptionsAddTableId(b, 3)
			fb.HashtableOptionsAddKeyDtype(b, k)
			fb.HashtableOptionsAddValueDtype(b, v)
			return fb.HashtableOptionsEnd(b)
		}
	}
	// A table filled from graph inputs.
	var inputTable mspec
	{
		h := inputTable.add(tspec{name: "table", typ: fb.TensorTypeRESOURCE, shape: []int32{1}})
		k := inputTable.add(tspec{name: "keys_in", typ: fb.TensorTypeINT64, shape: []int32{3}})
		v := inputTable.add(tspec{name: "values", typ: fb.TensorTypeSTRING, shape: []int32{3}, data: strBytes("a", "b", "c")})
		ot, o := tableOpts(fb.TensorTypeINT64, fb.TensorTypeSTRING)
		inputTable.ops = []opspec{{code: fb.BuiltinOperatorHASHTABLE, outputs: []int32{h}, optType: ot, opts: o},
			{code: fb.BuiltinOperatorHASHTABLE_IMPORT, inputs: []int32{h, k, v}}}
		inputTable.inputs = []int32{k}
	}
	var floatTable mspec
	{
		h := floatTable.add(tspec{name: "table", typ: fb.TensorTypeRESOURCE, shape: []int32{1}})
		ot, o := tableOpts(fb.TensorTypeINT32, fb.TensorTypeFLOAT32)
		floatTable.ops = []opspec{{code: fb.BuiltinOperatorHASHTABLE, outputs: []int32{h}, optType: ot, opts: o}}
	}
	var stateIn mspec
	{
		st := stateIn.add(tspec{name: "state_in", typ: fb.TensorTypeUINT64, shape: []int32{2}})
		k := stateIn.add(tspec{name: "key", typ: fb.TensorTypeUINT64, shape: []int32{2}})
		y := stateIn.add(tspec{name: "y", typ: fb.TensorTypeINT32, shape: []int32{4}})
		stateIn.ops = []opspec{{code: fb.BuiltinOperatorSTABLEHLO_RNG_BIT_GENERATOR, inputs: []int32{st}, outputs: []int32{k, y},
			optType2: fb.BuiltinOptions2StablehloRngBitGeneratorOptions, opts2: func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
				fb.StablehloRngBitGeneratorOptionsStart(b)
				return fb.StablehloRngBitGeneratorOptionsEnd(b)
			}}}
		stateIn.inputs, stateIn.outputs = []int32{st}, []int32{y}
	}
	ot, o := noOpts()
	for _, c := range []struct {
		name string
		m    mspec
		want string
	}{
		{"table_from_inputs", inputTable, `"keys_in" and values "values" must be constants`},
		{"table_int32_float", floatTable, "map INT64 to STRING or STRING to INT64"},
		{"rng_state_input", stateIn, `initial state "state_in" must be a constant`},
		{"bitcast_float", single(fb.BuiltinOperatorBITCAST, ot, o, []tspec{fshape(2, 3)}, tspec{typ: fb.TensorTypeINT32, shape: []int32{2, 3}}), "opset 26"},
		{"multinomial_seeds_0_0", single(fb.BuiltinOperatorMULTINOMIAL, fb.BuiltinOptionsRandomOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.RandomOptionsStart(b)
			return fb.RandomOptionsEnd(b)
		}, []tspec{fshape(2, 3), constI32(nil, 4)}, tspec{typ: fb.TensorTypeINT32, shape: []int32{2, 4}}), "nondeterministic"},
		{"bitcast_shape", single(fb.BuiltinOperatorBITCAST, ot, o, []tspec{{typ: fb.TensorTypeUINT8, shape: []int32{2, 3}}}, tspec{typ: fb.TensorTypeINT32, shape: []int32{2}}), "needs a last axis of 4"},
	} {
		_, err := Import(c.m.bytes(), Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

// FuzzTFLiteStrings: any buffer decodes to strings inside it or an error.
func FuzzTFLiteStrings(f *testing.F) {
	f.Add(strBytes("zero", "", "two"))
	f.Add(strBytes())
	f.Add([]byte{2, 0, 0, 0, 16, 0, 0, 0, 15, 0, 0, 0, 17, 0, 0, 0, 'a'})
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		ss, err := tfliteStrings(b)
		if err != nil {
			return
		}
		n := 0
		for _, s := range ss {
			n += len(s)
		}
		if n > len(b) {
			t.Fatalf("%d string bytes from a %d-byte buffer", n, len(b))
		}
	})
}
