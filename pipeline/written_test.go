package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/passes"
	"github.com/onnxconv/onnxconv/verify"
)

func sha256File(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestReportNamesTheFileWritten: the JSON report of a conversion carries
// the SHA-256 of the source and of the file written; a result that is
// not equivalent and kept is named as the .not-equivalent file in the
// report, with that file's hash.
func TestReportNamesTheFileWritten(t *testing.T) {
	in := filepath.Join(testpaths.RepoRoot(t), "fixtures", "xgboost", "binary_logistic.json")
	dir := t.TempDir()
	out, js := filepath.Join(dir, "x.onnx"), filepath.Join(dir, "r.json")
	if _, err := Convert(context.Background(), in, out, Options{Env: builtins(), Verify: &VerifyOptions{}, Reports: []string{js}}); err != nil {
		t.Fatal(err)
	}
	var r verify.Report
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	c := r.Conversion
	if c == nil || c.Output != out || c.SourceSHA256 != sha256File(t, in) || c.OutputSHA256 != sha256File(t, out) {
		t.Fatalf("conversion facts %+v", c)
	}

	// Not equivalent (float16 inside, tolerance 0), kept.
	zero := 0.0
	mlp := filepath.Join(testpaths.RepoRoot(t), "fixtures", "models", "mlp_opset17", "model.onnx")
	out2 := filepath.Join(dir, "y.onnx")
	_, err = Convert(context.Background(), mlp, out2, Options{Env: builtins(), FP16: &passes.FP16Options{}, Verify: &VerifyOptions{RTol: &zero, ATol: &zero}, Reports: []string{js}, KeepFailed: true})
	if err == nil {
		t.Fatal("float16 at tolerance 0 passed")
	}
	if b, err = os.ReadFile(js); err != nil {
		t.Fatal(err)
	}
	r = verify.Report{}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	kept := keptName(out2)
	if r.Conversion.Output != kept || r.Conversion.OutputSHA256 != sha256File(t, kept) {
		t.Errorf("kept result: report names %q (%s), want %q", r.Conversion.Output, r.Conversion.OutputSHA256, kept)
	}
}
