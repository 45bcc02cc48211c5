package torchscript_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers/torchscript"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestDynamicBatch converts with -O dynamic_batch=true and runs the
// result at another batch size than the one converted, against libtorch
// running the archive at that batch size.
func TestDynamicBatch(t *testing.T) {
	host := libtorchHost(t)
	root := filepath.Join(testpaths.RepoRoot(t), "fixtures", "torchscript")
	for _, tc := range []struct {
		name  string
		shape []int64 // converted
		run   []int64 // run
	}{
		{"shufflenet_v2_x0_5_traced", []int64{1, 3, 64, 64}, []int64{3, 3, 64, 64}},
		{"recurrent_scripted", []int64{2, 7, 10}, []int64{5, 7, 10}},
		{"transformer_encoder_scripted", []int64{1, 9, 32}, []int64{4, 9, 32}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := filepath.Join(root, tc.name)
			m := importDetected(t, filepath.Join(d, "model.pt"), map[string]string{
				"shapes": shapesOption([]*canonical.Tensor{canonical.NewTensor("", canonical.Float, tc.shape, nil)}), "dynamic_batch": "true"})
			_, dims, _, _ := canonical.TensorTypeOf(m.Graph.Inputs[0].Type)
			if dims[0].Param != "N" {
				t.Fatalf("input dim 0 is %+v, want N", dims[0])
			}
			n := prod(tc.run)
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(math.Sin(float64(i) * 0.37))
			}
			x := canonical.Float32Tensor("x", tc.run, v)
			f := fixture{dir: d, ins: []*canonical.Tensor{x}}
			got := run(t, m, f.ins)
			lt := runLibtorch(t, host, d, f.ins)
			for i := range got {
				if !equalInts(got[i].Dims, lt[i].Dims) {
					t.Fatalf("output_%d: shape %v, libtorch %v", i, got[i].Dims, lt[i].Dims)
				}
				e := relErr(t, got[i], lt[i])
				t.Logf("%s at batch %d: converted vs libtorch max relative error %.3g", tc.name, tc.run[0], e)
				if e > 1e-5 {
					t.Errorf("output_%d: %.3g > 1e-5", i, e)
				}
			}
		})
	}
}

func prod(d []int64) int64 {
	n := int64(1)
	for _, x := range d {
		n *= x
	}
	return n
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestDynamicBatchRefused: a module with lifted state keeps its batch
// static; asking for a dynamic one is a *torchscript.BatchError.
func TestDynamicBatchRefused(t *testing.T) {
	path := filepath.Join(testpaths.Shared(t, "models", "torchscript", "silero_vad"), "silero_vad.jit")
	_, err := torchscript.New().Import(context.Background(), path, map[string]string{"shapes": "1x512", "bind": "sr=16000", "dynamic_batch": "true"})
	var be *torchscript.BatchError
	if !errors.As(err, &be) {
		t.Fatalf("err = %v, want a *BatchError", err)
	}
}
