package executor

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// TestPackedWeightsReleased checks the memory structure of a run with the
// kernels: the weights only the kernels read are never held as host
// tensors (a data-less stand-in, packed straight from the model's
// bytes), intermediate values are not kept in the env past their last
// use, and the outputs are bit-identical to those of an executor that
// holds the weights as host tensors (pinned by RunCapture first) and
// across build and replay.
func TestPackedWeightsReleased(t *testing.T) {
	for _, name := range []string{"resnet_small", "squeezenet", "mlp_opset17", "transformer_block_opset21"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("..", "fixtures", "models", name)
			m, ins := loadModelDir(t, dir)
			ctx := context.Background()

			ex, err := New(m, Options{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer ex.Close()
			if len(ex.packOnly) == 0 {
				t.Fatal("no initializer is read only packed")
			}
			first, err := ex.Run(ctx, ins)
			if err != nil {
				t.Fatal(err)
			}
			second, err := ex.Run(ctx, ins)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for v := range ex.packOnly {
				names = append(names, v.Name)
				ent, ok := ex.inits[v]
				if !ok || !ent.h.released || ent.h.data != nil {
					t.Errorf("initializer %q: host data held (%v)", v.Name, ok)
				}
				for _, k := range ex.packOnly[v] {
					if pe, ok := ex.packs[k]; !ok || pe.h != ent.h || !pe.usable() {
						t.Errorf("initializer %q: node %s has no packing of it", v.Name, k.n)
					}
				}
			}
			// The env of a replay holds the graph inputs, initializers
			// and outputs only.
			for _, p := range ex.plans {
				en, err := ex.bindInputs(tensorValues(ins))
				if err != nil {
					t.Fatal(err)
				}
				n0 := len(en.vals)
				if ok, err := p.replay(ctx, ex, en); err != nil || !ok {
					t.Fatalf("replay: %v %v", ok, err)
				}
				if extra := len(en.vals) - n0; extra > len(m.Graph.Outputs) {
					t.Errorf("env holds %d values after the run, want at most the %d outputs", extra, len(m.Graph.Outputs))
				}
			}

			pinned, err := New(m, Options{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer pinned.Close()
			capt, err := pinned.RunCapture(ctx, ins, names)
			if err != nil {
				t.Fatal(err)
			}
			for v := range pinned.packOnly {
				want, _ := v.Const.Bytes()
				got, _ := capt[v.Name].Bytes()
				if !bytes.Equal(got, want) {
					t.Errorf("RunCapture of %q differs from the initializer", v.Name)
				}
				if ent := pinned.inits[v]; ent.h.released {
					t.Errorf("initializer %q captured but released", v.Name)
				}
			}
			third, err := pinned.Run(ctx, ins)
			if err != nil {
				t.Fatal(err)
			}
			for i := range first {
				a, _ := first[i].Bytes()
				for j, o := range [][]*canonical.Tensor{second, third} {
					b, _ := o[i].Bytes()
					if !bytes.Equal(a, b) {
						t.Errorf("output %d of run %d differs from the first run", i, j+2)
					}
				}
			}
		})
	}
}

func tensorValues(ts []*canonical.Tensor) []*Value {
	vals := make([]*Value, len(ts))
	for i, t := range ts {
		vals[i] = TensorValue(t)
	}
	return vals
}
