//go:build cgo

package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
)

// compare checks got against want element-wise: |g-w| <= atol + rtol*|w|
// for floating point, equality otherwise.
func compare(got, want []*canonical.Tensor, rtol, atol float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d outputs, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.DataType != w.DataType || !sameDims(g.Dims, w.Dims) {
			return fmt.Errorf("output %d: %v %v, want %v %v", i, g.DataType, g.Dims, w.DataType, w.Dims)
		}
		gv, err := values(g)
		if err != nil {
			return fmt.Errorf("output %d: %w", i, err)
		}
		wv, err := values(w)
		if err != nil {
			return fmt.Errorf("output %d: %w", i, err)
		}
		bad, worst, worstAt := 0, 0.0, 0
		for j := range wv {
			d := math.Abs(gv[j] - wv[j])
			if d > atol+rtol*math.Abs(wv[j]) || math.IsNaN(gv[j]) != math.IsNaN(wv[j]) {
				bad++
			}
			if d > worst {
				worst, worstAt = d, j
			}
		}
		if bad > 0 {
			return fmt.Errorf("output %d (%s): %d of %d values out of rtol %g / atol %g (max abs diff %.3g at %d: got %g, want %g)",
				i, w.Name, bad, len(wv), rtol, atol, worst, worstAt, gv[worstAt], wv[worstAt])
		}
	}
	return nil
}

func sameDims(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// values decodes the numeric types the fixtures use.
func values(t *canonical.Tensor) ([]float64, error) {
	b, err := t.Bytes()
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	var out []float64
	switch t.DataType {
	case canonical.Float:
		for i := 0; i+4 <= len(b); i += 4 {
			out = append(out, float64(math.Float32frombits(le.Uint32(b[i:]))))
		}
	case canonical.Double:
		for i := 0; i+8 <= len(b); i += 8 {
			out = append(out, math.Float64frombits(le.Uint64(b[i:])))
		}
	case canonical.Int64:
		for i := 0; i+8 <= len(b); i += 8 {
			out = append(out, float64(int64(le.Uint64(b[i:]))))
		}
	case canonical.Int32:
		for i := 0; i+4 <= len(b); i += 4 {
			out = append(out, float64(int32(le.Uint32(b[i:]))))
		}
	case canonical.Bool, canonical.Uint8:
		for _, x := range b {
			out = append(out, float64(x))
		}
	default:
		return nil, fmt.Errorf("comparing %s tensors is not supported", strings.ToLower(t.DataType.String()))
	}
	return out, nil
}
