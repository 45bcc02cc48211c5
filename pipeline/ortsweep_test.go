package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes/ortnode"
)

// A plain convert of ONNX backend tests with ONNX Runtime under Node as the
// reference (scripts/backend-sweep.sh with ORT=1, on one model of each
// class): each is EQUIVALENT, the source computed by ONNX Runtime — as it
// is, through a copy with Cast nodes at graph inputs and outputs of types
// onnxruntime-node cannot pass, through copies that pass sequences and
// optionals as tensors, or through a copy stamped opset 26 — or, when ONNX
// Runtime cannot run it, by the executor with a note naming why; and the
// result matches ONNX's stored outputs (the JPEG ImageDecoder's pixels
// within the 1-step tolerance, which 93 values exceeded before the
// executor decoded JPEG as libjpeg does).
func TestConvertBackendWithORT(t *testing.T) {
	testpaths.Node(t, ortnode.Package)
	for name, want := range map[string]string{
		"test_add":                                   "onnxruntime",
		"test_cast_FLOAT_to_INT4":                    "through Cast nodes",            // int4 output
		"test_cast_BFLOAT16_to_FLOAT":                "through Cast nodes",            // bfloat16 input
		"test_quantizelinear_e4m3fn":                 "through Cast nodes",            // float8 output
		"test_cast_INT2_to_FLOAT":                    "through Cast nodes",            // int2 input
		"test_causal_conv_with_state_basic_expanded": "stamped opset 26",              // opset 27, ops unchanged
		"test_causal_conv_with_state_basic":          "ONNX Runtime could not run it", // op new at 27
		"test_identity_sequence":                     "through copies of the model",   // sequence input and output
		"test_optional_get_element_optional_tensor":  "through copies of the model",   // optional input
		"test_image_decoder_decode_jpeg_rgb":         "ONNX Runtime could not run it", // JPEG: no ImageDecoder kernel
	} {
		t.Run(name, func(t *testing.T) {
			_, res := convertStored(t, name)
			if !res.Equivalent || len(res.Comparisons) < 2 {
				t.Fatalf("equivalent %v, %d comparison(s), want the source and the stored outputs", res.Equivalent, len(res.Comparisons))
			}
			src := res.Comparisons[0]
			if by := src.What + " " + src.Report.A.ComputedBy; !strings.Contains(by, want) {
				t.Errorf("%q computed by %q, want %q", src.What, src.Report.A.ComputedBy, want)
			}
			stored := false
			for _, c := range res.Comparisons {
				stored = stored || (strings.HasPrefix(c.What, "against the reference outputs") && c.Report.Equivalent)
			}
			if !stored {
				t.Errorf("the result was not compared with the stored outputs")
			}
		})
	}
}

// Where ONNX Runtime and ONNX's reference implementation differ (Attention
// with a causal mask: ONNX Runtime writes the lowest float in masked
// qk_matmul_output scores, the reference -Inf, as the executor does), the
// result on the executor differs from the source in ONNX Runtime, but the
// result in ONNX Runtime matches it and the executor matches the stored
// outputs: the convert is EQUIVALENT, the first comparison excused with a
// note naming the output.
func TestConvertExcusesEngineDifference(t *testing.T) {
	testpaths.Node(t, ortnode.Package)
	_, res := convertStored(t, "test_attention_4d_with_past_and_present_qk_matmul_bias_3d_mask_causal")
	if !res.Equivalent || len(res.Comparisons) != 3 {
		t.Fatalf("equivalent %v, %d comparison(s), want 3 and equivalent", res.Equivalent, len(res.Comparisons))
	}
	if first := res.Comparisons[0]; !first.Excused || first.Report.Equivalent {
		t.Errorf("first comparison excused %v, equivalent %v: want a failed comparison, excused", first.Excused, first.Report.Equivalent)
	}
	if !noted(res, "differs from the source in ONNX Runtime (qk_matmul_output)") {
		t.Errorf("no note names the output where the engines differ: %q", res.Notes)
	}
}

// Dropout in training mode draws its mask with ONNX Runtime's generator in
// the source and with the executor's in the result: the two differ, but the
// result run in ONNX Runtime (same seed, same generator) matches the source,
// so the convert is EQUIVALENT with the first comparison excused.
func TestConvertExcusesRandomOps(t *testing.T) {
	testpaths.Node(t, ortnode.Package)
	_, res := convertStored(t, "test_training_dropout")
	if !res.Equivalent || len(res.Comparisons) != 2 || !res.Comparisons[0].Excused || res.Comparisons[0].Report.Equivalent {
		t.Fatalf("equivalent %v, %d comparison(s), want 2, the first failed and excused", res.Equivalent, len(res.Comparisons))
	}
	if !noted(res, "draws random numbers (Dropout)") {
		t.Errorf("no note says the model draws random numbers: %q", res.Notes)
	}
}

// noted tells whether a note of res says s.
func noted(res *Result, s string) bool {
	for _, n := range res.Notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// A model with sequence and optional inputs, copied alone (no
// test_data_set beside it), converts on generated values — a sequence of
// verify.GeneratedSequenceLength tensors, an optional's value — and on
// values read with --inputs from a SequenceProto/OptionalProto folder or
// its parent of test_data_set_N folders; ONNX Runtime computes the source
// through copies of the model each time, and the result computed by it
// equals the source.
func TestConvertValueInputs(t *testing.T) {
	testpaths.Node(t, ortnode.Package)
	for _, name := range []string{"test_sequence_insert_at_back", "test_optional_get_element_optional_sequence"} {
		dir := testpaths.Shared(t, "onnx-v1.22", "backend-tests", "node", name)
		alone := t.TempDir()
		data, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(alone, "model.onnx"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, inputs := range []string{"", filepath.Join(dir, "test_data_set_0"), dir} {
			res, err := Convert(context.Background(), filepath.Join(alone, "model.onnx"), filepath.Join(t.TempDir(), "out.onnx"),
				Options{Env: builtins(), Verify: &VerifyOptions{Inputs: inputs}})
			if err != nil {
				t.Fatalf("%s, inputs %q: %v", name, inputs, err)
			}
			if !res.Equivalent || len(res.Comparisons) != 2 || res.Comparisons[1].What != inORTWhat {
				t.Fatalf("%s, inputs %q: equivalent %v, %d comparison(s), want the source and the result in ONNX Runtime", name, inputs, res.Equivalent, len(res.Comparisons))
			}
			src := res.Comparisons[0].Report
			if !strings.Contains(src.A.ComputedBy, "through copies of the model") {
				t.Errorf("%s, inputs %q: source computed by %q", name, inputs, src.A.ComputedBy)
			}
			want := inputs
			if inputs == "" {
				want = "generated"
			}
			if src.Options.InputSource != want {
				t.Errorf("%s: inputs %q, want %q", name, src.Options.InputSource, want)
			}
		}
	}
}
