package keras_test

import (
	"context"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	kfile "github.com/onnxconv/onnxconv/formats/keras"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	tfjsrt "github.com/onnxconv/onnxconv/runtimes/tfjs"
)

type wireTensor struct {
	// Name is the output's name (TF.js outputs only).
	Name  string    `json:"name,omitempty"`
	Shape []int64   `json:"shape"`
	Data  []float32 `json:"data"`
}

// runTFJS computes the Keras file m was loaded from on inputs with TF.js
// 4.22.0, through the tfjs reference runtime (runtimes/tfjs exports the
// architecture and weights to TF.js layers format and runs it).
func runTFJS(t *testing.T, m *kfile.Model, inputs []wireTensor) []wireTensor {
	t.Helper()
	node, modules := testpaths.Node(t, tfjsrt.Package)
	var ins []*onnxpb.TensorProto
	for _, w := range inputs {
		tp, err := canonical.TensorToProto(canonical.Float32Tensor("", w.Shape, w.Data))
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, tp)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := tfjsrt.Run(ctx, tfjsrt.Env{Node: node, Modules: modules}, m.Path, ins)
	if err != nil {
		t.Fatalf("TF.js: %v", err)
	}
	if res.Version != tfjsrt.PackageVersion {
		t.Fatalf("TF.js %s, want %s", res.Version, tfjsrt.PackageVersion)
	}
	var outs []wireTensor
	for _, tp := range res.Outputs {
		o, err := canonical.TensorFromProto(tp)
		if err != nil {
			t.Fatal(err)
		}
		v, err := o.Float32s()
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, wireTensor{Name: tp.GetName(), Shape: o.Dims, Data: v})
	}
	return outs
}
