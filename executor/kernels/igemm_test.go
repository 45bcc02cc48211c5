package kernels

import (
	"math/rand/v2"
	"testing"
)

// TestIGemmExact: every integer kernel gives the exact integer product
// (summed in int64 here) for shapes that leave partial tiles, odd k and
// the extreme values ±255 in both operands, on one thread and on three.
func TestIGemmExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, mk := range availableI {
		for _, sh := range [][3]int{{1, 1, 1}, {6, 16, 2}, {7, 33, 27}, {13, 70, 288}, {64, 100, 9}, {3, 5, 0}} {
			m, n, k := sh[0], sh[1], sh[2]
			a := make([]int16, m*k)
			b := make([]int16, k*n)
			for i := range a {
				a[i] = int16(rng.IntN(511) - 255)
			}
			for i := range b {
				b[i] = int16(rng.IntN(511) - 255)
			}
			if len(a) > 1 && len(b) > 1 {
				a[0], a[1], b[0], b[n] = -255, -255, -255, -255
			}
			for _, threads := range []int{1, 3} {
				x := NewContext(threads)
				pa, err := packIA(mk.mr, m, k, a, k)
				if err != nil {
					t.Fatal(err)
				}
				c := make([]int32, m*n)
				for i := range c {
					c[i] = 12345 // every element must be written
				}
				if err := x.igemm(mk, n, pa, IMatrix(k, n, b), c, n); err != nil {
					t.Fatal(err)
				}
				x.Close()
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						var want int64
						for q := 0; q < k; q++ {
							want += int64(a[i*k+q]) * int64(b[q*n+j])
						}
						if int64(c[i*n+j]) != want {
							t.Fatalf("%s %dx%dx%d threads %d: C[%d,%d] = %d, want %d", mk.name, m, n, k, threads, i, j, c[i*n+j], want)
						}
					}
				}
			}
		}
	}
}

// TestIConvColumns: the columns an integer GEMM reads from an image are
// the im2col matrix written out directly (padding 0), for strided,
// dilated and padded geometries whose panels cross output rows.
func TestIConvColumns(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, g := range []IConv{
		{C: 3, H: 9, W: 11, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PadT: 1, PadL: 1, OH: 9, OW: 11},
		{C: 2, H: 20, W: 40, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PadT: 1, PadL: 1, OH: 10, OW: 20},
		{C: 1, H: 12, W: 50, KH: 2, KW: 3, SH: 1, SW: 3, DH: 2, DW: 2, PadT: 0, PadL: 2, OH: 10, OW: 17},
	} {
		x := make([]int16, g.C*g.H*g.W)
		for i := range x {
			x[i] = int16(rng.IntN(511) - 255)
		}
		k, n := g.C*g.KH*g.KW, g.OH*g.OW
		want := make([]int16, k*n)
		for c := 0; c < g.C; c++ {
			for ky := 0; ky < g.KH; ky++ {
				for kx := 0; kx < g.KW; kx++ {
					q := (c*g.KH+ky)*g.KW + kx
					for oy := 0; oy < g.OH; oy++ {
						for ox := 0; ox < g.OW; ox++ {
							iy, ix := oy*g.SH-g.PadT+ky*g.DH, ox*g.SW-g.PadL+kx*g.DW
							if iy >= 0 && iy < g.H && ix >= 0 && ix < g.W {
								want[q*n+oy*g.OW+ox] = x[(c*g.H+iy)*g.W+ix]
							}
						}
					}
				}
			}
		}
		for _, nr := range []int{16, 32} {
			got, exp := make([]int16, (k+1)/2*nr*2), make([]int16, (k+1)/2*nr*2)
			for j0 := 0; j0 < n; j0 += nr {
				g.Columns(x)(got, j0, nr)
				IMatrix(k, n, want)(exp, j0, nr)
				for i := range got {
					if got[i] != exp[i] {
						t.Fatalf("%+v nr %d panel %d: value %d is %d, want %d", g, nr, j0, i, got[i], exp[i])
					}
				}
			}
		}
	}
}
