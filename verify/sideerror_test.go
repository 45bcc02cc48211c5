package verify

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

type failingRunner struct{ err error }

func (f failingRunner) Run(context.Context, []*canonical.Tensor) ([]*canonical.Tensor, error) {
	return nil, f.err
}

// TestSideErrorSaysWhichSideFailed: a comparison whose candidate fails a
// sample the reference ran is told apart from one whose reference failed
// (the caller blames the right side), and the runner's error is kept.
func TestSideErrorSaysWhichSideFailed(t *testing.T) {
	m, err := canonical.Load(filepath.Join("..", "fixtures", "models", "mlp_opset17", "model.onnx"), canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Close() }()
	boom := errors.New("boom")
	for _, tc := range []struct {
		name  string
		a, b  Runner
		wantB bool
	}{
		{"candidate fails", nil, failingRunner{boom}, true},
		{"reference fails", failingRunner{boom}, nil, false},
	} {
		a, b := &Side{Name: "a", Model: m, Runner: tc.a}, &Side{Name: "b", Model: m, Runner: tc.b}
		_, err := Compare(context.Background(), a, b, Options{Samples: 1})
		var se *SideError
		if !errors.As(err, &se) || !errors.Is(err, boom) {
			t.Fatalf("%s: %v is not a SideError wrapping the runner's error", tc.name, err)
		}
		if FailedB(err) != tc.wantB {
			t.Errorf("%s: FailedB = %v, want %v (%v)", tc.name, FailedB(err), tc.wantB, err)
		}
	}
}
