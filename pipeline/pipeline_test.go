package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/exporters/profiles"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/opset/convert"
)

const (
	xgbModel   = "../fixtures/xgboost/binary_logistic.json"
	blockModel = "../fixtures/models/transformer_block_opset21/model.onnx"
	mlp9       = "../fixtures/models/mlp_opset9/model.onnx"
)

// copyTo copies src files into a new folder dir/name under the names given.
func copyTo(t *testing.T, dir, name string, files map[string]string) string {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	for src, dst := range files {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// The result carries the conversion facts, and the reports carry them and
// the provenance.
func TestConvertFacts(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "block.onnx")
	rep := filepath.Join(dir, "r.json")
	res, err := Convert(context.Background(), blockModel, out, Options{Env: builtins(),
		Target: "onnxruntime-1.15", Verify: &VerifyOptions{}, Reports: []string{rep}, Command: []string{"test"},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Conversion
	if c.SourceFormat != "onnx" || c.Importer != "onnx" || c.OpsetBefore != 21 || c.OpsetAfter != 19 || c.IRBefore != 10 || c.IRAfter != 8 {
		t.Errorf("facts %+v", c)
	}
	applied := strings.Join(c.Applied, "\n")
	if !strings.Contains(applied, "Gelu") || !strings.Contains(applied, "expanded") {
		t.Errorf("the Gelu expansion is not listed:\n%s", applied)
	}
	steps := map[string]bool{}
	for _, s := range c.Timings {
		steps[s.Step] = true
	}
	for _, s := range []string{"import", "adapt", "verify", "write"} {
		if !steps[s] {
			t.Errorf("no timing for %s: %+v", s, c.Timings)
		}
	}
	// The source, the outputs stored beside it, then the result in ONNX
	// Runtime when it is installed.
	if !res.Equivalent || len(res.Comparisons) < 2 || res.Written != out {
		t.Fatalf("result %+v", res)
	}
	b, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Tool       string
		Provenance struct {
			Version string
			Command []string
		}
		Conversion struct {
			SourceFormat string `json:"source_format"`
			OpsetAfter   int    `json:"opset_after"`
		}
	}
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	if j.Tool != "onnxconv convert" || j.Provenance.Version == "" || strings.Join(j.Provenance.Command, " ") != "test" ||
		j.Conversion.SourceFormat != "onnx" || j.Conversion.OpsetAfter != 19 {
		t.Errorf("report %s", b)
	}
}

// Convert never changes the model it was given: the imported model is
// kept to verify against, and a library caller's model stays as it was.
func TestConvertKeepsTheSource(t *testing.T) {
	before, err := os.ReadFile(mlp9)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "mlp17.onnx")
	res, err := Convert(context.Background(), mlp9, out, Options{Env: builtins(), Opset: 17, Verify: &VerifyOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Equivalent || len(res.Comparisons) < 2 || res.Comparisons[0].Report.A.Opset != 9 || res.Comparisons[0].Report.B.Opset != 17 {
		t.Fatalf("comparison %+v", res.Comparisons)
	}
	after, _ := os.ReadFile(mlp9)
	if string(before) != string(after) {
		t.Fatal("the input file changed")
	}
}

func TestConvertOverwriteNeedsForce(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(copyTo(t, dir, "m", map[string]string{mlp9: "model.onnx"}), "model.onnx")
	_, err := Convert(context.Background(), in, in, Options{Env: builtins(), Opset: 13})
	var oe *OverwriteError
	if !errors.As(err, &oe) || KindOf(err) != KindUsage {
		t.Fatalf("err %v, want an OverwriteError", err)
	}
	_, err = Opset(context.Background(), in, filepath.Join(dir, "m", ".", "model.onnx"), Options{Env: builtins(), Opset: 13})
	if !errors.As(err, &oe) {
		t.Fatalf("opset: err %v, want an OverwriteError", err)
	}
	if _, err := Opset(context.Background(), in, in, Options{Env: builtins(), Opset: 13, Force: true, Verify: &VerifyOptions{}}); err != nil {
		t.Fatalf("--force: %v", err)
	}
	m, err := Load(in, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Opset("") != 13 {
		t.Fatalf("opset %d after the forced overwrite, want 13", m.Opset(""))
	}
}

// A result that is not equivalent is not written; KeepFailed keeps it
// under a name that says so.
func TestConvertKeepFailed(t *testing.T) {
	dir := t.TempDir()
	fx := "../fixtures/xgboost/"
	in := copyTo(t, dir, "inputs", map[string]string{fx + "binary_logistic.input.npy": "input.npy"})
	// binary_hinge's predictions: not what binary_logistic computes.
	ref := copyTo(t, dir, "wrong", map[string]string{fx + "binary_hinge.predict.npy": "predict.npy"})
	out := filepath.Join(dir, "out.onnx")
	opts := Options{Env: builtins(), Verify: &VerifyOptions{Inputs: in, Reference: ref}}
	res, err := Convert(context.Background(), xgbModel, out, opts)
	var ne *NotEquivalentError
	if !errors.As(err, &ne) || KindOf(err) != KindInvalid || res.Equivalent {
		t.Fatalf("err %v, want NotEquivalentError", err)
	}
	if got := strings.Join(names(t, dir), ","); got != "inputs,wrong" {
		t.Fatalf("folder holds %s", got)
	}
	opts.KeepFailed = true
	res, err = Convert(context.Background(), xgbModel, out, opts)
	if !errors.As(err, &ne) || ne.Kept != filepath.Join(dir, "out.not-equivalent.onnx") || res.Kept != ne.Kept {
		t.Fatalf("err %v (kept %q)", err, res.Kept)
	}
	if got := strings.Join(names(t, dir), ","); got != "inputs,out.not-equivalent.onnx,wrong" {
		t.Fatalf("folder holds %s", got)
	}
	if !strings.Contains(err.Error(), "kept as") {
		t.Errorf("message %q does not say where the result was kept", err)
	}
}

// Bisect on convert names the first node whose output moved, and what
// differs there. A tolerance of zero makes the LayerNormalization
// expansion (below opset 17) diverge in the last bits.
func TestConvertBisect(t *testing.T) {
	zero := 0.0
	out := filepath.Join(t.TempDir(), "block16.onnx")
	res, err := Convert(context.Background(), blockModel, out, Options{Env: builtins(), Opset: 16,
		Verify: &VerifyOptions{RTol: &zero, ATol: &zero, Bisect: true}})
	var ne *NotEquivalentError
	if !errors.As(err, &ne) {
		t.Fatalf("err %v; the expansion matched to the bit, the test needs another divergence", err)
	}
	bi := res.Comparisons[0].Report.Bisect
	if bi == nil || bi.First == nil {
		t.Fatalf("no divergent node: %+v", bi)
	}
	if bi.First.OpType != "LayerNormalization" && bi.First.OpType != "Gelu" {
		t.Errorf("first divergent node %s (%s), want the expanded LayerNormalization or Gelu", bi.First.Node, bi.First.OpType)
	}
	if d := bi.First.Diff; d == nil || d.OpTypeA == d.OpTypeB {
		t.Errorf("node diff %+v, want the op types of A and B", d)
	}
}

// Report paths are checked before anything is read.
func TestConvertChecksReportPathFirst(t *testing.T) {
	var logged []string
	_, err := Convert(context.Background(), xgbModel, filepath.Join(t.TempDir(), "o.onnx"), Options{Env: builtins(),
		Opset: 13, Verify: &VerifyOptions{}, Reports: []string{"/nonexistent-folder/r.json"},
		Log: func(f string, a ...any) { logged = append(logged, f) },
	})
	if KindOf(err) != KindUsage || !strings.Contains(err.Error(), "nonexistent-folder") {
		t.Fatalf("err %v, want a usage error naming the folder", err)
	}
	if len(logged) > 0 {
		t.Errorf("work started before the report path was checked: %q", logged)
	}
}

// out.txt is not silently binary: it is refused with the fix.
func TestOutputFormat(t *testing.T) {
	_, err := Convert(context.Background(), mlp9, filepath.Join(t.TempDir(), "out.txt"), Options{Env: builtins()})
	if KindOf(err) != KindUsage || !strings.Contains(err.Error(), ".onnxtxt") {
		t.Fatalf("out.txt: err %v", err)
	}
	for _, c := range []struct {
		path string
		f    OutputFormat
		warn bool
	}{{"a.onnx", Binary, false}, {"a.ONNXTXT", Text, false}, {"a", Binary, true}} {
		f, w, err := OutputFormatOf(c.path)
		if err != nil || f != c.f || (w != "") != c.warn {
			t.Errorf("%s: %v %q %v", c.path, f, w, err)
		}
	}
	// An extension that names no format onnxconv writes is refused, not
	// written as ONNX under a name that says otherwise.
	var ee *OutputExtensionError
	if _, _, err := OutputFormatOf("a.model"); !errors.As(err, &ee) || KindOf(err) != KindUsage || ee.Ext != ".model" {
		t.Errorf("a.model: %v", err)
	}
}

func TestConvertUnknownTarget(t *testing.T) {
	_, err := Convert(context.Background(), mlp9, filepath.Join(t.TempDir(), "o.onnx"), Options{Env: builtins(), Target: "onnxruntime-1.71"})
	var ue *profiles.UnknownTargetError
	if !errors.As(err, &ue) || KindOf(err) != KindUsage {
		t.Fatalf("err %v", err)
	}
	if !strings.Contains(err.Error(), `did you mean "onnxruntime-1.`) || strings.Contains(err.Error(), "tensorrt-10") {
		t.Errorf("message %q: want a suggestion, not the list", err)
	}
}

func TestConvertUnknownFormatAndOptions(t *testing.T) {
	out := filepath.Join(t.TempDir(), "o.onnx")
	_, err := Convert(context.Background(), xgbModel, out, Options{Env: builtins(), From: "xgbost"})
	var fe *importers.UnknownFormatError
	if !errors.As(err, &fe) || fe.Suggestion != "xgboost" || KindOf(err) != KindUsage {
		t.Fatalf("err %v", err)
	}
	_, err = Convert(context.Background(), xgbModel, out, Options{Env: builtins(), ImportOptions: importers.Options{"nope": "1"}})
	var oe *importers.OptionError
	if !errors.As(err, &oe) || KindOf(err) != KindUsage {
		t.Fatalf("err %v", err)
	}
}

// An ml opset the model cannot reach is blamed on the ml opset.
func TestConvertMLOpsetErrorNamesMLOpset(t *testing.T) {
	_, err := Convert(context.Background(), xgbModel, filepath.Join(t.TempDir(), "o.onnx"), Options{Env: builtins(), MLOpset: 9})
	if err == nil || !strings.Contains(err.Error(), "ml") || strings.Contains(err.Error(), "--opset") {
		t.Fatalf("err %v", err)
	}
}

func TestLoadNotONNX(t *testing.T) {
	_, err := Load(xgbModel, LoadOptions{Importers: builtins().Importers})
	var ne *NotONNXError
	if !errors.As(err, &ne) || ne.Format != "xgboost" {
		t.Fatalf("err %v", err)
	}
	if !strings.Contains(err.Error(), "convert it first") {
		t.Errorf("message %q", err)
	}
	// Without importers the file is refused all the same, unnamed.
	_, err = Load(xgbModel, LoadOptions{})
	if err == nil || errors.As(err, &ne) || KindOf(err) != KindInput {
		t.Errorf("without importers: %v, want an unnamed input error", err)
	}
}

// A Convert whose Env lacks importers or exporters is a usage error that
// says how to build one; pipeline names no format, so it has no defaults.
func TestConvertNeedsEnv(t *testing.T) {
	out := filepath.Join(t.TempDir(), "o.onnx")
	for _, env := range []Env{{}, {Importers: builtins().Importers}, {Exporters: builtins().Exporters}} {
		_, err := Convert(context.Background(), mlp9, out, Options{Env: env, Opset: 13})
		if KindOf(err) != KindUsage || !strings.Contains(err.Error(), "builtinenv.New") {
			t.Errorf("Env %+v: %v, want a usage error naming builtinenv.New", env, err)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("something was written: %v", err)
	}
}

func TestPlan(t *testing.T) {
	p, err := Plan(context.Background(), blockModel, 7, 0, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Blockers) == 0 || p.From != 21 {
		t.Fatalf("plan %+v", p)
	}
	var kinds []string
	for _, b := range p.Blockers {
		kinds = append(kinds, b.Kind)
	}
	if !strings.Contains(strings.Join(kinds, ","), convert.KindNotExpressible) && !strings.Contains(strings.Join(kinds, ","), convert.KindNoAdapter) {
		t.Errorf("kinds %v", kinds)
	}
}

// The same sample folder gives the same inputs to convert and verify.
func TestConvertAndVerifyReadInputsAlike(t *testing.T) {
	set := "../fixtures/models/mlp_opset9/test_data_set_0"
	res, err := Convert(context.Background(), mlp9, filepath.Join(t.TempDir(), "o.onnx"), Options{Env: builtins(), Opset: 13, Verify: &VerifyOptions{Inputs: set}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(context.Background(), mlp9, set, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := res.Comparisons[0].Report.Inputs, rep.Inputs
	if len(a) != 1 || len(b) != 1 || a[0].Name != b[0].Name || !proto.Equal(canonical.TensorType(1, a[0].Shape), canonical.TensorType(1, b[0].Shape)) {
		t.Fatalf("inputs differ: %+v vs %+v", a, b)
	}
	if !rep.Equivalent {
		t.Fatalf("mlp_opset9 against its own stored outputs: %s", rep.Summary)
	}
}

// A report never shows a verdict without saying what computed each side
// and whether the result ran in its target runtime, and it explains its
// figures: a conversion for a generic ONNX target is checked by the
// profile, not run there, and the HTML, Markdown and JSON reports say so.
func TestReportSaysWhereTheResultRan(t *testing.T) {
	dir := t.TempDir()
	html, md, js := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.md"), filepath.Join(dir, "r.json")
	_, err := Convert(context.Background(), mlp9, filepath.Join(dir, "o.onnx"), Options{Env: builtins(), Target: "onnx-opset13",
		Verify: &VerifyOptions{}, Reports: []string{html, md, js}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want []string
	}{
		{html, []string{"The result was NOT run in its target runtime", "onnx-opset13", "A (reference) computed by", "B (result) computed by", "What the figures mean", "max ULP", "units in the last place"}},
		{md, []string{"NOT run in its target runtime", "computed by", "What the figures mean", "max ULP"}},
		{js, []string{`"not_run_in":`, `"computed_by":`}},
	} {
		b, err := os.ReadFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s lacks %q", filepath.Base(c.path), w)
			}
		}
	}
}
