package verify

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/x448/float16"

	"github.com/onnxconv/onnxconv/canonical"
)

func f32(name string, dims []int64, v ...float32) *canonical.Tensor {
	var raw []byte
	for _, x := range v {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(x))
	}
	return canonical.NewTensor(name, canonical.Float, dims, raw)
}

func compareTensors(t *testing.T, a, b *canonical.Tensor, opts Options) *OutputResult {
	t.Helper()
	res := &OutputResult{Name: "y", Pass: true}
	acc := newAccumulator(res, opts.toleranceFor(a.DataType, b.DataType), 1)
	if err := acc.add(a, b); err != nil {
		t.Fatal(err)
	}
	acc.finish()
	return res
}

func TestFloatMetrics(t *testing.T) {
	a := f32("y", []int64{4}, 1, -2, 0, 4)
	b := f32("y", []int64{4}, 1, -2.5, 0, 4.5)
	r := compareTensors(t, a, b, Options{})
	f := r.Float
	if f.MaxAbs != 0.5 || f.MaxRel != 0.25 || f.MeanAbs != 0.25 || math.Abs(f.RMSE-math.Sqrt(0.125)) > 1e-12 {
		t.Errorf("max_abs %v max_rel %v mean_abs %v rmse %v; want 0.5 0.25 0.25 sqrt(1/8)", f.MaxAbs, f.MaxRel, f.MeanAbs, f.RMSE)
	}
	// cos = (1 + 5 + 18) / (sqrt(21) * sqrt(1+6.25+20.25))
	if want := 24 / (math.Sqrt(21) * math.Sqrt(27.5)); math.Abs(f.Cosine-want) > 1e-12 {
		t.Errorf("cosine %v, want %v", f.Cosine, want)
	}
	// -2 -> -2.5 is 2^21 float32 ulp (exponent 1: ulp 2^-22); 4 -> 4.5 is 2^20.
	if f.MaxULP != 1<<21 {
		t.Errorf("max_ulp %v, want %d", f.MaxULP, 1<<21)
	}
	if r.Pass || r.Mismatched != 2 || !strings.Contains(r.Reason, "2 of 4 elements") {
		t.Errorf("pass %v mismatched %d reason %q", r.Pass, r.Mismatched, r.Reason)
	}
	if f.Histogram[histIndex(0.5)].Count != 2 || f.Histogram[0].Count != 2 {
		t.Errorf("histogram %+v", f.Histogram)
	}
	// Within fp32 tolerance: one ulp at 1.0.
	near := f32("y", []int64{4}, math.Nextafter32(1, 2), -2, 0, 4)
	if r := compareTensors(t, a, near, Options{}); !r.Pass || r.Float.MaxULP != 1 {
		t.Errorf("one ulp: pass %v max_ulp %v", r.Pass, r.Float.MaxULP)
	}
	// --atol/--rtol override.
	atol := 0.6
	if r := compareTensors(t, a, b, Options{ATol: &atol}); !r.Pass || r.Tolerance.Profile != "custom" {
		t.Errorf("atol 0.6: pass %v profile %q", r.Pass, r.Tolerance.Profile)
	}
}

func TestNaNInfAgreement(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	a := f32("y", []int64{5}, nan, inf, -inf, 1, 2)
	same := f32("y", []int64{5}, nan, inf, -inf, 1, 2)
	if r := compareTensors(t, a, same, Options{}); !r.Pass || r.Float.NaNRef != 1 || r.Float.InfRef != 2 || r.Float.MaxAbs != 0 {
		t.Errorf("same NaN/Inf positions: pass %v %+v", r.Pass, r.Float)
	}
	moved := f32("y", []int64{5}, 0, inf, inf, nan, 2)
	r := compareTensors(t, a, moved, Options{})
	if r.Pass || r.Float.NaNMismatch != 2 || r.Float.InfMismatch != 1 || r.Mismatched != 3 {
		t.Errorf("moved NaN/Inf: pass %v nan_mismatch %d inf_mismatch %d mismatched %d", r.Pass, r.Float.NaNMismatch, r.Float.InfMismatch, r.Mismatched)
	}
	if r.Float.MaxAbs != 0 {
		t.Errorf("max_abs %v over the finite pair, want 0", r.Float.MaxAbs)
	}
}

func TestExactAndProfiles(t *testing.T) {
	i64 := func(v ...int64) *canonical.Tensor {
		var raw []byte
		for _, x := range v {
			raw = binary.LittleEndian.AppendUint64(raw, uint64(x))
		}
		return canonical.NewTensor("y", canonical.Int64, []int64{int64(len(v))}, raw)
	}
	r := compareTensors(t, i64(1, 2, 1<<60, 4), i64(1, 2, 1<<60+1, 5), Options{})
	if r.Pass || r.Exact.Equal != 2 || r.Exact.Total != 4 || r.Exact.MaxAbs != 1 {
		t.Errorf("int64: pass %v %+v", r.Pass, r.Exact)
	}
	// int8 profile allows one step.
	if r := compareTensors(t, i64(1, 2, 3), i64(2, 2, 3), Options{Profile: "int8"}); !r.Pass || r.Exact.Equal != 2 {
		t.Errorf("int8 profile: pass %v %+v", r.Pass, r.Exact)
	}
	s := func(v ...string) *canonical.Tensor {
		var b [][]byte
		for _, x := range v {
			b = append(b, []byte(x))
		}
		return canonical.NewStringTensor("y", []int64{int64(len(v))}, b)
	}
	if r := compareTensors(t, s("a", "b"), s("a", "c"), Options{}); r.Pass || r.Exact.Equal != 1 {
		t.Errorf("strings: pass %v %+v", r.Pass, r.Exact)
	}
	// Shape mismatch fails with a reason.
	if r := compareTensors(t, f32("y", []int64{2, 1}, 1, 2), f32("y", []int64{1, 2}, 1, 2), Options{}); r.Pass || !strings.Contains(r.Reason, "shape differs") {
		t.Errorf("shape: pass %v reason %q", r.Pass, r.Reason)
	}
	// fp16 outputs get the fp16 profile; an fp32 output against fp16
	// gets the looser of the two.
	h := func(v ...float32) *canonical.Tensor {
		var raw []byte
		for _, x := range v {
			raw = binary.LittleEndian.AppendUint16(raw, float16.Fromfloat32(x).Bits())
		}
		return canonical.NewTensor("y", canonical.Float16, []int64{int64(len(v))}, raw)
	}
	r = compareTensors(t, h(1, 2), h(1.0009765625, 2), Options{})
	if !r.Pass || r.Tolerance.Profile != "fp16" || r.Float.MaxULP != 1 {
		t.Errorf("fp16: pass %v profile %s max_ulp %v", r.Pass, r.Tolerance.Profile, r.Float.MaxULP)
	}
	if r := compareTensors(t, f32("y", []int64{2}, 1, 2), h(1.0009765625, 2), Options{}); !r.Pass || r.Tolerance.Profile != "fp16" {
		t.Errorf("fp32 vs fp16: pass %v profile %s", r.Pass, r.Tolerance.Profile)
	}
	if r := compareTensors(t, f32("y", []int64{2}, 1, 2), f32("y", []int64{2}, 1.01, 2), Options{Profile: "bf16"}); !r.Pass || r.Tolerance.RTol != 4e-2 {
		t.Errorf("bf16 profile: pass %v tol %+v", r.Pass, r.Tolerance)
	}
	if _, err := LookupProfile("fp12"); err == nil || !strings.Contains(err.Error(), "fp16") {
		t.Errorf("unknown profile: %v", err)
	}
}

func TestClassifierAgreement(t *testing.T) {
	// 2 rows of 6 classes; row 1's best class changes, row 0 keeps its
	// top-5 set but reorders inside it.
	a := f32("y", []int64{2, 6}, 0.9, 0.8, 0.7, 0.6, 0.5, 0.1, 0.1, 0.9, 0.2, 0.3, 0.4, 0.5)
	b := f32("y", []int64{2, 6}, 0.9, 0.7, 0.8, 0.6, 0.5, 0.1, 0.95, 0.9, 0.2, 0.3, 0.4, 0.5)
	r := compareTensors(t, a, b, Options{})
	c := r.Classifier
	if c == nil || c.Rows != 2 || c.Classes != 6 || c.Top1 != 0.5 || c.Top5 == nil || *c.Top5 != 0.5 {
		t.Errorf("classifier %+v top5 %v", c, c.Top5)
	}
}

func TestDriftFit(t *testing.T) {
	// cand = 1.5 * ref - 0.25 exactly.
	var ref, cand []float64
	for i := range 50 {
		x := float64(i)/7 - 3
		ref, cand = append(ref, x), append(cand, 1.5*x-0.25)
	}
	d := fitDrift(ref, cand)
	if d.Degenerate || math.Abs(d.Slope-1.5) > 1e-9 || math.Abs(d.Intercept+0.25) > 1e-9 || math.Abs(d.R2-1) > 1e-9 {
		t.Errorf("fit %+v, want slope 1.5 intercept -0.25 r2 1", d)
	}
	if d := fitDrift([]float64{1, 1, 1}, []float64{1, 2, 3}); !d.Degenerate {
		t.Errorf("constant reference: %+v, want degenerate", d)
	}
}

func i8(name string, dims []int64, v ...int8) *canonical.Tensor {
	raw := make([]byte, len(v))
	for i, x := range v {
		raw[i] = byte(x)
	}
	return canonical.NewTensor(name, canonical.Int8, dims, raw)
}

// TestQuantizedSteps: int8 outputs are compared in quantization steps, one
// allowed by default, --atol N allowing N; the per-step histogram, the
// ratio and top-1 agreement of [N, C] scores are reported, and a failure
// says by how many steps.
func TestQuantizedSteps(t *testing.T) {
	a := i8("y", []int64{2, 4}, -128, 10, 20, 5, 3, 4, 100, -7)
	b := i8("y", []int64{2, 4}, -127, 10, 21, 5, 3, 4, 96, -7)
	r := compareTensors(t, a, b, Options{})
	e := r.Exact
	if r.Pass || r.Tolerance.IntATol != 1 || e.MaxAbs != 4 || r.Mismatched != 1 {
		t.Fatalf("pass %v int_atol %d max %d mismatched %d", r.Pass, r.Tolerance.IntATol, e.MaxAbs, r.Mismatched)
	}
	if e.Steps[0].Count != 5 || e.Steps[1].Count != 2 || e.Steps[4].Label != "4-7" || e.Steps[4].Count != 1 {
		t.Errorf("steps %+v, want 5 at 0, 2 at 1, 1 in 4-7", e.Steps)
	}
	if want := 4 / 1.5; math.Abs(r.Ratio-want) > 1e-12 || math.Abs(e.MeanAbs-6.0/8) > 1e-12 {
		t.Errorf("ratio %g (want %g), mean %g", r.Ratio, want, e.MeanAbs)
	}
	if !strings.Contains(r.Reason, "by 4 step(s)") {
		t.Errorf("reason %q does not say by how much", r.Reason)
	}
	if c := r.Classifier; c == nil || c.Rows != 2 || c.Top1 != 1 {
		t.Errorf("classifier %+v, want top-1 agreement 1 over 2 rows", c)
	}
	four := 4.0
	if r := compareTensors(t, a, b, Options{ATol: &four}); !r.Pass || r.Tolerance.IntATol != 4 || r.Ratio >= 1 {
		t.Errorf("--atol 4: pass %v int_atol %d ratio %g", r.Pass, r.Tolerance.IntATol, r.Ratio)
	}
	// int64 labels stay exact.
	l := canonical.NewTensor("l", canonical.Int64, []int64{1}, binary.LittleEndian.AppendUint64(nil, 3))
	m := canonical.NewTensor("l", canonical.Int64, []int64{1}, binary.LittleEndian.AppendUint64(nil, 4))
	if r := compareTensors(t, l, m, Options{}); r.Pass || r.Tolerance.IntATol != 0 {
		t.Errorf("int64 off by one passed (int_atol %d)", r.Tolerance.IntATol)
	}
}
