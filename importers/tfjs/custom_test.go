package tfjs_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/tfjs"
	"github.com/onnxconv/onnxconv/importers/tfops"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// A graph model with a TF op its authors registered in TF.js
// (fixtures/custom/scaled_tanh_tfjs: ScaledTanh, y = tanh(x)·alpha with
// attr alpha 1.5) is refused naming the op and how to supply it; with
// -O custom=scaled_tanh.onnx (a function whose alpha the node's sets) it
// computes what TF.js computed with the op registered.
func TestCustomTFOpFromONNXFunction(t *testing.T) {
	const dir = "../../fixtures/custom/"
	path := dir + "scaled_tanh_tfjs/model.json"
	imp := tfjs.New()
	_, err := imp.Import(context.Background(), path, nil)
	var oe *tfops.OpError
	if !errors.As(err, &oe) || !oe.Unsupported || oe.Op != "ScaledTanh" || !strings.Contains(err.Error(), "-O custom=FILE.onnx") {
		t.Fatalf("without a definition: %v", err)
	}
	res, err := imp.Import(context.Background(), path, importers.Options{"custom": dir + "scaled_tanh.onnx"})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Model
	defer m.Close()
	if len(m.Functions) != 1 || !strings.HasPrefix(m.Functions[0].Name, "ScaledTanh") {
		t.Fatalf("functions %v: want the ScaledTanh specialization", m.Functions)
	}
	x, err := tensorio.ReadNpyFile(dir + "scaled_tanh_data/x.npy")
	if err != nil {
		t.Fatal(err)
	}
	want, err := tensorio.ReadNpyFile(dir + "scaled_tanh_data/scaled_tanh.npy")
	if err != nil {
		t.Fatal(err)
	}
	x.Name = m.Graph.Inputs[0].Name
	got := runExecutor(t, m, []*canonical.Tensor{x})[0]
	t.Logf("max rel err vs TF.js %.3g", maxRelErr(t, "scaled_tanh", floats(t, got), floats(t, want), 1e-5))
}
