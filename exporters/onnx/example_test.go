package onnx_test

import (
	"context"
	"fmt"
	"log"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/exporters/adapt"
	"github.com/onnxconv/onnxconv/exporters/onnx"
)

// Export leaves its argument as it was: the adapted model is a new one.
func ExampleExport() {
	m, err := canonical.Load("../../fixtures/models/transformer_block_opset21/model.onnx", canonical.LoadOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	before, err := m.ToProto()
	if err != nil {
		log.Fatal(err)
	}

	res, err := onnx.Export(context.Background(), m, "onnxruntime-1.15", adapt.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer res.Model.Close()

	after, err := m.ToProto()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("argument unchanged:", proto.Equal(before, after))
	fmt.Println("argument: opset", m.Opset(""), "IR", m.IRVersion)
	fmt.Println("exported: opset", res.Model.Opset(""), "IR", res.Model.IRVersion)
	fmt.Println(res.Report.Header())
	// Output:
	// argument unchanged: true
	// argument: opset 21 IR 10
	// exported: opset 19 IR 8
	// target onnxruntime-1.15: opset 21 -> 19, IR 10 -> 8
}
