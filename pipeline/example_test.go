package pipeline_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/onnxconv/onnxconv/builtinenv"
	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/pipeline"
)

// Convert an XGBoost model and a TFLite model to ONNX opset 13, each
// verified against its source before it is written: the XGBoost trees by
// their direct Go predictor, the TFLite file by Google's TFLite interpreter
// (under Node; without it the result is run once and reported NOT
// VERIFIED in res.Conversion.NotVerified). The Env holds the importers,
// exporters and runtimes, built once: builtinenv.New gives the built-in
// formats in this process.
func ExampleConvert() {
	dir, _ := os.MkdirTemp("", "onnxconv-example-*")
	defer os.RemoveAll(dir)
	env := builtinenv.New()
	for _, in := range []string{"../fixtures/xgboost/binary_logistic.json", "../fixtures/tflite/cnn.tflite"} {
		out := filepath.Join(dir, filepath.Base(in)+".onnx")
		res, err := pipeline.Convert(context.Background(), in, out, pipeline.Options{
			Env:    env,
			Opset:  13,
			Verify: &pipeline.VerifyOptions{},
		})
		if err != nil {
			fmt.Println(err)
			continue
		}
		c := res.Conversion
		fmt.Printf("%s: %s, opset %d -> %d, equivalent %v\n", filepath.Base(in), c.SourceFormat, c.OpsetBefore, c.OpsetAfter, res.Equivalent)
	}
	// Output:
	// binary_logistic.json: xgboost, opset 21 -> 13, equivalent true
	// cnn.tflite: tflite, opset 21 -> 13, equivalent true
}

// Verify compares two models on generated inputs.
func ExampleVerify() {
	rep, err := pipeline.Verify(context.Background(),
		"../fixtures/models/mlp_opset9/model.onnx", "../fixtures/models/mlp_opset17/model.onnx",
		pipeline.CompareOptions{VerifyOptions: pipeline.VerifyOptions{Samples: 2}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("equivalent:", rep.Equivalent, "outputs:", len(rep.Outputs))
	// Output:
	// equivalent: true outputs: 1
}

// Load reads a model; Run computes it on a folder of inputs, here one of
// the model's test sets, whose expected output PyTorch computed.
func ExampleRun() {
	m, err := pipeline.Load("../fixtures/models/squeezenet/model.onnx", pipeline.LoadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("inputs:", len(m.Graph.Inputs), "opset:", m.Opset(""))
	m.Close()
	set := "../fixtures/models/squeezenet/test_data_set_0"
	res, err := pipeline.Run(context.Background(), "../fixtures/models/squeezenet/model.onnx", pipeline.RunOptions{Inputs: set})
	if err != nil {
		fmt.Println(err)
		return
	}
	want, _ := canonical.ReadTensorFile(filepath.Join(set, "output_0.pb"))
	got, _ := res.Outputs[0].Tensor.Float64s()
	exp, _ := want.Float64s()
	worst := 0.0
	for i := range exp {
		worst = max(worst, math.Abs(got[i]-exp[i]))
	}
	fmt.Println("output shape:", res.Outputs[0].Tensor.Dims, "within 1e-4 of PyTorch:", worst < 1e-4)
	// Output:
	// inputs: 1 opset: 13
	// output shape: [1 100] within 1e-4 of PyTorch: true
}
