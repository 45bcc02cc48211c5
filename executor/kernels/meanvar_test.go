package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMeanVarSIMD: meanVar's passes (sum16, sqDev16) and InstanceNorm's
// output pass (normApply) give the Go loops' bits whatever the length
// and offset (heads of 16 and 8, tails), NaN and infinities included,
// and meanVar stays within float64 rounding of a sequential two-pass
// mean and variance.
func TestMeanVarSIMD(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 9))
	for _, n := range []int{0, 1, 7, 15, 16, 17, 31, 48, 100, 257, 4096 + 5} {
		for off := 0; off < 3; off++ {
			buf := randSlice(r, n+off)
			for i := range buf {
				buf[i] = 5*buf[i] + 2
			}
			x := buf[off:]
			s, sg := sum16(x[:n&^15]), sum16Generic(x[:n&^15])
			q, qg := sqDev16(x[:n&^15], 1.25), sqDev16Generic(x[:n&^15], 1.25)
			for l := range s {
				if math.Float64bits(s[l]) != math.Float64bits(sg[l]) || math.Float64bits(q[l]) != math.Float64bits(qg[l]) {
					t.Fatalf("n %d off %d lane %d: sum %v / %v, squares %v / %v (SIMD / Go)", n, off, l, s[l], sg[l], q[l], qg[l])
				}
			}
			y, yg := make([]float32, n), make([]float32, n)
			normApply(x, 1.5, -0.75, 0.25, y)
			normApplyGeneric(x, 1.5, -0.75, 0.25, yg)
			for i := range y {
				if math.Float32bits(y[i]) != math.Float32bits(yg[i]) {
					t.Fatalf("n %d off %d: normApply y[%d] = %v, Go %v", n, off, i, y[i], yg[i])
				}
			}
			if n == 0 {
				continue
			}
			m, v := meanVar(x)
			wm := 0.0
			for _, e := range x {
				wm += float64(e)
			}
			wm /= float64(n)
			wv := 0.0
			for _, e := range x {
				wv += (float64(e) - wm) * (float64(e) - wm)
			}
			wv /= float64(n)
			if math.Abs(m-wm) > 1e-12*(1+math.Abs(wm)) || math.Abs(v-wv) > 1e-12*(1+wv) {
				t.Fatalf("n %d: meanVar = %v, %v, want %v, %v", n, m, v, wm, wv)
			}
		}
	}
	// Non-finite values: the same NaN or infinity as the Go loops.
	x := randSlice(r, 64)
	x[3], x[20], x[41] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))
	s, sg := sum16(x), sum16Generic(x)
	for l := range s {
		if (s[l] != s[l]) != (sg[l] != sg[l]) || (s[l] == s[l] && s[l] != sg[l]) {
			t.Fatalf("lane %d: sum %v, Go %v", l, s[l], sg[l])
		}
	}
}
