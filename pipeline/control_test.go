package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/verify"
)

// TestConvertSileroLike: the Silero-VAD-shaped graph of
// fixtures/divergence/silero_like (an If on the scalar sample rate
// compared with 16000, an STFT as a strided Conv in each branch, the
// state in and out), alone in a folder (no stored inputs), converts with a
// plain verified convert: the generated rate is 16000 (the compared
// constant, not a random number choosing the other branch) and the audio
// 640 samples (four frames of the 256-sample window at hop 128), with
// batch 1 — where one sample made both ONNX Runtime and the executor fail
// and verification could not run.
func TestConvertSileroLike(t *testing.T) {
	src := filepath.Join(testpaths.RepoRoot(t), "fixtures", "divergence", "silero_like", "model.onnx")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "model.onnx")
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := canonical.Load(in, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dims := defaultDims(m, nil, t.Logf)
	if dims["samples"] != 640 || dims["batch"] != 1 {
		t.Errorf("generated dims %v, want samples=640 and batch=1", dims)
	}
	ins, err := verify.GenerateInputs(m, verify.GenOptions{Dims: dims}, 0)
	m.Close()
	if err != nil {
		t.Fatal(err)
	}
	if sr, err := ins[2].Int64s(); err != nil || len(sr) != 1 || sr[0] != 16000 {
		t.Errorf("generated sample rate %v (%v), want 16000", sr, err)
	}

	res, err := Convert(context.Background(), in, filepath.Join(dir, "out.onnx"), Options{Env: builtins(), Verify: &VerifyOptions{}})
	if err != nil {
		var sb strings.Builder
		if res != nil {
			for _, c := range res.Comparisons {
				_ = c.Report.WriteSummary(&sb, c.What)
			}
		}
		t.Fatalf("convert: %v\n%s", err, sb.String())
	}
	if !res.Equivalent || len(res.Comparisons) == 0 {
		t.Fatalf("equivalent %v, %d comparison(s)", res.Equivalent, len(res.Comparisons))
	}
	for _, o := range res.Comparisons[0].Report.Outputs {
		if !o.Pass {
			t.Errorf("output %s differs: %+v", o.Name, o.Float)
		}
	}
}
