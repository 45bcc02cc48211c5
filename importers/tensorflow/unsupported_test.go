package tensorflow

import (
	"errors"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/formats/tensorflow/tfpb"
	"github.com/onnxconv/onnxconv/importers"
)

// The nodes of a function body the importer cannot convert are named all
// at once, each with its op and reason, in the one unsupported-op shape.
func TestUnsupportedNodesNamedAtOnce(t *testing.T) {
	str := &tfpb.NodeDef{Name: "s", Op: "Const", Attr: map[string]*tfpb.AttrValue{
		"value": {Value: &tfpb.AttrValue_Tensor{Tensor: &tfpb.TensorProto{Dtype: tfpb.DataType_DT_STRING, TensorShape: &tfpb.TensorShapeProto{}}}}}}
	_, err := neutralNodes("f.pb", []*tfpb.NodeDef{
		node("body/Enter", "Enter", "x"), str, node("body/Merge", "Merge", "body/Enter"), node("body/Merge_1", "Merge", "body/Enter")}, false)
	var ue *importers.UnsupportedOpsError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v, want an *importers.UnsupportedOpsError", err)
	}
	got := ue.ByOp()
	if len(got) != 3 || got["Enter"].Node != "body/Enter" || got["Merge"].Count != 2 || got[""].Node != "s" || !strings.Contains(got[""].Reason, "DT_STRING") {
		t.Errorf("ops %+v, want Enter, Merge (2 nodes) and the string constant s", ue.Ops)
	}
	if msg := err.Error(); !strings.Contains(msg, "3 tensorflow operators") || !strings.Contains(msg, `node "s": constant of type DT_STRING`) {
		t.Errorf("message %q", msg)
	}
}
