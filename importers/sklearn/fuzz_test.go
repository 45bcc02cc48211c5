package sklearn_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/importers/sklearn"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// FuzzImport: any pickle or joblib file (every container: plain, zlib,
// gzip, bz2, xz, lzma, lz4) is a model or an error within seconds, never a
// panic, a hang or a huge allocation. Seeds are fixture files of each
// container.
func FuzzImport(f *testing.F) {
	for _, name := range []string{
		"normalizer_l1.p4.pkl", "normalizer_l2.p5.pkl", "normalizer_l1.zlib.joblib", "normalizer_l2.bz2.joblib",
		"column_transformer_passthrough_gbr.xz.joblib", "column_transformer_remainder_scaler.lzma.joblib",
		"column_transformer_logreg.lz4.joblib", "bernoulli_nb.joblib",
	} {
		testpaths.AddFiles(f, filepath.Join("../../fixtures/sklearn", name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "m.joblib")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_ = sklearn.New().Detect(p, data[:min(len(data), 4096)])
		done := make(chan struct{})
		go func() {
			defer close(done)
			if res, err := sklearn.New().Import(context.Background(), p, nil); err == nil {
				res.Model.Close()
			}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("import took more than 10 s")
		}
	})
}
