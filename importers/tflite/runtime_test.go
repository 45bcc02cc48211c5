package tflite

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/executor"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	tfliteruntime "github.com/onnxconv/onnxconv/runtimes/tflite"
)

// writeDocsEnv, when 1, makes TestAgainstTFLiteRuntime write its table to
// docs/tflite-verification.md.
const writeDocsEnv = "ONNXCONV_WRITE_TFLITE_DOC"

// runtimeModels lists every .tflite the runtime cross-check covers.
func runtimeModels(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{
		filepath.Join(sharedDir, "models", "*.tflite"),
		filepath.Join(sharedDir, "seanet", "*.tflite"),
		filepath.Join("..", "..", "..", "shared", "models", "tflite", "*", "*.tflite"),
		filepath.Join(fixtureDir, "*.tflite"),
	} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("found %d .tflite files, want the 18 shared ones and the fixtures (is ../shared there?)", len(files))
	}
	return files
}

func tfliteEnv(t *testing.T) tfliteruntime.Env {
	t.Helper()
	_, modules := testpaths.Node(t, tfliteruntime.Package)
	env, err := tfliteruntime.Find(tfliteruntime.FindOptions{Getenv: func(k string) string {
		if k == tfliteruntime.EnvNodeModules {
			return modules
		}
		return os.Getenv(k)
	}})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// row is one model's line of the verification table.
type row struct {
	model, ops, build, result string
}

// TestAgainstTFLiteRuntime converts every model and compares the ONNX
// result, run on the executor, with the TFLite interpreter on the same
// generated inputs: float outputs within 1e-5 relative to the output's
// largest magnitude, quantized outputs within one step.
func TestAgainstTFLiteRuntime(t *testing.T) {
	env := tfliteEnv(t)
	var rows []row
	for _, path := range runtimeModels(t) {
		rel := strings.TrimPrefix(filepath.ToSlash(path), "../../../")
		rel = strings.TrimPrefix(rel, "../../")
		t.Run(rel, func(t *testing.T) {
			r := row{model: rel}
			defer func() {
				t.Logf("%s: %s (%s)", rel, r.result, r.build)
				rows = append(rows, r)
			}()
			data := readFile(t, path)
			m, err := readModel(data)
			if err != nil {
				t.Fatal(err)
			}
			r.ops = opList(m)
			mp, err := importProto(data, Options{})
			if err != nil {
				r.result = "import error: " + err.Error()
				t.Fatalf("Import: %v", err)
			}
			inputs := generateInputs(t, m, mp)
			res, err := runTFLite(t, env, path, inputs)
			var re *tfliteruntime.RunError
			if errors.As(err, &re) && re.Kind == "output-type" {
				// A limit of the runtime, not of the conversion: said in the table.
				r.result = "not computed by the runtime: " + firstLine(re.Detail)
				t.Logf("tflite runtime: %v", err)
				return
			}
			if err != nil {
				r.result = "runtime error: " + firstLine(err.Error())
				t.Fatalf("tflite runtime: %v", err)
			}
			r.build = res.Build
			got := runExecutor(t, mp, inputs)
			if len(got) != len(res.Outputs) {
				t.Fatalf("%d outputs, the runtime gave %d", len(got), len(res.Outputs))
			}
			var parts []string
			for i, want := range res.Outputs {
				name := mp.GetGraph().GetOutput()[i].GetName()
				if name != want.GetName() {
					t.Errorf("output %d is %q, the runtime's is %q", i, name, want.GetName())
				}
				res := compareOutput(t, name, got[i], want)
				if (strings.Contains(rel, "/seanet/") || strings.Contains(rel, "tflite-micro/models/")) && !strings.Contains(res, "max 0 step(s)") {
					// int16x8 and int8 convolutions (and the int8 ops these
					// models hold) are built as TFLite's integer arithmetic:
					// exact, not within one step.
					t.Errorf("output %q: %s, want every value exact", name, res)
				}
				parts = append(parts, short(name)+" "+res)
			}
			r.result = strings.Join(parts, "; ")
			if note := crossCheck(t, env, path, res.Build, inputs, res.Outputs); note != "" {
				r.build += "; " + note
			}
		})
	}
	if os.Getenv(writeDocsEnv) == "1" {
		writeDoc(t, rows)
	}
}

// crossCheck runs a float model (every input and output float32) on the
// other TFLite build than the one that computed want (build) — tfjs-tflite
// after LiteRT.js, LiteRT.js after tfjs-tflite — and checks that the two
// agree within 1e-5 of each output's largest magnitude; it describes the
// result for the table ("" when the model is not float or LiteRT.js is
// missing).
func crossCheck(t *testing.T, env tfliteruntime.Env, path, build string, inputs, want []*onnxpb.TensorProto) string {
	t.Helper()
	if env.LiteRTVersion == "" {
		return ""
	}
	for _, tp := range append(append([]*onnxpb.TensorProto{}, inputs...), want...) {
		if onnxpb.TensorProto_DataType(tp.GetDataType()) != onnxpb.TensorProto_FLOAT {
			return ""
		}
	}
	other, name := tfliteruntime.LiteRT, tfliteruntime.LiteRTPackage+" "+env.LiteRTVersion
	if strings.HasPrefix(build, tfliteruntime.LiteRTPackage) {
		other, name = tfliteruntime.TFJSTFLite, tfliteruntime.Package+" "+env.Version
	}
	res, err := runTFLiteWith(t, env, path, inputs, tfliteruntime.Options{Threads: 1, Interpreters: []tfliteruntime.Interpreter{other}})
	var re *tfliteruntime.RunError
	if errors.As(err, &re) && (re.Kind == "load" || re.Kind == "inputs" || re.Kind == "shape") {
		return "not run by " + name + ": " + firstLine(re.Detail)
	}
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return name + " error"
	}
	if len(res.Outputs) != len(want) {
		t.Errorf("%s gave %d outputs, %s %d", name, len(res.Outputs), build, len(want))
		return name + " output count differs"
	}
	worst := 0.0
	for i, w := range want {
		g := res.Outputs[i]
		if g.GetName() != w.GetName() || fmt.Sprint(g.GetDims()) != fmt.Sprint(w.GetDims()) {
			t.Errorf("%s output %d is %q %v, %s's %q %v", name, i, g.GetName(), g.GetDims(), build, w.GetName(), w.GetDims())
			continue
		}
		gv, wv := tensorFloats(t, g), tensorFloats(t, w)
		scale := 1e-30
		for _, v := range wv {
			scale = math.Max(scale, math.Abs(float64(v)))
		}
		for j := range wv {
			worst = math.Max(worst, math.Abs(float64(gv[j])-float64(wv[j]))/scale)
		}
	}
	if worst > 1e-5 {
		t.Errorf("%s differs from %s by %.3g relative, want <= 1e-5", name, build, worst)
	}
	return fmt.Sprintf("cross-checked with %s (max difference %.2g relative)", res.Build, worst)
}

// short shortens a tensor name for the table: its last ';'-separated part,
// at most 48 characters.
func short(name string) string {
	if i := strings.LastIndexByte(name, ';'); i >= 0 {
		name = name[i+1:]
	}
	if len(name) > 48 {
		name = "…" + name[len(name)-47:]
	}
	return "`" + name + "`"
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// opList names the model's ops (main subgraph first), each once.
func opList(m *model) string {
	seen := map[string]bool{}
	var ops []string
	for _, g := range m.subgraphs {
		for _, o := range g.ops {
			n := opName(o)
			if !seen[n] {
				seen[n] = true
				ops = append(ops, n)
			}
		}
	}
	sort.Strings(ops)
	return strings.Join(ops, " ")
}

// generateInputs makes one sample for the model's inputs, seeded by the
// model's size: floats uniform in [-1, 1], integers over their full range
// (int16 over ±4096, int64 over ±1000), and the int32 output-shape input of TRANSPOSE_CONV
// set to the output's shape. A dynamic dim runs at the size of the
// model's static shape (the interpreter cannot resize inputs).
func generateInputs(t *testing.T, m *model, mp *onnxpb.ModelProto) []*onnxpb.TensorProto {
	t.Helper()
	g := m.subgraphs[0]
	rng := rand.New(rand.NewPCG(uint64(len(g.tensors)), 7))
	outShape := map[int32][]int64{}
	for _, o := range g.ops {
		if o.code == fb.BuiltinOperatorTRANSPOSE_CONV && len(o.inputs) > 0 && len(o.outputs) > 0 {
			outShape[o.inputs[0]] = g.tensors[o.outputs[0]].static
		}
	}
	var ins []*onnxpb.TensorProto
	k := 0
	for _, idx := range g.inputs {
		tt := g.tensors[idx]
		if tt.data != nil {
			continue
		}
		name := mp.GetGraph().GetInput()[k].GetName()
		k++
		n := 1
		for _, d := range tt.static {
			n *= int(d)
		}
		var dt onnxpb.TensorProto_DataType
		var raw []byte
		switch tt.typ {
		case fb.TensorTypeFLOAT32:
			dt, raw = onnxpb.TensorProto_FLOAT, make([]byte, 4*n)
			for i := 0; i < n; i++ {
				binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(rng.Float64()*2-1)))
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
			if s, ok := outShape[idx]; ok && len(s) == n {
				for i, d := range s {
					binary.LittleEndian.PutUint32(raw[4*i:], uint32(d))
				}
			} else {
				for i := 0; i < n; i++ {
					binary.LittleEndian.PutUint32(raw[4*i:], uint32(rng.IntN(4)))
				}
			}
		case fb.TensorTypeINT64:
			dt, raw = onnxpb.TensorProto_INT64, make([]byte, 8*n)
			for i := 0; i < n; i++ {
				binary.LittleEndian.PutUint64(raw[8*i:], uint64(int64(rng.IntN(2001)-1000)))
			}
		default:
			t.Fatalf("input %q: element type %v not generated", tt.name, tt.typ)
		}
		ins = append(ins, tensorProto(name, dt, append([]int64{}, tt.static...), raw))
	}
	return ins
}

func runExecutor(t *testing.T, mp *onnxpb.ModelProto, inputs []*onnxpb.TensorProto) []*onnxpb.TensorProto {
	t.Helper()
	m, err := canonical.FromProto(mp, "")
	if err != nil {
		t.Fatalf("canonical: %v", err)
	}
	ex, err := executor.New(m, executor.Options{})
	if err != nil {
		t.Fatalf("executor: %v", err)
	}
	ins := make([]*canonical.Tensor, len(inputs))
	for i, tp := range inputs {
		if ins[i], err = canonical.TensorFromProto(tp); err != nil {
			t.Fatal(err)
		}
	}
	outs, err := ex.Run(context.Background(), ins)
	if err != nil {
		t.Fatalf("executor run: %v", err)
	}
	res := make([]*onnxpb.TensorProto, len(outs))
	for i, o := range outs {
		if res[i], err = canonical.TensorToProto(o); err != nil {
			t.Fatal(err)
		}
		if _, err := o.Bytes(); err != nil {
			t.Fatal(err)
		}
		raw, _ := o.Bytes()
		res[i].RawData = raw
	}
	return res
}

// compareOutput checks one output and describes the result.
func compareOutput(t *testing.T, name string, got, want *onnxpb.TensorProto) string {
	t.Helper()
	gdt, wdt := onnxpb.TensorProto_DataType(got.GetDataType()), onnxpb.TensorProto_DataType(want.GetDataType())
	if gdt != wdt {
		t.Errorf("output %q: %v, the runtime's is %v", name, gdt, wdt)
		return "type mismatch"
	}
	if fmt.Sprint(got.GetDims()) != fmt.Sprint(want.GetDims()) {
		t.Errorf("output %q: shape %v, the runtime's is %v", name, got.GetDims(), want.GetDims())
		return "shape mismatch"
	}
	switch gdt {
	case onnxpb.TensorProto_FLOAT:
		g, w := tensorFloats(t, got), tensorFloats(t, want)
		scale := 0.0
		for _, v := range w {
			scale = math.Max(scale, math.Abs(float64(v)))
		}
		scale = math.Max(scale, 1e-30)
		worst := 0.0
		for i := range w {
			worst = math.Max(worst, math.Abs(float64(g[i])-float64(w[i]))/scale)
		}
		if worst > 1e-5 {
			t.Errorf("output %q: max |onnx-tflite|/max|tflite| = %.3g, want <= 1e-5", name, worst)
		}
		return fmt.Sprintf("float32 %d values, max error %.2g relative to max |y| %.3g", len(w), worst, scale)
	case onnxpb.TensorProto_INT8, onnxpb.TensorProto_UINT8, onnxpb.TensorProto_INT16, onnxpb.TensorProto_UINT16,
		onnxpb.TensorProto_INT32, onnxpb.TensorProto_INT64, onnxpb.TensorProto_BOOL:
		g, w := intValues(gdt, got.GetRawData()), intValues(gdt, want.GetRawData())
		if len(g) != len(w) {
			t.Errorf("output %q: %d values, the runtime's %d", name, len(g), len(w))
			return "size mismatch"
		}
		exact, one, worst := 0, 0, int64(0)
		for i := range w {
			d := g[i] - w[i]
			if d < 0 {
				d = -d
			}
			worst = max(worst, d)
			switch d {
			case 0:
				exact++
			case 1:
				one++
			}
		}
		// One step is a quantization step; int32, int64 (indices, shapes)
		// and bool are exact.
		limit := int64(1)
		if gdt == onnxpb.TensorProto_INT32 || gdt == onnxpb.TensorProto_INT64 || gdt == onnxpb.TensorProto_BOOL {
			limit = 0
		}
		if worst > limit {
			t.Errorf("output %q: %d of %d values differ by more than %d step(s) (max %d)", name, len(w)-exact-one, len(w), limit, worst)
		}
		return fmt.Sprintf("%s %d values: %d exact, %d within one step, max %d step(s)",
			strings.ToLower(gdt.String()), len(w), exact, one, worst)
	}
	t.Errorf("output %q: type %v not compared", name, gdt)
	return "not compared"
}

func intValues(dt onnxpb.TensorProto_DataType, raw []byte) []int64 {
	var out []int64
	switch dt {
	case onnxpb.TensorProto_INT8:
		for _, b := range raw {
			out = append(out, int64(int8(b)))
		}
	case onnxpb.TensorProto_UINT8:
		for _, b := range raw {
			out = append(out, int64(b))
		}
	case onnxpb.TensorProto_BOOL:
		for _, b := range raw {
			out = append(out, int64(min(b, 1)))
		}
	case onnxpb.TensorProto_UINT16:
		for i := 0; i+1 < len(raw); i += 2 {
			out = append(out, int64(binary.LittleEndian.Uint16(raw[i:])))
		}
	case onnxpb.TensorProto_INT64:
		for i := 0; i+7 < len(raw); i += 8 {
			out = append(out, int64(binary.LittleEndian.Uint64(raw[i:])))
		}
	case onnxpb.TensorProto_INT16:
		for i := 0; i+1 < len(raw); i += 2 {
			out = append(out, int64(int16(binary.LittleEndian.Uint16(raw[i:]))))
		}
	case onnxpb.TensorProto_INT32:
		for i := 0; i+3 < len(raw); i += 4 {
			out = append(out, int64(int32(binary.LittleEndian.Uint32(raw[i:]))))
		}
	}
	return out
}

func writeDoc(t *testing.T, rows []row) {
	t.Helper()
	var b strings.Builder
	b.WriteString("# TFLite models against the TFLite runtime\n\n")
	b.WriteString("Every `.tflite` under `../shared/tflite-micro/` (models/ and seanet/), `../shared/models/tflite/` and\n")
	b.WriteString("`fixtures/tflite/` imported with default options, the ONNX result run on the built-in executor, and\n")
	b.WriteString("compared with the TFLite runtime (runtime `tflite`, runtimes/tflite: LiteRT.js first, tfjs-tflite for\n")
	b.WriteString("what LiteRT.js does not run) on the same generated inputs: float outputs within 1e-5 of the output's\n")
	b.WriteString("largest magnitude, quantized outputs within one step.\n\n")
	fmt.Fprintf(&b, "Written by `%s=1 go test ./importers/tflite -run TestAgainstTFLiteRuntime`.\n\n", writeDocsEnv)
	b.WriteString("| model | ops | result (per output) | computed by |\n| --- | --- | --- | --- |\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.model, r.ops, strings.ReplaceAll(r.result, "|", "\\|"), r.build)
	}
	fmt.Fprintf(&b, docNotes, len(oneOpCases()))
	if err := os.WriteFile(filepath.Join("..", "..", "docs", "tflite-verification.md"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// docNotes close docs/tflite-verification.md.
const docNotes = `
## Notes

- One-op models: beyond these files, TestOneOpAgainstTFLite builds %d one-op models (every imported
  builtin, the stateful and control-flow ones included: SVDF (float, hybrid, int8), UNIDIRECTIONAL_SEQUENCE_LSTM
  (float), IF/WHILE with their subgraphs, CALL_ONCE and the resource-variable ops; float32, int8, int16,
  shape_signature -1) and checks each against the interpreter: see docs/tflite-ops.md for every case and
  its measured result.
- int8 arithmetic: the interpreter runs int8 ADD/SUB through XNNPACK's QS8 kernels (its default delegate),
  whose fixed-point arithmetic differs from TFLite's reference kernels: ratios in_scale/out_scale in
  float32, multipliers lrintf(ratio * 2^(20 - e)) (e the largest ratio's exponent), one bias with the zero
  points folded in, an arithmetic shift right. A float graph with QuantizeLinear was one step off on 9 of 128
  values of a one-op ADD; the reference kernel's formula (left shift 20, SaturatingRoundingDoublingHighMul,
  RoundingDivideByPOT) on 11 of 128; XNNPACK's formula, built in int64 ONNX ops (importers/tflite/exact8.go),
  on none. -O int8_kernels=reference builds the reference kernels' formula instead (TFLite Micro's
  arithmetic; the same code computes int16 ADD/SUB, which the interpreter runs on the reference kernel,
  exactly). Quantized AVERAGE_POOL_2D is built as the reference kernel's integer rounding of the window's
  valid part (exact). int8 CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED are built as XNNPACK's QC8 arithmetic (the
  int32 sum of (x - zero point) * w, computed exactly from the input's 4-bit pieces convolved in float,
  plus the bias, times the float32 scale in*w/out, rounded half to even), and int8 MEAN as XNNPACK's
  (the integer sum, times in/(out*count) in float32, rounded half to even): exact. int8 RELU6,
  HARD_SWISH and LEAKY_RELU stay within one step (float graph).
- Tensor names: empty or repeated TFLite names get formats/tflite's stable unique names (tensor_I,
  NAME_I), and runtimes/tflite binds such a model's inputs by position and names its outputs the same way.

- Inputs: floats uniform in [-1, 1], int8/uint8 over their full range, int16 in [-4096, 4096], the int32
  output-shape input of TRANSPOSE_CONV set to the output's static shape; one sample per model, seeded.
  A dynamic (-1) dim runs at the size of the model's static shape: tfjs-tflite cannot resize inputs.
- int64 inputs and outputs (` + "`" + `more.tflite` + "`" + `'s ARG_MIN, ` + "`" + `int64_io.tflite` + "`" + `): tfjs-tflite's model runner
  names their element type "unknown" and gives no typed view, so runtimes/tflite writes and reads them in
  the WebAssembly heap: the runner's C++ TensorInfo (the embind handle's pointer) holds the tensor's data
  pointer (word 7 in 0.0.1-alpha.10: id, name, shape, data, size, dataType), located on each run as the
  word that equals data().byteOffset on every tensor the runner does expose, and the byte count is the
  shape's element count times the size of the type the flatbuffer names (uint16, uint64 and float16 the
  same way). runtimes/tflite TestInt64 checks it against the same values through int32/int16 views (and
  int64 values beyond 2^32). bool and int16 outputs have typed views; their comparison was added here.
- Two builds (runtimes/tflite Route): ` + "`" + `@litertjs/core` + "`" + ` 2.5.3 (LiteRT.js) computes every model whose
  inputs and outputs are float32, int32 or uint8 and that keeps no state; ` + "`" + `@tensorflow/tfjs-tflite` + "`" + `
  0.0.1-alpha.10 computes the others (int8, int16, int64, bool inputs or outputs: "Element type INT8 is
  not supported."; variable tensors and resource variables: "Variable tensors not yet supported.") and
  any model LiteRT.js refuses; LiteRT.js computes what tfjs-tflite refuses (` + "`" + `op_versions.tflite` + "`" + `: SIGN
  version 2 and ABS version 5, "Didn't find op for builtin opcode 'SIGN' version '2'"). The "computed by"
  column names the build, and "cross-checked with …" the other build's agreement on float models (max
  difference relative to the output's largest magnitude), or why it does not run the model. LiteRT.js
  runs under Node 20 with shims (self, location, require, __dirname, an importScripts that evaluates its
  Emscripten loader, wasmBinary through self.Module) and its "compat" build: the default build fails to
  compile without a flag ("CompileError: WebAssembly.instantiate(): Compiling function #157 failed: simd
  opcode not available, enable with --experimental-relaxed-simd"). It names inputs and outputs by their
  signature keys and in the signature's order (` + "`" + `tf2onnx_regression/model.tflite` + "`" + `: "X" for the tensor
  "X:0"); runtimes/tflite binds them through the flatbuffer's signature def. Like tfjs-tflite it cannot
  resize a dynamic input ("TensorBuffer ranked tensor type Float32[1, 5, 257] does not match expected
  ranked tensor type Float32[1, 1, 257]").
- ` + "`" + `ops.tflite` + "`" + ` exposed a real importer error: TFLite ignores a fused TANH (and SIGN_BIT) activation on
  ADD/SUB/MUL/DIV/CONV (its kernels clamp only for RELU, RELU6, RELU_N1_TO_1); the importer applied Tanh.
  Fixed, and the fixture's numpy reference (gen.py) corrected.
- int16 SeaNet convolutions (CONV_2D, TRANSPOSE_CONV; DEPTHWISE_CONV_2D takes the same path) are computed
  exactly: TFLite's 16x8 requantization is integer (int64 accumulator, bias, the multiplier reduced to 15
  bits ((m + 2^15) >> 16), plus 2^(s-1), arithmetic shift right by s = 15 - shift, clamp), and the importer
  builds it in ONNX (importers/tflite/exact16.go): the int16 input split into four 4-bit pieces (Mod/Div on
  x + 32768), the pieces stacked on the batch axis and convolved in float with the int8 weights (every
  partial sum an integer below 2^24, so exact in any order), Cast to int64, weighted by 16^i and summed,
  then in int64 + bias, * multiplier, + rounding, floor division by 2^s as (v - Mod(v, 2^s)) / 2^s, Clip,
  Cast to int16. ConvInteger (8-bit only) and BitShift (unsigned only) cannot express it. Values one step
  off per model before this (QDQ in float): conv1 119, conv2 99, conv3 109, conv4 60, conv5 113, conv6 34,
  conv7 67, conv8 43, conv9 44, transpose_conv1 109, transpose_conv2 88, transpose_conv3 249,
  transpose_conv4 286; after: 0 in every model (table above; on ONNX Runtime the conv models also equal
  TFLite Micro's golden files exactly, TestSeanetConvGolden).
- Dynamic dims: where shape_signature says -1, the 1 in the static shape is a placeholder; the importer
  reads such dims as unknown everywhere (reshape targets, squeeze axes, layout choices, FULLY_CONNECTED
  keep_num_dims) and the graph's inputs and outputs carry them as symbolic dims. ` + "`" + `logmel.tflite` + "`" + ` (a
  log-mel / cepstrum front-end, time axis -1) is checked here at T = 1 and, by TestDynamicTimeAxis, at
  T = 5 against the runtime on ` + "`" + `logmel_t5.tflite` + "`" + ` (the same graph with the placeholder 5).
- Control flow: IF and WHILE become ONNX If and Loop (the cond subgraph is inlined before the loop and
  at the end of the body); CALL_ONCE inlines its init subgraph, and VAR_HANDLE / READ_VARIABLE /
  ASSIGN_VARIABLE are resolved as values (one invocation: state written by the main graph is not
  carried to the next run). ` + "`" + `control_flow.tflite` + "`" + ` takes both IF branches and loops four times.
- SVDF (float): the variable state moves one step left, the newest column is input x weights_feature,
  time weights, rank reduction, bias, activation; the updated state is the tensor's value for later ops.
  ` + "`" + `svdf.tflite` + "`" + ` runs two SVDF ops on one state tensor, so the second reads the state the first wrote.
- SVDF (integer, as in int8 keyword models: int8 input, weights_feature and output, int16 weights_time and
  state, int32 bias): TFLite's EvalIntegerSVDF built exactly in ONNX (importers/tflite/ops_svdf_int.go):
  MatMulInteger with the input zero point, then MultiplyByQuantizedMultiplier (double rounding:
  SaturatingRoundingDoublingHighMul, RoundingDivideByPOT) in int64 with Mod/Div on exact multiples and
  non-negative values only, the scales computed in float32 as TFLite does (x * wf / state, state * wt /
  y), clamp to int16, the int16 state shifted, time weights and rank reduction in int64, bias, requantize,
  zero point, clamp to int8. TFLite applies no fused activation in integer SVDF (the RELU of
  ` + "`" + `svdf_int8.tflite` + "`" + ` leaves values below the zero point), and neither does the import. TFLite's sums are
  int32, these int64: equal while TFLite's do not overflow.
- SVDF (hybrid: float input, state and output, int8 weights): each batch row of the input quantized at run
  time as TFLite does (range max |x|, round(x * 127/range) half away from zero, clamp ±127; a zero row
  stays zero), MatMulInteger with the int8 weights, scaled by (range/127) * weights_scale in float; int8
  time weights dequantized once (w * scale); then the float path. asymmetric_quantize_inputs is refused.
  ` + "`" + `svdf_int8.tflite` + "`" + ` and ` + "`" + `svdf_hybrid.tflite` + "`" + ` (two ops sharing one state each, gen_runtime.py) are exact
  and within 0 relative here, and TestSVDFVariants checks four more input samples (with all-zero rows) on
  the executor and ONNX Runtime: int8 outputs exact, hybrid within 1.3e-07 relative.
` + "`more.tflite`" + `'s ARG_MIN, ` + "`int64_io.tflite`" + `): tfjs-tflite's model runner
  names their element type "unknown" and gives no typed view, so runtimes/tflite writes and reads them in
  the WebAssembly heap: the runner's C++ TensorInfo (the embind handle's pointer) holds the tensor's data
  pointer (word 7 in 0.0.1-alpha.10: id, name, shape, data, size, dataType), located on each run as the
  word that equals data().byteOffset on every tensor the runner does expose, and the byte count is the
  shape's element count times the size of the type the flatbuffer names (uint16, uint64 and float16 the
  same way). runtimes/tflite TestInt64 checks it against the same values through int32/int16 views (and
  int64 values beyond 2^32). bool and int16 outputs have typed views; their comparison was added here.
- Second build: ` + "`@litertjs/core`" + ` 2.5.3 (LiteRT.js) loads and runs under Node 20 here with shims (self,
  location, require, __dirname, an importScripts that evaluates its Emscripten loader, wasmBinary through
  self.Module) and its "compat" build: the default build fails to compile without a flag
  ("CompileError: WebAssembly.instantiate(): Compiling function #157 failed: simd opcode not available,
  enable with --experimental-relaxed-simd"). It runs every float model above that tfjs-tflite runs
  and agrees with it (the "computed by" column: "cross-checked with …", max difference relative to the
  output's largest magnitude). It refuses int8/int16/int64 model inputs and outputs ("Element type INT8
  is not supported."), variable tensors (LSTM, SVDF: "Variable tensors not yet supported."), and like
  tfjs-tflite cannot resize a dynamic input ("TensorBuffer ranked tensor type Float32[1, 5, 257] does not
  match expected ranked tensor type Float32[1, 1, 257]"), so no model here needs it where tfjs-tflite
  fails: it is a cross-check, not a fallback. It binds inputs by its signature names, so
  ` + "`tf2onnx_regression/model.tflite`" + ` (signature input "X", tensor "X:0") is not cross-checked.
- ` + "`ops.tflite`" + ` exposed a real importer error: TFLite ignores a fused TANH (and SIGN_BIT) activation on
  ADD/SUB/MUL/DIV/CONV (its kernels clamp only for RELU, RELU6, RELU_N1_TO_1); the importer applied Tanh.
  Fixed, and the fixture's numpy reference (gen.py) corrected.
- int16 SeaNet convolutions (CONV_2D, TRANSPOSE_CONV; DEPTHWISE_CONV_2D takes the same path) are computed
  exactly: TFLite's 16x8 requantization is integer (int64 accumulator, bias, the multiplier reduced to 15
  bits ((m + 2^15) >> 16), plus 2^(s-1), arithmetic shift right by s = 15 - shift, clamp), and the importer
  builds it in ONNX (importers/tflite/exact16.go): the int16 input split into four 4-bit pieces (Mod/Div on
  x + 32768), the pieces stacked on the batch axis and convolved in float with the int8 weights (every
  partial sum an integer below 2^24, so exact in any order), Cast to int64, weighted by 16^i and summed,
  then in int64 + bias, * multiplier, + rounding, floor division by 2^s as (v - Mod(v, 2^s)) / 2^s, Clip,
  Cast to int16. ConvInteger (8-bit only) and BitShift (unsigned only) cannot express it. Values one step
  off per model before this (QDQ in float): conv1 119, conv2 99, conv3 109, conv4 60, conv5 113, conv6 34,
  conv7 67, conv8 43, conv9 44, transpose_conv1 109, transpose_conv2 88, transpose_conv3 249,
  transpose_conv4 286; after: 0 in every model (table above; on ONNX Runtime the conv models also equal
  TFLite Micro's golden files exactly, TestSeanetConvGolden).
- Dynamic dims: where shape_signature says -1, the 1 in the static shape is a placeholder; the importer
  reads such dims as unknown everywhere (reshape targets, squeeze axes, layout choices, FULLY_CONNECTED
  keep_num_dims) and the graph's inputs and outputs carry them as symbolic dims. ` + "`logmel.tflite`" + ` (a
  log-mel / cepstrum front-end, time axis -1) is checked here at T = 1 and, by TestDynamicTimeAxis, at
  T = 5 against the runtime on ` + "`logmel_t5.tflite`" + ` (the same graph with the placeholder 5).
- Control flow: IF and WHILE become ONNX If and Loop (the cond subgraph is inlined before the loop and
  at the end of the body); CALL_ONCE inlines its init subgraph, and VAR_HANDLE / READ_VARIABLE /
  ASSIGN_VARIABLE are resolved as values (one invocation: state written by the main graph is not
  carried to the next run). ` + "`control_flow.tflite`" + ` takes both IF branches and loops four times.
- SVDF (float): the variable state moves one step left, the newest column is input x weights_feature,
  time weights, rank reduction, bias, activation; the updated state is the tensor's value for later ops.
  ` + "`svdf.tflite`" + ` runs two SVDF ops on one state tensor, so the second reads the state the first wrote.
- SVDF (integer, as in int8 keyword models: int8 input, weights_feature and output, int16 weights_time and
  state, int32 bias): TFLite's EvalIntegerSVDF built exactly in ONNX (importers/tflite/ops_svdf_int.go):
  MatMulInteger with the input zero point, then MultiplyByQuantizedMultiplier (double rounding:
  SaturatingRoundingDoublingHighMul, RoundingDivideByPOT) in int64 with Mod/Div on exact multiples and
  non-negative values only, the scales computed in float32 as TFLite does (x * wf / state, state * wt /
  y), clamp to int16, the int16 state shifted, time weights and rank reduction in int64, bias, requantize,
  zero point, clamp to int8. TFLite applies no fused activation in integer SVDF (the RELU of
  ` + "`svdf_int8.tflite`" + ` leaves values below the zero point), and neither does the import. TFLite's sums are
  int32, these int64: equal while TFLite's do not overflow.
- SVDF (hybrid: float input, state and output, int8 weights): each batch row of the input quantized at run
  time as TFLite does (range max |x|, round(x * 127/range) half away from zero, clamp ±127; a zero row
  stays zero), MatMulInteger with the int8 weights, scaled by (range/127) * weights_scale in float; int8
  time weights dequantized once (w * scale); then the float path. asymmetric_quantize_inputs is refused.
  ` + "`svdf_int8.tflite`" + ` and ` + "`svdf_hybrid.tflite`" + ` (two ops sharing one state each, gen_runtime.py) are exact
  and within 0 relative here, and TestSVDFVariants checks four more input samples (with all-zero rows) on
  the executor and ONNX Runtime: int8 outputs exact, hybrid within 1.3e-07 relative.
`
