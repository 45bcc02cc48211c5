package verify_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers/tfjs"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// blazeface imports MediaPipe's BlazeFace (TF.js graph model, real
// third-party file) and returns it with TF.js 4.22's own input and outputs
// (tfjs_reference/, computed by TF.js in Node, CPU backend).
func blazeface(t *testing.T) (*canonical.Model, []*canonical.Tensor, []*canonical.Tensor) {
	t.Helper()
	dir := testpaths.Shared(t, "models", "tfjs_graph", "human_blazeface")
	res, err := tfjs.New().Import(context.Background(), filepath.Join(dir, "blazeface.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = res.Model.Close() })
	in, err := tensorio.ReadNpyFile(filepath.Join(dir, "tfjs_reference", "input_0.npy"))
	if err != nil {
		t.Fatal(err)
	}
	// io.json: output_N.npy in TF.js's output order.
	names := []string{"Identity_3", "Identity", "Identity_1", "Identity_2"}
	var outs []*canonical.Tensor
	for i, n := range names {
		o, err := tensorio.ReadNpyFile(filepath.Join(dir, "tfjs_reference", fmt.Sprintf("output_%d.npy", i)))
		if err != nil {
			t.Fatal(err)
		}
		o.Name = n
		outs = append(outs, o)
	}
	return res.Model, []*canonical.Tensor{in}, outs
}

// TestScaledToleranceRealModel: BlazeFace's box regressors reach 115;
// the executor's float32 rounding differs from TF.js's by up to 3.4e-5
// there, which the fixed atol 1e-5 refused. The tolerance scaled to each
// output passes it, every output reports its ratio to the tolerance, and
// a planted error (one convolution's weights x 1.01) still fails with the
// ratio saying by how much.
func TestScaledToleranceRealModel(t *testing.T) {
	m, in, want := blazeface(t)
	ctx := context.Background()
	stored := &verify.Side{Name: "tfjs 4.22.0 outputs", Expected: [][]*canonical.Tensor{want}}
	opts := verify.Options{Inputs: [][]*canonical.Tensor{in}}
	rep, err := verify.Compare(ctx, verify.ModelSide("blazeface", m), stored, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Equivalent {
		t.Fatalf("default tolerance: not equivalent: %s", rep.Summary)
	}
	for _, o := range rep.Outputs {
		if o.Ratio <= 0 || o.Ratio > 1 || o.Tolerance.Scale <= 0 || o.Tolerance.EffectiveATol < o.Tolerance.ATol {
			t.Errorf("%s: ratio %g, scale %g, effective atol %g", o.Name, o.Ratio, o.Tolerance.Scale, o.Tolerance.EffectiveATol)
		}
		t.Logf("%s: max_abs %.3g scale %.3g atol %.3g ratio %.3g", o.Name, o.Float.MaxAbs, o.Tolerance.Scale, o.Tolerance.EffectiveATol, o.Ratio)
	}
	// The fixed absolute tolerance of before refuses the same numbers.
	fixed := 1e-5
	old := opts
	old.ATol = &fixed
	if rep, err = verify.Compare(ctx, verify.ModelSide("blazeface", m), stored, old); err != nil {
		t.Fatal(err)
	}
	if rep.Equivalent {
		t.Errorf("atol 1e-5 (fixed) passed; the test no longer shows the scaled tolerance's point")
	}

	// Planted error: the first convolution's weights x 1.01.
	bad, err := m.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bad.Close() }()
	planted := ""
	for _, n := range bad.Graph.Nodes {
		if n.OpType != "Conv" || len(n.Inputs) < 2 || n.Inputs[1] == nil || n.Inputs[1].Const == nil {
			continue
		}
		w := n.Inputs[1].Const
		raw, err := w.Bytes()
		if err != nil || w.DataType != canonical.Float {
			continue
		}
		scaled := make([]byte, len(raw))
		for i := 0; i+4 <= len(raw); i += 4 {
			binary.LittleEndian.PutUint32(scaled[i:], math.Float32bits(1.01*math.Float32frombits(binary.LittleEndian.Uint32(raw[i:]))))
		}
		w.SetBytes(scaled)
		planted = n.Name
		break
	}
	if planted == "" {
		t.Fatal("no Conv with float weights to plant an error in")
	}
	if rep, err = verify.Compare(ctx, verify.ModelSide("blazeface x1.01", bad), stored, opts); err != nil {
		t.Fatal(err)
	}
	if rep.Equivalent {
		t.Fatalf("weights of %s x 1.01: still equivalent: %s", planted, rep.Summary)
	}
	worst := 0.0
	for _, o := range rep.Outputs {
		worst = max(worst, o.Ratio)
		if !o.Pass && o.Reason == "" {
			t.Errorf("%s fails without a reason", o.Name)
		}
	}
	if worst <= 1 {
		t.Errorf("planted error: worst ratio %g, want > 1", worst)
	}
	t.Logf("weights of %s x 1.01: worst ratio %.3g", planted, worst)
}
