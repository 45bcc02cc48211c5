package ortagree

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/executor/kernels"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/verify/backendtest"
)

// TestIntegerOpsExactlyAsORT: the integer ops of fixtures/divergence/
// quant_integer (DynamicQuantizeLinear, ConvInteger with int8 and uint8
// weights, groups, dilations and 1-D, MatMulInteger with per-column zero
// points, QLinearConv, QLinearMatMul) give exactly the integers ONNX
// Runtime 1.30 stored — not within a tolerance — on one thread and on
// three, with the integer GEMM kernel of this CPU (run it again with
// ONNXCONV_SGEMM_KERNEL=generic or avx2 for the others); no node takes a
// per-element path.
func TestIntegerOpsExactlyAsORT(t *testing.T) {
	dir := filepath.Join(testpaths.RepoRoot(t), "fixtures", "divergence", "quant_integer")
	c, err := backendtest.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ds := c.DataSets[0]
	var ins []*canonical.Tensor
	for _, v := range ds.Inputs {
		ins = append(ins, v.Tensor)
	}
	for _, threads := range []int{1, 3} {
		ex, err := executor.New(c.Model, executor.Options{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		got, err := ex.Run(context.Background(), ins)
		if err != nil {
			t.Fatal(err)
		}
		if slow := ex.SlowPaths(); len(slow) > 0 {
			t.Errorf("per-element paths: %v", slow)
		}
		ex.Close()
		if len(got) != len(ds.Outputs) {
			t.Fatalf("%d outputs, ONNX Runtime stored %d", len(got), len(ds.Outputs))
		}
		for i, w := range ds.Outputs {
			want, err := w.Tensor.Int64s()
			if err != nil {
				t.Fatal(err)
			}
			have, err := got[i].Int64s()
			if err != nil {
				t.Fatal(err)
			}
			if got[i].DataType != w.Tensor.DataType || len(have) != len(want) {
				t.Fatalf("output %s: %v of %d values, ONNX Runtime %v of %d", c.Model.Graph.Outputs[i].Name, got[i].DataType, len(have), w.Tensor.DataType, len(want))
			}
			diff := 0
			for k := range want {
				if have[k] != want[k] {
					if diff == 0 {
						t.Errorf("output %s (kernel %s, %d threads): value %d is %d, ONNX Runtime %d", c.Model.Graph.Outputs[i].Name, kernels.IGemmKernel(), threads, k, have[k], want[k])
					}
					diff++
				}
			}
			if diff > 0 {
				t.Errorf("output %s: %d of %d values differ", c.Model.Graph.Outputs[i].Name, diff, len(want))
			}
		}
	}
}
