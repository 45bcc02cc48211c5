//go:build cgo

package adapt

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/exporters/profiles"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes/ort"
)

const (
	rtol = 1e-3
	atol = 1e-5
)

var fixtures = []string{"mlp_opset9", "mlp_opset17", "squeezenet", "resnet_small", "transformer_encoder", "transformer_block_opset21"}

func fixtureDir(t testing.TB, name string) string {
	t.Helper()
	d := filepath.Join("..", "..", "fixtures", "models", name)
	if _, err := os.Stat(filepath.Join(d, "model.onnx")); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return d
}

// ortOnce holds ONNX Runtime, opened once per test binary (the library is
// global to the process anyway).
var ortOnce struct {
	once sync.Once
	rt   *ort.Runtime
	err  error
}

// openORT opens ONNX Runtime, or skips the test when the library is absent
// (counted and reported by TestMain, which fails the package unless
// ONNXCONV_SKIP_ORT=1).
func openORT(t testing.TB) *ort.Runtime {
	t.Helper()
	lib := testpaths.ORT(t)
	ortOnce.once.Do(func() { ortOnce.rt, ortOnce.err = ort.Open(lib, 1) })
	if ortOnce.err != nil {
		t.Fatalf("ONNX Runtime %s: %v", lib, ortOnce.err)
	}
	return ortOnce.rt
}

func readPB(t testing.TB, path string) *onnxpb.TensorProto {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tp := &onnxpb.TensorProto{}
	if err := proto.Unmarshal(b, tp); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tp
}

func floats(t testing.TB, tp *onnxpb.TensorProto) []float64 {
	t.Helper()
	if onnxpb.TensorProto_DataType(tp.GetDataType()) != onnxpb.TensorProto_FLOAT {
		t.Fatalf("tensor %q: type %v, want float", tp.GetName(), tp.GetDataType())
	}
	var out []float64
	if raw := tp.GetRawData(); len(raw) > 0 {
		for i := 0; i+4 <= len(raw); i += 4 {
			out = append(out, float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[i:]))))
		}
		return out
	}
	for _, f := range tp.GetFloatData() {
		out = append(out, float64(f))
	}
	return out
}

// assertClose compares got with want element by element (rtol, atol) and
// returns the largest absolute difference.
func assertClose(t testing.TB, what string, got, want *onnxpb.TensorProto) float64 {
	t.Helper()
	g, w := floats(t, got), floats(t, want)
	if len(g) != len(w) || len(w) == 0 {
		t.Fatalf("%s: %d values, want %d", what, len(g), len(w))
	}
	maxAbs := 0.0
	bad := 0
	for i := range w {
		d := math.Abs(g[i] - w[i])
		maxAbs = math.Max(maxAbs, d)
		if d > atol+rtol*math.Abs(w[i]) || math.IsNaN(g[i]) {
			if bad < 3 {
				t.Errorf("%s: [%d] = %g, want %g", what, i, g[i], w[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values differ (max abs diff %g)", what, bad, len(w), maxAbs)
	}
	return maxAbs
}

// runAndCompare runs the model at path on the fixture's input and checks
// its output against the stored (torch) output.
func runAndCompare(t *testing.T, rt *ort.Runtime, path, fixture, what string) float64 {
	t.Helper()
	d := fixtureDir(t, fixture)
	in := readPB(t, filepath.Join(d, "test_data_set_0", "input_0.pb"))
	want := readPB(t, filepath.Join(d, "test_data_set_0", "output_0.pb"))
	outs, err := rt.Run(path, []*onnxpb.TensorProto{in})
	if err != nil {
		t.Fatalf("%s: ONNX Runtime rejects the export: %v", what, err)
	}
	return assertClose(t, what, outs[0], want)
}

func load(t testing.TB, fixture string) *canonical.Model {
	t.Helper()
	m, err := canonical.Load(filepath.Join(fixtureDir(t, fixture), "model.onnx"), canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func mustProfile(t testing.TB, name string) *profiles.Profile {
	t.Helper()
	p, err := profiles.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func countOps(m *canonical.Model) map[string]int {
	c := map[string]int{}
	walk(m.Graph, "main", func(g *canonical.Graph, path string, idx int, n *canonical.Node) { c[n.OpType]++ })
	return c
}

// Every fixture, exported for every onnxruntime-1.x profile, loads in ONNX
// Runtime 1.30 and computes the stored outputs.
func TestFixturesForEveryOnnxRuntimeProfile(t *testing.T) {
	rt := openORT(t)
	all, err := profiles.All()
	if err != nil {
		t.Fatal(err)
	}
	var ortProfiles []*profiles.Profile
	for _, p := range all {
		if strings.HasPrefix(p.Name, "onnxruntime-1.") {
			ortProfiles = append(ortProfiles, p)
		}
	}
	if len(ortProfiles) != 18 {
		t.Fatalf("%d onnxruntime-1.x profiles, want 18 (1.13..1.30)", len(ortProfiles))
	}
	dir := t.TempDir()
	runs := 0
	for _, fx := range fixtures {
		src := load(t, fx)
		srcOpset := int(src.Opset(""))
		// Exports with identical bytes compute the same: run each
		// distinct file once.
		ran := map[string]float64{}
		for _, p := range ortProfiles {
			m := load(t, fx)
			r, err := Adapt(m, p, Options{})
			if err != nil {
				t.Errorf("%s -> %s: %v", fx, p.Name, err)
				continue
			}
			wantOpset := min(max(srcOpset, p.MinOpset), p.MaxOpset)
			if got := int(m.Opset("")); got != wantOpset || r.ToOpset != wantOpset {
				t.Errorf("%s -> %s: opset %d (report %d), want %d", fx, p.Name, got, r.ToOpset, wantOpset)
			}
			lo := min(profiles.IRVersionForOpset(wantOpset), p.MaxIRVersion)
			if m.IRVersion > p.MaxIRVersion || m.IRVersion < lo {
				t.Errorf("%s -> %s: IR %d, want %d..%d", fx, p.Name, m.IRVersion, lo, p.MaxIRVersion)
			}
			out := filepath.Join(dir, fx+"_"+p.Name+".onnx")
			if err := canonical.Save(out, m, canonical.SaveOptions{}); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			d, seen := ran[string(b)]
			if !seen {
				d = runAndCompare(t, rt, out, fx, fx+" -> "+p.Name)
				ran[string(b)] = d
				runs++
			}
			if testing.Verbose() {
				t.Logf("%s -> %s: opset %d IR %d, %d actions, max abs diff %.3g", fx, p.Name, m.Opset(""), m.IRVersion, len(r.Actions), d)
			}
		}
	}
	if runs < len(fixtures) {
		t.Errorf("only %d ONNX Runtime runs", runs)
	}
	t.Logf("%d distinct exports run on ONNX Runtime %s", runs, rt.Version())
}

// transformer_block_opset21 for a target capped at opset 17: Gelu (new in
// 20) is expanded, LayerNormalization (17) stays, and ONNX Runtime still
// computes the stored outputs.
func TestTransformerBlockToOpset17(t *testing.T) {
	rt := openORT(t)
	for _, name := range []string{"onnx-opset17", "onnxruntime-1.13"} {
		m := load(t, "transformer_block_opset21")
		before := countOps(m)
		if before["Gelu"] != 1 || before["LayerNormalization"] != 2 {
			t.Fatalf("fixture changed: %v", before)
		}
		r, err := Adapt(m, mustProfile(t, name), Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if m.Opset("") != 17 || r.ToOpset != 17 || r.FromOpset != 21 {
			t.Errorf("%s: opset %d (report %d -> %d), want 21 -> 17", name, m.Opset(""), r.FromOpset, r.ToOpset)
		}
		if m.IRVersion != 8 {
			t.Errorf("%s: IR %d, want 8", name, m.IRVersion)
		}
		after := countOps(m)
		if after["Gelu"] != 0 {
			t.Errorf("%s: %d Gelu left", name, after["Gelu"])
		}
		if after["LayerNormalization"] != 2 {
			t.Errorf("%s: %d LayerNormalization, want the 2 kept (they exist at 17)", name, after["LayerNormalization"])
		}
		if after["Erf"] != 1 {
			t.Errorf("%s: %d Erf, want 1 (Gelu's expansion)", name, after["Erf"])
		}
		var gelu *Action
		for i, a := range r.Actions {
			if a.OpType == "Gelu" {
				gelu = &r.Actions[i]
			}
		}
		if gelu == nil {
			t.Fatalf("%s: report does not mention the Gelu node: %+v", name, r.Actions)
		}
		if gelu.Node == "" || !strings.Contains(gelu.What, "Erf") || !strings.Contains(gelu.What, "opset 17 lacks Gelu") {
			t.Errorf("%s: Gelu action = %q", name, gelu.String())
		}
		out := filepath.Join(t.TempDir(), "m.onnx")
		if err := canonical.Save(out, m, canonical.SaveOptions{}); err != nil {
			t.Fatal(err)
		}
		runAndCompare(t, rt, out, "transformer_block_opset21", name)
	}
}

// withoutOps returns a copy of onnxruntime-1.30 that lacks ops.
func withoutOps(t testing.TB, name string, ops ...string) *profiles.Profile {
	t.Helper()
	p := mustProfile(t, "onnxruntime-1.30")
	p.Name = name
	p.Ops = map[string]*profiles.OpSet{"ai.onnx": {All: true, Except: ops}}
	return p
}

// A target without Gelu at any version: the node is expanded at the
// model's own opset and the report names it.
func TestProfileWithoutGeluExpandsIt(t *testing.T) {
	rt := openORT(t)
	m := load(t, "transformer_block_opset21")
	var geluName string
	for _, n := range m.Graph.Nodes {
		if n.OpType == "Gelu" {
			geluName = n.Name
		}
	}
	r, err := Adapt(m, withoutOps(t, "no-gelu", "Gelu"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Opset("") != 21 {
		t.Errorf("opset %d, want 21 (in range)", m.Opset(""))
	}
	if c := countOps(m); c["Gelu"] != 0 || c["Erf"] != 1 || c["LayerNormalization"] != 2 {
		t.Errorf("ops after: %v", c)
	}
	found := false
	for _, a := range r.Actions {
		if a.OpType == "Gelu" && a.Node == geluName {
			found = true
			if want := "expanded into Div/Erf/Add/Mul (no-gelu lacks Gelu)"; a.What != want {
				t.Errorf("action %q, want %q", a.What, want)
			}
		}
	}
	if !found {
		t.Fatalf("no action for Gelu %q: %+v", geluName, r.Actions)
	}
	if !r.OK() {
		t.Errorf("violations: %v", r.Violations)
	}
	out := filepath.Join(t.TempDir(), "m.onnx")
	if err := canonical.Save(out, m, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	runAndCompare(t, rt, out, "transformer_block_opset21", "no-gelu")
}

// LayerNormalization also has an expansion, used when the target lacks it.
func TestProfileWithoutLayerNormExpandsIt(t *testing.T) {
	rt := openORT(t)
	m := load(t, "transformer_block_opset21")
	r, err := Adapt(m, withoutOps(t, "no-layernorm", "LayerNormalization", "Gelu"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range r.Actions {
		if a.OpType == "LayerNormalization" {
			n++
			if !strings.Contains(a.What, "ReduceMean") || !strings.Contains(a.What, "no-layernorm lacks LayerNormalization") {
				t.Errorf("action %q", a)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d LayerNormalization actions, want 2: %+v", n, r.Actions)
	}
	if c := countOps(m); c["LayerNormalization"] != 0 || c["Gelu"] != 0 {
		t.Errorf("ops after: %v", c)
	}
	out := filepath.Join(t.TempDir(), "m.onnx")
	if err := canonical.Save(out, m, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	runAndCompare(t, rt, out, "transformer_block_opset21", "no-layernorm")
}

// A target lacking an op that has no expansion: a violation names the node.
func TestProfileLackingOpWithoutExpansion(t *testing.T) {
	m := load(t, "transformer_block_opset21")
	var idx = -1
	var name string
	for i, n := range m.Graph.Nodes {
		if n.OpType == "Softmax" {
			idx, name = i, n.Name
		}
	}
	r, err := Adapt(m, withoutOps(t, "no-softmax", "Softmax"), Options{})
	var ue *UnsupportedError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v, want *UnsupportedError", err)
	}
	if r == nil || r.OK() || len(ue.Violations) != 1 {
		t.Fatalf("report %+v, violations %v", r, ue.Violations)
	}
	v := ue.Violations[0]
	if v.OpType != "Softmax" || v.Node != name || v.Index != idx || v.Graph != "main" {
		t.Errorf("violation %+v, want Softmax %q at %d", v, name, idx)
	}
	if !strings.Contains(v.Problem, "no-softmax does not implement Softmax") || !strings.Contains(v.Fix, "no expansion of Softmax") {
		t.Errorf("violation text: %s", v)
	}
	if !strings.Contains(err.Error(), name) {
		t.Errorf("error %q does not name the node", err)
	}
}

// The IR version follows the profile: lowered to what the target reads,
// raised to what the opset needs.
func TestIRVersionPerProfile(t *testing.T) {
	cases := []struct {
		fixture, profile string
		opset            int64
		ir               int64
	}{
		{"transformer_block_opset21", "onnxruntime-1.17", 20, 9},
		{"transformer_block_opset21", "onnxruntime-1.16", 19, 9},
		{"transformer_block_opset21", "onnxruntime-1.15", 19, 8},
		{"transformer_block_opset21", "onnxruntime-1.30", 21, 10},
		{"mlp_opset9", "onnxruntime-1.17", 9, 4},
		{"mlp_opset9", "onnx-opset21", 21, 10},
		{"mlp_opset9", "tensorrt-10", 9, 4},
		{"mlp_opset17", "onnx-opset24", 24, 12},
	}
	for _, c := range cases {
		m := load(t, c.fixture)
		r, err := Adapt(m, mustProfile(t, c.profile), Options{})
		if err != nil {
			t.Errorf("%s -> %s: %v", c.fixture, c.profile, err)
			continue
		}
		if m.Opset("") != c.opset || m.IRVersion != c.ir || r.ToIRVersion != c.ir {
			t.Errorf("%s -> %s: opset %d IR %d (report %d), want opset %d IR %d", c.fixture, c.profile, m.Opset(""), m.IRVersion, r.ToIRVersion, c.opset, c.ir)
		}
	}
}

// The onnxruntime-1.30 profile matches the library: its maxima load, one
// more is rejected.
func TestORT130ProfileMatchesLibrary(t *testing.T) {
	rt := openORT(t)
	if v := rt.Version(); !strings.HasPrefix(v, "1.30.") {
		t.Skipf("library is ONNX Runtime %s, not 1.30", v)
	}
	p := mustProfile(t, "onnxruntime-1.30")
	dir := t.TempDir()
	try := func(ir, op, ml int64) error {
		m := reluModel(t, ir, op, ml)
		path := filepath.Join(dir, "relu.onnx")
		if err := canonical.Save(path, m, canonical.SaveOptions{}); err != nil {
			t.Fatal(err)
		}
		in := &onnxpb.TensorProto{Name: proto.String("x"), DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), Dims: []int64{2}, FloatData: []float32{-1, 2}}
		outs, err := rt.Run(path, []*onnxpb.TensorProto{in})
		if err == nil {
			if got := floats(t, outs[0]); got[0] != 0 || got[1] != 2 {
				t.Errorf("Relu(-1, 2) = %v", got)
			}
		}
		return err
	}
	if err := try(p.MaxIRVersion, int64(p.MaxOpset), int64(p.MLMaxOpset)); err != nil {
		t.Errorf("profile maxima rejected: %v", err)
	}
	if err := try(p.MaxIRVersion+1, int64(p.MaxOpset), 0); err == nil {
		t.Errorf("IR %d accepted: the profile's max IR is too low", p.MaxIRVersion+1)
	}
	if err := try(p.MaxIRVersion, int64(p.MaxOpset)+1, 0); err == nil {
		t.Errorf("opset %d accepted: the profile's max opset is too low", p.MaxOpset+1)
	}
	if err := try(p.MaxIRVersion, int64(p.MaxOpset), int64(p.MLMaxOpset)+1); err == nil {
		t.Errorf("ai.onnx.ml %d accepted: the profile's max is too low", p.MLMaxOpset+1)
	}
}

func reluModel(t testing.TB, ir, op, ml int64) *canonical.Model {
	t.Helper()
	m := &canonical.Model{IRVersion: ir, OpsetImports: []canonical.OpsetID{{Domain: "", Version: op}}, Graph: canonical.NewGraph("g")}
	if ml != 0 {
		m.OpsetImports = append(m.OpsetImports, canonical.OpsetID{Domain: canonical.MLDomain, Version: ml})
	}
	x, err := m.Graph.AddInput("x", canonical.TensorType(onnxpb.TensorProto_FLOAT, []int64{2}))
	if err != nil {
		t.Fatal(err)
	}
	n, err := m.Graph.AddNode("relu", "", "Relu", []*canonical.Value{x}, []string{"y"})
	if err != nil {
		t.Fatal(err)
	}
	n.Outputs[0].Type = canonical.TensorType(onnxpb.TensorProto_FLOAT, []int64{2})
	m.Graph.Outputs = append(m.Graph.Outputs, n.Outputs[0])
	return m
}

// TensorRT: unsupported domain and element types are violations naming
// the node or value.
func TestTensorRTViolations(t *testing.T) {
	m := &canonical.Model{IRVersion: 8, OpsetImports: []canonical.OpsetID{{Domain: "", Version: 17}, {Domain: canonical.MLDomain, Version: 3}}, Graph: canonical.NewGraph("g")}
	g := m.Graph
	x, _ := g.AddInput("x", canonical.TensorType(onnxpb.TensorProto_UINT16, []int64{2, 3}))
	w, _ := g.AddInput("w", canonical.TensorType(onnxpb.TensorProto_DOUBLE, []int64{2, 3}))
	_ = w
	s, err := g.AddNode("scale", canonical.MLDomain, "Scaler", []*canonical.Value{x}, []string{"y"}, canonical.FloatsAttr("scale", 2))
	if err != nil {
		t.Fatal(err)
	}
	u, err := g.AddNode("uniq", "", "Unique", []*canonical.Value{s.Outputs[0]}, []string{"z"})
	if err != nil {
		t.Fatal(err)
	}
	g.Outputs = append(g.Outputs, u.Outputs[0])
	r, err := Adapt(m, mustProfile(t, "tensorrt-10"), Options{})
	var ue *UnsupportedError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v, want *UnsupportedError", err)
	}
	var text []string
	for _, v := range r.Errors() {
		text = append(text, v.String())
	}
	joined := strings.Join(text, "\n")
	for _, want := range []string{
		`node 0 "scale" (Scaler): tensorrt-10 does not run operators of domain ai.onnx.ml`,
		`node 1 "uniq" (Unique): tensorrt-10 does not implement Unique`,
		`input "x" has element type uint16, which tensorrt-10 does not support`,
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("violations lack %q:\n%s", want, joined)
		}
	}
	if len(text) != 3 {
		t.Errorf("%d violations, want 3:\n%s", len(text), joined)
	}
	warned := false
	for _, v := range r.Violations {
		warned = warned || v.Warning && strings.Contains(v.Problem, `input "w" has element type double: tensorrt-10 cast down to float`)
	}
	if !warned {
		t.Errorf("no warning about the double input: %v", r.Violations)
	}
}

// The other targets: every export that Adapt accepts still computes the
// stored outputs (ONNX Runtime 1.30 reads all these opsets); every refusal
// names its nodes.
func TestOtherTargetsKeepNumbers(t *testing.T) {
	rt := openORT(t)
	targets := []string{"tensorrt-10", "openvino-2025", "onnxruntime-web-webgpu", "onnxruntime-web-wasm", "onnx-opset7", "onnx-opset11", "onnx-opset15", "onnx-opset18", "onnx-opset26"}
	// Refusals expected: below opset 10/11 some ops of these exports have
	// no older form with these inputs (ceil_mode, dynamic Slice ends).
	// Gelu needs Erf (opset 9). squeezenet's MaxPool ceil_mode becomes
	// end padding and the encoder's shape-derived Slice ends fold, so both
	// reach opset 7.
	wantRefused := map[string]bool{
		"transformer_block_opset21 onnx-opset7": true,
	}
	dir := t.TempDir()
	ran := map[string]bool{}
	for _, fx := range fixtures {
		for _, name := range targets {
			p := mustProfile(t, name)
			m := load(t, fx)
			r, err := Adapt(m, p, Options{})
			key := fx + " " + name
			if err != nil {
				var ue *UnsupportedError
				if !errors.As(err, &ue) || !wantRefused[key] {
					t.Errorf("%s: %v", key, err)
					continue
				}
				for _, v := range ue.Violations {
					if v.Graph == "" || v.OpType == "" || v.Problem == "" || v.Fix == "" {
						t.Errorf("%s: violation lacks its node or fix: %+v", key, v)
					}
				}
				if r.Converted || m.Opset("") != int64(r.FromOpset) {
					t.Errorf("%s: refused, yet the model was changed (opset %d)", key, m.Opset(""))
				}
				continue
			}
			if wantRefused[key] {
				t.Errorf("%s: accepted, expected a refusal", key)
			}
			if c := countOps(m); p.Name == "onnxruntime-web-webgpu" && c["Gelu"] != 0 {
				t.Errorf("%s: Gelu not expanded for WebGPU", key)
			}
			out := filepath.Join(dir, fx+"_"+name+".onnx")
			if err := canonical.Save(out, m, canonical.SaveOptions{}); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !ran[string(b)] { // identical exports compute the same
				ran[string(b)] = true
				runAndCompare(t, rt, out, fx, key)
			}
		}
	}
	t.Logf("%d distinct exports run", len(ran))
}

func BenchmarkAdaptTransformerToOpset17(b *testing.B) {
	p := mustProfile(b, "onnx-opset17")
	path := filepath.Join(fixtureDir(b, "transformer_block_opset21"), "model.onnx")
	for b.Loop() {
		m, err := canonical.Load(path, canonical.LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Adapt(m, p, Options{}); err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
}

// Capped at 16, LayerNormalization (new in 17) is expanded as well.
func TestTransformerBlockToOpset16(t *testing.T) {
	rt := openORT(t)
	m := load(t, "transformer_block_opset21")
	r, err := Adapt(m, mustProfile(t, "onnx-opset16"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := countOps(m)
	if m.Opset("") != 16 || c["LayerNormalization"] != 0 || c["Gelu"] != 0 || c["ReduceMean"] != 4 {
		t.Errorf("opset %d, ops %v", m.Opset(""), c)
	}
	var ln []string
	for _, a := range r.Actions {
		if a.OpType == "LayerNormalization" {
			ln = append(ln, a.String())
		}
	}
	if len(ln) != 2 || !strings.Contains(ln[0], "opset 16 lacks LayerNormalization") {
		t.Errorf("LayerNormalization actions: %q", ln)
	}
	out := filepath.Join(t.TempDir(), "m.onnx")
	if err := canonical.Save(out, m, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	runAndCompare(t, rt, out, "transformer_block_opset21", "onnx-opset16")
}
