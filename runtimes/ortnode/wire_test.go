package ortnode

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes"
)

// TestWireTypes: models whose graph inputs or outputs are of types
// onnxruntime-node cannot pass (bfloat16, the float8 types, int4,
// uint4, int2, uint2) run in ONNX Runtime through a copy with Cast nodes at
// those inputs and outputs, and give the outputs the ONNX reference
// implementation stored; the side says it ran a copy.
func TestWireTypes(t *testing.T) {
	r := testRuntime(t)
	for _, name := range []string{
		"test_cast_FLOAT_to_INT4",
		"test_cast_UINT4_to_FLOAT",
		"test_cast_INT4_to_INT8",
		"test_cast_FLOAT_to_UINT2",
		"test_cast_INT2_to_FLOAT",
		"test_cast_BFLOAT16_to_FLOAT",
		"test_cast_FLOAT_to_BFLOAT16",
		"test_cast_FLOAT8E4M3FN_to_FLOAT",
		"test_cast_FLOAT_to_FLOAT8E5M2",
		"test_cast_e8m0_FLOAT_to_FLOAT8E8M0",
		"test_quantizelinear_int4",
		"test_dequantizelinear_uint4",
	} {
		t.Run(name, func(t *testing.T) {
			if d := matchStored(t, r, name); !strings.Contains(d, "Cast nodes") {
				t.Errorf("%s computed by %q, want a note on the Cast nodes", name, d)
			}
		})
	}
}

// TestOpsetStamp: a model stamped with opset 27 (ONNX 1.22's development
// opset, which ONNX Runtime 1.30 refuses) whose ops are the same at 26 runs
// as a copy stamped 26 and gives the stored outputs; one using an op new
// at 27 is refused before ONNX Runtime sees it, as a limit of the runtime
// (an *OpsetError the caller falls back on).
func TestOpsetStamp(t *testing.T) {
	r := testRuntime(t)
	if d := matchStored(t, r, "test_causal_conv_with_state_basic_expanded"); !strings.Contains(d, "stamped opset 26") {
		t.Errorf("computed by %q, want a note on the copy stamped opset 26", d)
	}
	dir := testpaths.Shared(t, "onnx-v1.22", "backend-tests", "node", "test_causal_conv_with_state_basic")
	_, err := r.Open(context.Background(), filepath.Join(dir, "model.onnx"), runtimes.OpenOptions{})
	var oe *OpsetError
	var l runtimes.Limited
	if !errors.As(err, &oe) || oe.Opset != 27 || !errors.As(err, &l) || !l.RuntimeLimit() {
		t.Errorf("CausalConvWithState at opset 27: %v, want an *OpsetError that is a runtime limit", err)
	}
}
