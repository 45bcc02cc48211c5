package jpeg2k_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/internal/jpeg2k"
)

// FuzzDecode: no input makes Decode panic, hang or allocate beyond its
// bound; seeds are the backend test's file, the fixtures, and truncated
// and bit-flipped copies.
func FuzzDecode(f *testing.F) {
	file, _ := backendJP2(f)
	seeds := [][]byte{file}
	fixtures, _ := filepath.Glob("testdata/*.j*2*")
	for _, p := range fixtures {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	for _, b := range seeds {
		f.Add(b)
	}
	for _, cut := range []int{12, 90, 200, 600, len(file) - 2} {
		f.Add(file[:cut])
	}
	for _, at := range []int{0x60, 0x8D, 0x93, 0x9B, 0xE3, 0x100, 0x300} {
		b := append([]byte(nil), file...)
		b[at] ^= 0x5A
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := jpeg2k.DecodeOptions(data, jpeg2k.Options{MaxPixels: 1 << 18})
		if err == nil && img.Bounds().Dx()*img.Bounds().Dy() > 1<<18 {
			t.Fatalf("decoded %v beyond the bound", img.Bounds())
		}
	})
}
