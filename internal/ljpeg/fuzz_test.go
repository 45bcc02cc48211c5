package ljpeg_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/internal/ljpeg"
)

// FuzzDecode: no input makes Decode panic, hang or decode beyond
// MaxPixels; seeds are the backend test's baseline JPEG and the
// executor's progressive fixtures (DC/AC first and refinement scans,
// restart intervals), whole and cut.
func FuzzDecode(f *testing.F) {
	seeds := [][]byte{backendJPEG(f)}
	files, _ := filepath.Glob(filepath.Join("..", "..", "executor", "testdata", "jpeg", "*.jpg"))
	if len(files) == 0 {
		f.Fatal("no progressive JPEG fixtures in executor/testdata/jpeg")
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	for _, b := range seeds {
		f.Add(b)
		f.Add(b[:len(b)*2/3])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := ljpeg.Decode(data)
		if err == nil && img.Bounds().Dx()*img.Bounds().Dy() > ljpeg.MaxPixels {
			t.Fatalf("decoded %v", img.Bounds())
		}
	})
}
