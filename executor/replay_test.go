package executor_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/verify/backendtest"
)

// TestReplayMatchesBuild runs backend cases twice with one Executor: the
// second run replays the cached plan (segments, host steps, guards) and
// must give the expected outputs too.
func TestReplayMatchesBuild(t *testing.T) {
	root := repoRoot(t)
	dir := filepath.Join(root, "..", "shared", "onnx-v1.22", "backend-tests", "node")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("ONNX backend tests not found (../shared must sit beside the repository): %v", err)
	}
	for _, name := range []string{
		"test_loop11", "test_if", "test_scan9_sum", "test_nonzero_example", "test_range_float_type_positive_delta_expanded",
		"test_sequence_map_add_2_sequences", "test_reshape_negative_dim", "test_top_k", "test_attention_4d_gqa",
		"test_conv_with_strides_padding", "test_lstm_defaults", "test_resize_upsample_scales_linear", "test_expand_dim_changed",
		"test_gathernd_example_int32_batch_dim1", "test_softmax_axis_0_expanded", "test_layer_normalization_4d_axis1_expanded",
	} {
		c, err := backendtest.Load(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		e, err := executor.New(c.Model, executor.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for run := 0; run < 2; run++ {
			for _, ds := range c.DataSets {
				outs, err := e.RunValues(context.Background(), ds.Inputs)
				if err != nil {
					t.Fatalf("%s run %d: %v", name, run, err)
				}
				for i, want := range ds.Outputs {
					if err := backendtest.CompareValues(outs[i], want, c.RTol, c.ATol); err != nil {
						t.Errorf("%s run %d output %d: %v", name, run, i, err)
					}
				}
			}
		}
		e.Close()
		c.Close()
	}
}
