package verify

import (
	"strings"
	"testing"
)

func textReport() *Report {
	top5 := 0.75
	return &Report{
		Summary: "NOT EQUIVALENT: y differs", Samples: 2,
		Outputs: []*OutputResult{
			{Name: "y", DType: "float32", Shape: []int64{2, 3}, Reason: "max_abs 0.5 > tol",
				Tolerance:  Tolerance{Profile: "fp32", RTol: 1e-4, ATol: 1e-5},
				Ratio:      5e3,
				Float:      &FloatMetrics{MaxAbs: 0.5, MaxRel: 0.25, MeanAbs: 0.125, RMSE: 0.2, Cosine: 0.99, MaxULP: 12, WorstRatio: 5e3},
				Drift:      &Drift{Slope: 1.5, Intercept: -0.25, R2: 0.98},
				Classifier: &ClassifierMetrics{Top1: 0.5, Top5: &top5}},
			{Name: "k", DType: "int64", Shape: []int64{2}, Pass: true, Exact: &ExactMetrics{Equal: 2, Total: 2}},
			{Name: "s", DType: "string", Shape: []int64{}, Pass: true},
		},
		Unmatched: []string{"z"},
		Bisect: &Bisection{NodesTotal: 9, NodesChecked: 4, First: &DivergentNode{Node: "mm", OpType: "MatMul",
			Inputs: []InputStatus{{Name: "x", Kind: "input", Status: "agrees"}}}},
		Notes: []string{"a note"},
	}
}

func TestReportWriteText(t *testing.T) {
	var b strings.Builder
	if err := textReport().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `NOT EQUIVALENT: y differs
  y [float32 [2 3]]: FAIL max_abs 0.5 > tol
    max_abs 0.5  max_rel 0.25  mean_abs 0.125  rmse 0.2  cosine 0.990000  max_ulp 12  (fp32 rtol 0.0001 atol 1e-05)  ratio 5e+03
    drift: B = 1.500000*A -0.25 (R2 0.980000)
    top-1 agreement 0.5000, top-5 0.7500
  k [int64 [2]]: pass
    2 of 2 equal
  s [string []]: pass
  z: FAIL no counterpart in B
bisect: 4 of 9 nodes checked; first divergent node "mm" (MatMul)
    input x (input): agrees
note: a note
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestReportWriteSummary(t *testing.T) {
	var b strings.Builder
	if err := textReport().WriteSummary(&b, "against the source"); err != nil {
		t.Fatal(err)
	}
	want := `verify against the source: NOT EQUIVALENT (3 output(s), 2 sample(s))
  y                float32 [2 3]  max_abs 0.5  max_rel 0.25  (rtol 0.0001 atol 1e-05)  ratio 5e+03  FAIL max_abs 0.5 > tol
  k                int64 [2]  2 of 2 equal  pass
  s                string []  pass
  z                FAIL no counterpart
bisect: 4 of 9 nodes checked; first divergent node "mm" (MatMul)
    input x (input): agrees
  note: a note
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestReportWriteRunOnceSummary(t *testing.T) {
	var b strings.Builder
	if err := textReport().WriteRunOnceSummary(&b); err != nil {
		t.Fatal(err)
	}
	want := `NOT EQUIVALENT: y differs
  y                float32 [2 3]  FAIL max_abs 0.5 > tol
  k                int64 [2]  ok (produced, no NaN or Inf)
  s                string []  ok (produced, no NaN or Inf)
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestBisectionWriteText(t *testing.T) {
	var b strings.Builder
	var none *Bisection
	if err := none.WriteText(&b); err != nil || b.Len() != 0 {
		t.Fatalf("nil bisection wrote %q (%v)", b.String(), err)
	}
	if err := (&Bisection{NodesTotal: 3, NodesChecked: 3}).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if want := "bisect: 3 of 3 nodes checked, none diverges\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// TestSummarySidesAgainstStoredOutputs: against stored outputs the model
// run is the result and the stored outputs the reference, whichever
// letter each side has.
func TestSummarySidesAgainstStoredOutputs(t *testing.T) {
	for _, c := range []struct {
		bKind, wantA, wantB string
	}{
		{"model", "A (reference) src.tflite", "B (result)    out.onnx"},
		{"outputs", "A (result)    out.onnx", "B (reference) expected/"},
	} {
		r := &Report{Equivalent: true, Samples: 2,
			A: SideInfo{Name: "src.tflite", Kind: "model", ComputedBy: "tflite"},
			B: SideInfo{Name: "out.onnx", Kind: c.bKind, ComputedBy: "the built-in executor"}}
		if c.bKind == "outputs" {
			r.A = SideInfo{Name: "out.onnx", Kind: "model", ComputedBy: "the built-in executor"}
			r.B = SideInfo{Name: "expected/", Kind: "outputs", ComputedBy: "stored outputs"}
		}
		var b strings.Builder
		if err := r.WriteSummary(&b, "against the source"); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{c.wantA, c.wantB} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("B is %s: the summary does not say %q:\n%s", c.bKind, want, b.String())
			}
		}
	}
}
