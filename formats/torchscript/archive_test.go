package torchscript_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fts "github.com/onnxconv/onnxconv/formats/torchscript"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestOpenSilero: the real Silero VAD archive opens; its source parses
// into the classes and methods torch saved.
func TestOpenSilero(t *testing.T) {
	path := filepath.Join(testpaths.Shared(t, "models", "torchscript", "silero_vad"), "silero_vad.jit")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if k := fts.Identify(data[:4096]); k != fts.KindTorchScript {
		t.Fatalf("Identify = %q", k)
	}
	a, err := fts.Open(path, data)
	if err != nil {
		t.Fatal(err)
	}
	if a.Prefix != "silero_vad/" || len(a.Constants) == 0 {
		t.Errorf("prefix %q, %d constants", a.Prefix, len(a.Constants))
	}
	merge := a.Classes["__torch__.vad.model.vad_annotator.VADRNNJITMerge"]
	if merge == nil {
		t.Fatalf("no VADRNNJITMerge among %d classes", len(a.Classes))
	}
	var names []string
	for _, m := range merge.Methods {
		names = append(names, m.Name)
	}
	for _, want := range []string{"forward", "_validate_input", "reset_states", "audio_forward"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("VADRNNJITMerge methods %v lack %s", names, want)
		}
	}
	if _, ok := a.Funcs["__torch__.torch.nn.functional.___torch_mangle_14.pad"]; !ok {
		t.Errorf("free function pad not found")
	}
	// the constant c0 (the decoder's default state) is a tensor of the archive
	if r := fts.AsTensor(a.Constants[0]); r == nil {
		t.Errorf("constant c0 is not a tensor")
	} else if _, err := a.Tensor("c0", r); err != nil {
		t.Error(err)
	}
}

func TestParseErrors(t *testing.T) {
	for src, want := range map[string]string{
		"def f(x):\n  return [y for y in x]\n": "list comprehensions",
		"def f(x):\n  return (x\n":             "unclosed bracket",
		"def f(x):\n    y = 1\n  return y\n":   "inconsistent dedent",
		"def f(x):\n  lambda: 1\n":             "not part of TorchScript",
	} {
		_, err := fts.Parse("f.py", src)
		var se *fts.SyntaxError
		if !errors.As(err, &se) || se.Line == 0 || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want a *SyntaxError saying %q", src, err, want)
		}
	}
}
