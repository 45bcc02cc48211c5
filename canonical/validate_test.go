package canonical

import (
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

func TestValidateBackendModels(t *testing.T) {
	paths := backendModels(t)
	n := 0
	for _, p := range paths {
		_, data := readProto(t, p)
		m, err := Decode(data, filepath.Dir(p), LoadOptions{})
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if probs := Validate(m); len(probs) != 0 {
			for _, pr := range probs {
				t.Errorf("%s: %v", p, pr)
			}
			continue
		}
		n++
	}
	t.Logf("%d of %d backend-test models are valid", n, len(paths))
	if n != len(paths) {
		t.Fatalf("%d of %d models reported invalid", len(paths)-n, len(paths))
	}
}

func TestValidateReportsScopingAndOrder(t *testing.T) {
	mp := &onnxpb.ModelProto{
		IrVersion:   proto.Int64(99),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(18)}, {Domain: proto.String("ai.onnx"), Version: proto.Int64(17)}},
		Graph: &onnxpb.GraphProto{
			Input:  []*onnxpb.ValueInfoProto{valueInfo("X", ftype(2)), valueInfo("C", ftype())},
			Output: []*onnxpb.ValueInfoProto{valueInfo("Z", ftype(2))},
			Node: []*onnxpb.NodeProto{
				{OpType: proto.String("Relu"), Name: proto.String("late"), Input: []string{"Y"}, Output: []string{"Z"}},
				{OpType: proto.String("If"), Name: proto.String("if"), Input: []string{"C"}, Output: []string{"Y"},
					Attribute: []*onnxpb.AttributeProto{
						{Name: proto.String("then_branch"), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: &onnxpb.GraphProto{
							Node:   []*onnxpb.NodeProto{{OpType: proto.String("Neg"), Input: []string{"X"}, Output: []string{"X"}}},
							Output: []*onnxpb.ValueInfoProto{valueInfo("X", nil)},
						}},
						{Name: proto.String("then_branch"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(1)},
					}},
			},
		},
		Functions: []*onnxpb.FunctionProto{{Name: proto.String("F"), Domain: proto.String("d")}, {Name: proto.String("F"), Domain: proto.String("d")}},
	}
	m, err := FromProto(mp, "")
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, p := range Validate(m) {
		all = append(all, p.Error())
	}
	text := strings.Join(all, "\n")
	for _, w := range []string{
		"ir_version 99 is not supported",
		`domain "ai.onnx" is imported twice`,
		`graph.node[0].input[0]: node "late" (Relu) #0: input "Y" is produced by node "if" (If) #1, which comes later`,
		`graph.node[1].attribute "then_branch".g.node[0].output[0]`,
		`value "X" shadows a value of the same name in an enclosing graph`,
		`attribute "then_branch" is given twice`,
		"function d.F (overload \"\") is defined twice",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("Validate does not report %q; it reports:\n%s", w, text)
		}
	}
	if len(all) != 7 {
		t.Errorf("want 7 problems, got %d:\n%s", len(all), text)
	}
}
