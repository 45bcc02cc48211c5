package passes

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestQOperatorToQDQ rewrites the ONNX backend tests' QLinearConv and
// QLinearMatMul models as QDQ and runs them on the executor with the
// stored inputs: no QLinear node is left, the outputs keep their names and
// types, and every integer output is the one ONNX's reference
// implementation stored, or one step from it (the QDQ form rounds a float
// result where the QOperator kernel rounds an integer one).
func TestQOperatorToQDQ(t *testing.T) {
	for _, name := range qlinearTests {
		t.Run(name, func(t *testing.T) {
			m, ins, outs := backendCase(t, name)
			q, n, err := QOperatorToQDQ(m)
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			if n != 1 {
				t.Fatalf("%d nodes rewritten, want 1", n)
			}
			for _, nd := range q.Graph.Nodes {
				if nd.OpType == "QLinearConv" || nd.OpType == "QLinearMatMul" {
					t.Fatalf("%s %q left", nd.OpType, nd.Name)
				}
			}
			if got, want := q.Graph.Outputs[0].Name, m.Graph.Outputs[0].Name; got != want {
				t.Fatalf("output %q, want %q", got, want)
			}
			off, total, worst := stepsOff(t, q, ins, outs[0])
			t.Logf("%d of %d values differ from the stored output, max %g step(s)", off, total, worst)
			if worst > 1 {
				t.Errorf("%d values differ, up to %g steps (> 1)", off, worst)
			}
		})
	}
}

// qlinearTests are the ONNX backend tests of QLinearConv and
// QLinearMatMul.
var qlinearTests = []string{"test_qlinearconv", "test_qlinearmatmul_2D_uint8_float32", "test_qlinearmatmul_2D_int8_float32",
	"test_qlinearmatmul_3D_uint8_float32", "test_qlinearmatmul_3D_int8_float32", "test_qlinearmatmul_2D_uint8_float16"}

// backendCase loads an ONNX backend test's model and its first data set.
func backendCase(t *testing.T, name string) (*canonical.Model, []*canonical.Tensor, []*canonical.Tensor) {
	t.Helper()
	dir := testpaths.Shared(t, "onnx-v1.22", "backend-tests", "node", name)
	m, err := canonical.Load(filepath.Join(dir, "model.onnx"), canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	var ins, outs []*canonical.Tensor
	for _, kind := range []string{"input", "output"} {
		for i := 0; ; i++ {
			p := filepath.Join(dir, "test_data_set_0", kind+"_"+strconv.Itoa(i)+".pb")
			if _, err := os.Stat(p); err != nil {
				break
			}
			tn, err := canonical.ReadTensorFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if kind == "input" {
				ins = append(ins, tn)
			} else {
				outs = append(outs, tn)
			}
		}
	}
	return m, ins, outs
}

// stepsOff runs m on the executor and counts the integers of its first
// output that differ from want, of how many, and the largest difference.
func stepsOff(t *testing.T, m *canonical.Model, ins []*canonical.Tensor, want *canonical.Tensor) (int, int, float64) {
	t.Helper()
	ex, err := executor.New(m, executor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	got, err := ex.Run(context.Background(), ins)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].DataType != want.DataType {
		t.Fatalf("output type %s, want %s", got[0].DataType, want.DataType)
	}
	g, err := got[0].Int64s()
	if err != nil {
		t.Fatal(err)
	}
	w, err := want.Int64s()
	if err != nil {
		t.Fatal(err)
	}
	off, worst := 0, 0.0
	for i := range w {
		d := math.Abs(float64(g[i] - w[i]))
		if d > 0 {
			off++
		}
		worst = max(worst, d)
	}
	return off, len(w), worst
}
