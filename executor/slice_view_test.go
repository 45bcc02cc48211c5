package executor

import (
	"math/rand/v2"
	"testing"
)

// naiveSlice is the slice specs of x (shape), element by element.
func naiveSlice(x []float32, shape []int, specs []sliceSpec) []float32 {
	var y []float32
	st := strides(shape)
	out := make([]int, len(specs))
	for i, s := range specs {
		out[i] = s.count
	}
	forEachIndex(out, func(o []int) {
		k := 0
		for d, v := range o {
			k += (specs[d].start + v*specs[d].step) * st[d]
		}
		y = append(y, x[k])
	})
	return y
}

// TestSliceRunsAndViews: on random slices, sliceF32 (runs of coalesced
// axes) gives the elements in order, and when contiguousSlice says the
// slice is one run, that run is the slice.
func TestSliceRunsAndViews(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	views := 0
	for it := 0; it < 3000; it++ {
		rank := 1 + r.IntN(4)
		shape := make([]int, rank)
		for d := range shape {
			shape[d] = 1 + r.IntN(4)
		}
		x := make([]float32, numel(shape))
		for i := range x {
			x[i] = float32(i)
		}
		specs := make([]sliceSpec, rank)
		for d, n := range shape {
			switch r.IntN(4) {
			case 0: // whole
				specs[d] = sliceSpec{0, 1, n}
			case 1: // a range
				s := r.IntN(n)
				specs[d] = sliceSpec{s, 1, 1 + r.IntN(n-s)}
			case 2: // stride 2
				s := r.IntN(n)
				specs[d] = sliceSpec{s, 2, (n - s + 1) / 2}
			default: // backwards
				s := r.IntN(n)
				specs[d] = sliceSpec{s, -1, s + 1}
			}
		}
		want := naiveSlice(x, shape, specs)
		got := sliceF32(x, shape, specs)
		if len(got) != len(want) {
			t.Fatalf("%v %v: %d elements, want %d", shape, specs, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%v %v: element %d = %g, want %g", shape, specs, i, got[i], want[i])
			}
		}
		if off, ok := contiguousSlice(shape, specs); ok {
			views++
			for i := range want {
				if x[off+i] != want[i] {
					t.Fatalf("%v %v: view at %d: element %d = %g, want %g", shape, specs, off, i, x[off+i], want[i])
				}
			}
		}
	}
	if views < 100 {
		t.Fatalf("only %d of the random slices were views", views)
	}
}
