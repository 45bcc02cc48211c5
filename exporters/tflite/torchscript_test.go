package tflite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/torchscript"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// importTorchScript converts a committed TorchScript fixture of
// fixtures/torchscript (made by its make.py with torch) with the input
// shapes its test data has, and returns the model, its inputs and torch's
// stored outputs.
func importTorchScript(t *testing.T, name, shapes string) (*canonical.Model, []*canonical.Tensor, []*canonical.Tensor) {
	t.Helper()
	dir := filepath.Join(testpaths.RepoRoot(t), "fixtures", "torchscript", name)
	res, err := torchscript.New().Import(context.Background(), filepath.Join(dir, "model.pt"), importers.Options{"shapes": shapes})
	if err != nil {
		t.Fatalf("import %s: %v", name, err)
	}
	t.Cleanup(func() { res.Model.Close() })
	read := func(p string) *canonical.Tensor {
		x, err := tensorio.ReadNpyFile(filepath.Join(dir, "test_data_set_0", p))
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	return res.Model, []*canonical.Tensor{read("input_0.npy")}, []*canonical.Tensor{read("output_0.npy")}
}

// TestTorchScriptSpectrogram: the spectrogram fixture (torch.stft, whose
// DFT the importer writes as a 1-D Conv on [N,1,W]; abs; Linear) exported
// to TFLite and run in the interpreter, against the ONNX model on the
// executor (checkInInterpreter) and against torch's stored output.
func TestTorchScriptSpectrogram(t *testing.T) {
	m, ins, want := importTorchScript(t, "spectrogram_scripted", "2x400")
	ins[0].Name = m.Graph.Inputs[0].Name
	rep, got := checkInInterpreterOuts(t, m, ins, 1e-5)
	if rep.Ops["CONV_2D"] == 0 {
		t.Errorf("no CONV_2D in the file (ops %v)", rep.Ops)
	}
	e := maxRel(t, floatsOf(t, got[0]), floatsOf(t, want[0]))
	t.Logf("interpreter vs torch: max error %.3g relative to the largest output", e)
	if e > 1e-5 {
		t.Errorf("interpreter vs torch: max relative error %.3g > 1e-5", e)
	}
}

// TestTorchScriptBranchy: the branchy fixture (an `if` on a tensor → If, a
// `for` loop → Loop of 3 iterations) exported with the If as SELECT_V2 and
// the Loop unrolled, in the interpreter against the executor and torch.
func TestTorchScriptBranchy(t *testing.T) {
	m, ins, want := importTorchScript(t, "branchy_scripted", "2x16")
	ins[0].Name = m.Graph.Inputs[0].Name
	rep, got := checkInInterpreterOuts(t, m, ins, 1e-5)
	if rep.Ops["SELECT_V2"] != 1 || rep.Ops["TANH"] != 3 {
		t.Errorf("ops %v, want one SELECT_V2 (the If) and 3 TANH (the unrolled Loop)", rep.Ops)
	}
	e := maxRel(t, floatsOf(t, got[0]), floatsOf(t, want[0]))
	t.Logf("interpreter vs torch: max error %.3g relative to the largest output", e)
	if e > 1e-5 {
		t.Errorf("interpreter vs torch: max relative error %.3g > 1e-5", e)
	}
}
