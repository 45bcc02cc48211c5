package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestDwTileBits checks the tile kernels (dwTileFor: 3×3 and 5×5,
// strides 1 and 2) against the row kernel's plane path (dwRows) bit for
// bit, and against the float64 direct convolution within the rounding
// of k·k taps, on random geometries: planes 1–70 high and wide (odd
// sizes, outputs narrower than a tile, rows not a multiple of a tile's),
// planes of 60–140 (in bands: dwGeom.bands), pads 0–k−1 on each side, 1–5 channels, a channel multiplier, 1–2
// images, bias or not, no clamp, Relu, ReLU6 and a Clip, NaN inputs, 1–3
// threads; and that the epilogue sees every element once. Without the
// tile kernels (ONNXCONV_SGEMM_KERNEL=avx2, no AVX-512) it is skipped.
func TestDwTileBits(t *testing.T) {
	tileFor := dwTileFor
	if tileFor(3, 1) == nil {
		t.Skip("no tile kernels")
	}
	defer func() { dwTileFor = tileFor }()
	r := rand.New(rand.NewPCG(71, 72))
	ran, banded := 0, 0
	for it := 0; it < 800; it++ {
		k := 3 + 2*r.IntN(2)
		s := 1 + r.IntN(2)
		c := 1 + r.IntN(5)
		mult := 1
		if it%7 == 0 {
			mult = 2
		}
		h, wd := 1+r.IntN(70), 1+r.IntN(70)
		if it%3 == 1 {
			// Planes of dwBandMin and more: in bands at stride 2.
			h, wd = 60+r.IntN(80), 60+r.IntN(80)
			mult, s = 1, 2
		}
		p := Conv2D{N: 1 + r.IntN(2), C: c, M: c * mult, H: h, W: wd, KH: k, KW: k, SH: s, SW: s, DH: 1, DW: 1,
			PT: r.IntN(k), PL: r.IntN(k), PB: r.IntN(k), PR: r.IntN(k), Groups: c}
		oh, ow := p.Out()
		if oh < 1 || ow < 1 {
			continue
		}
		dwTileFor = tileFor
		g := newDwGeom(&p)
		if g.tile == nil || dwSmallOK(&p, g) {
			continue
		}
		ran++
		if g.band > 0 {
			banded++
		}
		x, w, bias, cl, got, name := dwCompare(t, r, it, &p, func() { dwTileFor = func(k, s int) *dwTile { return nil } }, func() { dwTileFor = tileFor })
		if it%4 == 0 || cl[0] >= -1 {
			continue
		}
		ref := naiveConv(p, x, w, bias)
		for i := range got {
			if !(math.Abs(float64(got[i])-ref[i]) <= 1e-5*float64(k*k)+1e-5) {
				t.Fatalf("%s: y[%d] = %g, float64 reference %g", name, i, got[i], ref[i])
			}
		}
	}
	if ran < 300 || banded < 100 {
		t.Fatalf("only %d geometries ran the tile kernels, %d in bands", ran, banded)
	}
}

// BenchmarkDepthwiseLarge reports GFLOP/s and thread CPU ns/op of the
// mobile nets' depthwise layers on planes of 28² and more (mnasnet0_5,
// mobilenet_v2/v3, efficientnet_b0), one thread, by tiles and by rows
// (the plane path without the tile kernels).
func BenchmarkDepthwiseLarge(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 14))
	dw := dwLayer
	tileFor := dwTileFor
	defer func() { dwTileFor = tileFor }()
	for _, p := range []Conv2D{dw(16, 112, 3, 1), dw(32, 112, 3, 1), dw(24, 112, 3, 2), dw(96, 112, 3, 2), dw(48, 56, 3, 1), dw(144, 56, 3, 1),
		dw(72, 56, 3, 2), dw(48, 56, 5, 2), dw(72, 28, 5, 1), dw(88, 28, 3, 1), dw(144, 28, 5, 2), dw(240, 28, 3, 2)} {
		oh, ow := p.Out()
		x, w := randSlice(r, p.N*p.C*p.H*p.W), randSlice(r, p.M*p.KH*p.KW)
		y := make([]float32, p.N*p.M*oh*ow)
		ctx := NewContext(1)
		for _, v := range []string{"rows", "tiles"} {
			b.Run(fmt.Sprintf("%dx%dx%d_k%d_s%d/%s", p.C, p.H, p.W, p.KH, p.SH, v), func(b *testing.B) {
				dwTileFor = tileFor
				if v == "rows" {
					dwTileFor = func(k, s int) *dwTile { return nil }
				}
				benchConv(b, 2*float64(p.N*p.M*oh*ow*p.KH*p.KW), func() error { return ctx.Conv2D(p, x, w, nil, y) })
			})
		}
	}
}
