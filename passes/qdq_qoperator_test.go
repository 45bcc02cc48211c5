package passes

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes/node"
	"github.com/onnxconv/onnxconv/runtimes/ortnode"
)

// TestQDQToQOperatorRoundTrip: the ONNX backend tests' QLinearConv and
// QLinearMatMul models, rewritten as QDQ by QOperatorToQDQ and back by
// QDQToQOperator, are one QLinear node again (no QuantizeLinear or
// DequantizeLinear left, the output's name kept) and give the integers
// ONNX's reference implementation stored, exactly.
func TestQDQToQOperatorRoundTrip(t *testing.T) {
	for _, name := range qlinearTests {
		t.Run(name, func(t *testing.T) {
			m, ins, outs := backendCase(t, name)
			qdq, _, err := QOperatorToQDQ(m)
			if err != nil {
				t.Fatal(err)
			}
			defer qdq.Close()
			q, n, err := QDQToQOperator(qdq)
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			if n != 1 {
				t.Fatalf("%d nodes rewritten, want 1", n)
			}
			ops := opsOf(q)
			if ops["QLinearConv"]+ops["QLinearMatMul"] != 1 || len(q.Graph.Nodes) != 1 {
				t.Fatalf("nodes %v, want one QLinear node", ops)
			}
			if got, want := q.Graph.Outputs[0].Name, m.Graph.Outputs[0].Name; got != want {
				t.Fatalf("output %q, want %q", got, want)
			}
			off, total, worst := stepsOff(t, q, ins, outs[0])
			t.Logf("%d of %d values differ from the stored output, max %g step(s)", off, total, worst)
			if off > 0 {
				t.Errorf("%d values differ, up to %g steps", off, worst)
			}
		})
	}
}

// TestQDQToQOperatorAgainstORT: resnet_small and squeezenet quantized
// static per channel (what 'onnxconv quantize static --per-channel'
// writes: QDQ around Conv, MatMul, Gemm, Add, Concat, pools...), then
// rewritten by QDQToQOperator: every node rewritten is a QLinear op or a
// QGemm (resnet_small: all 20 Conv, 8 Add, the GlobalAveragePool and the
// Gemm; squeezenet: its 26 Conv, 18 of whose biases torch's exporter
// shares through Identity nodes, and 8 Concat), no Conv, Add or Concat is
// left float, and ONNX Runtime computes
// the QOperator model's outputs within one step (the output range over
// 255) of its outputs for the QDQ model.
func TestQDQToQOperatorAgainstORT(t *testing.T) {
	env := ortEnv(t)
	for _, c := range []struct {
		name string
		want map[string]int
	}{
		{"resnet_small", map[string]int{"QLinearConv": 20, "QLinearAdd": 8, "QLinearGlobalAveragePool": 1, "QGemm": 1}},
		{"squeezenet", map[string]int{"QLinearConv": 26, "QLinearConcat": 8, "QLinearGlobalAveragePool": 1}},
	} {
		name := c.name
		t.Run(name, func(t *testing.T) {
			m, _ := fixture(t, name)
			qdq, _, err := Quantize(context.Background(), m, QuantOptions{Mode: Static, PerChannel: true,
				Calibration: samples(t, m, 0, 8), Held: [][]*canonical.Tensor{}})
			if err != nil {
				t.Fatal(err)
			}
			defer qdq.Close()
			q, n, err := QDQToQOperator(qdq)
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			ops := opsOf(q)
			t.Logf("%d nodes rewritten: %v", n, ops)
			total := 0
			for op, k := range c.want {
				total += k
				if ops[op] != k {
					t.Errorf("%d %s, want %d", ops[op], op, k)
				}
			}
			if n != total || ops["Conv"]+ops["Gemm"]+ops["Add"]+ops["Concat"] != 0 {
				t.Fatalf("%d rewritten, want %d; Conv %d, Gemm %d, Add %d, Concat %d left", n, total, ops["Conv"], ops["Gemm"], ops["Add"], ops["Concat"])
			}
			ins := samples(t, m, 1000, 4)
			want, got := ortOutputs(t, env, qdq, ins), ortOutputs(t, env, q, ins)
			lo, hi, worst, off := math.Inf(1), math.Inf(-1), 0.0, 0
			total = 0
			for i := range want {
				for j, w := range want[i] {
					lo, hi = min(lo, w), max(hi, w)
					d := math.Abs(got[i][j] - w)
					worst = max(worst, d)
					if d > 0 {
						off++
					}
					total++
				}
			}
			step := (hi - lo) / 255
			t.Logf("ONNX Runtime, QOperator vs QDQ: %d of %d outputs differ, max abs %.3g = %.3f steps (step %.3g)", off, total, worst, worst/step, step)
			if worst > step {
				t.Errorf("max abs %.3g above one step %.3g", worst, step)
			}
		})
	}
}

// ortEnv finds ONNX Runtime under Node in the repository's node_modules
// (skipping the test, counted, when it is missing).
func ortEnv(t *testing.T) node.Env {
	t.Helper()
	_, modules := testpaths.Node(t, ortnode.Package)
	env, err := ortnode.Find(node.FindOptions{Getenv: func(k string) string {
		if k == node.EnvNodeModules {
			return modules
		}
		return os.Getenv(k)
	}})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// ortOutputs runs m in ONNX Runtime on each sample of ins and returns its
// first output's values.
func ortOutputs(t *testing.T, env node.Env, m *canonical.Model, ins [][]*canonical.Tensor) [][]float64 {
	t.Helper()
	var out [][]float64
	for _, s := range ortRun(t, env, m, ins, false) {
		out = append(out, s[0])
	}
	return out
}

// ortRun runs m in ONNX Runtime (unoptimized: its graph optimizations off)
// on each sample of ins and returns the values of every output, per
// sample.
func ortRun(t *testing.T, env node.Env, m *canonical.Model, ins [][]*canonical.Tensor, unoptimized bool) [][][]float64 {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model.onnx")
	if err := canonical.Save(path, m, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	s, err := ortnode.Open(context.Background(), env, path, 1, unoptimized)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out [][][]float64
	for _, in := range ins {
		ps := make([]*onnxpb.TensorProto, len(in))
		for j, x := range in {
			if ps[j], err = canonical.TensorToProto(x); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.RunProtos(context.Background(), ps)
		if err != nil {
			t.Fatal(err)
		}
		var vals [][]float64
		for _, p := range got {
			g, err := canonical.TensorFromProto(p)
			if err != nil {
				t.Fatal(err)
			}
			f, err := g.Float64s()
			if err != nil {
				t.Fatal(err)
			}
			vals = append(vals, f)
		}
		out = append(out, vals)
	}
	return out
}

// opsOf counts m's nodes per op type.
func opsOf(m *canonical.Model) map[string]int {
	ops := map[string]int{}
	for _, n := range m.Graph.Nodes {
		ops[n.OpType]++
	}
	return ops
}
