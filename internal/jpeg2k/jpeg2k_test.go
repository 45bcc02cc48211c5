package jpeg2k_test

import (
	"bytes"
	"errors"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/internal/jpeg2k"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// backendJP2 is the 32×32 RGB JP2 file (PIL via OpenJPEG 2.5.4, 5/3
// reversible, LRCP, one tile, 5 levels) the ONNX backend test
// test_image_decoder_decode_jpeg2k_rgb decodes; its input_0.pb holds the
// file after a short TensorProto header, its output_0.pb PIL's pixels.
func backendJP2(t testing.TB) (file, pixels []byte) {
	t.Helper()
	dir := testpaths.Shared(t, "onnx-v1.22", "backend-tests", "node", "test_image_decoder_decode_jpeg2k_rgb", "test_data_set_0")
	in, err := os.ReadFile(filepath.Join(dir, "input_0.pb"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(filepath.Join(dir, "output_0.pb"))
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(in, []byte{0, 0, 0, 0x0C, 'j', 'P', ' ', ' '})
	if i < 0 {
		t.Fatal("no JP2 file in input_0.pb")
	}
	const n = 32 * 32 * 3
	if len(out) < n {
		t.Fatal("output_0.pb holds fewer than 32×32×3 bytes")
	}
	return in[i:], out[len(out)-n:]
}

// pixels returns img's samples as PIL's convert("RGB") or ("L") lays
// them out.
func pixels(img image.Image) []byte {
	switch m := img.(type) {
	case *image.Gray:
		return m.Pix
	case *image.RGBA:
		var p []byte
		for i := 0; i < len(m.Pix); i += 4 {
			p = append(p, m.Pix[i:i+3]...)
		}
		return p
	}
	return nil
}

func sameAsPIL(t *testing.T, name string, file, want []byte) {
	t.Helper()
	img, err := jpeg2k.Decode(file)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	got := pixels(img)
	if len(got) != len(want) {
		t.Fatalf("%s: %d samples (%v), PIL decoded %d", name, len(got), img.Bounds(), len(want))
	}
	diff, worst := 0, 0
	for i := range got {
		d := max(int(got[i])-int(want[i]), int(want[i])-int(got[i]))
		if d != 0 {
			diff++
			worst = max(worst, d)
		}
	}
	if diff != 0 {
		t.Errorf("%s: %d of %d samples differ from PIL's (OpenJPEG's), by up to %d", name, diff, len(got), worst)
	}
}

// TestJPEG2000BackendLikePIL: every sample of the backend test's image equals
// the one PIL (OpenJPEG) decoded and ONNX stored.
func TestJPEG2000BackendLikePIL(t *testing.T) {
	file, want := backendJP2(t)
	sameAsPIL(t, "backend", file, want)
}

// TestJPEG2000FixturesLikePIL: files PIL wrote with tiles, several layers and
// resolutions, precinct partitions, every progression order (with and
// without precincts), 5/3 and 9/7, grayscale and a raw J2K codestream
// decode to PIL's pixels exactly (testdata/make_fixtures.py wrote both).
func TestJPEG2000FixturesLikePIL(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.j*2*")
	if len(files) < 11 {
		t.Fatalf("%d fixtures in testdata, want 11", len(files))
	}
	for _, f := range files {
		file, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(strings.TrimSuffix(f, filepath.Ext(f)) + ".pixels")
		if err != nil {
			t.Fatal(err)
		}
		sameAsPIL(t, filepath.Base(f), file, want)
	}
}

// TestJPEG2000RefusesByName: features out of scope and hostile sizes are refused
// with an error naming them, before anything large is allocated.
func TestJPEG2000RefusesByName(t *testing.T) {
	file, _ := backendJP2(t)
	soc := bytes.Index(file, []byte{0xFF, 0x4F, 0xFF, 0x51})
	siz := soc + 4 // Lsiz, Rsiz, Xsiz...
	cod := bytes.Index(file, []byte{0xFF, 0x52}) + 4
	for _, c := range []struct {
		name string
		edit func(b []byte)
		want string
		kind any
	}{
		{"huge image", func(b []byte) { copy(b[siz+4:], []byte{0x7F, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF}) }, "samples (the limit is", &jpeg2k.UnsupportedError{}},
		{"subsampled", func(b []byte) { b[siz+38+1] = 2 }, "subsampled", &jpeg2k.UnsupportedError{}},
		{"16-bit", func(b []byte) { b[siz+38] = 15 }, "16-bit", &jpeg2k.UnsupportedError{}},
		{"code-block style", func(b []byte) { b[cod+8] = 0x04 }, "code-block style 0x04", &jpeg2k.UnsupportedError{}},
		{"truncated", nil, "", &jpeg2k.FormatError{}},
	} {
		b := append([]byte(nil), file...)
		if c.edit != nil {
			c.edit(b)
		} else {
			b = b[:len(b)-300]
		}
		_, err := jpeg2k.Decode(b)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.want)
			continue
		}
		switch k := c.kind.(type) {
		case *jpeg2k.UnsupportedError:
			if !errors.As(err, &k) {
				t.Errorf("%s: %T, want an UnsupportedError", c.name, err)
			}
		case *jpeg2k.FormatError:
			if !errors.As(err, &k) {
				t.Errorf("%s: %T, want a FormatError", c.name, err)
			}
		}
	}
}

// BenchmarkDecode decodes the backend test's file and the fixtures.
func BenchmarkDecode(b *testing.B) {
	files, _ := filepath.Glob("testdata/*.j*2*")
	var data [][]byte
	for _, f := range files {
		d, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		data = append(data, d)
	}
	file, _ := backendJP2(b)
	data = append(data, file)
	b.ResetTimer()
	for range b.N {
		for _, d := range data {
			if _, err := jpeg2k.Decode(d); err != nil {
				b.Fatal(err)
			}
		}
	}
}
