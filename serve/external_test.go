package serve_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/builtinenv"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/pipeline"
	"github.com/onnxconv/onnxconv/serve"
)

// TestExternalDataArchive: an ONNX model with its external data file
// beside it, uploaded as a zip of the two, converts (verified against its
// source) instead of failing as a folder that is no model.
func TestExternalDataArchive(t *testing.T) {
	src := filepath.Join(testpaths.RepoRoot(t), "fixtures", "models", "resnet_small", "model.onnx")
	dir := t.TempDir()
	if _, err := pipeline.Convert(context.Background(), src, filepath.Join(dir, "model.onnx"), pipeline.Options{
		Env:  builtinenv.New(),
		Save: pipeline.SaveOptions{ExternalData: true},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "model.onnx.data")); err != nil {
		t.Fatalf("the fixture has no external data: %v", err)
	}
	tm := newTeam(t, serve.Config{})
	tm.start(t)
	id, code, msg := tm.submit(t, "alice", "conv.zip", zipFolder(t, dir), `{"convert": true}`)
	if code != http.StatusAccepted {
		t.Fatalf("submit: %d %s", code, msg)
	}
	if j := tm.wait(t, "alice", id); j.State != serve.StateDone || j.Verdict != "pass" {
		t.Fatalf("external-data zip: %s %s %q model %q", j.State, j.Verdict, j.Error, j.Model)
	}
	// The result keeps external data (its source had it): both files are
	// artifacts, the data the source's weight bytes.
	want, err := os.ReadFile(filepath.Join(dir, "model.onnx.data"))
	if err != nil {
		t.Fatal(err)
	}
	if code, got := tm.do(t, "alice", "GET", "/v1/jobs/"+id+"/artifacts/model.onnx.data", nil, ""); code != 200 || !bytes.Equal(got, want) {
		t.Errorf("model.onnx.data: %d, %d bytes, want the source's %d", code, len(got), len(want))
	}
}
