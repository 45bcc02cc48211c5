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

// TestCopyRows checks the exported CopyRows: the rows copied as
// copyStrided copies them, and sizes that do not fit refused.
func TestCopyRows(t *testing.T) {
	src := make([]float32, 3*10)
	for i := range src {
		src[i] = float32(i)
	}
	dst := make([]float32, 3*4)
	if err := CopyRows(3, 4, src[2:], 10, dst, 4); err != nil {
		t.Fatal(err)
	}
	for r := range 3 {
		for j := range 4 {
			if dst[r*4+j] != src[r*10+2+j] {
				t.Fatalf("row %d, column %d = %v, want %v", r, j, dst[r*4+j], src[r*10+2+j])
			}
		}
	}
	for _, bad := range []struct{ h, w, sp, dp, ns, nd int }{
		{3, 4, 10, 4, 23, 12}, // source one short
		{3, 4, 10, 4, 30, 11}, // destination one short
		{3, 4, 3, 4, 30, 12},  // rows overlap in the source
		{-1, 4, 10, 4, 30, 12},
	} {
		if err := CopyRows(bad.h, bad.w, make([]float32, bad.ns), bad.sp, make([]float32, bad.nd), bad.dp); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
