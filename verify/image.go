package verify

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"

	"github.com/onnxconv/onnxconv/canonical"
)

// imageStream tells whether v is the encoded image an ImageDecoder
// decodes, and the height and width of the image the graph declares it
// decodes to (0 when undeclared).
func imageStream(v *canonical.Value) (h, w int64, ok bool) {
	for _, u := range v.Uses() {
		n := u.Node
		if n == nil || u.Index != 0 || n.OpType != "ImageDecoder" || (n.Domain != "" && n.Domain != "ai.onnx") {
			continue
		}
		if d, known := knownDims(n.Outputs[0]); known && len(d) == 3 {
			return d[0], d[1], true
		}
		return 0, 0, true
	}
	return 0, 0, false
}

// pngStream encodes an image of the declared size (32x32 when
// undeclared) as PNG: blocks of 8x8 pixels of random colors, which
// compress well enough to fit the byte length an input may declare; a
// shorter file is padded after its end (decoders stop at IEND).
func pngStream(v *canonical.Value, shape []int64, h, w int64, rng *rand.Rand) (*canonical.Tensor, error) {
	if h <= 0 || w <= 0 {
		h, w = 32, 32
	}
	if h > 4096 || w > 4096 || len(shape) != 1 {
		return nil, fmt.Errorf("input %q is the encoded image of an ImageDecoder (%dx%d, shape %v): it is not generated; pass it with --inputs DIR", v.Name, h, w, shape)
	}
	img := image.NewRGBA(image.Rect(0, 0, int(w), int(h)))
	colors := map[[2]int64]color.RGBA{}
	for y := range h {
		for x := range w {
			k := [2]int64{y / 8, x / 8}
			c, ok := colors[k]
			if !ok {
				c = color.RGBA{uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256)), 255}
				colors[k] = c
			}
			img.SetRGBA(int(x), int(y), c)
		}
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("input %q: encoding a PNG: %w", v.Name, err)
	}
	b := buf.Bytes()
	if n := shape[0]; n > 0 {
		if int64(len(b)) > n {
			return nil, fmt.Errorf("input %q is the encoded image of an ImageDecoder, declared %d bytes long: a %dx%d PNG takes %d; pass it with --inputs DIR", v.Name, n, w, h, len(b))
		}
		b = append(b, make([]byte, n-int64(len(b)))...)
	}
	return canonical.NewTensor(v.Name, canonical.Uint8, []int64{int64(len(b))}, b), nil
}
