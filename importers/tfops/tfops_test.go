package tfops

import (
	"errors"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers/tfops/onnxb"
)

// A GraphDef-style graph (Const values inline in the value attr, no
// signature) converts: inputs are the Placeholders, outputs the unread
// nodes, NHWC kept at both ends with one Transpose each way.
func TestGraphDefStyle(t *testing.T) {
	w := canonical.NewTensor("", canonical.Float, []int64{1, 1, 2, 3}, onnxb.F32Bytes([]float32{1, 2, 3, 4, 5, 6}))
	g := &Graph{Nodes: []Node{
		{Name: "x", Op: "Placeholder", Attrs: map[string]Attr{"dtype": {Type: "DT_FLOAT"}, "shape": {Shape: &Shape{Dims: []int64{-1, 4, 4, 2}}}}},
		{Name: "w", Op: "Const", Attrs: map[string]Attr{"value": {Tensor: w}}},
		{Name: "conv", Op: "Conv2D", Inputs: []string{"x", "w"}, Attrs: map[string]Attr{
			"padding": {S: []byte("SAME")}, "strides": {List: &AttrList{I: []int64{1, 1, 1, 1}}}}},
		{Name: "relu", Op: "Relu", Inputs: []string{"conv:0", "^w"}},
	}}
	mp, err := Convert(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, n := range mp.GetGraph().GetNode() {
		ops = append(ops, n.GetOpType())
	}
	if got := strings.Join(ops, ","); got != "Transpose,Conv,Relu,Transpose,Identity" {
		t.Errorf("ops %s", got)
	}
	if mp.GetGraph().GetOutput()[0].GetName() != "relu" || mp.GetGraph().GetInput()[0].GetName() != "x" {
		t.Errorf("io %v %v", mp.GetGraph().GetInput(), mp.GetGraph().GetOutput())
	}
}

// An unmapped op is an *OpError naming the op and the node.
func TestUnmappedOp(t *testing.T) {
	g := &Graph{Nodes: []Node{
		{Name: "x", Op: "Placeholder"},
		{Name: "y", Op: "Bucketize", Inputs: []string{"x"}},
	}}
	_, err := Convert(g, Options{File: "frozen.pb"})
	var oe *OpError
	if !errors.As(err, &oe) || oe.Op != "Bucketize" || oe.Node != "y" || !strings.Contains(err.Error(), "frozen.pb") {
		t.Errorf("%v", err)
	}
}
