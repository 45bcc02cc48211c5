package executor

import (
	"math"
	"testing"
)

// Pairwise probabilities r_ij = p_i / (p_i + p_j) of a known p must be
// coupled back into p.
func TestMLSVMProbabilityCoupling(t *testing.T) {
	p := []float64{0.5, 0.3, 0.2}
	logit := func(r float64) float64 { return math.Log(r / (1 - r)) }
	var dec []float64
	for i := 0; i < 3; i++ {
		for j := i + 1; j < 3; j++ {
			dec = append(dec, logit(p[i]/(p[i]+p[j])))
		}
	}
	got := mlSVMProbabilities(dec, []float32{-1, -1, -1}, []float32{0, 0, 0}, 3)
	sum := 0.0
	for i := range p {
		sum += got[i]
		if math.Abs(got[i]-p[i]) > 2e-3 {
			t.Errorf("p[%d] = %.6f, want %.6f", i, got[i], p[i])
		}
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("probabilities sum to %.9f", sum)
	}
}
