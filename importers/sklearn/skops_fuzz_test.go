package sklearn

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzSkops checks that no input makes the skops reader (and the
// estimator readers behind it) panic, hang or allocate without bound; the
// seeds are the hostile skops files and a real one, when ../shared has it.
func FuzzSkops(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("..", "..", "fixtures", "hostile", "skops", "*.skops"))
	seeds = append(seeds, filepath.Join("..", "..", "..", "shared", "models", "sklearn_skops", "stratus_decision_tree", "model.skops"))
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil && len(b) < 1<<20 {
			f.Add(b)
		}
	}
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
