package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestOffsKernelsMatchPacked: each micro-kernel reading B's rows through
// a table of offsets (mk.offs, and mk.offsEdge[r] for the first r rows)
// stores the bits its tileFunc stores on a panel packed from those rows
// (set, add, bias, ReLU; rows in any order, overlapping, out of order),
// and writes nothing past its rows or columns.
func TestOffsKernelsMatchPacked(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 7))
	tested := 0
	for _, mk := range available {
		if mk.offs == nil {
			continue
		}
		tested++
		if len(mk.offsEdge) != mk.mr {
			t.Fatalf("%s: %d offset edge kernels for %d rows", mk.name, len(mk.offsEdge), mk.mr)
		}
		for _, kc := range []int{0, 1, 9, 37, 256} {
			src := randSlice(r, 5000)
			// Negative values for the ReLU, a NaN and a −0 in B.
			src[17], src[33] = float32(math.NaN()), float32(math.Copysign(0, -1))
			offs := make([]int, kc+1)
			for p := range offs {
				offs[p] = r.IntN(len(src) - mk.nr)
			}
			if kc > 2 {
				offs[1] = offs[0] + 1 // overlapping rows
			}
			panel := make([]float32, kc*mk.nr+1)
			for p := 0; p < kc; p++ {
				copy(panel[p*mk.nr:(p+1)*mk.nr], src[offs[p]:offs[p]+mk.nr])
			}
			a := randSlice(r, kc*mk.mr+1)
			bias := randSlice(r, mk.mr)
			c0 := randSlice(r, mk.mr*(mk.nr+3))
			for _, st := range []struct {
				add, relu int
				bias      *float32
			}{{0, 0, nil}, {1, 0, nil}, {0, 1, &bias[0]}, {1, 1, nil}, {0, 0, &bias[0]}} {
				for rows := 1; rows <= mk.mr; rows++ {
					fn, ofn := mk.fn, mk.offs
					if rows < mk.mr {
						fn, ofn = mk.edge[rows], mk.offsEdge[rows]
					}
					want := append([]float32(nil), c0...)
					fn(kc, &a[0], &panel[0], mk.nr, &want[0], mk.nr+3, st.add, st.bias, st.relu)
					got := append([]float32(nil), c0...)
					ofn(kc, &a[0], &offs[0], &src[0], &got[0], mk.nr+3, st.add, st.bias, st.relu)
					name := fmt.Sprintf("%s rows %d kc %d add %d relu %d bias %v", mk.name, rows, kc, st.add, st.relu, st.bias != nil)
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s: c[%d] = %g, packed panel %g", name, i, got[i], want[i])
						}
						if (i/(mk.nr+3) >= rows || i%(mk.nr+3) >= mk.nr) && math.Float32bits(got[i]) != math.Float32bits(c0[i]) {
							t.Fatalf("%s: c[%d] written", name, i)
						}
					}
				}
			}
		}
	}
	if tested == 0 && KernelName() != "generic" {
		t.Fatalf("no %s kernel with offsets", KernelName())
	}
}

// TestConvInPlaceMatchesPacked: every kernel that reads the im2col rows
// in place (convFlat's grid through mk.offs, convRows' full panels)
// gives the bits of the same kernel packing the panels, on 1 to 3
// threads, for the geometries that take those paths (3×3 at 16–64
// channels, strided, dilated, grouped, over one k-block, tail panels
// and tail tiles).
func TestConvInPlaceMatchesPacked(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 8))
	cases := []Conv2D{
		{N: 1, C: 16, H: 32, W: 32, M: 16, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 32, H: 30, W: 29, M: 40, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 64, H: 17, W: 16, M: 64, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 2, C: 24, H: 21, W: 19, M: 28, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 0, PR: 1, Groups: 1},
		{N: 1, C: 12, H: 15, W: 23, M: 20, KH: 3, KW: 3, SH: 1, SW: 1, DH: 2, DW: 2, PT: 2, PL: 2, PB: 2, PR: 2, Groups: 2},
		{N: 1, C: 6, H: 40, W: 37, M: 13, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
		{N: 1, C: 3, H: 45, W: 47, M: 16, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1},
	}
	for _, mk := range available {
		if mk.offs == nil {
			continue
		}
		packed := mk
		packed.offs, packed.offsEdge = nil, nil
		for i, p := range cases {
			x := randSlice(r, p.N*p.C*p.H*p.W)
			w := randSlice(r, p.M*p.C/p.Groups*p.KH*p.KW)
			bias := randSlice(r, p.M)
			oh, ow := p.Out()
			cg, mg := p.C/p.Groups, p.M/p.Groups
			kk := cg * p.KH * p.KW
			pg := make([]*Packed, p.Groups)
			for g := range pg {
				var err error
				if pg[g], err = packAll(mk, true, false, mg, kk, 1, w[g*mg*kk:(g+1)*mg*kk], kk); err != nil {
					t.Fatal(err)
				}
			}
			run := func(th int, k microKernel, rows bool, relu int) []float32 {
				ctx := NewContext(th)
				defer ctx.Close()
				y := make([]float32, p.N*p.M*oh*ow)
				for j := range y {
					y[j] = float32(math.NaN())
				}
				for n := 0; n < p.N; n++ {
					for g := 0; g < p.Groups; g++ {
						xg := x[(n*p.C+g*cg)*p.H*p.W : (n*p.C+(g+1)*cg)*p.H*p.W]
						yg := y[(n*p.M+g*mg)*oh*ow : (n*p.M+(g+1)*mg)*oh*ow]
						bg := bias[g*mg : (g+1)*mg]
						if rows {
							ctx.convRows(&p, k, pg[g], xg, cg, mg, bg, yg, relu, nil, 0)
						} else if err := ctx.convFlat(&p, k, pg[g], xg, cg, mg, bg, yg, relu, nil, 0); err != nil {
							t.Fatal(err)
						}
					}
				}
				return y
			}
			for _, rows := range []bool{false, true} {
				if rows && (kk > blockK || roundUp(mg, mk.mr)*kk > rowsMaxA) {
					continue
				}
				for relu := 0; relu <= 2; relu++ {
					want := run(1, packed, rows, relu)
					for th := 1; th <= 3; th++ {
						got := run(th, mk, rows, relu)
						for j := range got {
							if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
								t.Fatalf("%s case %d %+v rows %v relu %d, %d threads: y[%d] = %g, packed %g", mk.name, i, p, rows, relu, th, j, got[j], want[j])
							}
						}
					}
				}
			}
		}
	}
}

// TestHalfKernelsMatchFullTile: each half-width kernel (mk.half: plain,
// edge rows, offset table) stores the first nr/2 columns of its full
// kernel's tile bit for bit (set, add, bias, ReLU) and writes nothing
// past them; and a product whose last panel has at most nr/2 columns
// (which takes them) equals the same product computed on panels whose
// columns all go through the full kernels.
func TestHalfKernelsMatchFullTile(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 11))
	for _, mk := range available {
		h := mk.half
		if h == nil {
			continue
		}
		w := mk.nr / 2
		for _, kc := range []int{0, 1, 9, 37} {
			src := randSlice(r, 3000)
			offs := make([]int, kc+1)
			for p := range offs {
				offs[p] = r.IntN(len(src) - mk.nr)
			}
			panel := make([]float32, kc*mk.nr+1)
			for p := 0; p < kc; p++ {
				copy(panel[p*mk.nr:(p+1)*mk.nr], src[offs[p]:offs[p]+mk.nr])
			}
			a := randSlice(r, kc*mk.mr+1)
			bias := randSlice(r, mk.mr)
			c0 := randSlice(r, mk.mr*(mk.nr+3))
			for _, st := range []struct {
				add, relu int
				bias      *float32
			}{{0, 0, nil}, {1, 0, nil}, {0, 1, &bias[0]}, {1, 1, nil}} {
				for rows := 1; rows <= mk.mr; rows++ {
					fn, hf, hof := mk.fn, h.fn, h.offs
					if rows < mk.mr {
						fn, hf, hof = mk.edge[rows], h.edge[rows], h.offsEdge[rows]
					}
					want := append([]float32(nil), c0...)
					fn(kc, &a[0], &panel[0], mk.nr, &want[0], mk.nr+3, st.add, st.bias, st.relu)
					got := append([]float32(nil), c0...)
					hf(kc, &a[0], &panel[0], mk.nr, &got[0], mk.nr+3, st.add, st.bias, st.relu)
					gotO := append([]float32(nil), c0...)
					hof(kc, &a[0], &offs[0], &src[0], &gotO[0], mk.nr+3, st.add, st.bias, st.relu)
					for i := range got {
						ref := want[i]
						if i%(mk.nr+3) >= w || i/(mk.nr+3) >= rows {
							ref = c0[i] // untouched
						}
						if math.Float32bits(got[i]) != math.Float32bits(ref) || math.Float32bits(gotO[i]) != math.Float32bits(ref) {
							t.Fatalf("%s rows %d kc %d %+v: c[%d] = %g / %g (offsets), want %g", mk.name, rows, kc, st, i, got[i], gotO[i], ref)
						}
					}
				}
			}
		}
		// Products: n = 16q + tail columns against the same columns
		// computed inside a wider product (full panels only).
		for _, sh := range [][3]int{{30, 36, 70}, {12, 48, 300}, {5, 200, 16}, {25, 14, 9}} {
			m, n, k := sh[0], sh[1], sh[2]
			wide := roundUp(n, mk.nr)
			if n%mk.nr == 0 || n%mk.nr > w {
				t.Fatalf("%v: no half panel", sh)
			}
			av, bw := randSlice(r, m*k), randSlice(r, k*wide)
			bias := randSlice(r, m)
			for th := 1; th <= 2; th++ {
				x := NewContext(th)
				c, cw := make([]float32, m*n), make([]float32, m*wide)
				// B of n columns is the first n columns of bw (stride wide).
				fin := &finish{bias: bias, relu: true}
				if err := x.sgemmFinish(mk, false, false, m, n, k, 1, av, k, nil, bw, wide, nil, 0, c, n, fin); err != nil {
					t.Fatal(err)
				}
				if err := x.sgemmFinish(mk, false, false, m, wide, k, 1, av, k, nil, bw, wide, nil, 0, cw, wide, fin); err != nil {
					t.Fatal(err)
				}
				x.Close()
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						if math.Float32bits(c[i*n+j]) != math.Float32bits(cw[i*wide+j]) {
							t.Fatalf("%s %v, %d threads: C[%d][%d] = %g, in full panels %g", mk.name, sh, th, i, j, c[i*n+j], cw[i*wide+j])
						}
					}
				}
			}
		}
	}
}
