package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/passes"
)

// fixtureModel returns fixtures/models/NAME/model.onnx.
func fixtureModel(t *testing.T, name string) string {
	t.Helper()
	return filepath.Join(repoDir(t), "fixtures", "models", name, "model.onnx")
}

// opCounts counts the main graph's nodes per op type of the model at path.
func opCounts(t *testing.T, path string) (map[string]int, *onnxpb.ModelProto) {
	t.Helper()
	mp := loadProto(t, path)
	c := map[string]int{}
	for _, n := range mp.Graph.Node {
		c[n.GetOpType()]++
	}
	return c, mp
}

func total(c map[string]int) int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// optimize on the transformer block: 49 -> 29 nodes (ONNX Runtime's basic
// level writes 31, see passes' TestOptimizeAgainstORTBasic), the 3-D
// MatMul+Add pairs as Gemm, the per-pass report, and the result equal to
// the input on the executor ('onnxconv verify').
func TestOptimizeCommand(t *testing.T) {
	dir := t.TempDir()
	in := fixtureModel(t, "transformer_block_opset21")
	out := filepath.Join(dir, "opt.onnx")
	rep := filepath.Join(dir, "passes.json")
	code, stdout, stderr := runCmd("optimize", in, out, "--report", rep)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "nodes 49 -> 29") || !strings.Contains(stdout, "max rel error 0") {
		t.Errorf("summary: %s", stdout)
	}
	ops, _ := opCounts(t, out)
	if total(ops) != 29 || ops["Gemm"] != 4 || ops["MatMul"] != 2 {
		t.Errorf("result ops %v, want 29 nodes with Gemm 4, MatMul 2", ops)
	}
	var r struct {
		Before, After struct{ Nodes int }
		Passes        []struct {
			Name       string
			Changed    bool
			RolledBack bool `json:"rolled_back"`
			MaxRel     float64
		}
		MaxRel float64 `json:"max_rel"`
	}
	readJSON(t, rep, &r)
	if r.Before.Nodes != 49 || r.After.Nodes != 29 || r.MaxRel != 0 {
		t.Errorf("report: %+v", r)
	}
	var names []string
	for _, p := range r.Passes {
		names = append(names, p.Name)
		if p.RolledBack {
			t.Errorf("pass %s rolled back", p.Name)
		}
	}
	if strings.Join(names, ",") != strings.Join(passes.Names(), ",") {
		t.Errorf("report passes %v, want %v", names, passes.Names())
	}
	if code, stdout, stderr := runCmd("verify", in, out); code != 0 {
		t.Errorf("verify IN OUT: exit %d: %s%s", code, stdout, stderr)
	}
}

func TestOptimizeSelectedPasses(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "opt.onnx")
	code, stdout, stderr := runCmd("optimize", fixtureModel(t, "squeezenet"), out, "--passes", "eliminate-noop, eliminate-dead")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	// squeezenet's 18 Identity nodes go; nothing else changes.
	if !strings.Contains(stdout, "nodes 83 -> 65") {
		t.Errorf("summary: %s", stdout)
	}
	if strings.Contains(stderr, "fold-constants") {
		t.Errorf("a pass not asked for ran: %s", stderr)
	}
}

// A bad --passes name is usage (exit 2), names the known passes and
// writes nothing.
func TestOptimizeUnknownPass(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "opt.onnx")
	code, _, stderr := runCmd("optimize", fixtureModel(t, "mlp_opset17"), out, "--passes", "fold-constants,fold-everything")
	if code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, stderr)
	}
	if !strings.Contains(stderr, `unknown pass "fold-everything"`) {
		t.Errorf("stderr does not name the pass: %s", stderr)
	}
	for _, n := range passes.Names() {
		if !strings.Contains(stderr, n) {
			t.Errorf("stderr does not list known pass %s: %s", n, stderr)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("output written")
	}
}

// optimize, fp16 and quantize refuse OUT == IN without --force (exit 2,
// input untouched) and replace it with --force.
func TestTransformsRefuseToOverwriteInput(t *testing.T) {
	for _, c := range [][]string{
		{"optimize"},
		{"fp16", "--keep-io-types"},
		{"quantize", "--mode", "dynamic"},
	} {
		t.Run(c[0], func(t *testing.T) {
			dir := t.TempDir()
			orig, err := os.ReadFile(fixtureModel(t, "mlp_opset17"))
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "m.onnx")
			if err := os.WriteFile(p, orig, 0o644); err != nil {
				t.Fatal(err)
			}
			// The same file by another spelling.
			same := filepath.Join(dir, ".", "m.onnx")
			args := append([]string{c[0], p, same}, c[1:]...)
			code, _, stderr := runCmd(args...)
			if code != 2 || !strings.Contains(stderr, "--force") || !strings.Contains(stderr, "overwrite the input") {
				t.Fatalf("exit %d, want 2 naming --force: %s", code, stderr)
			}
			if b, _ := os.ReadFile(p); !bytes.Equal(b, orig) {
				t.Fatal("the input was changed")
			}
			if code, stdout, stderr := runCmd(append(args, "--force")...); code != 0 {
				t.Fatalf("--force: exit %d: %s%s", code, stdout, stderr)
			}
			if c[0] != "optimize" {
				if b, _ := os.ReadFile(p); bytes.Equal(b, orig) {
					t.Error("--force: the input was not replaced")
				}
			}
		})
	}
}

func TestTransformsUnreadableInput(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.onnx")
	for _, args := range [][]string{
		{"optimize", missing, filepath.Join(dir, "o.onnx")},
		{"fp16", missing, filepath.Join(dir, "o.onnx")},
		{"quantize", missing, filepath.Join(dir, "o.onnx"), "--mode", "static"},
		{"optimize", fixtureModel(t, "mlp_opset17")},
	} {
		if code, _, stderr := runCmd(args...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, stderr)
		}
	}
}

// fp16 on the transformer block: within the fp16 profile, float32 I/O kept,
// float weights halved, the report written.
func TestFP16Command(t *testing.T) {
	dir := t.TempDir()
	in := fixtureModel(t, "transformer_block_opset21")
	out := filepath.Join(dir, "f16.onnx")
	rep := filepath.Join(dir, "fp16.json")
	code, stdout, stderr := runCmd("fp16", in, out, "--keep-io-types", "--report", rep)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "float16,") || !strings.Contains(stdout, "0 kept by the fallback") {
		t.Errorf("summary: %s", stdout)
	}
	var r struct {
		Type       string
		Equivalent bool
		Converted  int     `json:"converted_nodes"`
		MaxAbs     float64 `json:"max_abs"`
		Before     struct{ Bytes int64 }
		After      struct{ Bytes int64 }
	}
	readJSON(t, rep, &r)
	if r.Type != "float16" || !r.Equivalent || r.Converted == 0 || r.MaxAbs > 1e-2 {
		t.Errorf("report: %+v", r)
	}
	if float64(r.After.Bytes) > 0.52*float64(r.Before.Bytes) {
		t.Errorf("initializer bytes %d -> %d, want about half", r.Before.Bytes, r.After.Bytes)
	}
	_, mp := opCounts(t, out)
	if et := mp.Graph.Input[0].GetType().GetTensorType().GetElemType(); et != int32(onnxpb.TensorProto_FLOAT) {
		t.Errorf("--keep-io-types: input element type %d", et)
	}
	nf16 := 0
	for _, init := range mp.Graph.Initializer {
		if init.GetDataType() == int32(onnxpb.TensorProto_FLOAT16) {
			nf16++
		}
	}
	if nf16 == 0 {
		t.Error("no float16 initializer")
	}
	// Without --keep-io-types the interface is float16 too.
	out2 := filepath.Join(dir, "f16io.onnx")
	if code, stdout, stderr := runCmd("fp16", in, out2, "--block", ""); code != 0 {
		t.Fatalf("fp16 --block '': exit %d: %s%s", code, stdout, stderr)
	}
	_, mp2 := opCounts(t, out2)
	if et := mp2.Graph.Input[0].GetType().GetTensorType().GetElemType(); et != int32(onnxpb.TensorProto_FLOAT16) {
		t.Errorf("input element type %d, want float16", et)
	}
}

// quantize --mode static --per-channel --map on the CNN fixture: top-1
// agreement with float on the calibration samples, the size reduction,
// QDQ in the output, the error map with its steps table (the graph input
// quantized 0 steps from the float input quantized alike).
func TestQuantizeCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "q.onnx")
	rep := filepath.Join(dir, "q.json")
	code, stdout, stderr := runCmd("quantize", fixtureModel(t, "resnet_small"), out, "--mode", "static", "--per-channel",
		"--calibration-samples", "16", "--report", rep, "--map")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "static int8 QDQ, 32 nodes quantized, 17 Relu/Clip removed (the quantization clamps)") || !strings.Contains(stdout, "top-1 agreement with the float model") {
		t.Errorf("summary: %s", stdout)
	}
	if !strings.Contains(stdout, "steps per integer tensor") || !strings.Contains(stdout, "input_QuantizeLinear (QuantizeLinear, against the source's input quantized alike): 0:12288\n") {
		t.Errorf("no steps table in the summary: %s", stdout)
	}
	var r struct {
		Top1       float64
		PerChannel bool `json:"per_channel"`
		Before     struct{ Bytes int64 }
		After      struct{ Bytes int64 }
		Map        struct{ Compared int }
	}
	readJSON(t, rep, &r)
	if r.Top1 < 0.99 || !r.PerChannel || r.After.Bytes*3 > r.Before.Bytes || r.Map.Compared < 20 {
		t.Errorf("report: %+v", r)
	}
	ops, _ := opCounts(t, out)
	if ops["QuantizeLinear"] == 0 || ops["DequantizeLinear"] == 0 {
		t.Errorf("no QDQ in the result: %v", ops)
	}

	outD := filepath.Join(dir, "qd.onnx")
	if code, stdout, stderr := runCmd("quantize", fixtureModel(t, "mlp_opset17"), outD, "--mode", "dynamic"); code != 0 || !strings.Contains(stdout, "dynamic int8 QDQ") {
		t.Errorf("dynamic: exit %d: %s%s", code, stdout, stderr)
	}
	if ops, _ := opCounts(t, outD); ops["DynamicQuantizeLinear"] == 0 {
		t.Errorf("dynamic: %v", ops)
	}
}

func TestQuantizeCommandErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "q.onnx")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{fixtureModel(t, "mlp_opset17"), out}, 2, "--mode must be static, dynamic or int4"},
		{[]string{fixtureModel(t, "mlp_opset17"), out, "--mode", "int2"}, 2, "--mode must be static, dynamic or int4"},
		{[]string{fixtureModel(t, "mlp_opset17"), out, "--mode", "int4", "--block-size", "24"}, 2, "--block-size 24"},
		{[]string{fixtureModel(t, "mlp_opset17"), out, "--mode", "int4", "--format", "gguf"}, 2, "--format"},
		{[]string{fixtureModel(t, "mlp_opset17"), out, "--mode", "static", "--block-size", "32"}, 2, "are for --mode int4"},
		{[]string{fixtureModel(t, "mlp_opset17"), out, "--mode", "dynamic", "--accuracy-level", "4"}, 2, "are for --mode int4"},
		{[]string{fixtureModel(t, "mlp_opset17"), out, "--mode", "int4", "--accuracy-level", "5"}, 2, "--accuracy-level 5: want 0 to 4"},
		{[]string{fixtureModel(t, "mlp_opset17"), out, "--mode", "int4", "--format", "qdq", "--accuracy-level", "4"}, 2, "needs --format matmulnbits"},
		{[]string{fixtureModel(t, "mlp_opset9"), out, "--mode", "static"}, 1, "opset 9"},
		{[]string{fixtureModel(t, "mlp_opset17"), out, "--mode", "static", "--calibration", filepath.Join(dir, "none")}, 2, "--calibration"},
	} {
		code, _, stderr := runCmd(append([]string{"quantize"}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want %d with %q: %s", c.args, code, c.code, c.want, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: output written", c.args)
		}
	}
}

// convert --optimize / --fp16 / --quantize static --per-channel: the
// transform in the one conversion, verified against the source.
func TestConvertTransforms(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, fixture string
		args          []string
		check         func(t *testing.T, ops map[string]int, mp *onnxpb.ModelProto)
	}{
		{"optimize", "transformer_block_opset21", []string{"--optimize"}, func(t *testing.T, ops map[string]int, _ *onnxpb.ModelProto) {
			if total(ops) != 29 || ops["Gemm"] != 4 {
				t.Errorf("ops %v, want 29 nodes, Gemm 4", ops)
			}
		}},
		{"passes", "squeezenet", []string{"--passes", "eliminate-noop,eliminate-dead"}, func(t *testing.T, ops map[string]int, _ *onnxpb.ModelProto) {
			if total(ops) != 65 || ops["Identity"] != 0 {
				t.Errorf("ops %v, want 65 nodes, no Identity", ops)
			}
		}},
		{"fp16", "resnet_small", []string{"--fp16", "--keep-io-types"}, func(t *testing.T, ops map[string]int, mp *onnxpb.ModelProto) {
			if et := mp.Graph.Input[0].GetType().GetTensorType().GetElemType(); et != int32(onnxpb.TensorProto_FLOAT) || ops["Cast"] == 0 {
				t.Errorf("input element type %d, ops %v", et, ops)
			}
		}},
		{"quantize", "resnet_small", []string{"--quantize", "static", "--per-channel", "--optimize"}, func(t *testing.T, ops map[string]int, mp *onnxpb.ModelProto) {
			if ops["QuantizeLinear"] == 0 || ops["DequantizeLinear"] < 20 {
				t.Errorf("ops %v", ops)
			}
			perChannel := false
			for _, n := range mp.Graph.Node {
				for _, a := range n.Attribute {
					if n.GetOpType() == "DequantizeLinear" && a.GetName() == "axis" {
						perChannel = true
					}
				}
			}
			if !perChannel {
				t.Error("no per-channel DequantizeLinear (axis attribute)")
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, c.name+".onnx")
			rep := filepath.Join(dir, c.name+".json")
			args := append([]string{"convert", fixtureModel(t, c.fixture), out, "-q", "--report", rep}, c.args...)
			code, stdout, stderr := runCmd(args...)
			if code != 0 {
				t.Fatalf("exit %d: %s%s", code, stdout, stderr)
			}
			if !strings.Contains(stdout, "EQUIVALENT") {
				t.Errorf("summary: %s", stdout)
			}
			if _, err := os.Stat(rep); err != nil {
				t.Errorf("report: %v", err)
			}
			ops, mp := opCounts(t, out)
			c.check(t, ops, mp)
		})
	}
}

func TestConvertTransformErrors(t *testing.T) {
	dir := t.TempDir()
	in := fixtureModel(t, "resnet_small")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--fp16", "--quantize", "static"}, "exclude each other"},
		{[]string{"--quantize", "int4"}, `--quantize "int4"`},
		{[]string{"--optimize", "--passes", "nope"}, `unknown pass "nope"`},
	} {
		out := filepath.Join(dir, "o.onnx")
		code, _, stderr := runCmd(append([]string{"convert", in, out, "-q"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want 2 with %q: %s", c.args, code, c.want, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: output written", c.args)
		}
	}
}
