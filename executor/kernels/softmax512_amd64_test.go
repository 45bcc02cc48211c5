package kernels

import (
	"math"
	"math/rand"
	"testing"
)

// TestSoftmaxRowsAVX512 checks softmaxRowsAVX512 (whole rows in one call)
// bit for bit against softmaxRow (rowMax, expSub, sumF64, scale) on rows
// of 8 to 200 values, in place and not, with rows holding ±Inf, ±0, huge
// and tiny values, differences around exp32's underflow bound, and NaN
// rows (which the call leaves to softmaxRow).
func TestSoftmaxRowsAVX512(t *testing.T) {
	if softmaxRows == nil {
		t.Skip("no AVX-512 Softmax rows (CPU or " + KernelEnv + ")")
	}
	rng := rand.New(rand.NewSource(7))
	for iter := 0; iter < 2000; iter++ {
		n := 8 * (1 + rng.Intn(25))
		rows := 1 + rng.Intn(7)
		x := make([]float32, rows*n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * []float64{0.1, 1, 10, 60}[rng.Intn(4)])
		}
		for r := 0; r < rows; r++ {
			row := x[r*n : r*n+n]
			switch rng.Intn(12) {
			case 0:
				row[rng.Intn(n)] = float32(math.Inf(1))
			case 1:
				row[rng.Intn(n)] = float32(math.Inf(-1))
			case 2:
				row[rng.Intn(n)] = float32(math.NaN())
			case 3:
				for i := range row {
					row[i] = float32(math.Inf(-1))
				}
			case 4:
				for i := range row {
					row[i] = float32(math.Copysign(0, float64(rng.Intn(2)*2-1)))
				}
			case 5:
				row[rng.Intn(n)] = 200
			case 6:
				// Differences around exp32's underflow bound.
				row[0] = 0
				for i := 1; i < n; i++ {
					row[i] = float32(-87.33654 + rng.NormFloat64()*0.5)
				}
			case 7:
				row[rng.Intn(n)] = float32(math.Inf(1))
				row[rng.Intn(n)] = float32(math.Inf(1))
				row[rng.Intn(n)] = float32(math.Inf(-1))
			}
		}
		want := make([]float32, len(x))
		for o := 0; o < len(x); o += n {
			softmaxRow(x[o:o+n], want[o:o+n])
		}
		got := make([]float32, len(x))
		Softmax(x, got, n)
		same(t, "Softmax", n, got, want)
		in := append([]float32{}, x...)
		Softmax(in, in, n)
		same(t, "Softmax in place", n, in, want)
	}
}

func same(t *testing.T, what string, n int, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s, n %d: [%d] = %g (%#08x), want %g (%#08x)", what, n, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}
