package kernels

import (
	"math"
	"math/rand"
	"testing"
)

// TestPackGatherAVX512 checks the gathered panels (packA12AVX512 for a
// row-major A, packBT32AVX512 for a transposed B) bit for bit against
// packA's and packB's loops: odd sizes, partial panels (rows < 12,
// columns < 32), steps not a multiple of 4, row strides, alpha 1 and
// not, the values around the panel poisoned (never read into it).
func TestPackGatherAVX512(t *testing.T) {
	if packA12Gather == nil || packBT32Gather == nil {
		t.Skip("no AVX-512 gathers (CPU or " + KernelEnv + ")")
	}
	ga, gb := packA12Gather, packBT32Gather
	defer func() { packA12Gather, packBT32Gather = ga, gb }()
	rng := rand.New(rand.NewSource(11))
	for iter := 0; iter < 300; iter++ {
		m, n := 1+rng.Intn(40), 1+rng.Intn(70)
		k := 1 + rng.Intn(70)
		lda, ldb := k+rng.Intn(5), k+rng.Intn(300)
		i0, p0, j0 := rng.Intn(m), rng.Intn(k), rng.Intn(n)
		mc, kc, nc := 1+rng.Intn(m-i0), 1+rng.Intn(k-p0), 1+rng.Intn(n-j0)
		alpha := float32(1)
		if rng.Intn(2) == 0 {
			alpha = float32(rng.NormFloat64())
		}
		a := make([]float32, m*lda)
		b := make([]float32, n*ldb)
		for _, s := range [][]float32{a, b} {
			for i := range s {
				s[i] = float32(rng.NormFloat64())
				if rng.Intn(50) == 0 {
					s[i] = float32(math.NaN())
				}
			}
		}
		mcp, ncp := (mc+11)/12*12, (nc+31)/32*32
		run := func(on bool) ([]float32, []float32) {
			packA12Gather, packBT32Gather = nil, nil
			if on {
				packA12Gather, packBT32Gather = ga, gb
			}
			pa, pb := make([]float32, kc*mcp), make([]float32, kc*ncp)
			for i := range pa {
				pa[i] = -7
			}
			for i := range pb {
				pb[i] = -7
			}
			packA(pa, false, a, lda, i0, mc, p0, kc, 12, alpha)
			packB(pb, true, b, ldb, p0, kc, j0, nc, 32)
			return pa, pb
		}
		wa, wb := run(false)
		ga2, gb2 := run(true)
		for i := range wa {
			if math.Float32bits(wa[i]) != math.Float32bits(ga2[i]) {
				t.Fatalf("packA m %d lda %d i0 %d mc %d p0 %d kc %d alpha %g: [%d] = %g, want %g", m, lda, i0, mc, p0, kc, alpha, i, ga2[i], wa[i])
			}
		}
		for i := range wb {
			if math.Float32bits(wb[i]) != math.Float32bits(gb2[i]) {
				t.Fatalf("packB n %d ldb %d j0 %d nc %d p0 %d kc %d: [%d] = %g, want %g", n, ldb, j0, nc, p0, kc, i, gb2[i], wb[i])
			}
		}
	}
}
