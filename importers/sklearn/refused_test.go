package sklearn_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/formats/pickle"
	"github.com/onnxconv/onnxconv/importers/sklearn"
)

// TestRefusedFunctionTransformer: a FunctionTransformer with a Python
// function is refused naming the function (the allow-list refuses the
// name; nothing is called), with what is supported.
func TestRefusedFunctionTransformer(t *testing.T) {
	path := filepath.Join(fixtureDir, "refused_function_transformer.p4.pkl")
	_, err := sklearn.New().Import(context.Background(), path, nil)
	var fe *sklearn.FunctionTransformerError
	if !errors.As(err, &fe) || !strings.Contains(fe.Func, "absolute") {
		t.Fatalf("got %v, want a FunctionTransformerError naming numpy's absolute", err)
	}
	var re *pickle.RefusedError
	if !errors.As(err, &re) {
		t.Errorf("%v does not wrap the allow-list's refusal", err)
	}
	if !strings.Contains(err.Error(), "func=None") {
		t.Errorf("the message does not say what is supported: %v", err)
	}
}

// TestSkopsNotAZip: a .skops file that is no readable zip is
// recognised and refused as a skops file.
func TestSkopsNotAZip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.skops")
	if err := os.WriteFile(path, []byte("PK\x03\x04rest of a zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := sklearn.New().Detect(path, []byte("PK\x03\x04rest of a zip")); c != 1 {
		t.Errorf("Detect gives %v for a .skops zip", c)
	}
	_, err := sklearn.New().Import(context.Background(), path, nil)
	var se *sklearn.SkopsError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "zip") {
		t.Fatalf("got %v", err)
	}
}
