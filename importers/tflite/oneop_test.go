package tflite

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"
	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
	tfliteruntime "github.com/onnxconv/onnxconv/runtimes/tflite"
)

// One-op tests: a model of one builtin operator (and option set) written
// with the flatbuffers builder, run in the TFLite interpreter
// (runtimes/tflite) and through the importer and the executor on the same
// inputs. Float outputs agree within 1e-5 of the output's largest
// magnitude (NaN where the interpreter gives NaN), quantized outputs
// within one step, integer and bool outputs exactly.

type oneOp struct {
	name string
	m    mspec
	// lo, hi bound the float inputs (default [-2, 2]).
	lo, hi float64
	// exact asks integer outputs to be exact, not within one step.
	exact bool
	// also lists further builtins of the main graph the case checks
	// (VAR_HANDLE, READ_VARIABLE ... work only together); the ops table
	// lists the case under each.
	also []fb.BuiltinOperator
}

func fshape(s ...int32) tspec { return tspec{typ: fb.TensorTypeFLOAT32, shape: s} }

func q8(scale float32, zp int64, s ...int32) tspec {
	return tspec{typ: fb.TensorTypeINT8, shape: s, scale: []float32{scale}, zp: []int64{zp}}
}

func q16(scale float32, s ...int32) tspec {
	return tspec{typ: fb.TensorTypeINT16, shape: s, scale: []float32{scale}, zp: []int64{0}}
}

func constF(shape []int32, v ...float32) tspec {
	return tspec{typ: fb.TensorTypeFLOAT32, shape: shape, data: f32Bytes(v...)}
}

func constI32(shape []int32, v ...int32) tspec {
	return tspec{typ: fb.TensorTypeINT32, shape: shape, data: i32Bytes(v...)}
}

type optFn = func(*flatbuffers.Builder) flatbuffers.UOffsetT

// single builds a model of one op: ins are its inputs (activations become
// graph inputs, constants stay constants), outs its outputs.
func single(code fb.BuiltinOperator, ot fb.BuiltinOptions, opts optFn, ins []tspec, outs ...tspec) mspec {
	var m mspec
	op := opspec{code: code, optType: ot, opts: opts}
	for i, t := range ins {
		if t.name == "" {
			t.name = fmt.Sprintf("in%d", i)
		}
		if t.typ == 0 && t.shape == nil && t.data == nil {
			op.inputs = append(op.inputs, -1) // optional input left out
			continue
		}
		idx := m.add(t)
		op.inputs = append(op.inputs, idx)
		if t.data == nil {
			m.inputs = append(m.inputs, idx)
		}
	}
	for i, t := range outs {
		if t.name == "" {
			t.name = fmt.Sprintf("out%d", i)
		}
		idx := m.add(t)
		op.outputs = append(op.outputs, idx)
		m.outputs = append(m.outputs, idx)
	}
	m.ops = []opspec{op}
	return m
}

// Options helpers.

func addOpts(act fb.ActivationFunctionType) (fb.BuiltinOptions, optFn) {
	return fb.BuiltinOptionsAddOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.AddOptionsStart(b)
		fb.AddOptionsAddFusedActivationFunction(b, act)
		return fb.AddOptionsEnd(b)
	}
}

func subOpts(act fb.ActivationFunctionType) (fb.BuiltinOptions, optFn) {
	return fb.BuiltinOptionsSubOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.SubOptionsStart(b)
		fb.SubOptionsAddFusedActivationFunction(b, act)
		return fb.SubOptionsEnd(b)
	}
}

func mulOpts(act fb.ActivationFunctionType) (fb.BuiltinOptions, optFn) {
	return fb.BuiltinOptionsMulOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.MulOptionsStart(b)
		fb.MulOptionsAddFusedActivationFunction(b, act)
		return fb.MulOptionsEnd(b)
	}
}

func divOpts(act fb.ActivationFunctionType) (fb.BuiltinOptions, optFn) {
	return fb.BuiltinOptionsDivOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.DivOptionsStart(b)
		fb.DivOptionsAddFusedActivationFunction(b, act)
		return fb.DivOptionsEnd(b)
	}
}

func convOpts(pad fb.Padding, s, d int32, act fb.ActivationFunctionType) (fb.BuiltinOptions, optFn) {
	return fb.BuiltinOptionsConv2DOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.Conv2DOptionsStart(b)
		fb.Conv2DOptionsAddPadding(b, pad)
		fb.Conv2DOptionsAddStrideH(b, s)
		fb.Conv2DOptionsAddStrideW(b, s)
		fb.Conv2DOptionsAddDilationHFactor(b, d)
		fb.Conv2DOptionsAddDilationWFactor(b, d)
		fb.Conv2DOptionsAddFusedActivationFunction(b, act)
		return fb.Conv2DOptionsEnd(b)
	}
}

func dwOpts(pad fb.Padding, s, d, mult int32, act fb.ActivationFunctionType) (fb.BuiltinOptions, optFn) {
	return fb.BuiltinOptionsDepthwiseConv2DOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.DepthwiseConv2DOptionsStart(b)
		fb.DepthwiseConv2DOptionsAddPadding(b, pad)
		fb.DepthwiseConv2DOptionsAddStrideH(b, s)
		fb.DepthwiseConv2DOptionsAddStrideW(b, s)
		fb.DepthwiseConv2DOptionsAddDilationHFactor(b, d)
		fb.DepthwiseConv2DOptionsAddDilationWFactor(b, d)
		fb.DepthwiseConv2DOptionsAddDepthMultiplier(b, mult)
		fb.DepthwiseConv2DOptionsAddFusedActivationFunction(b, act)
		return fb.DepthwiseConv2DOptionsEnd(b)
	}
}

func poolOpts(pad fb.Padding, k, s int32, act fb.ActivationFunctionType) (fb.BuiltinOptions, optFn) {
	return fb.BuiltinOptionsPool2DOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.Pool2DOptionsStart(b)
		fb.Pool2DOptionsAddPadding(b, pad)
		fb.Pool2DOptionsAddStrideH(b, s)
		fb.Pool2DOptionsAddStrideW(b, s)
		fb.Pool2DOptionsAddFilterHeight(b, k)
		fb.Pool2DOptionsAddFilterWidth(b, k)
		fb.Pool2DOptionsAddFusedActivationFunction(b, act)
		return fb.Pool2DOptionsEnd(b)
	}
}

func fcOpts(act fb.ActivationFunctionType, keep bool) (fb.BuiltinOptions, optFn) {
	return fb.BuiltinOptionsFullyConnectedOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.FullyConnectedOptionsStart(b)
		fb.FullyConnectedOptionsAddFusedActivationFunction(b, act)
		fb.FullyConnectedOptionsAddKeepNumDims(b, keep)
		return fb.FullyConnectedOptionsEnd(b)
	}
}

func noOpts() (fb.BuiltinOptions, optFn) { return fb.BuiltinOptionsNONE, nil }

// seeded values.
func randFloats(seed uint64, n int, lo, hi float32) []float32 {
	r := rand.New(rand.NewPCG(seed, 11))
	v := make([]float32, n)
	for i := range v {
		v[i] = lo + (hi-lo)*float32(r.Float64())
	}
	return v
}

func randInt8s(seed uint64, n int) []int8 {
	r := rand.New(rand.NewPCG(seed, 13))
	v := make([]int8, n)
	for i := range v {
		v[i] = int8(r.IntN(255) - 127)
	}
	return v
}

func numel32(s []int32) int {
	n := 1
	for _, d := range s {
		n *= int(d)
	}
	return n
}

var acts = []struct {
	name string
	a    fb.ActivationFunctionType
}{
	{"none", fb.ActivationFunctionTypeNONE}, {"relu", fb.ActivationFunctionTypeRELU},
	{"relu6", fb.ActivationFunctionTypeRELU6}, {"relu_n1_to_1", fb.ActivationFunctionTypeRELU_N1_TO_1},
}

// oneOpCases lists every case.
func oneOpCases() []oneOp {
	var cs []oneOp
	add := func(name string, m mspec, lohi ...float64) {
		c := oneOp{name: name, m: m, lo: -2, hi: 2}
		if len(lohi) == 2 {
			c.lo, c.hi = lohi[0], lohi[1]
		}
		cs = append(cs, c)
	}
	x := fshape(1, 4, 5, 3)
	// Unary float ops.
	for _, u := range []struct {
		code   fb.BuiltinOperator
		lo, hi float64
	}{
		{fb.BuiltinOperatorLOGISTIC, -4, 4}, {fb.BuiltinOperatorTANH, -3, 3}, {fb.BuiltinOperatorRELU, -2, 2},
		{fb.BuiltinOperatorEXP, -3, 3}, {fb.BuiltinOperatorLOG, 0.01, 5}, {fb.BuiltinOperatorSQRT, 0, 5},
		{fb.BuiltinOperatorABS, -2, 2}, {fb.BuiltinOperatorNEG, -2, 2}, {fb.BuiltinOperatorFLOOR, -5, 5},
		{fb.BuiltinOperatorCEIL, -5, 5}, {fb.BuiltinOperatorSIN, -4, 4}, {fb.BuiltinOperatorCOS, -4, 4},
		{fb.BuiltinOperatorROUND, -5, 5}, {fb.BuiltinOperatorSIGN, -2, 2}, {fb.BuiltinOperatorELU, -3, 3},
		{fb.BuiltinOperatorHARD_SWISH, -5, 5}, {fb.BuiltinOperatorRSQRT, 0.05, 5}, {fb.BuiltinOperatorSQUARE, -3, 3},
		{fb.BuiltinOperatorRELU6, -3, 9}, {fb.BuiltinOperatorRELU_N1_TO_1, -3, 3}, {fb.BuiltinOperatorRELU_0_TO_1, -1, 2},
	} {
		ot, o := noOpts()
		add(strings.ToLower(u.code.String())+"/f32", single(u.code, ot, o, []tspec{x}, x), u.lo, u.hi)
	}
	add("leaky_relu/f32", single(fb.BuiltinOperatorLEAKY_RELU, fb.BuiltinOptionsLeakyReluOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.LeakyReluOptionsStart(b)
		fb.LeakyReluOptionsAddAlpha(b, 0.2)
		return fb.LeakyReluOptionsEnd(b)
	}, []tspec{x}, x))
	for _, approx := range []bool{false, true} {
		add(fmt.Sprintf("gelu/f32/approximate=%v", approx), single(fb.BuiltinOperatorGELU, fb.BuiltinOptionsGeluOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.GeluOptionsStart(b)
			fb.GeluOptionsAddApproximate(b, approx)
			return fb.GeluOptionsEnd(b)
		}, []tspec{x}, x), -4, 4)
	}
	// Binary float ops, same shape and broadcast.
	for _, bc := range []struct {
		name string
		a, b tspec
	}{
		{"same", fshape(1, 4, 5, 3), fshape(1, 4, 5, 3)},
		{"bcast_channel", fshape(1, 4, 5, 3), fshape(3)},
		{"bcast_both", fshape(2, 1, 3), fshape(1, 4, 1)},
	} {
		out := fshape(bcShape(bc.a.shape, bc.b.shape)...)
		bout := tspec{typ: fb.TensorTypeBOOL, shape: out.shape}
		for _, op := range []struct {
			code fb.BuiltinOperator
			bool bool
			lo   float64
		}{
			{fb.BuiltinOperatorMAXIMUM, false, -2}, {fb.BuiltinOperatorMINIMUM, false, -2},
			{fb.BuiltinOperatorPOW, false, 0.1}, {fb.BuiltinOperatorSQUARED_DIFFERENCE, false, -2},
			{fb.BuiltinOperatorFLOOR_DIV, false, 0.2},
			{fb.BuiltinOperatorLESS, true, -2}, {fb.BuiltinOperatorLESS_EQUAL, true, -2},
			{fb.BuiltinOperatorGREATER, true, -2}, {fb.BuiltinOperatorGREATER_EQUAL, true, -2},
			{fb.BuiltinOperatorEQUAL, true, -2}, {fb.BuiltinOperatorNOT_EQUAL, true, -2},
		} {
			o := out
			if op.bool {
				o = bout
			}
			ot, opts := noOpts()
			add(strings.ToLower(op.code.String())+"/f32/"+bc.name, single(op.code, ot, opts, []tspec{bc.a, bc.b}, o), op.lo, 2)
		}
		for _, ac := range acts {
			for _, op := range []struct {
				code fb.BuiltinOperator
				ot   fb.BuiltinOptions
				opts optFn
			}{
				func() (r struct {
					code fb.BuiltinOperator
					ot   fb.BuiltinOptions
					opts optFn
				}) {
					r.code = fb.BuiltinOperatorADD
					r.ot, r.opts = addOpts(ac.a)
					return
				}(),
				func() (r struct {
					code fb.BuiltinOperator
					ot   fb.BuiltinOptions
					opts optFn
				}) {
					r.code = fb.BuiltinOperatorSUB
					r.ot, r.opts = subOpts(ac.a)
					return
				}(),
				func() (r struct {
					code fb.BuiltinOperator
					ot   fb.BuiltinOptions
					opts optFn
				}) {
					r.code = fb.BuiltinOperatorMUL
					r.ot, r.opts = mulOpts(ac.a)
					return
				}(),
				func() (r struct {
					code fb.BuiltinOperator
					ot   fb.BuiltinOptions
					opts optFn
				}) {
					r.code = fb.BuiltinOperatorDIV
					r.ot, r.opts = divOpts(ac.a)
					return
				}(),
			} {
				if bc.name != "same" && ac.name != "none" {
					continue
				}
				lo := -2.0
				if op.code == fb.BuiltinOperatorDIV {
					lo = 0.25
				}
				add(fmt.Sprintf("%s/f32/%s/%s", strings.ToLower(op.code.String()), bc.name, ac.name), single(op.code, op.ot, op.opts, []tspec{bc.a, bc.b}, out), lo, 2)
			}
		}
	}
	ot, opts := noOpts()
	add("prelu/f32", single(fb.BuiltinOperatorPRELU, ot, opts, []tspec{x, constF([]int32{3}, 0.1, -0.2, 0.3)}, x))
	cs = append(cs, convCases()...)
	cs = append(cs, quantCases()...)
	cs = append(cs, int8Cases()...)
	cs = append(cs, shapeCases()...)
	cs = append(cs, dynamicCases()...)
	cs = append(cs, sparseCases()...)
	cs = append(cs, moreCases()...)
	cs = append(cs, controlCases()...)
	cs = append(cs, builtinCases()...)
	cs = append(cs, resourceCases()...)
	return cs
}

// bcShape is the broadcast shape of a and b.
func bcShape(a, b []int32) []int32 {
	n := max(len(a), len(b))
	out := make([]int32, n)
	for i := range out {
		da, db := int32(1), int32(1)
		if j := i - (n - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (n - len(b)); j >= 0 {
			db = b[j]
		}
		out[i] = max(da, db)
	}
	return out
}

// convCases are the convolution, pooling and fully connected cases, float
// and int8.
func convCases() []oneOp {
	var cs []oneOp
	add := func(name string, m mspec) { cs = append(cs, oneOp{name: name, m: m, lo: -2, hi: 2}) }
	for _, p := range []struct {
		name string
		pad  fb.Padding
		s, d int32
	}{{"same", fb.PaddingSAME, 1, 1}, {"valid", fb.PaddingVALID, 1, 1}, {"same_s2", fb.PaddingSAME, 2, 1}, {"valid_s2", fb.PaddingVALID, 2, 1}, {"same_d2", fb.PaddingSAME, 1, 2}} {
		in := fshape(1, 7, 8, 3)
		oh, ow := outSize(7, 3, p.s, p.d, p.pad), outSize(8, 3, p.s, p.d, p.pad)
		w := constF([]int32{4, 3, 3, 3}, randFloats(1, 108, -1, 1)...)
		bias := constF([]int32{4}, 0.1, -0.2, 0.3, 0)
		for _, ac := range acts {
			if p.name != "same" && ac.name != "none" {
				continue
			}
			ot, o := convOpts(p.pad, p.s, p.d, ac.a)
			add("conv_2d/f32/"+p.name+"/"+ac.name, single(fb.BuiltinOperatorCONV_2D, ot, o, []tspec{in, w, bias}, fshape(1, oh, ow, 4)))
		}
		for _, mult := range []int32{1, 2} {
			dw := constF([]int32{1, 3, 3, 3 * mult}, randFloats(2, int(9*3*mult), -1, 1)...)
			db := constF([]int32{3 * mult}, randFloats(3, int(3*mult), -1, 1)...)
			ot, o := dwOpts(p.pad, p.s, p.d, mult, fb.ActivationFunctionTypeNONE)
			add(fmt.Sprintf("depthwise_conv_2d/f32/%s/mult%d", p.name, mult), single(fb.BuiltinOperatorDEPTHWISE_CONV_2D, ot, o, []tspec{in, dw, db}, fshape(1, oh, ow, 3*mult)))
		}
		if p.d == 1 {
			for _, code := range []fb.BuiltinOperator{fb.BuiltinOperatorAVERAGE_POOL_2D, fb.BuiltinOperatorMAX_POOL_2D, fb.BuiltinOperatorL2_POOL_2D} {
				ot, o := poolOpts(p.pad, 3, p.s, fb.ActivationFunctionTypeNONE)
				add(strings.ToLower(code.String())+"/f32/"+p.name, single(code, ot, o, []tspec{in}, fshape(1, oh, ow, 3)))
			}
		}
	}
	// Fully connected.
	for _, keep := range []bool{false, true} {
		for _, ac := range acts[:2] {
			ot, o := fcOpts(ac.a, keep)
			out := fshape(2, 3, 5)
			if !keep {
				out = fshape(6, 5)
			}
			add(fmt.Sprintf("fully_connected/f32/keep=%v/%s", keep, ac.name), single(fb.BuiltinOperatorFULLY_CONNECTED, ot, o,
				[]tspec{fshape(2, 3, 4), constF([]int32{5, 4}, randFloats(4, 20, -1, 1)...), constF([]int32{5}, randFloats(5, 5, -1, 1)...)}, out))
		}
	}
	ot, o := fcOpts(fb.ActivationFunctionTypeNONE, false)
	add("fully_connected/f32/no_bias", single(fb.BuiltinOperatorFULLY_CONNECTED, ot, o,
		[]tspec{fshape(3, 4), constF([]int32{5, 4}, randFloats(6, 20, -1, 1)...), {}}, fshape(3, 5)))
	return cs
}

func outSize(in, k, s, d int32, pad fb.Padding) int32 {
	if pad == fb.PaddingSAME {
		return (in + s - 1) / s
	}
	eff := (k-1)*d + 1
	return (in-eff)/s + 1
}

// oneOpInputs makes the inputs of a case: floats uniform in [lo, hi], int8
// over their range, int16 over ±4096, int32 in [0, 4), bool at random.
func oneOpInputs(t *testing.T, c oneOp, m *model, mp *onnxpb.ModelProto) []*onnxpb.TensorProto {
	t.Helper()
	g := m.subgraphs[0]
	rng := rand.New(rand.NewPCG(uint64(len(c.name)), 5))
	var ins []*onnxpb.TensorProto
	for k, idx := range g.inputs {
		tt := g.tensors[idx]
		name := mp.GetGraph().GetInput()[k].GetName()
		n := int(numel(tt.static))
		var dt onnxpb.TensorProto_DataType
		var raw []byte
		switch tt.typ {
		case fb.TensorTypeFLOAT32:
			dt, raw = onnxpb.TensorProto_FLOAT, make([]byte, 4*n)
			for i := 0; i < n; i++ {
				binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(c.lo+(c.hi-c.lo)*rng.Float64())))
			}
		case fb.TensorTypeINT8:
			dt, raw = onnxpb.TensorProto_INT8, make([]byte, n)
			for i := range raw {
				raw[i] = byte(rng.IntN(256))
			}
		case fb.TensorTypeUINT8:
			dt, raw = onnxpb.TensorProto_UINT8, make([]byte, n)
			for i := range raw {
				raw[i] = byte(rng.IntN(256))
			}
		case fb.TensorTypeINT16:
			dt, raw = onnxpb.TensorProto_INT16, make([]byte, 2*n)
			for i := 0; i < n; i++ {
				binary.LittleEndian.PutUint16(raw[2*i:], uint16(int16(rng.IntN(8193)-4096)))
			}
		case fb.TensorTypeINT32:
			dt, raw = onnxpb.TensorProto_INT32, make([]byte, 4*n)
			for i := 0; i < n; i++ {
				binary.LittleEndian.PutUint32(raw[4*i:], uint32(rng.IntN(4)))
			}
		case fb.TensorTypeINT64:
			dt, raw = onnxpb.TensorProto_INT64, make([]byte, 8*n)
			for i := 0; i < n; i++ {
				binary.LittleEndian.PutUint64(raw[8*i:], uint64(rng.IntN(4)))
			}
		case fb.TensorTypeBOOL:
			dt, raw = onnxpb.TensorProto_BOOL, make([]byte, n)
			for i := range raw {
				raw[i] = byte(rng.IntN(2))
			}
		default:
			t.Fatalf("input %q: element type %v not generated", tt.name, tt.typ)
		}
		ins = append(ins, tensorProto(name, dt, append([]int64{}, tt.static...), raw))
	}
	return ins
}

// TestOneOpAgainstTFLite runs every one-op case in the TFLite interpreter
// and through the importer and the executor.
func TestOneOpAgainstTFLite(t *testing.T) {
	env := tfliteEnv(t)
	cases := oneOpCases()
	dir := t.TempDir()
	// One node process per interpreter serves every case (each case's
	// model loaded into it in turn), rather than one per case: the
	// package's runner (pool_test.go).
	seen := map[string]bool{}
	checks := map[fb.BuiltinOperator][]string{}
	for _, c := range cases {
		if seen[c.name] {
			t.Fatalf("two cases named %s", c.name)
		}
		seen[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			data := c.m.bytes()
			path := filepath.Join(dir, strings.NewReplacer("/", "_", "=", "_").Replace(c.name)+".tflite")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			m, err := readModel(data)
			if err != nil {
				t.Fatalf("reading the model: %v", err)
			}
			mp, err := importProto(data, Options{})
			if err != nil {
				t.Fatalf("Import: %v", err)
			}
			inputs := oneOpInputs(t, c, m, mp)
			res, err := runTFLite(t, env, path, inputs)
			var re *tfliteruntime.RunError
			if errors.As(err, &re) && re.Kind == "load" {
				t.Fatalf("the interpreter refuses the test model: %v", err)
			}
			if err != nil {
				t.Fatalf("tflite runtime: %v", err)
			}
			got := runExecutor(t, mp, inputs)
			if len(got) != len(res.Outputs) {
				t.Fatalf("%d outputs, the interpreter gave %d", len(got), len(res.Outputs))
			}
			for i, want := range res.Outputs {
				checkNaN(t, want.GetName(), got[i], want)
				r := compareOutput(t, want.GetName(), got[i], want)
				if c.exact && onnxpb.TensorProto_DataType(want.GetDataType()) != onnxpb.TensorProto_FLOAT && !strings.Contains(r, "max 0 step(s)") {
					t.Errorf("output %q: %s, want every value exact", want.GetName(), r)
				}
				t.Logf("%s: %s", c.name, r)
				if !t.Failed() {
					for _, code := range append([]fb.BuiltinOperator{c.m.ops[0].code}, c.also...) {
						checks[code] = append(checks[code], fmt.Sprintf("`%s` (%s)", c.name, shortResult(r)))
					}
				}
			}
		})
	}
	t.Logf("%d one-op cases", len(cases))
	if os.Getenv(writeOpsDocEnv) == "1" {
		writeOpsDoc(t, len(cases), checks)
	}
}

// shortResult abbreviates a compareOutput result for the ops table.
func shortResult(r string) string {
	if i := strings.Index(r, ", max error "); i >= 0 {
		rest := r[i+len(", max error "):]
		if j := strings.Index(rest, " "); j >= 0 {
			rest = rest[:j]
		}
		return "max rel. error " + rest
	}
	if i := strings.Index(r, "max "); i >= 0 {
		return r[i:]
	}
	return r
}

// checkNaN fails when the two float outputs have NaN in different places
// (compareOutput's error bound skips NaN).
func checkNaN(t *testing.T, name string, got, want *onnxpb.TensorProto) {
	t.Helper()
	if onnxpb.TensorProto_DataType(want.GetDataType()) != onnxpb.TensorProto_FLOAT ||
		onnxpb.TensorProto_DataType(got.GetDataType()) != onnxpb.TensorProto_FLOAT {
		return
	}
	g, w := tensorFloats(t, got), tensorFloats(t, want)
	if len(g) != len(w) {
		return
	}
	for i := range w {
		if math.IsNaN(float64(g[i])) != math.IsNaN(float64(w[i])) || math.IsInf(float64(g[i]), 0) != math.IsInf(float64(w[i]), 0) {
			t.Errorf("output %q[%d]: %v, the interpreter's %v", name, i, g[i], w[i])
			return
		}
	}
}

// quantCases are int8, int16 and int32 cases: a per-channel bias (its
// quantized_dimension 0, the weight's 3), tensors
// with empty and repeated names, an int32-quantized output.
func quantCases() []oneOp {
	var cs []oneOp
	add := func(name string, m mspec) { cs = append(cs, oneOp{name: name, m: m, lo: -2, hi: 2}) }
	// Depthwise int8 with a per-channel bias quantized along "dimension 3".
	in := q8(0.05, 3, 1, 6, 6, 8)
	wv := randInt8s(21, 9*8)
	ws := make([]float32, 8)
	bs := make([]float32, 8)
	bv := make([]int32, 8)
	for i := range ws {
		ws[i] = 0.01 + 0.002*float32(i)
		bs[i] = 0.05 * ws[i]
		bv[i] = int32(i*37 - 100)
	}
	w := tspec{typ: fb.TensorTypeINT8, shape: []int32{1, 3, 3, 8}, data: i8Bytes(wv...), scale: ws, zp: make([]int64, 8), qdim: 3}
	b := tspec{typ: fb.TensorTypeINT32, shape: []int32{8}, data: i32Bytes(bv...), scale: bs, zp: make([]int64, 8)}
	ot, o := dwOpts(fb.PaddingSAME, 1, 1, 1, fb.ActivationFunctionTypeRELU6)
	add("depthwise_conv_2d/int8/per_channel_bias", single(fb.BuiltinOperatorDEPTHWISE_CONV_2D, ot, o, []tspec{in, w, b}, q8(0.04, -128, 1, 6, 6, 8)))
	// Empty and repeated tensor names.
	m := single(fb.BuiltinOperatorADD, fb.BuiltinOptionsAddOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.AddOptionsStart(b)
		return fb.AddOptionsEnd(b)
	}, []tspec{fshape(2, 3), fshape(2, 3)}, fshape(2, 3))
	m.tensors[0].name, m.tensors[1].name, m.tensors[2].name = "", "", "x"
	m2 := mspec{}
	a := m2.add(tspec{name: "t", typ: fb.TensorTypeFLOAT32, shape: []int32{2, 3}})
	bb := m2.add(tspec{name: "t", typ: fb.TensorTypeFLOAT32, shape: []int32{2, 3}})
	y1 := m2.add(tspec{name: "t", typ: fb.TensorTypeFLOAT32, shape: []int32{2, 3}})
	y2 := m2.add(tspec{name: "", typ: fb.TensorTypeFLOAT32, shape: []int32{2, 3}})
	m2.ops = []opspec{{code: fb.BuiltinOperatorSUB, inputs: []int32{a, bb}, outputs: []int32{y1}}, {code: fb.BuiltinOperatorMUL, inputs: []int32{y1, a}, outputs: []int32{y2}}}
	m2.inputs, m2.outputs = []int32{a, bb}, []int32{y2, y1}
	add("add/f32/empty_names", m)
	add("sub_mul/f32/repeated_names", m2)
	// int32 activations with quantization parameters (TFLite's int32 ADD
	// ignores them).
	i32q := tspec{typ: fb.TensorTypeINT32, shape: []int32{2, 5}, scale: []float32{1}, zp: []int64{0}}
	add("add/int32/quantized", single(fb.BuiltinOperatorADD, fb.BuiltinOptionsAddOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.AddOptionsStart(b)
		return fb.AddOptionsEnd(b)
	}, []tspec{i32q, i32q}, i32q))
	return cs
}

// TestBiasQuantizedDimension: a per-channel bias whose quantized_dimension
// is the weight's (3, as converters write it for depthwise filters) while
// it has one axis imports as the bias along its own axis 0, the graph the
// same as with quantized_dimension 0 (which the interpreter checks in
// TestOneOpAgainstTFLite/depthwise_conv_2d/int8/per_channel_bias).
func TestBiasQuantizedDimension(t *testing.T) {
	var c oneOp
	for _, q := range quantCases() {
		if q.name == "depthwise_conv_2d/int8/per_channel_bias" {
			c = q
		}
	}
	want, err := importProto(c.m.bytes(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.m.tensors[2].qdim = 3
	got, err := importProto(c.m.bytes(), Options{})
	if err != nil {
		t.Fatalf("bias with quantized_dimension 3: %v", err)
	}
	if !proto.Equal(got.GetGraph(), want.GetGraph()) {
		t.Error("the graph differs from the one with quantized_dimension 0")
	}
	c.m.tensors[1].shape = []int32{1, 3, 8, 3} // weight's scales no longer match its dimension 3
	if _, err := importProto(c.m.bytes(), Options{}); err == nil || !strings.Contains(err.Error(), "per-channel scales do not match dimension 3") {
		t.Errorf("weight with 8 scales on dimension 3 of [1 3 8 3]: %v", err)
	}
}
