package kernels

import (
	"errors"
	"math"
	"math/rand"
	"testing"
)

// TestInterleave2 checks Interleave2 against its definition, bit for bit
// (a −0 and a NaN payload among the values), on lengths around the SIMD
// blocks of 8, with the values past 2·len(a) left alone and a short
// output refused.
func TestInterleave2(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 58, 1003} {
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = r.Float32()-0.5, r.Float32()-0.5
		}
		if n > 2 {
			a[1] = float32(math.Copysign(0, -1))
			b[2] = math.Float32frombits(0x7fc01234)
		}
		y := make([]float32, 2*n+3)
		for i := range y {
			y[i] = 42
		}
		if err := Interleave2(a, b, y); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if math.Float32bits(y[2*i]) != math.Float32bits(a[i]) || math.Float32bits(y[2*i+1]) != math.Float32bits(b[i]) {
				t.Fatalf("n %d: y[%d], y[%d] = %v, %v; want %v, %v", n, 2*i, 2*i+1, y[2*i], y[2*i+1], a[i], b[i])
			}
		}
		for i := 2 * n; i < len(y); i++ {
			if y[i] != 42 {
				t.Fatalf("n %d: y[%d] = %v written past the end", n, i, y[i])
			}
		}
		if n > 0 {
			if err := Interleave2(a, b, y[:2*n-1]); err == nil {
				t.Fatalf("n %d: a short output accepted", n)
			}
		}
	}
}

// TestInterleave2Rows checks Interleave2Rows against its definition, bit
// for bit, on widths around the SIMD blocks of 8 and rows of a and b
// wider than w (a Slice's view) or not, with nothing written past the
// rows; bad sizes are refused.
func TestInterleave2Rows(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	for _, w := range []int{1, 7, 8, 9, 16, 58, 116} {
		for _, pad := range [][2]int{{0, 0}, {w, 0}, {3, 11}} {
			const rows = 5
			lda, ldb := w+pad[0], w+pad[1]
			a, b := make([]float32, (rows-1)*lda+w), make([]float32, (rows-1)*ldb+w)
			for i := range a {
				a[i] = r.Float32()
			}
			for i := range b {
				b[i] = -r.Float32()
			}
			y := make([]float32, 2*rows*w+1)
			y[len(y)-1] = 42
			if err := Interleave2Rows(rows, w, a, lda, b, ldb, y); err != nil {
				t.Fatal(err)
			}
			for p := range rows {
				for k := range w {
					if math.Float32bits(y[2*(p*w+k)]) != math.Float32bits(a[p*lda+k]) || math.Float32bits(y[2*(p*w+k)+1]) != math.Float32bits(b[p*ldb+k]) {
						t.Fatalf("w %d, rows %d and %d apart: row %d, pair %d = %v, %v; want %v, %v", w, lda, ldb, p, k, y[2*(p*w+k)], y[2*(p*w+k)+1], a[p*lda+k], b[p*ldb+k])
					}
				}
			}
			if y[len(y)-1] != 42 {
				t.Fatalf("w %d: wrote past the rows", w)
			}
		}
	}
	for name, call := range map[string]func() error{
		"narrow a": func() error {
			return Interleave2Rows(2, 4, make([]float32, 8), 3, make([]float32, 8), 4, make([]float32, 16))
		},
		"short b": func() error {
			return Interleave2Rows(2, 4, make([]float32, 8), 4, make([]float32, 7), 4, make([]float32, 16))
		},
		"short y": func() error {
			return Interleave2Rows(2, 4, make([]float32, 8), 4, make([]float32, 8), 4, make([]float32, 15))
		},
	} {
		var se *ShapeError
		if err := call(); !errors.As(err, &se) {
			t.Errorf("%s: got %v, want a ShapeError", name, err)
		}
	}
}
