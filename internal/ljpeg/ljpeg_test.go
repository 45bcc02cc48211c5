package ljpeg_test

import (
	"bytes"
	"errors"
	"image"
	"image/jpeg"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/onnxconv/onnxconv/internal/ljpeg"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// backendJPEG is the 32x32 4:2:0 baseline JPEG (written by PIL) that the
// ONNX backend tests' ImageDecoder cases decode; its input_0.pb holds the
// file after a short TensorProto header.
func backendJPEG(t testing.TB) []byte {
	t.Helper()
	pb, err := os.ReadFile(testpaths.Shared(t, "onnx-v1.22", "backend-tests", "node", "test_image_decoder_decode_jpeg_rgb", "test_data_set_0", "input_0.pb"))
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(pb, []byte{0xFF, 0xD8, 0xFF})
	if i < 0 {
		t.Fatal("no JPEG in input_0.pb")
	}
	return pb[i:]
}

// samplesClose compares two planes of w x h samples: all within 2 (Go's
// inverse DCT rounds otherwise than libjpeg's islow), most equal.
func samplesClose(t *testing.T, what string, a, b []uint8, as, bs, w, h int) {
	t.Helper()
	worst, equal := 0, 0
	for y := range h {
		for x := range w {
			d := int(a[y*as+x]) - int(b[y*bs+x])
			worst = max(worst, d, -d)
			if d == 0 {
				equal++
			}
		}
	}
	if worst > 2 || equal < w*h*8/10 {
		t.Errorf("%s: %d of %d samples equal to image/jpeg's, worst %d apart; want all within 2, most equal", what, equal, w*h, worst)
	}
}

// TestDecodeLikeImageJPEG: the planes of a 4:2:0 colour JPEG and of a
// grayscale one (written by Go's encoder: one component) are those
// image/jpeg decodes, within its inverse DCT's rounding. That the samples
// are libjpeg's exactly is TestImageDecoderLikePIL's (executor).
func TestDecodeLikeImageJPEG(t *testing.T) {
	data := backendJPEG(t)
	img, err := ljpeg.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	got, ok := img.(*image.YCbCr)
	want, ok2 := ref.(*image.YCbCr)
	if !ok || !ok2 || got.SubsampleRatio != image.YCbCrSubsampleRatio420 || got.Rect != want.Rect {
		t.Fatalf("decoded %T %v, image/jpeg %T %v", img, img.Bounds(), ref, ref.Bounds())
	}
	w, h := got.Rect.Dx(), got.Rect.Dy()
	samplesClose(t, "Y", got.Y, want.Y, got.YStride, want.YStride, w, h)
	samplesClose(t, "Cb", got.Cb, want.Cb, got.CStride, want.CStride, (w+1)/2, (h+1)/2)
	samplesClose(t, "Cr", got.Cr, want.Cr, got.CStride, want.CStride, (w+1)/2, (h+1)/2)

	// Grayscale, of a size that is no multiple of 8.
	g := image.NewGray(image.Rect(0, 0, 37, 21))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range g.Pix {
		g.Pix[i] = uint8(i%37*6 + r.IntN(30))
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, g, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	img, err = ljpeg.Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	ref, err = jpeg.Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	gg, ok := img.(*image.Gray)
	wg, ok2 := ref.(*image.Gray)
	if !ok || !ok2 || gg.Rect != wg.Rect {
		t.Fatalf("grayscale: decoded %T %v, image/jpeg %T %v", img, img.Bounds(), ref, ref.Bounds())
	}
	samplesClose(t, "gray", gg.Pix, wg.Pix, gg.Stride, wg.Stride, 37, 21)
}

// TestRefusesUnsupported: a lossless frame is refused as unsupported
// (callers fall back to image/jpeg), a file cut inside its header as
// malformed.
func TestRefusesUnsupported(t *testing.T) {
	orig := backendJPEG(t)
	data := bytes.Clone(orig)
	i := bytes.Index(data, []byte{0xFF, 0xC0})
	data[i+1] = 0xC3
	_, err := ljpeg.Decode(data)
	var unsupported *ljpeg.UnsupportedError
	if !errors.As(err, &unsupported) || unsupported.Feature != "lossless" {
		t.Errorf("lossless: %v, want an UnsupportedError", err)
	}
	_, err = ljpeg.Decode(orig[:i+5])
	var format *ljpeg.FormatError
	if !errors.As(err, &format) {
		t.Errorf("cut in the frame header: %v, want a FormatError", err)
	}
}

// TestCorruptNeverPanics: every prefix of the file and many random byte
// changes decode or fail with an error, never a panic or a huge
// allocation.
func TestCorruptNeverPanics(t *testing.T) {
	data := backendJPEG(t)
	for n := range len(data) {
		_, _ = ljpeg.Decode(data[:n])
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		c := bytes.Clone(data)
		for range 1 + r.IntN(4) {
			c[r.IntN(len(c))] = uint8(r.IntN(256))
		}
		img, err := ljpeg.Decode(c)
		if err == nil && img.Bounds().Dx()*img.Bounds().Dy() > ljpeg.MaxPixels {
			t.Fatalf("decoded %v", img.Bounds())
		}
	}
}
