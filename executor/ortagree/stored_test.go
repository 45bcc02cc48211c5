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
