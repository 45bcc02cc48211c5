package batch

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// FuzzManifest: any manifest text parses into jobs over a small tree or
// is a *ManifestError, within seconds, never a panic, and no job names a
// file outside the manifest's folder.
func FuzzManifest(f *testing.F) {
	testpaths.AddFiles(f, "testdata/collection.yaml")
	f.Add([]byte("jobs:\n  - models: [\"models/**/*.onnx\"]\n    opset: [11, 17]\n    verify: true\n"))
	f.Add([]byte(`{"jobs":[{"models":["**/**/**/*.onnx"],"exclude":["**/b/**"],"check":true,"reference":"ref","inputs":"in"}]}`))
	f.Add([]byte("jobs:\n  - models: [\"../x/*.onnx\", \"/etc/passwd\"]\n    check: true\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := tree(t, "models/a/model.onnx", "models/b/c/deep.onnx", "models/readme.txt", "other/x.onnx")
		done := make(chan struct{})
		go func() {
			defer close(done)
			m, err := ParseManifest(data, dir)
			if err != nil {
				return
			}
			jobs, err := m.Expand()
			if err != nil {
				return
			}
			for _, j := range jobs {
				for _, p := range []string{j.File, j.Reference, j.Inputs} {
					if p == "" {
						continue
					}
					if rel, err := filepath.Rel(dir, p); err != nil || !filepath.IsLocal(rel) {
						t.Errorf("job %q names %s, outside %s", j.ID, p, dir)
					}
				}
			}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("expanding the manifest took more than 10 s")
		}
	})
}
