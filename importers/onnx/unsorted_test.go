//go:build cgo

package onnx_test

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/builtinenv"
	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/check"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/pipeline"
	"github.com/onnxconv/onnxconv/runtimes/ort"
)

// unsortedFP16 is a float16 model with float32 input and output as a
// float16 conversion leaves it: the Casts from and to float32 appended
// after the nodes that use them (issue 45).
func unsortedFP16() *onnxpb.ModelProto {
	f16 := func(v ...float32) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint16(b, canonical.Float32ToFloat16(x))
		}
		return b
	}
	vi := func(name string, dt onnxpb.TensorProto_DataType) *onnxpb.ValueInfoProto {
		return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: canonical.TensorType(canonical.DataType(dt), []int64{2, 3})}
	}
	node := func(op, name string, ins, outs []string, attrs ...*onnxpb.AttributeProto) *onnxpb.NodeProto {
		return &onnxpb.NodeProto{OpType: proto.String(op), Name: proto.String(name), Input: ins, Output: outs, Attribute: attrs}
	}
	to := func(dt onnxpb.TensorProto_DataType) *onnxpb.AttributeProto {
		return &onnxpb.AttributeProto{Name: proto.String("to"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(int64(dt))}
	}
	fp16, fp32 := onnxpb.TensorProto_FLOAT16, onnxpb.TensorProto_FLOAT
	return &onnxpb.ModelProto{
		IrVersion:   proto.Int64(8),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(17)}},
		Graph: &onnxpb.GraphProto{
			Name: proto.String("unsorted_fp16"),
			Node: []*onnxpb.NodeProto{
				node("Mul", "mul", []string{"x16", "w"}, []string{"y"}),
				node("Add", "add", []string{"y", "b"}, []string{"z"}),
				node("Sigmoid", "sigmoid", []string{"z"}, []string{"s"}),
				node("Cast", "cast_out", []string{"s"}, []string{"out"}, to(fp32)),
				node("Cast", "cast_in", []string{"x"}, []string{"x16"}, to(fp16)),
			},
			Initializer: []*onnxpb.TensorProto{
				{Name: proto.String("w"), DataType: proto.Int32(int32(fp16)), Dims: []int64{2, 3}, RawData: f16(0.5, -1.25, 2, 3.5, -0.75, 1)},
				{Name: proto.String("b"), DataType: proto.Int32(int32(fp16)), Dims: []int64{2, 3}, RawData: f16(0.1, 0.2, -0.3, 0.4, -0.5, 0.6)},
			},
			Input:  []*onnxpb.ValueInfoProto{vi("x", fp32)},
			Output: []*onnxpb.ValueInfoProto{vi("out", fp32)},
		},
	}
}

// TestUnsortedFP16Converts: a float16 model whose Casts come after the
// nodes that use them is sorted on import (said in the warnings), converts
// with a plain verified convert, and the written model computes what ONNX
// Runtime computes on the file as it came.
func TestUnsortedFP16Converts(t *testing.T) {
	lib := testpaths.ORT(t)
	rt, err := ort.Open(lib, 1)
	if err != nil {
		t.Fatalf("ONNX Runtime: %v", err)
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "model.onnx"), filepath.Join(dir, "out.onnx")
	b, err := proto.Marshal(unsortedFP16())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	x := canonical.Float32Tensor("x", []int64{2, 3}, []float32{-2, -0.5, 0, 0.75, 1.5, 3})
	xp, err := canonical.TensorToProto(x)
	if err != nil {
		t.Fatal(err)
	}
	ortOuts, err := rt.Run(in, []*onnxpb.TensorProto{xp})
	if err != nil {
		t.Fatalf("ONNX Runtime runs the unsorted file: %v", err)
	}
	want, err := canonical.TensorFromProto(ortOuts[0])
	if err != nil {
		t.Fatal(err)
	}

	res, err := pipeline.Convert(context.Background(), in, out, pipeline.Options{Env: builtinenv.New(), Verify: &pipeline.VerifyOptions{}})
	if err != nil {
		var b strings.Builder
		for _, c := range res.Comparisons {
			_ = c.Report.WriteSummary(&b, c.What)
		}
		t.Fatalf("convert: %v\n%s", err, b.String())
	}
	if !res.Equivalent || res.Written != out {
		t.Fatalf("convert: equivalent %v, written %q", res.Equivalent, res.Written)
	}
	// Against ONNX Runtime, the report says its own noise on the model
	// (with and without its graph optimizations) beside the difference.
	if first := res.Comparisons[0]; strings.Contains(first.Report.A.ComputedBy, "onnxruntime") {
		noted := false
		for _, n := range first.Report.Notes {
			noted = noted || strings.Contains(n, "ONNX Runtime's own noise on this model")
			t.Log(n)
		}
		if !noted {
			t.Errorf("the comparison with ONNX Runtime does not give its noise: %q", first.Report.Notes)
		}
	} else {
		t.Logf("the source was computed by %s: ONNX Runtime's noise not checked", first.Report.A.ComputedBy)
	}
	said := false
	for _, w := range res.Conversion.Warnings {
		said = said || strings.Contains(w, "sorted on import")
	}
	if !said {
		t.Errorf("the warnings do not say the nodes were sorted: %q", res.Conversion.Warnings)
	}

	m, err := canonical.Load(out, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := check.Model(m); err != nil {
		t.Errorf("the written model is refused by the checker: %v", err)
	}
	if first := m.Graph.Nodes[0]; first.Name != "cast_in" {
		t.Errorf("the written model starts with %s, want the input Cast", first)
	}
	ex, err := executor.New(m, executor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	got, err := ex.Run(context.Background(), []*canonical.Tensor{x})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := got[0].Float32s()
	w, _ := want.Float32s()
	if len(g) != len(w) {
		t.Fatalf("%d values, ONNX Runtime gives %d", len(g), len(w))
	}
	for i := range w {
		// float16 sigmoid: within 2 float16 steps near 1 (2^-10 each).
		if d := math.Abs(float64(g[i] - w[i])); d > 2e-3 {
			t.Errorf("out[%d] = %v, ONNX Runtime gives %v", i, g[i], w[i])
		}
	}
}
