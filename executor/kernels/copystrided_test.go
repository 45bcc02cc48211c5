package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestCopyStrided compares copyStrided (the SIMD call where there is
// one) with a copy per row on random shapes: widths 1–40 (every tail
// length), source and destination pitches at and above the width, source
// and destination offsets; NaN payloads are copied bit for bit and
// nothing between or after the destination rows is written.
func TestCopyStrided(t *testing.T) {
	if copyStridedAsm == nil {
		t.Log("no SIMD strided copy: testing the Go loop")
	}
	r := rand.New(rand.NewPCG(11, 12))
	const guard = 12345.5
	for it := 0; it < 2000; it++ {
		h := 1 + r.IntN(30)
		w := 1 + r.IntN(40)
		if it < 40 {
			w = 1 + it
		}
		sp := w + r.IntN(4)
		dp := w
		if r.IntN(3) == 0 {
			dp += 1 + r.IntN(5)
		}
		so, do := r.IntN(9), r.IntN(9)
		src := randSlice(r, so+(h-1)*sp+w)
		for i := range src {
			if r.IntN(17) == 0 {
				src[i] = math.Float32frombits(0x7fc00000 | uint32(r.IntN(1<<20)))
			}
		}
		got := make([]float32, do+(h-1)*dp+w+9)
		for i := range got {
			got[i] = guard
		}
		want := append([]float32(nil), got...)
		copyStrided(h, w, src[so:], sp, got[do:], dp)
		for i := 0; i < h; i++ {
			copy(want[do+i*dp:do+i*dp+w], src[so+i*sp:so+i*sp+w])
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("h %d w %d sp %d dp %d offsets %d %d: [%d] = %g, want %g", h, w, sp, dp, so, do, i, got[i], want[i])
			}
		}
	}
	copyStrided(0, 5, nil, 5, nil, 5) // nothing to copy: no call, no panic
}
