package convert

import (
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes/ort"
)

// TestTriluBoolORT: a bool Trilu (an attention mask) moved below opset 14
// must load and run in ONNX Runtime, whose CPU Where has no bool kernel;
// the expansion's result equals ONNX Runtime's own Trilu-14 on the source.
func TestTriluBoolORT(t *testing.T) {
	rt, err := ort.Open(testpaths.ORT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	m := &canonical.Model{IRVersion: 8, Graph: canonical.NewGraph("trilu")}
	m.SetOpset("", 14)
	x, err := m.Graph.AddInput("x", canonical.TensorType(canonical.Bool, []int64{2, 3, 4}))
	if err != nil {
		t.Fatal(err)
	}
	n, err := m.Graph.AddNode("tril", "", "Trilu", []*canonical.Value{x}, []string{"y"}, canonical.IntAttr("upper", 0))
	if err != nil {
		t.Fatal(err)
	}
	n.Output(0).Type = canonical.TensorType(canonical.Bool, []int64{2, 3, 4})
	m.Graph.Outputs = append(m.Graph.Outputs, n.Output(0))
	dir := t.TempDir()
	src := filepath.Join(dir, "src.onnx")
	if err := canonical.Save(src, m, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 24)
	for i := range raw {
		raw[i] = byte((i*7 + 3) % 3 % 2)
	}
	in := &onnxpb.TensorProto{Name: new("x"), DataType: new(int32(onnxpb.TensorProto_BOOL)), Dims: []int64{2, 3, 4}, RawData: raw}
	want, err := rt.Run(src, []*onnxpb.TensorProto{in})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Convert(m, Options{To: 11}); err != nil {
		t.Fatal(err)
	}
	for _, nd := range m.Graph.Nodes {
		if nd.OpType == "Where" {
			t.Errorf("the bool Trilu became Where, which ONNX Runtime's CPU kernels lack for bool")
		}
	}
	out := filepath.Join(dir, "opset11.onnx")
	if err := canonical.Save(out, m, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := rt.Run(out, []*onnxpb.TensorProto{in})
	if err != nil {
		t.Fatalf("ONNX Runtime refuses the opset 11 model: %v", err)
	}
	if err := compareOutputs(got, want); err != nil {
		t.Error(err)
	}
}
