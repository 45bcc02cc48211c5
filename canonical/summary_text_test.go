package canonical

import (
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/internal/bytesize"
)

func TestSummaryWriteText(t *testing.T) {
	s := Summary{
		IRVersion: 8, ProducerName: "pytorch", ProducerVersion: "2.1", Domain: "ai.test", ModelVersion: 3,
		Opsets:  []SummaryOpset{{Version: 17}, {Domain: "ai.onnx.ml", Version: 3}},
		Inputs:  []SummaryValue{{Name: "x", Type: "float32[N,4]"}, {Name: "w", Type: "float32[4]", Initializer: true}},
		Outputs: []SummaryValue{{Name: "y", Type: "float32[N,4]"}},
		Nodes:   2, Functions: 1,
		Ops:          []SummaryOp{{Op: "Add", Count: 1}, {Domain: "ai.onnx.ml", Op: "Scaler", Count: 1}},
		Initializers: 1, Parameters: 4, ParameterBytes: 16, ConstantTensors: 1,
		ExternalFiles: []SummaryExtFile{{Location: "m.data", Tensors: 1, Bytes: 2048}},
	}
	var b strings.Builder
	if err := s.WriteText(&b, "m.onnx"); err != nil {
		t.Fatal(err)
	}
	want := `model:       m.onnx
ir_version:  8
producer:    pytorch 2.1
domain:      ai.test (model version 3)
opsets:      ai.onnx 17, ai.onnx.ml 3
inputs:
  x                        float32[N,4]
  w                        float32[4]  (has a default: initializer)
outputs:
  y                        float32[N,4]
nodes:       2 (functions: 1)
  Add                      1
  ai.onnx.ml.Scaler        1
parameters:  4 in 1 initializers and 1 Constant nodes, ` + bytesize.Format(16) + `
external data:
  m.data                   1 tensors, ` + bytesize.Format(2048) + `
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
