package ortagree

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/backendtest"
)

// storedPrefix names the models whose ONNX Runtime outputs are stored
// (go test ./executor/ortagree -run TestExecutorAgreesWithORT/fixtures/divergence -write-outputs).
const storedPrefix = "fixtures/divergence/"

// TestExecutorMatchesStoredORTOutputs runs every fixtures/divergence model
// in the executor and compares with the outputs ONNX Runtime 1.30 computed
// and stored beside its inputs (test_data_set_0/output_N.pb), with the
// tolerance of TestExecutorAgreesWithORT. It needs neither cgo nor ONNX
// Runtime: where the library is missing, this still holds the executor to
// ONNX Runtime's numbers on these models.
func TestExecutorMatchesStoredORTOutputs(t *testing.T) {
	root := filepath.Join(testpaths.RepoRoot(t), filepath.FromSlash(strings.TrimSuffix(storedPrefix, "/")))
	dirs, err := backendtest.FindCases([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, "test_data_set_0", "output_0.pb")); err != nil {
				t.Fatalf("no stored ONNX Runtime outputs (write them with go test ./executor/ortagree -run TestExecutorAgreesWithORT/fixtures/divergence -write-outputs): %v", err)
			}
			c, err := backendtest.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ds := c.DataSets[0]
			var ins, want []*canonical.Tensor
			for _, v := range ds.Inputs {
				ins = append(ins, v.Tensor)
			}
			for _, v := range ds.Outputs {
				want = append(want, v.Tensor)
			}
			rep, err := verify.Compare(context.Background(), verify.ModelSide("executor", c.Model),
				&verify.Side{Name: "ONNX Runtime 1.30 (stored)", Expected: [][]*canonical.Tensor{want}},
				verify.Options{Inputs: [][]*canonical.Tensor{ins}, Threads: 1, ByOrder: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range rep.Outputs {
				if !o.Pass {
					t.Errorf("output %q: %d of %d elements beyond tolerance, %.3g× it: %s", o.Name, o.Mismatched, o.Elements, o.Ratio, o.Reason)
				}
			}
			n++
		})
	}
	if n == 0 {
		t.Errorf("no models in %s", root)
	}
}

// TestZeroSizeSelectionsReplay runs one executor over the inputs of
// NAME_some and NAME_none in turn (a NonMaxSuppression keeping two boxes,
// then none, and so on; issue 40) and compares every run with the outputs
// ONNX Runtime 1.30 stored for them: a plan built for one selection's
// shapes must be rebuilt for the other, the empty one included, and never
// reuse stale shapes.
func TestZeroSizeSelectionsReplay(t *testing.T) {
	root := filepath.Join(testpaths.RepoRoot(t), filepath.FromSlash(strings.TrimSuffix(storedPrefix, "/")))
	for _, name := range []string{"nms_select", "zero_size_ops"} {
		t.Run(name, func(t *testing.T) {
			var model *canonical.Model
			var ins, want [][]*canonical.Tensor
			for _, sel := range []string{"_some", "_none"} {
				c, err := backendtest.Load(filepath.Join(root, name+sel))
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if model == nil {
					model = c.Model
				}
				ds := c.DataSets[0]
				var in, out []*canonical.Tensor
				for _, v := range ds.Inputs {
					in = append(in, v.Tensor)
				}
				for _, v := range ds.Outputs {
					out = append(out, v.Tensor)
				}
				ins, want = append(ins, in), append(want, out)
			}
			ins, want = append(ins, ins...), append(want, want...) // some, none, some, none
			rep, err := verify.Compare(context.Background(), verify.ModelSide("executor", model),
				&verify.Side{Name: "ONNX Runtime 1.30 (stored)", Expected: want},
				verify.Options{Inputs: ins, ByOrder: true})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Samples != len(ins) {
				t.Errorf("%d samples compared, want %d", rep.Samples, len(ins))
			}
			for _, o := range rep.Outputs {
				if !o.Pass {
					t.Errorf("output %q: %d of %d elements beyond tolerance, %.3g× it: %s", o.Name, o.Mismatched, o.Elements, o.Ratio, o.Reason)
				}
			}
		})
	}
}
