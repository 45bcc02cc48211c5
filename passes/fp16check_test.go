package passes

import (
	"context"
	"testing"

	"github.com/onnxconv/onnxconv/canonical/check"
)

// TestFP16KeepsBlockedTypes: with float32 I/O kept, LayerNormalization
// (blocked, float32) shares its scale and bias with Identity nodes that
// are converted; the float32 weights must keep their float32 type, or
// ONNX Runtime refuses the node (float32 X with float16 Scale). The
// result passes the checker.
func TestFP16KeepsBlockedTypes(t *testing.T) {
	m, _ := fixture(t, "transformer_block_opset21")
	for _, chk := range []*Check{nil, {Samples: 2}} {
		res, _, err := Float16(context.Background(), m, FP16Options{KeepIOTypes: true, Check: chk})
		if err != nil {
			t.Fatal(err)
		}
		if err := check.Model(res); err != nil {
			t.Errorf("checked %v: %v", chk != nil, err)
		}
		_ = res.Close()
	}
}
