package sklearn

import (
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// FuzzSkops checks that no input makes the skops reader (and the
// estimator readers behind it) panic, hang or allocate without bound; the
// seeds are the hostile skops files and a real one, when ../shared has it.
func FuzzSkops(f *testing.F) {
	testpaths.AddFiles(f, filepath.Join("..", "..", "fixtures", "hostile", "skops", "*.skops"),
		filepath.Join("..", "..", "..", "shared", "models", "sklearn_skops", "stratus_decision_tree", "model.skops"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := loadSkops(data)
		if err != nil {
			return
		}
		if m, err := readModel(v); err == nil {
			_, _ = m.build()
		}
	})
}
