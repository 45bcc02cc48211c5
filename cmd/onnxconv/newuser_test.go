package main

// Tests for what a new user hit (issue: one library pipeline under a thin
// CLI). Each failed on the code before it.

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

func TestVersionFlag(t *testing.T) {
	code, stdout, stderr := execCmd(t, "--version")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	first := strings.SplitN(stdout, "\n", 2)[0]
	if !strings.HasPrefix(first, "onnxconv ") || strings.TrimSpace(strings.TrimPrefix(first, "onnxconv ")) == "" {
		t.Fatalf("--version printed %q", stdout)
	}
	if !strings.Contains(stdout, "built with go") {
		t.Errorf("--version lacks the toolchain: %q", stdout)
	}
}

// A converted framework model says which onnxconv made it, and every
// report shows the version, the command line, the time and the
// conversion facts, titled as a conversion.
func TestConvertReportsAndProducerCarryVersion(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "xgb13.onnx")
	var reports []string
	args := []string{"convert", filepath.Join(repoDir(t), "fixtures", "xgboost", "binary_logistic.json"), out, "--opset", "13"}
	for _, ext := range []string{".json", ".md", ".html", ".xml"} {
		p := filepath.Join(dir, "r"+ext)
		reports = append(reports, p)
		args = append(args, "--report", p)
	}
	code, stdout, stderr := execCmd(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	m, err := canonical.Load(out, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	producer := m.ProducerName + " " + m.ProducerVersion
	m.Close()
	_, vout, _ := execCmd(t, "--version")
	ver := strings.TrimPrefix(strings.SplitN(vout, "\n", 2)[0], "onnxconv ")
	if m.ProducerName != "onnxconv" || m.ProducerVersion == "" || !strings.HasPrefix(m.ProducerVersion, ver) {
		t.Errorf("producer %q, want onnxconv and the version %q", producer, ver)
	}
	for _, p := range reports {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for _, want := range []string{"onnxconv convert", ver, "binary_logistic.json", "xgboost", "--opset"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s lacks %q", filepath.Base(p), want)
			}
		}
		if strings.Contains(s, "onnxconv verify") {
			t.Errorf("%s is titled as a plain verify", filepath.Base(p))
		}
	}
	var j struct {
		Provenance struct{ Time string }
		Conversion struct {
			OpsetBefore int `json:"opset_before"`
			OpsetAfter  int `json:"opset_after"`
		}
	}
	b, _ := os.ReadFile(reports[0])
	if err := json.Unmarshal(b, &j); err != nil || j.Provenance.Time == "" || j.Conversion.OpsetBefore != 21 || j.Conversion.OpsetAfter != 13 {
		t.Errorf("JSON report: %v %+v", err, j)
	}
	x, _ := os.ReadFile(reports[3])
	var suites struct {
		XMLName xml.Name
		Name    string `xml:"name,attr"`
	}
	if err := xml.Unmarshal(x, &suites); err != nil || suites.Name != "onnxconv convert" {
		t.Errorf("JUnit report: %v, name %q", err, suites.Name)
	}
}

// opset refuses to overwrite its input without --force, as convert does,
// and speaks convert's flags (--opset, verification on by default).
func TestOpsetOverwriteAndVocabulary(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(repoDir(t), "fixtures", "models", "mlp_opset9", "model.onnx")
	in := filepath.Join(copyFiles(t, dir, "m", map[string]string{src: "model.onnx"}), "model.onnx")
	before, _ := os.ReadFile(in)
	for _, args := range [][]string{
		{"opset", in, "-o", in, "--opset", "13"},
		{"opset", in, "--to", "13", "-o", in},
		{"convert", in, in, "--opset", "13"},
	} {
		code, _, stderr := runCmd(args...)
		if code != 2 || !strings.Contains(stderr, "--force") {
			t.Errorf("%v: exit %d, want 2 naming --force: %s", args, code, stderr)
		}
	}
	if after, _ := os.ReadFile(in); string(after) != string(before) {
		t.Fatal("the input was overwritten")
	}
	code, stdout, stderr := runCmd("opset", in, filepath.Join(dir, "m13.onnx"), "--opset", "13")
	if code != 0 || !strings.Contains(stdout, "EQUIVALENT") || !strings.Contains(stdout, "opset 9 -> 13") {
		t.Fatalf("opset IN OUT --opset 13: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCmd("opset", in, "-o", in, "--opset", "13", "--force")
	if code != 0 {
		t.Fatalf("--force: exit %d\n%s\n%s", code, stdout, stderr)
	}
	m, err := canonical.Load(in, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Opset("") != 13 {
		t.Errorf("opset %d after --force, want 13", m.Opset(""))
	}
}

// An ml opset that cannot be reached is blamed on --ml-opset.
func TestMLOpsetErrorNamesMLOpset(t *testing.T) {
	code, _, stderr := runCmd("convert", filepath.Join(repoDir(t), "fixtures", "xgboost", "binary_logistic.json"),
		filepath.Join(t.TempDir(), "o.onnx"), "--ml-opset", "9")
	if code == 0 || strings.Contains(stderr, "--opset") || !strings.Contains(stderr, "ml") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

func TestOutputTxtRefused(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runCmd("convert", filepath.Join(repoDir(t), "fixtures", "models", "mlp_opset9", "model.onnx"), filepath.Join(dir, "out.txt"))
	if code != 2 || !strings.Contains(stderr, ".onnxtxt") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	assertOnly(t, dir)
}

func TestUnknownTargetSuggests(t *testing.T) {
	code, _, stderr := runCmd("convert", filepath.Join(repoDir(t), "fixtures", "models", "mlp_opset9", "model.onnx"),
		filepath.Join(t.TempDir(), "o.onnx"), "--target", "tensorrt10")
	if code != 2 || !strings.Contains(stderr, `did you mean "tensorrt-10"`) || strings.Contains(stderr, "onnxruntime-1.13") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

func TestUnknownRootFlag(t *testing.T) {
	code, _, stderr := runCmd("--bogus")
	if code != 2 || !strings.Contains(stderr, "see 'onnxconv --help'") || strings.Contains(stderr, "onnxconv onnxconv") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, _, stderr = runCmd("convert", "--bogus")
	if code != 2 || !strings.Contains(stderr, "see 'onnxconv convert --help'") {
		t.Fatalf("convert: exit %d: %s", code, stderr)
	}
}

// A report path that cannot be written is refused before any work.
func TestBadReportPathCheckedFirst(t *testing.T) {
	code, _, stderr := runCmd("convert", filepath.Join(repoDir(t), "fixtures", "xgboost", "binary_logistic.json"),
		filepath.Join(t.TempDir(), "o.onnx"), "--opset", "13", "--report", "/nonexistent-folder/r.json")
	if code != 2 || !strings.Contains(stderr, "nonexistent-folder") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "format xgboost") || strings.Contains(stderr, "imported") {
		t.Errorf("the work started before the report path was checked:\n%s", stderr)
	}
}

// --bisect and --keep-failed on convert: a zero tolerance makes the
// LayerNormalization/Gelu expansions below opset 17 differ in the last bits.
func TestConvertBisectKeepFailed(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "block16.onnx")
	code, stdout, stderr := runCmd("convert", filepath.Join(repoDir(t), "fixtures", "models", "transformer_block_opset21", "model.onnx"), out,
		"--opset", "16", "--rtol", "0", "--atol", "0", "--bisect", "--keep-failed", "-q")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "first divergent node") {
		t.Errorf("no bisection in the summary:\n%s", stdout)
	}
	if !strings.Contains(stdout, "block16.not-equivalent.onnx") {
		t.Errorf("the kept file is not named:\n%s", stdout)
	}
	assertOnly(t, dir, "block16.not-equivalent.onnx")
}

// inspect on a framework file says what it is and what to do.
func TestInspectNotONNX(t *testing.T) {
	in := filepath.Join(repoDir(t), "fixtures", "xgboost", "binary_logistic.json")
	code, _, stderr := runCmd("inspect", in)
	if code != 2 || !strings.Contains(stderr, "it is in the xgboost format") || !strings.Contains(stderr, "onnxconv convert") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// Temporary paths never reach messages: a corrupt TFLite file imported
// out of process names the input, not the plugin's scratch files.
func TestNoTemporaryPathsInMessages(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(repoDir(t), "fixtures", "tflite", "cnn.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "cut.tflite")
	if err := os.WriteFile(in, src[:300], 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := execCmd(t, "convert", in, filepath.Join(dir, "out.onnx"))
	if code != 2 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, leak := range []string{"onnxconv-import-", "onnxconv-convert-", "imported.onnx", ".tmp-", "/.onnxconv-"} {
		if strings.Contains(stderr, leak) {
			t.Errorf("message shows a temporary path (%s): %s", leak, stderr)
		}
	}
}

// A target restriction the tool can decide is decided: 2-D convolutions
// raise no conv3d warning for WebGPU.
func TestTargetWarningsChecked(t *testing.T) {
	code, stdout, stderr := runCmd("convert", filepath.Join(repoDir(t), "fixtures", "models", "squeezenet", "model.onnx"),
		filepath.Join(t.TempDir(), "web.onnx"), "--target", "onnxruntime-web-webgpu", "--no-verify")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(strings.ToLower(stderr), "conv3d") {
		t.Errorf("a 2-D model is warned about 3-D convolutions:\n%s", stderr)
	}
}
