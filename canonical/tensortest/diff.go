// Package tensortest compares tensors in tests: how far a computed tensor
// lies from the one a framework or runtime computed.
package tensortest

import (
	"math"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// Diff is how far one tensor lies from another.
type Diff struct {
	// Abs is the largest absolute difference of two elements (+Inf where
	// one is NaN and the other is not).
	Abs float64
	// Scale is the largest magnitude in the tensor compared against (its
	// NaNs left out).
	Scale float64
}

// Rel is Abs over Scale (Abs itself when the scale is 0).
func (d Diff) Rel() float64 {
	if d.Scale == 0 {
		return d.Abs
	}
	return d.Abs / d.Scale
}

// Compare returns how far got lies from want, read as numbers; it fails
// the test when either cannot be read or their sizes differ.
func Compare(t testing.TB, got, want *canonical.Tensor) Diff {
	t.Helper()
	g, err := got.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	w, err := want.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	if len(g) != len(w) {
		t.Fatalf("%d values (shape %v), want %d (shape %v)", len(g), got.Dims, len(w), want.Dims)
	}
	var d Diff
	for i := range g {
		e := math.Abs(g[i] - w[i])
		if math.IsNaN(g[i]) != math.IsNaN(w[i]) {
			e = math.Inf(1)
		} else if math.IsNaN(e) {
			e = 0 // both NaN, or the same infinity
		}
		d.Abs = max(d.Abs, e)
		if !math.IsNaN(w[i]) {
			d.Scale = max(d.Scale, math.Abs(w[i]))
		}
	}
	return d
}
