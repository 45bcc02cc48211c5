package infer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// BenchmarkInferNodeTests infers every node backend-test model once per
// iteration (models loaded beforehand; types reset between runs).
func BenchmarkInferNodeTests(b *testing.B) {
	root := backendDir(b, "node")
	entries, err := os.ReadDir(root)
	if err != nil {
		b.Fatal(err)
	}
	var models []*canonical.Model
	for _, e := range entries {
		m, err := canonical.Load(filepath.Join(root, e.Name(), "model.onnx"), canonical.LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		models = append(models, m)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, m := range models {
			for _, o := range m.Graph.Outputs {
				o.Type = nil
			}
			if _, err := Infer(m, Options{NoValueInfo: true}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(models)), "models/op")
}
