package keras_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	kfile "github.com/onnxconv/onnxconv/formats/keras"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// rnnFixtures is fixtures/keras_rnn (fixtures/keras_rnn/make.py): Keras 2
// RNN files and the outputs torch 1.13 computes for them.
const rnnFixtures = "../../fixtures/keras_rnn"

func npy(t *testing.T, name string) *canonical.Tensor {
	t.Helper()
	x, err := tensorio.ReadNpyFile(filepath.Join(rnnFixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func f32s(t *testing.T, x *canonical.Tensor) []float32 {
	t.Helper()
	v, err := x.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A GRU with reset_after=True computes what torch.nn.GRU (the
// reset-after cell) computes with the same weights, stored by make.py,
// and what the TF.js runtime computes (TF.js 4.22's GRUCell refuses
// reset_after, so runtimes/tfjs runs it on its reset-after GRU in TF.js
// ops; its own test compares that with torch).
func TestGRUResetAfterMatchesTorch(t *testing.T) {
	path := filepath.Join(rnnFixtures, "gru_reset_after.json")
	m := importDetected(t, path)
	x := npy(t, "gru_reset_after_input.npy")
	x.Name = m.Graph.Inputs[0].Name
	got := f32s(t, runExecutor(t, m, []*canonical.Tensor{x})[0])
	want := npy(t, "gru_reset_after_output.npy")
	worst := maxRelErr(t, "gru", got, f32s(t, want), 1e-5)
	t.Logf("max rel err vs torch %.3g", worst)
	src, err := kfile.Load(context.Background(), path, "")
	if err != nil {
		t.Fatal(err)
	}
	tj := runTFJS(t, src, []wireTensor{{Shape: x.Dims, Data: f32s(t, x)}})
	t.Logf("max rel err vs TF.js %.3g", maxRelErr(t, "gru vs TF.js", got, tj[0].Data, 1e-5))
}

// A 128-unit LSTM over 40 steps: TF.js runs it (its orthogonal
// initializer is skipped: the weights are set right after) and agrees
// with the import and with torch.nn.LSTM's stored outputs.
func TestLongLSTMMatchesTFJSAndTorch(t *testing.T) {
	path := filepath.Join(rnnFixtures, "lstm_long.json")
	m := importDetected(t, path)
	x := npy(t, "lstm_long_input.npy")
	x.Name = m.Graph.Inputs[0].Name
	got := f32s(t, runExecutor(t, m, []*canonical.Tensor{x})[0])
	want := f32s(t, npy(t, "lstm_long_output.npy"))
	t.Logf("max rel err vs torch %.3g", maxRelErr(t, "lstm vs torch", got, want, 1e-5))
	src, err := kfile.Load(context.Background(), path, "")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	tj := runTFJS(t, src, []wireTensor{{Shape: x.Dims, Data: f32s(t, x)}})
	t.Logf("TF.js ran in %v; max rel err vs TF.js %.3g", time.Since(start).Round(time.Millisecond), maxRelErr(t, "lstm vs TF.js", got, tj[0].Data, 1e-4))
}

// A Masking layer before a GRU: the mask makes the GRU keep its state on
// masked steps (torch's stored output for gru_masked, computed step by
// step, differs from the unmasked GRU by up to 0.23 there). The import
// does not carry masks, so it refuses the layer by name instead of
// converting it as an identity; the other GRU fixtures still import.
func TestMaskingRefused(t *testing.T) {
	path := filepath.Join(rnnFixtures, "gru_masked.json")
	imp, _, err := builtin.Registry().Detect(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = imp.Import(context.Background(), path, nil)
	if err == nil {
		t.Fatal("gru_masked imported: a Masking layer must be refused (the mask is not carried)")
	}
	for _, want := range []string{"masking", "Masking", "not supported"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
	importDetected(t, filepath.Join(rnnFixtures, "gru_backwards.json"))
}
