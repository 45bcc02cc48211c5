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
	"github.com/onnxconv/onnxconv/runtimes"
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

// Keras GRU layers with reset_after=True, which TF.js 4.22's GRUCell
// refuses, run on the runtime's reset-after GRU (TF.js ops, the weights
// set as for every layer) and compute what torch computes with the same
// weights, stored by fixtures/keras_rnn/make.py and make_gru_variants.py
// (return_sequences, go_backwards with the last step only, no bias with a
// hard_sigmoid recurrent activation, after a Masking layer: a masked step
// keeps the previous state); the session names the layers it
// computed that way.
func TestRunKerasGRUResetAfter(t *testing.T) {
	e := env(t)
	for _, name := range []string{"gru_reset_after", "gru_backwards", "gru_nobias_hard", "gru_masked"} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			x := npyF32(t, name+"_input.npy")
			want := npyF32(t, name+"_output.npy")
			xv, err := x.Float32s()
			if err != nil {
				t.Fatal(err)
			}
			wv, err := want.Float32s()
			if err != nil {
				t.Fatal(err)
			}
			s, err := Open(ctx, e, filepath.Join(rnnFixtures, name+".json"))
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
		})
	}
}

// The runtime notes the reset-after GRU for the summary's "computed by"
// (runtimes.ModelNoter), and only for a model that has one.
func TestModelNote(t *testing.T) {
	rt, ok := New(FindOptions{}).(runtimes.ModelNoter)
	if !ok {
		t.Fatal("the tfjs runtime is not a runtimes.ModelNoter")
	}
	got := rt.ModelNote(filepath.Join(rnnFixtures, "gru_reset_after.json"))
	if want := "a reset-after GRU in TF.js ops for layer(s) gru, which TF.js's GRUCell refuses"; got != want {
		t.Errorf("gru_reset_after: %q, want %q", got, want)
	}
	for _, p := range []string{filepath.Join(rnnFixtures, "lstm_long.json"), "../../fixtures/tfjs/graph_slicing/model.json", "/nonexistent.json"} {
		if got := rt.ModelNote(p); got != "" {
			t.Errorf("%s: %q, want none", p, got)
		}
	}
}
