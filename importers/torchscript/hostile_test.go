package torchscript_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fts "github.com/onnxconv/onnxconv/formats/torchscript"
	"github.com/onnxconv/onnxconv/importers/torchscript"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestHostileTorchScript: each archive of fixtures/hostile/torchscript
// (made by its make_hostile.py) is refused with a classified error saying
// what is wrong; none panics, hangs or allocates what it claims.
func TestHostileTorchScript(t *testing.T) {
	dir := filepath.Join(testpaths.RepoRoot(t), "fixtures", "hostile", "torchscript")
	cases := map[string]string{
		"dotdot.pt":         "not a plain relative name",
		"os_system.pt":      "refusing to load os.system",
		"bomb.pt":           "more than the archive",
		"deep_source.pt":    "nested deeper than",
		"recursion.pt":      "calls nested deeper than",
		"endless_loop.pt":   "statements walked",
		"huge_storage.pt":   "claims 1099511627776 elements",
		"stride0.pt":        "beyond four times the archive's size",
		"out_of_storage.pt": "reads outside its storage",
		"bad_source.pt":     "list comprehensions are not read",
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.pt"))
	if len(files) != len(cases) {
		t.Errorf("%d hostile archives in %s, %d cases: every file needs its case", len(files), dir, len(cases))
	}
	for file, want := range cases {
		t.Run(file, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := torchscript.New().Import(ctx, filepath.Join(dir, file), map[string]string{"shapes": "4"})
			if err == nil {
				t.Fatal("imported")
			}
			var ce *torchscript.CodeError
			var fe *fts.FormatError
			var se *fts.SyntaxError
			if !errors.As(err, &ce) && !errors.As(err, &fe) && !errors.As(err, &se) {
				t.Errorf("error %T is not classified: %v", err, err)
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		})
	}
}
