package torchscript_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fts "github.com/onnxconv/onnxconv/formats/torchscript"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/torchscript"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestStateDictRefused: torch.save of a state_dict (make.py) is detected
// as a torch archive and refused with the reason and the fix.
func TestStateDictRefused(t *testing.T) {
	path := filepath.Join(testpaths.RepoRoot(t), "fixtures", "torchscript", "state_dict.pt")
	_, err := torchscript.New().Import(context.Background(), path, map[string]string{"shapes": "1x4"})
	var fe *fts.FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("import of a state_dict: %v, want a *FormatError", err)
	}
	for _, want := range []string{"no code/", "torch.jit.save", "torch.jit.trace"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not say %q", err, want)
		}
	}
}

func zipOf(t *testing.T, entries map[string]string, order []string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range order {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(entries[n])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPT2Refused: a torch.export archive is refused naming what is
// missing. (torch 1.13 cannot write .pt2; the archive is made here with
// the entry names torch.export writes.)
func TestPT2Refused(t *testing.T) {
	data := zipOf(t, map[string]string{"model/archive_format": "pt2", "model/models/model.json": "{}"},
		[]string{"model/archive_format", "model/models/model.json"})
	if k := fts.Identify(data); k != fts.KindPT2 {
		t.Fatalf("Identify = %q, want %q", k, fts.KindPT2)
	}
	_, err := fts.Open("m.pt2", data)
	var fe *fts.FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "torch.export") {
		t.Fatalf("open .pt2: %v", err)
	}
}

// TestUnsupportedListed: every unmapped op is listed in one
// *importers.UnsupportedOpsError.
func TestUnsupportedListed(t *testing.T) {
	src := "class M(Module):\n  def forward(self: __torch__.M, x: Tensor) -> Tensor:\n    a = torch.frobnicate(x)\n    b = torch.quux(a, 2)\n    c = torch.frobnicate(b)\n    return torch.relu(c)\n"
	root := "\x80\x02c__torch__\nM\nq\x00)\x81}q\x01X\x08\x00\x00\x00trainingq\x02\x89sb."
	p := filepath.Join(t.TempDir(), "m.pt")
	if err := os.WriteFile(p, zipOf(t, map[string]string{"m/data.pkl": root, "m/code/__torch__.py": src}, []string{"m/data.pkl", "m/code/__torch__.py"}), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := torchscript.New().Import(context.Background(), p, map[string]string{"shapes": "1x4"})
	var ue *importers.UnsupportedOpsError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v, want *UnsupportedOpsError", err)
	}
	if len(ue.Ops) != 2 || ue.Ops[0].Op != "aten::frobnicate" || ue.Ops[0].Count != 2 || ue.Ops[1].Op != "aten::quux" {
		t.Fatalf("ops = %+v", ue.Ops)
	}
}

// TestMethodOption: -O method picks the method; an unknown one is an
// *importers.OptionError naming the methods there are.
func TestMethodOption(t *testing.T) {
	path := filepath.Join(testpaths.Shared(t, "models", "torchscript", "silero_vad"), "silero_vad.jit")
	_, err := torchscript.New().Import(context.Background(), path, map[string]string{"method": "nope", "shapes": "1x512", "bind": "sr=16000"})
	var oe *importers.OptionError
	if !errors.As(err, &oe) || !strings.Contains(err.Error(), "reset_states") {
		t.Fatalf("method=nope: %v", err)
	}
	_, err = torchscript.New().Import(context.Background(), path, map[string]string{"shapes": "1x512"})
	if !errors.As(err, &oe) || oe.Key != "bind" {
		t.Fatalf("without sr bound: %v", err)
	}
}
