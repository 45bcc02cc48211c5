package tflite

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/layout"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	unsupportedpkg "github.com/onnxconv/onnxconv/canonical/unsupported"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
	importer "github.com/onnxconv/onnxconv/importers/tflite"
)

// fillInits adds deterministic initializers (sin pattern, scaled) to m.
func fillInits(t *testing.T, m *canonical.Model, scale float64, inits map[string][]int64) {
	t.Helper()
	names := make([]string, 0, len(inits))
	for k := range inits {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
		dims := inits[name]
		n, _ := canonical.NumElements(dims)
		f := make([]float64, n)
		for i := range f {
			f[i] = math.Sin(float64(i)*0.71+float64(len(name))*1.3) * scale
		}
		if _, err := m.Graph.AddInitializer(f32Tensor(name, dims, f)); err != nil {
			t.Fatal(err)
		}
	}
}

// checkInInterpreter exports m, runs it in the TFLite interpreter on ins
// and compares every output with the executor; it returns the report.
func checkInInterpreter(t *testing.T, m *canonical.Model, ins []*canonical.Tensor, tol float64) *Report {
	t.Helper()
	rep, _ := checkInInterpreterOuts(t, m, ins, tol)
	return rep
}

// checkInInterpreterOuts is checkInInterpreter that also returns the
// interpreter's outputs, in the ONNX layout.
func checkInInterpreterOuts(t *testing.T, m *canonical.Model, ins []*canonical.Tensor, tol float64) (*Report, []*canonical.Tensor) {
	t.Helper()
	env := tfliteEnv(t)
	m2, err := canonical.FromProto(mustProto(t, m), "")
	if err != nil {
		t.Fatal(err)
	}
	want := runExec(t, m2, ins)
	res, path := exportFile(t, m2)
	var pins []*onnxpb.TensorProto
	for i, x := range ins {
		pins = append(pins, protoOf(t, toLayout(t, x, res.Report.Inputs[i].Perm), res.Report.Inputs[i].Name))
	}
	got, err := runTFLite(t, env, path, pins)
	if err != nil {
		t.Fatal(err)
	}
	// Round trip: the file re-imported by importers/tflite, on the executor.
	var again []*canonical.Tensor
	if back, err := importer.Import(res.Data, importer.Options{}); err != nil {
		t.Errorf("re-import: %v", err)
	} else {
		var lins []*canonical.Tensor
		for i, x := range ins {
			lins = append(lins, toLayout(t, x, res.Report.Inputs[i].Perm))
		}
		again = runExec(t, back, lins)
	}
	if len(got.Outputs) != len(want) {
		t.Fatalf("%d outputs, want %d", len(got.Outputs), len(want))
	}
	var outs []*canonical.Tensor
	for i, w := range want {
		g, err := canonical.TensorFromProto(got.Outputs[i])
		if err != nil {
			t.Fatal(err)
		}
		if p := res.Report.Outputs[i].Perm; p != nil {
			outs = append(outs, toLayout(t, g, layout.Inverse(p)))
		} else {
			outs = append(outs, g)
		}
		e := maxRel(t, floatsOf(t, g), floatsOf(t, toLayout(t, w, res.Report.Outputs[i].Perm)))
		t.Logf("output %s %v: max error %.3g relative to the largest output", res.Report.Outputs[i].Name, g.Dims, e)
		if e > tol {
			t.Errorf("output %s: max relative error %.3g > %g", res.Report.Outputs[i].Name, e, tol)
		}
		if again != nil {
			if e := maxRel(t, floatsOf(t, again[i]), floatsOf(t, g)); e > tol {
				t.Errorf("output %s: round trip (re-imported, executor) vs the interpreter: %.3g > %g", res.Report.Outputs[i].Name, e, tol)
			}
		}
	}
	return res.Report, outs
}

// exportFile exports m (its report logged) and writes the file in a
// temporary folder, returning the result and the file's path.
func exportFile(t *testing.T, m *canonical.Model) (*Result, string) {
	t.Helper()
	res, err := Export(context.Background(), m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", res.Report.Summary())
	path := filepath.Join(t.TempDir(), "m.tflite")
	if err := os.WriteFile(path, res.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	return res, path
}

// TestRNN: ONNX LSTM (time-major with peepholes and clip; batch-major) as
// UNIDIRECTIONAL_SEQUENCE_LSTM and GRU (both linear_before_reset modes)
// unrolled, checked in the TFLite interpreter against the executor.
func TestRNN(t *testing.T) {
	m := parseModel(t, `<ir_version: 8, opset_import: ["" : 14]>
g (float[5,2,3] x, float[2,5,3] xb) => (float[5,1,2,4] y1, float[1,2,4] h1, float[2,5,1,4] y2, float[2,1,4] h2, float[5,1,2,4] y3, float[1,2,4] h3, float[5,1,2,4] y4) {
  y1, h1 = LSTM <hidden_size: int = 4> (x, W, R, B, , , , P)
  y2, h2 = LSTM <hidden_size: int = 4, layout: int = 1> (xb, W, R)
  y3, h3 = GRU <hidden_size: int = 4> (x, Wg, Rg, Bg)
  y4 = GRU <hidden_size: int = 4, linear_before_reset: int = 1> (x, Wg, Rg, Bg)
}`)
	fillInits(t, m, 0.6, map[string][]int64{"W": {1, 16, 3}, "R": {1, 16, 4}, "B": {1, 32}, "P": {1, 12},
		"Wg": {1, 12, 3}, "Rg": {1, 12, 4}, "Bg": {1, 24}})
	xf := make([]float64, 30)
	for i := range xf {
		xf[i] = math.Cos(float64(i)*0.53) * 1.5
	}
	rep := checkInInterpreter(t, m, []*canonical.Tensor{f32Tensor("x", []int64{5, 2, 3}, xf), f32Tensor("xb", []int64{2, 5, 3}, xf)}, 1e-4)
	if rep.Ops["UNIDIRECTIONAL_SEQUENCE_LSTM"] != 2 {
		t.Errorf("ops %v: want 2 UNIDIRECTIONAL_SEQUENCE_LSTM", rep.Ops)
	}
	// clip is refused: ONNX clips the gate inputs, TFLite the cell state.
	mc := parseModel(t, `<ir_version: 8, opset_import: ["" : 14]>
g (float[5,2,3] x) => (float[5,1,2,4] y) {
  y = LSTM <hidden_size: int = 4, clip: float = 2.5> (x, W, R)
}`)
	fillInits(t, mc, 0.6, map[string][]int64{"W": {1, 16, 3}, "R": {1, 16, 4}})
	mc, err := canonical.FromProto(mustProto(t, mc), "")
	if err != nil {
		t.Fatal(err)
	}
	var ue *unsupportedpkg.OpsError
	if _, err := Export(context.Background(), mc, Options{}); !errors.As(err, &ue) || len(ue.Ops) != 1 || ue.Ops[0].Op != "LSTM" {
		t.Errorf("LSTM with clip: err = %v, want an *unsupportedpkg.OpsError naming LSTM", err)
	}
}

// TestDynamicBatch: a symbolic batch dim becomes shape_signature -1 (the
// static shape holds 1) on the input and the output; the interpreter runs
// the file at that static size and matches the executor.
func TestDynamicBatch(t *testing.T) {
	m := parseModel(t, `<ir_version: 8, opset_import: ["" : 13]>
g (float[N,3,8,8] x) => (float[N,5] y) {
  a = Conv <pads: ints = [1,1,1,1]> (x, w, b)
  r = Relu (a)
  p = GlobalAveragePool (r)
  f = Flatten (p)
  y = Gemm <transB: int = 1> (f, fw, fb)
}`)
	fillInits(t, m, 0.4, map[string][]int64{"w": {6, 3, 3, 3}, "b": {6}, "fw": {5, 6}, "fb": {5}})
	xf := make([]float64, 3*64)
	for i := range xf {
		xf[i] = math.Sin(float64(i) * 0.29)
	}
	m, err := canonical.FromProto(mustProto(t, m), "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Export(context.Background(), m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if in, out := res.Report.Inputs[0].Shape, res.Report.Outputs[0].Shape; in[0] != -1 || out[0] != -1 {
		t.Errorf("report shapes %v / %v: want a -1 batch dim", in, out)
	}
	fm := fb.GetRootAsModel(res.Data, 0)
	var sg fb.SubGraph
	fm.Subgraphs(&sg, 0)
	for _, io := range []struct {
		what string
		idx  int32
	}{{"input", sg.Inputs(0)}, {"output", sg.Outputs(0)}} {
		var tt fb.Tensor
		sg.Tensors(&tt, int(io.idx))
		if tt.ShapeSignatureLength() == 0 || tt.ShapeSignature(0) != -1 || tt.Shape(0) != 1 {
			t.Errorf("%s %s: shape %v, shape_signature length %d: want signature -1 and static 1 in dim 0", io.what, tt.Name(), tt.Shape(0), tt.ShapeSignatureLength())
		}
	}
	checkInInterpreter(t, m, []*canonical.Tensor{f32Tensor("x", []int64{1, 3, 8, 8}, xf)}, 1e-4)
}
