package tfjs_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/importers/tfjs"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// FuzzWeightsManifest: small graph models whose weights manifest (paths,
// shapes, dtypes, quantization, groups) is mutated, beside two weight
// files and a folder, are a model or an error within seconds, never a
// panic; cheap to run, unlike FuzzImport's real models. Seeds are small
// hand-written models and the hostile fixtures' TF.js manifests.
func FuzzWeightsManifest(f *testing.F) {
	w := `{"name":"w","op":"Const","attr":{"dtype":{"type":"DT_FLOAT"}}},{"name":"y","op":"AddV2","input":["x","w"],"attr":{"T":{"type":"DT_FLOAT"}}}]},`
	f.Add([]byte(graphHead + w + `"weightsManifest":[{"paths":["weights.bin"],"weights":[{"name":"w","shape":[2],"dtype":"float32"}]}]}`))
	f.Add([]byte(graphHead + w + `"weightsManifest":[{"paths":["weights.bin","sub/more.bin"],"weights":[{"name":"w","shape":[2],"dtype":"float32","quantization":{"dtype":"uint8","scale":0.5,"min":-1}}]}]}`))
	f.Add([]byte(graphHead + w + `"weightsManifest":[{"paths":["sub/more.bin"],"weights":[{"name":"w","shape":[2],"dtype":"float32","quantization":{"dtype":"float16"}}]},{"paths":["weights.bin"],"weights":[]}]}`))
	for _, c := range []string{"symlink_shard", "shard_listed_many"} {
		testpaths.AddFiles(f, filepath.Join("../../fixtures/hostile/tfjs", c, "model.json"))
	}
	bin := make([]byte, 64)
	for i := range bin {
		bin[i] = byte(i * 37)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "model.json")
		if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range map[string][]byte{"model.json": data, "weights.bin": bin, "sub/more.bin": bin[:16]} {
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = tfjs.ImportFile(context.Background(), p, tfjs.Options{})
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("import took more than 10 s")
		}
	})
}
