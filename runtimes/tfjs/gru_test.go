package tfjs

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// rnnFixtures is fixtures/keras_rnn (fixtures/keras_rnn/make.py): Keras 2
// RNN files and the outputs torch 1.13 computes for them.
const rnnFixtures = "../../fixtures/keras_rnn"

func npyF32(t *testing.T, name string) *canonical.Tensor {
	t.Helper()
	x, err := tensorio.ReadNpyFile(filepath.Join(rnnFixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// A Keras GRU with reset_after=True, which TF.js 4.22's GRUCell refuses,
// runs on the runtime's reset-after GRU (TF.js ops, the weights set as
// for every layer) and computes what torch.nn.GRU (the reset-after cell)
// computes with the same weights, stored by make.py; the session says
// which layers it computed that way.
func TestRunKerasGRUResetAfter(t *testing.T) {
	e := env(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	x := npyF32(t, "gru_reset_after_input.npy")
	want := npyF32(t, "gru_reset_after_output.npy")
	xv, err := x.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	wv, err := want.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, e, filepath.Join(rnnFixtures, "gru_reset_after.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if fmt.Sprint(s.ResetAfterGRU) != "[gru]" || s.Version != PackageVersion {
		t.Errorf("session: reset-after GRU layers %q, TF.js %s", s.ResetAfterGRU, s.Version)
	}
	res, err := s.Run(ctx, []*onnxpb.TensorProto{f32("x", x.Dims, xv...)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Outputs) != 1 {
		t.Fatalf("%d outputs", len(res.Outputs))
	}
	o := res.Outputs[0]
	if o.GetName() != "gru" || fmt.Sprint(o.GetDims()) != fmt.Sprint(want.Dims) {
		t.Errorf("output %s %v, want gru %v", o.GetName(), o.GetDims(), want.Dims)
	}
	got := values(o)
	if len(got) != len(wv) {
		t.Fatalf("%d values, want %d", len(got), len(wv))
	}
	worst := 0.0
	for i := range got {
		d := math.Abs(float64(got[i] - wv[i]))
		worst = max(worst, d)
		if d > 1e-5 {
			t.Errorf("[%d] = %g, torch %g", i, got[i], wv[i])
		}
	}
	t.Logf("max abs diff vs torch %.3g", worst)
}
