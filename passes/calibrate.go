package passes

import (
	"context"
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
)

// CalibRange is one activation's calibrated range.
type CalibRange struct {
	Name string `json:"name"`
	// Min and Max are the smallest and largest values seen over the
	// calibration samples; Lo and Hi the range the method chose (within
	// [Min, Max]; QuantizeLinear's range is then widened to hold 0).
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	Lo  float64 `json:"lo"`
	Hi  float64 `json:"hi"`
}

// calibBins is the histogram size of the Percentile and Entropy methods
// (ONNX Runtime's and TensorRT's 2048).
const calibBins = 2048

// calibrate runs m on the calibration samples and returns the range of
// each activation in acts: min-max in one pass; the histogram methods
// take a second pass that fills a histogram over the range the first
// found.
func calibrate(ctx context.Context, m *canonical.Model, acts []*canonical.Value, opts QuantOptions) ([]CalibRange, error) {
	ex, err := executor.New(m, executor.Options{Backend: opts.Backend})
	if err != nil {
		return nil, err
	}
	defer func() { _ = ex.Close() }()
	names := make([]string, len(acts))
	for i, v := range acts {
		names[i] = v.Name
	}
	each := func(f func(i int, x []float64)) error {
		for si, s := range opts.Calibration {
			got, err := ex.RunCapture(ctx, s, names)
			if err != nil {
				return fmt.Errorf("calibration sample %d: %w", si, err)
			}
			for i, name := range names {
				if x, ok := floats(got[name]); ok {
					f(i, x)
				}
			}
		}
		return nil
	}
	out := make([]CalibRange, len(acts))
	for i, v := range acts {
		out[i] = CalibRange{Name: v.Name, Min: math.Inf(1), Max: math.Inf(-1)}
	}
	if err := each(func(i int, x []float64) {
		for _, e := range x {
			if !math.IsNaN(e) {
				out[i].Min, out[i].Max = math.Min(out[i].Min, e), math.Max(out[i].Max, e)
			}
		}
	}); err != nil {
		return nil, err
	}
	for i := range out {
		if out[i].Min > out[i].Max { // nothing seen
			out[i].Min, out[i].Max = 0, 0
		}
		out[i].Lo, out[i].Hi = out[i].Min, out[i].Max
	}
	if opts.Method != Percentile && opts.Method != Entropy {
		return out, nil
	}
	// Percentile: values over [Min, Max]; Entropy: |x| over [0, max |x|].
	hists := make([][]float64, len(out))
	lo := make([]float64, len(out))
	width := make([]float64, len(out))
	for i, r := range out {
		hists[i] = make([]float64, calibBins)
		if opts.Method == Percentile {
			lo[i], width[i] = r.Min, (r.Max-r.Min)/calibBins
		} else {
			width[i] = math.Max(math.Abs(r.Min), math.Abs(r.Max)) / calibBins
		}
	}
	if err := each(func(i int, x []float64) {
		h, w := hists[i], width[i]
		if w == 0 || math.IsInf(w, 0) || math.IsNaN(w) {
			return
		}
		for _, e := range x {
			if math.IsNaN(e) {
				continue
			}
			if opts.Method == Entropy {
				e = math.Abs(e)
			}
			b := int((e - lo[i]) / w)
			h[min(max(b, 0), calibBins-1)]++
		}
	}); err != nil {
		return nil, err
	}
	for i := range out {
		if width[i] == 0 || math.IsInf(width[i], 0) || math.IsNaN(width[i]) {
			continue
		}
		if opts.Method == Percentile {
			a, b := percentileBins(hists[i], opts.Percentile)
			out[i].Lo = math.Max(out[i].Min, lo[i]+float64(a)*width[i])
			out[i].Hi = math.Min(out[i].Max, lo[i]+float64(b+1)*width[i])
		} else {
			nq := 128
			if out[i].Min >= 0 {
				nq = 255 // uint8 spends all its levels on [0, T]
			}
			t := float64(entropyBins(hists[i], nq)) * width[i]
			out[i].Lo = math.Max(out[i].Min, -t)
			out[i].Hi = math.Min(out[i].Max, t)
		}
	}
	return out, nil
}

// percentileBins returns the first bin holding the (100-p)/2 % quantile
// and the bin holding the 100-(100-p)/2 % one.
func percentileBins(h []float64, p float64) (lo, hi int) {
	total := 0.0
	for _, c := range h {
		total += c
	}
	cut := total * (100 - p) / 200
	acc := 0.0
	lo = 0
	for lo < len(h)-1 && acc+h[lo] <= cut {
		acc += h[lo]
		lo++
	}
	acc = 0
	hi = len(h) - 1
	for hi > lo && acc+h[hi] <= cut {
		acc += h[hi]
		hi--
	}
	return lo, hi
}

// entropyBins returns the number of leading bins of the |x| histogram h
// to keep: the i >= nq minimizing KL(P_i || Q_i), where P_i is h[:i] with
// the rest added to its last bin and Q_i is h[:i] merged into nq bins and
// spread back evenly over the nonzero bins (TensorRT's calibration).
func entropyBins(h []float64, nq int) int {
	n := len(h)
	if n <= nq {
		return n
	}
	best, bestKL := n, math.Inf(1)
	suffix := make([]float64, n+1)
	for i := n - 1; i >= 0; i-- {
		suffix[i] = suffix[i+1] + h[i]
	}
	p := make([]float64, n)
	q := make([]float64, n)
	for i := nq; i <= n; i++ {
		copy(p, h[:i])
		p[i-1] += suffix[i]
		for k := range q[:i] {
			q[k] = 0
		}
		merged := i / nq
		for j := range nq {
			start := j * merged
			stop := start + merged
			if j == nq-1 {
				stop = i
			}
			sum, nonzero := 0.0, 0
			for k := start; k < stop; k++ {
				sum += h[k]
				if h[k] != 0 {
					nonzero++
				}
			}
			if nonzero == 0 {
				continue
			}
			for k := start; k < stop; k++ {
				if h[k] != 0 {
					q[k] = sum / float64(nonzero)
				}
			}
		}
		kl := klDivergence(p[:i], q[:i])
		if kl < bestKL {
			best, bestKL = i, kl
		}
	}
	return best
}

// klDivergence is KL(p || q) of two unnormalized histograms, both
// smoothed as ONNX Runtime does (zero bins get eps, taken from the
// nonzero ones); +Inf when either is empty.
func klDivergence(p, q []float64) float64 {
	ps, qs := smooth(p), smooth(q)
	if ps == nil || qs == nil {
		return math.Inf(1)
	}
	kl := 0.0
	for k := range ps {
		if ps[k] > 0 {
			kl += ps[k] * math.Log(ps[k]/qs[k])
		}
	}
	return kl
}

// smooth gives the zero bins of the count histogram h eps (1e-4), taken
// evenly from its nonzero bins, and normalizes it to sum 1 (ONNX
// Runtime's smooth_distribution, on counts); nil when h is all zero.
func smooth(h []float64) []float64 {
	const eps = 1e-4
	nonzero := 0
	for _, c := range h {
		if c != 0 {
			nonzero++
		}
	}
	if nonzero == 0 {
		return nil
	}
	take := eps * float64(len(h)-nonzero) / float64(nonzero)
	out := make([]float64, len(h))
	total := 0.0
	for k, c := range h {
		if c == 0 {
			out[k] = eps
		} else {
			out[k] = c - take
			if out[k] <= 0 {
				return nil
			}
		}
		total += out[k]
	}
	for k := range out {
		out[k] /= total
	}
	return out
}
