package verify

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/sajari/regression"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/verify/errmap"
)

// FloatMetrics describe the difference between two floating-point tensors
// (all samples together). Differences are taken over the elements where
// both sides are finite; NaN and Inf positions are compared separately.
type FloatMetrics struct {
	MaxAbs  float64 `json:"max_abs"`
	MaxRel  float64 `json:"max_rel"` // over elements with reference != 0
	MeanAbs float64 `json:"mean_abs"`
	RMSE    float64 `json:"rmse"`
	// Cosine is the cosine similarity of the two tensors as vectors (1
	// when both are all zero).
	Cosine float64 `json:"cosine"`
	// MaxULP is the largest distance in units in the last place, counted
	// in the element type when both sides share it, else in float32.
	MaxULP float64 `json:"max_ulp"`
	// WorstRatio is max |cand-ref| / (atol + rtol*|ref|): <= 1 passes.
	WorstRatio  float64 `json:"worst_ratio"`
	NaNRef      int64   `json:"nan_ref"`
	NaNMismatch int64   `json:"nan_mismatch"`
	InfRef      int64   `json:"inf_ref"`
	InfMismatch int64   `json:"inf_mismatch"`
	// Histogram counts |cand-ref| of the finite pairs in decades.
	Histogram []HistBin `json:"histogram"`
}

// HistBin is one bin of the error histogram: Lo <= err < Hi (Hi 0 for
// the bin of exact zeros, Hi -1 for the open last bin).
type HistBin struct {
	Label string  `json:"label"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Count int64   `json:"count"`
}

// ExactMetrics count exact matches of integer, bool and string tensors
// (within IntATol for integers).
type ExactMetrics struct {
	Equal  int64 `json:"equal"`
	Total  int64 `json:"total"`
	MaxAbs int64 `json:"max_abs"` // integers only, in quantization steps
	// MeanAbs is the mean difference in steps (integers only).
	MeanAbs float64 `json:"mean_abs"`
	// WorstRatio is MaxAbs / (IntATol + 0.5): below 1 passes, as the
	// float ratio (integers only).
	WorstRatio float64 `json:"worst_ratio"`
	// Steps counts the elements per difference in quantization steps:
	// 0, 1, 2, 3, 4-7, 8-15, 16-127, >= 128 (integers only).
	Steps []StepBin `json:"steps,omitempty"`
}

// StepBin is one bin of the per-step histogram of integer outputs (the
// error map's, errmap.StepBin).
type StepBin = errmap.StepBin

// ClassifierMetrics compare the rows of a 2-D [N, C] float output as class
// scores: Top1 is the fraction of rows with the same arg max, Top5 the
// fraction whose five best classes are the same set (only when C > 5).
type ClassifierMetrics struct {
	Rows    int64    `json:"rows"`
	Classes int64    `json:"classes"`
	Top1    float64  `json:"top1"`
	Top5    *float64 `json:"top5,omitempty"`
}

// Drift is the least-squares fit candidate = Slope*reference + Intercept
// over up to MaxDriftPoints evenly spread finite element pairs. A slope
// away from 1 or an intercept away from 0 with R2 near 1 is a systematic
// scale or offset error; R2 well below 1 is noise.
type Drift struct {
	Slope     float64 `json:"slope"`
	Intercept float64 `json:"intercept"`
	R2        float64 `json:"r2"`
	Points    int     `json:"points"`
	// Degenerate is set when the reference is constant (or too few
	// points), so no line can be fitted; Slope, Intercept and R2 are 0.
	Degenerate bool `json:"degenerate"`
}

// MaxDriftPoints bounds the points of the drift fit (the QR solve is
// quadratic in the number of points).
const MaxDriftPoints = 1000

// histogram decades: [0], (0,1e-9), [1e-9,1e-8) ... [1,10), [10,inf).
func newHistogram() []HistBin {
	h := []HistBin{{Label: "0", Lo: 0, Hi: 0}, {Label: "<1e-9", Lo: 0, Hi: 1e-9}}
	for e := -9; e < 1; e++ {
		h = append(h, HistBin{Label: fmt.Sprintf("1e%d", e), Lo: math.Pow(10, float64(e)), Hi: math.Pow(10, float64(e+1))})
	}
	return append(h, HistBin{Label: ">=10", Lo: 10, Hi: -1})
}

func histIndex(d float64) int {
	switch {
	case d == 0:
		return 0
	case d < 1e-9:
		return 1
	case d >= 10:
		return 12
	}
	i := int(math.Floor(math.Log10(d))) + 11
	return min(max(i, 2), 11)
}

// accumulator gathers the comparison of one output over the samples.
type accumulator struct {
	res *OutputResult
	tol Tolerance

	// float
	n                  int64 // finite pairs
	sumAbs, sumSq      float64
	dot, nRef, nCand   float64
	relSeen            bool
	driftRef, driftCnd []float64
	top1, top5, rows   int64
	// classes is the class count of a classifier output; lastAxis
	// reads any output of rank 2 or more as rows of classes along its
	// last axis (a decoder's logits [batch, positions, vocabulary]).
	classes         int
	lastAxis        bool
	samples, sample int
	noDrift         bool
	// scale is the largest finite |ref| seen (the output's scale); the
	// absolute tolerance scales with it (Tolerance.ATolScale).
	scale float64
	// intSum sums integer differences in steps.
	intSum float64
}

func newAccumulator(res *OutputResult, tol Tolerance, samples int) *accumulator {
	res.Tolerance = tol
	return &accumulator{res: res, tol: tol, samples: max(samples, 1)}
}

// fail marks the output as failed with a reason (the first one is kept).
func (a *accumulator) fail(format string, args ...any) {
	if a.res.Reason == "" {
		a.res.Reason = fmt.Sprintf(format, args...)
	}
	a.res.Pass = false
}

func kindOf(dt canonical.DataType) string {
	switch {
	case dt == canonical.String:
		return "string"
	case dt == canonical.Bool:
		return "bool"
	case canonical.IsFloatType(dt):
		return "float"
	}
	return "int"
}

// add compares one sample's pair of tensors.
func (a *accumulator) add(ref, cand *canonical.Tensor) error {
	defer func() { a.sample++ }()
	r := a.res
	if a.sample == 0 {
		r.DType, r.BDType = canonical.ElemTypeName(ref.DataType), canonical.ElemTypeName(cand.DataType)
		r.Shape, r.BShape = nonNil(slices.Clone(ref.Dims)), nonNil(slices.Clone(cand.Dims))
		r.Kind = kindOf(ref.DataType)
	}
	if !slices.Equal(ref.Dims, cand.Dims) {
		a.fail("shape differs: %v (A) vs %v (B)", ref.Dims, cand.Dims)
		return nil
	}
	ka, kb := kindOf(ref.DataType), kindOf(cand.DataType)
	if ka != kb {
		a.fail("element type differs: %s (A) vs %s (B)", canonical.ElemTypeName(ref.DataType), canonical.ElemTypeName(cand.DataType))
		return nil
	}
	switch ka {
	case "float":
		return a.addFloat(ref, cand)
	case "string":
		return a.addStrings(ref, cand)
	default:
		return a.addInts(ref, cand)
	}
}

func (a *accumulator) addStrings(ref, cand *canonical.Tensor) error {
	sa, err := ref.Strings()
	if err != nil {
		return fmt.Errorf("output %q (A): %w", a.res.Name, err)
	}
	sb, err := cand.Strings()
	if err != nil {
		return fmt.Errorf("output %q (B): %w", a.res.Name, err)
	}
	if len(sa) != len(sb) {
		a.fail("element count differs: %d vs %d", len(sa), len(sb))
		return nil
	}
	e := a.exact()
	for i := range sa {
		e.Total++
		if bytes.Equal(sa[i], sb[i]) {
			e.Equal++
		} else {
			a.res.Mismatched++
		}
	}
	a.res.Elements += int64(len(sa))
	return nil
}

func (a *accumulator) exact() *ExactMetrics {
	if a.res.Exact == nil {
		a.res.Exact = &ExactMetrics{}
	}
	return a.res.Exact
}

func (a *accumulator) addInts(ref, cand *canonical.Tensor) error {
	va, err := ref.Int64s()
	if err != nil {
		return fmt.Errorf("output %q (A): %w", a.res.Name, err)
	}
	vb, err := cand.Int64s()
	if err != nil {
		return fmt.Errorf("output %q (B): %w", a.res.Name, err)
	}
	if len(va) != len(vb) {
		a.fail("element count differs: %d vs %d", len(va), len(vb))
		return nil
	}
	e := a.exact()
	if e.Steps == nil {
		e.Steps = errmap.NewStepHistogram()
	}
	for i := range va {
		e.Total++
		d := absDiffInt(va[i], vb[i])
		if d == 0 {
			e.Equal++
		}
		if d > e.MaxAbs {
			e.MaxAbs = d
		}
		if d > a.tol.IntATol {
			a.res.Mismatched++
		}
		a.intSum += float64(d)
		e.Steps[errmap.StepIndex(d)].Count++
	}
	a.res.Elements += int64(len(va))
	if len(ref.Dims) == 2 && ref.Dims[1] > 1 && ref.DataType != canonical.Bool {
		fa, fb := make([]float64, len(va)), make([]float64, len(vb))
		for i := range va {
			fa[i], fb[i] = float64(va[i]), float64(vb[i])
		}
		a.addClassifier(fa, fb, int(ref.Dims[0]), int(ref.Dims[1]))
	}
	return nil
}

func absDiffInt(x, y int64) int64 {
	if x < y {
		x, y = y, x
	}
	d := uint64(x) - uint64(y)
	if d > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(d)
}

// ulpKeys returns, per element, an integer whose order and differences
// follow the floating-point values in units of the last place. bits is
// the width used.
func ulpKeys(t *canonical.Tensor, vals []float64, common bool) []int64 {
	keys := make([]int64, len(vals))
	if common {
		raw, err := t.Bytes()
		if err == nil {
			switch t.DataType {
			case canonical.Float16, canonical.BFloat16:
				if len(raw) == 2*len(vals) {
					for i := range keys {
						b := binary.LittleEndian.Uint16(raw[2*i:])
						keys[i] = signMag(uint64(b&0x7fff), b&0x8000 != 0)
					}
					return keys
				}
			case canonical.Double:
				for i, v := range vals {
					b := math.Float64bits(v)
					keys[i] = signMag(b&^(1<<63), b>>63 != 0)
				}
				return keys
			}
		}
	}
	for i, v := range vals {
		b := math.Float32bits(float32(v))
		keys[i] = signMag(uint64(b&0x7fffffff), b>>31 != 0)
	}
	return keys
}

func signMag(mag uint64, neg bool) int64 {
	if neg {
		return -int64(mag)
	}
	return int64(mag)
}

func ulpDist(x, y int64) float64 {
	if (x >= 0) == (y >= 0) {
		return math.Abs(float64(x - y))
	}
	return math.Abs(float64(x)) + math.Abs(float64(y))
}

func (a *accumulator) addFloat(ref, cand *canonical.Tensor) error {
	va, err := ref.Float64s()
	if err != nil {
		return fmt.Errorf("output %q (A): %w", a.res.Name, err)
	}
	vb, err := cand.Float64s()
	if err != nil {
		return fmt.Errorf("output %q (B): %w", a.res.Name, err)
	}
	if len(va) != len(vb) {
		a.fail("element count differs: %d vs %d", len(va), len(vb))
		return nil
	}
	r := a.res
	if r.Float == nil {
		r.Float = &FloatMetrics{Histogram: newHistogram(), Cosine: 1}
	}
	f := r.Float
	complexT := ref.DataType == canonical.Complex64 || ref.DataType == canonical.Complex128
	common := ref.DataType == cand.DataType
	for _, x := range va {
		if isFinite(x) {
			a.scale = max(a.scale, math.Abs(x))
		}
	}
	atol := a.tol.atolFor(a.scale)
	r.Tolerance.Scale, r.Tolerance.EffectiveATol = a.scale, atol
	ka, kb := ulpKeys(ref, va, common), ulpKeys(cand, vb, common)
	for i := range va {
		x, y := va[i], vb[i]
		switch {
		case math.IsNaN(x):
			f.NaNRef++
			if !math.IsNaN(y) {
				f.NaNMismatch++
				r.Mismatched++
			}
			continue
		case math.IsInf(x, 0):
			f.InfRef++
			if x != y {
				f.InfMismatch++
				r.Mismatched++
			}
			continue
		case math.IsNaN(y):
			f.NaNMismatch++
			r.Mismatched++
			continue
		case math.IsInf(y, 0):
			f.InfMismatch++
			r.Mismatched++
			continue
		}
		d := math.Abs(y - x)
		a.n++
		a.sumAbs += d
		a.sumSq += d * d
		a.dot += x * y
		a.nRef += x * x
		a.nCand += y * y
		f.MaxAbs = max(f.MaxAbs, d)
		if x != 0 {
			f.MaxRel = max(f.MaxRel, d/math.Abs(x))
		}
		allowed := atol + a.tol.RTol*math.Abs(x)
		if d > allowed {
			r.Mismatched++
		}
		if allowed > 0 {
			f.WorstRatio = max(f.WorstRatio, d/allowed)
		} else if d > 0 {
			f.WorstRatio = math.MaxFloat64
		}
		f.MaxULP = max(f.MaxULP, ulpDist(ka[i], kb[i]))
		f.Histogram[histIndex(d)].Count++
	}
	r.Elements += int64(len(va))
	// Drift points: evenly strided, this sample's share of the budget.
	share := MaxDriftPoints / a.samples
	if a.sample < MaxDriftPoints%a.samples {
		share++
	}
	if share > 0 && !a.noDrift {
		stride := max(1, len(va)/share)
		for i := 0; i < len(va) && len(a.driftRef) < MaxDriftPoints; i += stride {
			if isFinite(va[i]) && isFinite(vb[i]) {
				a.driftRef = append(a.driftRef, va[i])
				a.driftCnd = append(a.driftCnd, vb[i])
			}
		}
	}
	switch {
	case complexT:
	case len(ref.Dims) == 2 && ref.Dims[1] > 1:
		a.addClassifier(va, vb, int(ref.Dims[0]), int(ref.Dims[1]))
	case a.lastAxis && len(ref.Dims) > 2 && ref.Dims[len(ref.Dims)-1] > 1:
		c := int(ref.Dims[len(ref.Dims)-1])
		a.addClassifier(va, vb, len(va)/c, c)
	}
	return nil
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func (a *accumulator) addClassifier(va, vb []float64, rows, classes int) {
	a.classes = classes
	for r := 0; r < rows; r++ {
		ra, rb := va[r*classes:(r+1)*classes], vb[r*classes:(r+1)*classes]
		ta, tb := topK(ra, 5), topK(rb, 5)
		a.rows++
		if ta[0] == tb[0] {
			a.top1++
		}
		if classes > 5 {
			sa, sb := slices.Clone(ta), slices.Clone(tb)
			sort.Ints(sa)
			sort.Ints(sb)
			if slices.Equal(sa, sb) {
				a.top5++
			}
		}
	}
}

// topK returns the indices of the k largest values (NaN last; ties by
// lower index).
func topK(v []float64, k int) []int {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool {
		x, y := v[idx[i]], v[idx[j]]
		if math.IsNaN(y) {
			return !math.IsNaN(x)
		}
		return x > y
	})
	return idx[:min(k, len(idx))]
}

// finish computes the derived metrics and the verdict.
func (a *accumulator) finish() {
	r := a.res
	if e := r.Exact; e != nil && e.Steps != nil {
		if e.Total > 0 {
			e.MeanAbs = a.intSum / float64(e.Total)
		}
		e.WorstRatio = float64(e.MaxAbs) / (float64(a.tol.IntATol) + 0.5)
		r.Ratio = e.WorstRatio
	}
	if a.rows > 0 && r.Float == nil {
		r.Classifier = &ClassifierMetrics{Rows: a.rows, Classes: int64(a.classes), Top1: float64(a.top1) / float64(a.rows)}
		if a.classes > 5 {
			t5 := float64(a.top5) / float64(a.rows)
			r.Classifier.Top5 = &t5
		}
	}
	if f := r.Float; f != nil {
		if a.n > 0 {
			f.MeanAbs = a.sumAbs / float64(a.n)
			f.RMSE = math.Sqrt(a.sumSq / float64(a.n))
		}
		switch {
		case a.nRef == 0 && a.nCand == 0:
			f.Cosine = 1
		case a.nRef == 0 || a.nCand == 0:
			f.Cosine = 0
		default:
			f.Cosine = a.dot / (math.Sqrt(a.nRef) * math.Sqrt(a.nCand))
		}
		if f.WorstRatio == math.MaxFloat64 {
			f.WorstRatio = 1e300
		}
		r.Ratio = f.WorstRatio
		if !a.noDrift {
			r.Drift = fitDrift(a.driftRef, a.driftCnd)
		}
		if a.rows > 0 {
			c := &ClassifierMetrics{Rows: a.rows, Classes: int64(a.classes), Top1: float64(a.top1) / float64(a.rows)}
			if a.classes > 5 {
				t5 := float64(a.top5) / float64(a.rows)
				c.Top5 = &t5
			}
			r.Classifier = c
		}
	}
	if r.Reason == "" && r.Mismatched > 0 {
		r.Pass = false
		switch {
		case r.Float != nil && (r.Float.NaNMismatch > 0 || r.Float.InfMismatch > 0):
			r.Reason = fmt.Sprintf("%d of %d elements differ beyond tolerance (%d NaN and %d Inf positions disagree)",
				r.Mismatched, r.Elements, r.Float.NaNMismatch, r.Float.InfMismatch)
		case r.Float != nil:
			r.Reason = fmt.Sprintf("%d of %d elements differ beyond tolerance; the worst is %.3g times the tolerance (max_abs %.3g, allowed atol %.3g + rtol %g*|A|)",
				r.Mismatched, r.Elements, r.Float.WorstRatio, r.Float.MaxAbs, r.Tolerance.EffectiveATol, r.Tolerance.RTol)
		case r.Exact != nil && r.Exact.Steps != nil:
			r.Reason = fmt.Sprintf("%d of %d elements differ by more than %d quantization step(s); the worst by %d step(s), %.3g times the tolerance",
				r.Mismatched, r.Elements, r.Tolerance.IntATol, r.Exact.MaxAbs, r.Exact.WorstRatio)
		default:
			r.Reason = fmt.Sprintf("%d of %d elements differ beyond tolerance", r.Mismatched, r.Elements)
		}
	}
}

// fitDrift fits cand = slope*ref + intercept with sajari/regression.
func fitDrift(ref, cand []float64) *Drift {
	d := &Drift{Points: len(ref)}
	if len(ref) < 3 {
		d.Degenerate = true
		return d
	}
	lo, hi := slices.Min(ref), slices.Max(ref)
	if lo == hi {
		d.Degenerate = true
		return d
	}
	var rg regression.Regression
	rg.SetObserved("candidate")
	rg.SetVar(0, "reference")
	for i := range ref {
		rg.Train(regression.DataPoint(cand[i], []float64{ref[i]}))
	}
	if err := rg.Run(); err != nil {
		d.Degenerate = true
		return d
	}
	d.Intercept, d.Slope = rg.Coeff(0), rg.Coeff(1)
	d.R2 = rg.R2
	if !isFinite(d.Slope) || !isFinite(d.Intercept) {
		return &Drift{Points: len(ref), Degenerate: true}
	}
	if !isFinite(d.R2) {
		// The candidate is constant: the line explains nothing.
		d.R2 = 0
	}
	return d
}
