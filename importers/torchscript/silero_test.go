package torchscript_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

func npy(t *testing.T, path string) *canonical.Tensor {
	t.Helper()
	x, err := tensorio.ReadNpyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func zeros(dims []int64) *canonical.Tensor {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	return canonical.NewTensor("", canonical.Float, dims, make([]byte, 4*n))
}

func rows(t *testing.T, x *canonical.Tensor, k int) *canonical.Tensor {
	t.Helper()
	v, err := x.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	w := int(x.Dims[1])
	return canonical.Float32Tensor("x", []int64{1, int64(w)}, v[k*w:(k+1)*w])
}

// TestSileroVAD converts the real Silero VAD archive of ../shared with
// its 16 kHz branch bound (sr=16000) and the module state (_state, the
// LSTM's h and c; _context, the last 64 samples) lifted to inputs and
// outputs, then reproduces torch's outputs: each chunk_K after
// reset_states() (zero state), and the 4-chunk sequence with the state
// outputs fed back as the next call's inputs.
func TestSileroVAD(t *testing.T) {
	dir := testpaths.Shared(t, "models", "torchscript", "silero_vad")
	m := importDetected(t, filepath.Join(dir, "silero_vad.jit"), map[string]string{"shapes": "1x512", "bind": "sr=16000"})
	var stateDims [][]int64
	for _, in := range m.Graph.Inputs[1:] {
		_, dims, _, _ := canonical.TensorTypeOf(in.Type)
		var ds []int64
		for _, d := range dims {
			ds = append(ds, d.Value)
		}
		stateDims = append(stateDims, ds)
	}
	if len(stateDims) != 2 {
		t.Fatalf("%d state inputs, want 2 (_context, _state)", len(stateDims))
	}
	fresh := func() []*canonical.Tensor {
		var s []*canonical.Tensor
		for _, d := range stateDims {
			s = append(s, zeros(d))
		}
		return s
	}
	for k := 0; k < 4; k++ {
		d := filepath.Join(dir, fmt.Sprintf("chunk_%d", k))
		x := npy(t, filepath.Join(d, "input_0.npy"))
		x.Name = "x"
		outs := run(t, m, append([]*canonical.Tensor{x}, fresh()...))
		e := relErr(t, outs[0], npy(t, filepath.Join(d, "output_0.npy")))
		t.Logf("chunk_%d: max relative error %.3g", k, e)
		if e > 1e-5 {
			t.Errorf("chunk_%d: max relative error %.3g > 1e-5", k, e)
		}
	}
	seq := npy(t, filepath.Join(dir, "sequence", "input_0.npy"))
	want, err := npy(t, filepath.Join(dir, "sequence", "output_0.npy")).Float32s()
	if err != nil {
		t.Fatal(err)
	}
	state := fresh()
	for k := 0; k < 4; k++ {
		outs := run(t, m, append([]*canonical.Tensor{rows(t, seq, k)}, state...))
		state = outs[1:]
		w := canonical.Float32Tensor("", []int64{1, 1}, want[k:k+1])
		e := relErr(t, outs[0], w)
		t.Logf("sequence call %d: max relative error %.3g", k, e)
		if e > 1e-5 {
			t.Errorf("sequence call %d: max relative error %.3g > 1e-5", k, e)
		}
	}
}
