package tensorflow

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/tfops"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// TestCustomTFOpFromONNXFunction: a frozen GraphDef
// (fixtures/custom/scaled_tanh.pb, make_graphdef.go: the graph of
// scaled_tanh_tfjs) whose ScaledTanh node is a TF op no mapping knows is
// refused naming the op and -O custom; with scaled_tanh.onnx it converts
// to a call of the function and computes what TF.js computed for the
// same graph with the op registered (scaled_tanh_data).
func TestCustomTFOpFromONNXFunction(t *testing.T) {
	const dir = "../../fixtures/custom/"
	path := dir + "scaled_tanh.pb"
	_, err := New().Import(context.Background(), path, nil)
	var oe *tfops.OpError
	if !errors.As(err, &oe) || !oe.Unsupported || oe.Op != "ScaledTanh" || !strings.Contains(err.Error(), "-O custom=FILE.onnx") {
		t.Fatalf("without a definition: %v", err)
	}
	opts := importers.Options{"custom": dir + "scaled_tanh.onnx"}
	res, err := New().Import(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	fns := res.Model.Functions
	if len(fns) != 1 || !strings.HasPrefix(fns[0].Name, "ScaledTanh") {
		t.Fatalf("functions %v: want the ScaledTanh specialization", fns)
	}
	in := res.Model.Graph.Inputs[0].Name
	res.Model.Close()
	// TF.js's input and output, as --inputs/--reference read them.
	var data []*canonical.Tensor
	for _, f := range []string{"x", "scaled_tanh"} {
		v, err := tensorio.ReadNpyFile(dir + "scaled_tanh_data/" + f + ".npy")
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, v)
	}
	data[0].Name = in
	got, w := floats(t, run(t, path, opts, data[0])[0]), floats(t, data[1])
	if len(got) != len(w) {
		t.Fatalf("%d values, TF.js %d", len(got), len(w))
	}
	worst := 0.0
	for i := range w {
		d := math.Abs(got[i]-w[i]) / math.Max(1e-6, math.Abs(w[i]))
		if !(d <= 1e-5) {
			t.Errorf("[%d] = %g, TF.js %g", i, got[i], w[i])
		}
		worst = math.Max(worst, d)
	}
	t.Logf("%d values, max relative error %.3g against TF.js", len(w), worst)
}
