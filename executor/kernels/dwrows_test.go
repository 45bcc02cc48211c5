package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestDwRowBlocksBits checks the split of the depthwise convolution on
// large planes by blocks of output rows (dwRowSplit, dwChan.rows) against
// whole planes (dwChan.plane) bit for bit: random geometries (odd sizes,
// 3×3 and 5×5, strides 1 and 2, uneven pads, dilation, a channel
// multiplier, planes in bands), with the tile kernels and without, first
// cut into random blocks of rows (blocks shorter than a tile, of one row,
// the whole plane), then through depthwise on 1–3 threads (with the
// epilogue seeing every element once and the split by rows taken).
func TestDwRowBlocksBits(t *testing.T) {
	tileFor := dwTileFor
	defer func() { dwTileFor = tileFor }()
	r := rand.New(rand.NewPCG(91, 92))
	split := 0
	for it := 0; it < 600; it++ {
		dwTileFor = tileFor
		if it%3 == 2 {
			dwTileFor = func(k, s int) *dwTile { return nil }
		}
		k := 3 + 2*r.IntN(2)
		s := 1 + r.IntN(2)
		c := 1 + r.IntN(6)
		mult, dil := 1, 1
		if it%7 == 0 {
			mult = 2
		}
		if it%11 == 0 {
			dil = 2
		}
		h, wd := 1+r.IntN(60), 1+r.IntN(60)
		if it%4 == 1 {
			h, wd = 60+r.IntN(70), 60+r.IntN(70)
		}
		p := Conv2D{N: 1 + r.IntN(2), C: c, M: c * mult, H: h, W: wd, KH: k, KW: k, SH: s, SW: s, DH: dil, DW: dil,
			PT: r.IntN(k), PL: r.IntN(k), PB: r.IntN(k), PR: r.IntN(k), Groups: c}
		oh, ow := p.Out()
		if oh < 1 || ow < 1 {
			continue
		}
		g := newDwGeom(&p)
		if dwSmallOK(&p, g) {
			continue
		}
		x := randSlice(r, p.N*p.C*p.H*p.W)
		if it%5 == 0 {
			x[r.IntN(len(x))] = float32(math.NaN())
		}
		w := randSlice(r, p.M*p.KH*p.KW)
		var bias []float32
		if it%3 != 0 {
			bias = randSlice(r, p.M)
		}
		cl := dwClamps[it%len(dwClamps)]
		npix := oh * ow
		want := make([]float32, p.N*p.M*npix)
		ctx := NewContext(1)
		sc := ctx.get()
		ch := newDwChan(&p, g, sc)
		for nm := 0; nm < p.N*p.M; nm++ {
			ch.plane(x, w, bias, want, nm, cl[0], cl[1])
		}
		ctx.put(sc)
		name := fmt.Sprintf("it %d %+v clamp %v bias %v tiles %v bands %d", it, p, cl, bias != nil, g.tile != nil, g.band)

		// Random blocks of rows, in a random order.
		var cuts []int
		for o := 0; o < oh; {
			n := 1 + r.IntN(min(oh, 20))
			if it%9 == 0 {
				n = oh
			}
			cuts = append(cuts, o)
			o = min(o+n, oh)
		}
		cuts = append(cuts, oh)
		got := make([]float32, len(want))
		for i := range got {
			got[i] = float32(math.NaN())
		}
		sc = ctx.get()
		ch = newDwChan(&p, g, sc)
		for _, b := range r.Perm(len(cuts) - 1) {
			for nm := 0; nm < p.N*p.M; nm++ {
				ch.rows(x, w, bias, got, nm, cuts[b], cuts[b+1], cl[0], cl[1])
			}
		}
		ctx.put(sc)
		dwSameBits(t, name+fmt.Sprintf(" blocks %v", cuts), got, want)

		// Through depthwise.
		th := 1 + it%3
		tc := NewContext(th)
		if parts := tc.dwRowSplit(&p, g); parts != nil {
			split++
			for i := 0; i+1 < len(parts); i++ {
				if g.tile != nil && parts[i+1]-parts[i] < g.tile.rows {
					t.Fatalf("%s threads %d: blocks %v shorter than a tile", name, th, parts)
				}
			}
		}
		seen := make([]int, len(got))
		for i := range got {
			got[i] = float32(math.NaN())
		}
		tc.depthwise(&p, x, w, bias, got, cl[0], cl[1], func(off, n int) {
			for i := off; i < off+n; i++ {
				seen[i]++
			}
		})
		dwSameBits(t, name+fmt.Sprintf(" threads %d", th), got, want)
		for i, n := range seen {
			if n != 1 {
				t.Fatalf("%s threads %d: epilogue on y[%d] %d times", name, th, i, n)
			}
		}
	}
	if split < 10 {
		t.Fatalf("only %d geometries split by rows", split)
	}
}

func dwSameBits(t *testing.T, name string, got, want []float32) {
	t.Helper()
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: y[%d] = %g, want %g", name, i, got[i], want[i])
		}
	}
}

// BenchmarkDwRowBlocks reports thread CPU ns/op of the mobile nets'
// depthwise layers on large planes on one thread, by whole planes and
// cut into 2 and 4 blocks of rows (every channel of a block, then the
// next block: what each chunk of dwRowSplit computes, all on one
// thread), to show what the cut itself costs.
func BenchmarkDwRowBlocks(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 14))
	dw := dwLayer
	for _, p := range []Conv2D{dw(16, 112, 3, 1), dw(48, 112, 3, 2), dw(72, 56, 3, 1), dw(72, 56, 5, 2), dw(144, 56, 3, 2), dw(120, 28, 5, 1), dw(240, 28, 3, 1), dw(144, 28, 3, 2)} {
		oh, ow := p.Out()
		x, w := randSlice(r, p.N*p.C*p.H*p.W), randSlice(r, p.M*p.KH*p.KW)
		y := make([]float32, p.N*p.M*oh*ow)
		g := newDwGeom(&p)
		for _, blocks := range []int{1, 2, 4} {
			b.Run(fmt.Sprintf("%dx%dx%d_k%d_s%d/%d", p.C, p.H, p.W, p.KH, p.SH, blocks), func(b *testing.B) {
				ctx := NewContext(1)
				s := ctx.get()
				defer ctx.put(s)
				ch := newDwChan(&p, g, s)
				unit := 1
				if g.tile != nil {
					unit = g.tile.rows
				}
				full := g.oh / unit
				if blocks > full {
					b.Skip("fewer whole tiles than blocks")
				}
				parts := []int{0}
				for i := 1; i < blocks; i++ {
					parts = append(parts, full*i/blocks*unit)
				}
				parts = append(parts, g.oh)
				benchConv(b, 2*float64(p.M*oh*ow*p.KH*p.KW), func() error {
					if blocks == 1 {
						for nm := 0; nm < p.M; nm++ {
							ch.plane(x, w, nil, y, nm, float32(math.Inf(-1)), float32(math.Inf(1)))
						}
						return nil
					}
					for i := 0; i+1 < len(parts); i++ {
						for nm := 0; nm < p.M; nm++ {
							ch.rows(x, w, nil, y, nm, parts[i], parts[i+1], float32(math.Inf(-1)), float32(math.Inf(1)))
						}
					}
					return nil
				})
			})
		}
	}
}
