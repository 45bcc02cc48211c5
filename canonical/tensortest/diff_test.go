package tensortest

import (
	"math"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

func TestCompare(t *testing.T) {
	f := func(v ...float32) *canonical.Tensor { return canonical.Float32Tensor("x", []int64{int64(len(v))}, v) }
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, c := range []struct {
		got, want  *canonical.Tensor
		abs, scale float64
	}{
		{f(1, 2, 3), f(1, 2, 3), 0, 3},
		{f(1, 2.5, 3), f(1, 2, -4), 7, 4},
		{f(nan, 1), f(nan, 1), 0, 1},
		{f(nan, 1), f(0, 1), math.Inf(1), 1},
		{f(inf), f(inf), 0, math.Inf(1)},
	} {
		d := Compare(t, c.got, c.want)
		if d.Abs != c.abs || d.Scale != c.scale {
			t.Errorf("Compare(%v, %v) = %+v, want abs %g scale %g", c.got, c.want, d, c.abs, c.scale)
		}
	}
	if r := (Diff{Abs: 2, Scale: 4}).Rel(); r != 0.5 {
		t.Errorf("Rel = %g, want 0.5", r)
	}
}
