package pipeline

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// convertStored converts backend test node/NAME with a plain verified
// convert.
func convertStored(t *testing.T, name string) (string, *Result) {
	t.Helper()
	in := testpaths.Shared(t, "onnx-v1.22", "backend-tests", "node", name, "model.onnx")
	res, err := Convert(context.Background(), in, filepath.Join(t.TempDir(), "out.onnx"), Options{Env: builtins(), Verify: &VerifyOptions{}})
	if err != nil {
		t.Fatalf("convert: %v", err)
	}
	return in, res
}

// An ONNX model with test_data_set_N folders beside it (an ONNX backend
// test) is verified on the stored inputs, and its stored outputs (computed
// by ONNX's reference implementation) are a second comparison. AffineGrid's
// size input cannot be generated at random (it must repeat theta's batch).
func TestConvertUsesStoredSamples(t *testing.T) {
	in, res := convertStored(t, "test_affine_grid_2d")
	// The source and the stored outputs, then the result run in ONNX
	// Runtime when it is installed.
	if !res.Equivalent || len(res.Comparisons) < 2 || len(res.Comparisons) > 3 {
		t.Fatalf("equivalent %v, %d comparison(s), want the source and the stored outputs (and the result in ONNX Runtime)", res.Equivalent, len(res.Comparisons))
	}
	stored := res.Comparisons[1]
	if !strings.HasPrefix(stored.What, "against the reference outputs in ") || stored.Report.Options.InputSource != filepath.Dir(in) {
		t.Errorf("second comparison %q on inputs %q, want the stored outputs on the stored inputs", stored.What, stored.Report.Options.InputSource)
	}
	for _, o := range stored.Report.Outputs {
		if !o.Pass || o.Float == nil || o.Float.MaxAbs > 1e-5 {
			t.Errorf("output %s differs from ONNX's stored output: %+v", o.Name, o.Float)
		}
	}
	if !noted(res, "stored beside the model") {
		t.Errorf("the notes do not say where the inputs came from: %q", res.Notes)
	}
}

// A model drawing random numbers is run on its stored inputs, but its
// stored outputs are not compared (another generator drew them).
func TestConvertStoredSamplesRandom(t *testing.T) {
	in, res := convertStored(t, "test_bernoulli")
	if len(res.Comparisons) != 1 || res.Comparisons[0].Report.Options.InputSource != filepath.Dir(in) {
		t.Fatalf("%d comparison(s), want the source alone on the stored inputs", len(res.Comparisons))
	}
	if !noted(res, "random numbers: Bernoulli") {
		t.Errorf("the notes do not say why the stored outputs were not compared: %q", res.Notes)
	}
}

// A model taking and giving sequences is verified on its stored values:
// the sequence output is compared element by element with the source and
// with the sequence ONNX stored.
func TestConvertStoredSequences(t *testing.T) {
	_, res := convertStored(t, "test_sequence_insert_at_back")
	// The source and the stored outputs, then the result run in ONNX
	// Runtime when it is installed.
	if !res.Equivalent || len(res.Comparisons) < 2 || len(res.Comparisons) > 3 {
		t.Fatalf("equivalent %v, %d comparison(s), want the source and the stored outputs (and the result in ONNX Runtime)", res.Equivalent, len(res.Comparisons))
	}
	// ONNX stores a sequence of four elements: each is compared.
	got := map[string]bool{}
	for _, o := range res.Comparisons[1].Report.Outputs {
		got[o.Name] = o.Pass && o.Exact != nil && o.Exact.MaxAbs == 0
	}
	for i := range 4 {
		if name := "output_sequence[" + strconv.Itoa(i) + "]"; !got[name] {
			t.Errorf("%s not compared equal with ONNX's stored element: %v", name, got)
		}
	}
}

// The stored files are read by position, as ONNX defines the layout: the
// Split test names its outputs output_1 to output_3, stored as
// output_0.pb to output_2.pb (read by name, output_1 took the second
// part's file and differed by 2).
func TestConvertStoredOutputsByPosition(t *testing.T) {
	_, res := convertStored(t, "test_split_equal_parts_1d_opset13")
	// The source and the stored outputs, then the result run in ONNX
	// Runtime when it is installed.
	if !res.Equivalent || len(res.Comparisons) < 2 || len(res.Comparisons) > 3 {
		t.Fatalf("equivalent %v, %d comparison(s), want the source and the stored outputs (and the result in ONNX Runtime)", res.Equivalent, len(res.Comparisons))
	}
	for _, o := range res.Comparisons[1].Report.Outputs {
		if !o.Pass || o.Float == nil || o.Float.MaxAbs != 0 {
			t.Errorf("output %s differs from ONNX's stored output: %+v", o.Name, o.Float)
		}
	}
}
