package tfops

import (
	"errors"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
)

// A GraphDef-style graph (Const values inline in the value attr, no
// signature) converts: inputs are the Placeholders, outputs the unread
// nodes, NHWC kept at both ends with one Transpose each way.
func TestGraphDefStyle(t *testing.T) {
	w := canonical.Float32Tensor("", []int64{1, 1, 2, 3}, []float32{1, 2, 3, 4, 5, 6})
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
	for _, n := range mp.Graph.Nodes {
		ops = append(ops, n.OpType)
	}
	if got := strings.Join(ops, ","); got != "Transpose,Conv,Relu,Transpose,Identity" {
		t.Errorf("ops %s", got)
	}
	if mp.Graph.Outputs[0].Name != "relu" || mp.Graph.Inputs[0].Name != "x" {
		t.Errorf("io %v %v", mp.Graph.Inputs, mp.Graph.Outputs)
	}
}

// An unmapped op is an *OpError naming the op and the node; every
// unmapped op of the graph (here three, one used twice, one inside a
// library function) is listed in the one *importers.UnsupportedOpsError
// it wraps.
func TestUnmappedOp(t *testing.T) {
	g := &Graph{Nodes: []Node{
		{Name: "x", Op: "Placeholder"},
		{Name: "y", Op: "Bucketize", Inputs: []string{"x"}},
		{Name: "z", Op: "Relu", Inputs: []string{"y"}},
		{Name: "w", Op: "Bucketize", Inputs: []string{"z"}},
		{Name: "v", Op: "StatelessIf", Inputs: []string{"x", "w"}, Attrs: map[string]Attr{"then_branch": {Func: "then"}, "else_branch": {Func: "then"}}},
		{Name: "u", Op: "StringToHashBucketFast", Inputs: []string{"v"}},
	}, Functions: map[string]*Graph{"then": {Nodes: []Node{{Name: "h", Op: "HistogramFixedWidth", Inputs: []string{"a"}}},
		Inputs: []IO{{Name: "a", Tensor: "a"}}, Outputs: []IO{{Name: "output_0", Tensor: "h:out:0"}}}}}
	_, err := Convert(g, Options{File: "frozen.pb"})
	var oe *OpError
	if !errors.As(err, &oe) || !oe.Unsupported || !strings.Contains(err.Error(), "frozen.pb") {
		t.Fatalf("%v", err)
	}
	var ue *importers.UnsupportedOpsError
	if !errors.As(err, &ue) {
		t.Fatalf("%T does not wrap an *importers.UnsupportedOpsError: %v", err, err)
	}
	got := map[string]importers.UnsupportedOp{}
	for _, o := range ue.Ops {
		got[o.Op] = o
	}
	if len(got) != 3 || got["Bucketize"].Count != 2 || got["HistogramFixedWidth"].Node != "then/h" || got["StringToHashBucketFast"].Reason == "" {
		t.Errorf("unsupported ops %+v", ue.Ops)
	}
	for _, s := range []string{"3 TensorFlow operators", "Bucketize", "and 1 more", "HistogramFixedWidth", "StringToHashBucketFast"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message lacks %q:\n%v", s, err)
		}
	}
}

// Outputs that depend on a random op are named in the metadata
// MetaRandomOutputs (verification compares their distributions); the
// others are not.
func TestRandomOutputsMarked(t *testing.T) {
	shape := canonical.NewTensor("", canonical.Int32, []int64{1}, []byte{3, 0, 0, 0})
	g := &Graph{Nodes: []Node{
		{Name: "x", Op: "Placeholder", Attrs: map[string]Attr{"dtype": {Type: "DT_FLOAT"}}},
		{Name: "s", Op: "Const", Attrs: map[string]Attr{"value": {Tensor: shape}}},
		{Name: "u", Op: "RandomUniform", Inputs: []string{"s"}, Attrs: map[string]Attr{"dtype": {Type: "DT_FLOAT"}}},
		{Name: "noisy", Op: "Add", Inputs: []string{"x", "u"}},
		{Name: "clean", Op: "Relu", Inputs: []string{"x"}},
	}}
	mp, err := Convert(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, p := range mp.MetadataProps {
		if p.Key == MetaRandomOutputs {
			got = p.Value
		}
	}
	if got != "noisy" {
		t.Errorf("%s = %q, want noisy", MetaRandomOutputs, got)
	}
}
