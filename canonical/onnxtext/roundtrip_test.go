package onnxtext

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"google.golang.org/protobuf/proto"
)

// sharedDir returns ../shared relative to the directory holding go.mod.
func sharedDir(t testing.TB) string { return testpaths.Shared(t) }

func backendModels(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(sharedDir(t), "onnx-v1.22", "backend-tests", "*", "*", "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("backend test models not found under ../shared/onnx-v1.22 (../shared must sit beside the repository)")
	}
	sort.Strings(files)
	return files
}

// minExpressible is the measured number of backend-test models that are
// expressible (all 1905 model.onnx files of ONNX 1.22); a regression below
// it fails the test.
const minExpressible = 1905

func TestRoundTripBackendModels(t *testing.T) {
	files := backendModels(t)
	total, expressible := 0, 0
	reasons := map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := &onnxpb.ModelProto{}
		if err := proto.Unmarshal(data, m); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		total++
		rel, _ := filepath.Rel(sharedDir(t), f)
		if xerr := Expressible(m); xerr != nil {
			var ne *NotExpressibleError
			if !errors.As(xerr, &ne) {
				t.Errorf("%s: Expressible returned %T, want *NotExpressibleError", rel, xerr)
			}
			reasons[ne.Reason]++
			// Honesty: a rejected model must not round-trip exactly.
			if text, err := Format(m); err == nil {
				if back, err := Parse(rel, text); err == nil && proto.Equal(back, m) {
					t.Errorf("%s: Expressible rejected (%v) but Format→Parse reproduces the model", rel, xerr)
				}
			}
			continue
		}
		expressible++
		text, err := Format(m)
		if err != nil {
			t.Errorf("%s: Format: %v", rel, err)
			continue
		}
		back, err := Parse(rel, text)
		if err != nil {
			t.Errorf("%s: Parse(Format(m)): %v\n%s", rel, err, text)
			continue
		}
		if !proto.Equal(back, m) {
			t.Errorf("%s: round trip differs\n%s", rel, text)
		}
	}
	var keys []string
	for k := range reasons {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("rejected %4d: %s", reasons[k], k)
	}
	t.Logf("expressible %d / %d backend-test models", expressible, total)
	if expressible < minExpressible {
		t.Errorf("only %d of %d models expressible, want at least %d", expressible, total, minExpressible)
	}
}
