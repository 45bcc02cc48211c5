package check

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

type builder struct {
	t *testing.T
	m *canonical.Model
	g *canonical.Graph
}

func newModel(t *testing.T, ver int64) *builder {
	m := &canonical.Model{IRVersion: 10, Graph: canonical.NewGraph("main")}
	m.SetOpset("", ver)
	return &builder{t: t, m: m, g: m.Graph}
}

func (b *builder) input(name string, dt canonical.DataType, dims ...int64) *canonical.Value {
	v, err := b.g.AddInput(name, canonical.TensorType(dt, dims))
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

func (b *builder) node(g *canonical.Graph, op string, in []*canonical.Value, out []string, attrs ...*canonical.Attribute) *canonical.Node {
	n, err := g.AddNode("n_"+op, "", op, in, out, attrs...)
	if err != nil {
		b.t.Fatal(err)
	}
	return n
}

// expect asserts that Check reports exactly one problem containing each
// fragment, on node op.
func expect(t *testing.T, m *canonical.Model, op string, fragments ...string) {
	t.Helper()
	ps := Check(m)
	if len(ps) != 1 {
		t.Fatalf("got %d problems, want 1: %v", len(ps), ps)
	}
	p := ps[0]
	if p.OpType != op || p.Index < 0 || p.Fix == "" {
		t.Errorf("problem names node %q (%s) #%d fix %q, want op %s", p.Node, p.OpType, p.Index, p.Fix, op)
	}
	for _, f := range fragments {
		if !strings.Contains(p.String(), f) {
			t.Errorf("problem %q does not mention %q", p, f)
		}
	}
}

func TestUnknownOp(t *testing.T) {
	b := newModel(t, 17)
	x := b.input("x", canonical.Float, 2)
	b.node(b.g, "Relux", []*canonical.Value{x}, []string{"y"})
	expect(t, b.m, "Relux", "unknown operator Relux")
}

func TestOpNewerThanOpset(t *testing.T) {
	b := newModel(t, 13)
	x := b.input("x", canonical.Float, 2, 3)
	b.node(b.g, "Gelu", []*canonical.Value{x}, []string{"y"})
	expect(t, b.m, "Gelu", "introduced in ai.onnx opset 20", "imports opset 13", "at least 20")
}

func TestDeprecated(t *testing.T) {
	b := newModel(t, 11)
	x := b.input("x", canonical.Float, 2, 3)
	s := b.input("s", canonical.Float, 4)
	b.node(b.g, "Upsample", []*canonical.Value{x, s}, []string{"y"})
	expect(t, b.m, "Upsample", "deprecated")
}

func TestArity(t *testing.T) {
	b := newModel(t, 17)
	x := b.input("x", canonical.Float, 2)
	b.node(b.g, "Add", []*canonical.Value{x}, []string{"y"})
	expect(t, b.m, "Add", "required input 1 (B) is missing")

	b = newModel(t, 17)
	x = b.input("x", canonical.Float, 2)
	b.node(b.g, "Relu", []*canonical.Value{x, x}, []string{"y"})
	expect(t, b.m, "Relu", "has 2 inputs", "takes 1")

	b = newModel(t, 17)
	b.node(b.g, "Concat", nil, []string{"y"}, canonical.IntAttr("axis", 0))
	expect(t, b.m, "Concat", "variadic input inputs takes at least 1")
}

func TestAttributeType(t *testing.T) {
	b := newModel(t, 17)
	x := b.input("x", canonical.Float, 2, 3)
	b.node(b.g, "Softmax", []*canonical.Value{x}, []string{"y"}, canonical.FloatAttr("axis", 1))
	expect(t, b.m, "Softmax", "attribute axis has type FLOAT", "expects INT")

	b = newModel(t, 17)
	x = b.input("x", canonical.Float, 2, 3)
	b.node(b.g, "Softmax", []*canonical.Value{x}, []string{"y"}, canonical.IntAttr("axes", 1))
	expect(t, b.m, "Softmax", "unknown attribute axes", "axis")
}

func TestMissingRequiredAttribute(t *testing.T) {
	b := newModel(t, 17)
	x := b.input("x", canonical.Float, 2, 3)
	b.node(b.g, "Cast", []*canonical.Value{x}, []string{"y"})
	expect(t, b.m, "Cast", "required attribute to (INT) is missing")
}

func TestTypeConstraint(t *testing.T) {
	b := newModel(t, 17)
	x := b.input("x", canonical.String, 2)
	b.node(b.g, "Relu", []*canonical.Value{x}, []string{"y"})
	expect(t, b.m, "Relu", "tensor(string)", "type parameter T")

	b = newModel(t, 17)
	x = b.input("x", canonical.Float, 2)
	z := b.input("z", canonical.Double, 2)
	b.node(b.g, "Add", []*canonical.Value{x, z}, []string{"y"})
	expect(t, b.m, "Add", "type parameter T is tensor(float) at input 0 (A) but tensor(double) at input 1 (B)")

	b = newModel(t, 17)
	x = b.input("x", canonical.Float, 2)
	sh := b.input("shape", canonical.Int32, 1)
	b.node(b.g, "Reshape", []*canonical.Value{x, sh}, []string{"y"})
	expect(t, b.m, "Reshape", "tensor(int32)", "requires tensor(int64)")
}

func protoModel(t *testing.T, mainNodes []*onnxpb.NodeProto) *canonical.Model {
	t.Helper()
	f := int32(canonical.Float)
	b := int32(canonical.Bool)
	vi := func(name string, et *int32) *onnxpb.ValueInfoProto {
		return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: et}}}}
	}
	mp := &onnxpb.ModelProto{
		IrVersion:   proto.Int64(10),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(17)}},
		Graph: &onnxpb.GraphProto{
			Name:   proto.String("main"),
			Node:   mainNodes,
			Input:  []*onnxpb.ValueInfoProto{vi("cond", &b), vi("x", &f)},
			Output: []*onnxpb.ValueInfoProto{vi("y", &f)},
		},
	}
	m, err := canonical.FromProto(mp, "")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func ifNode(thenUses string) *onnxpb.NodeProto {
	branch := func(name, use string) *onnxpb.AttributeProto {
		return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: &onnxpb.GraphProto{
			Name:   proto.String(name),
			Node:   []*onnxpb.NodeProto{{OpType: proto.String("Identity"), Input: []string{use}, Output: []string{name + "_out"}}},
			Output: []*onnxpb.ValueInfoProto{{Name: proto.String(name + "_out")}},
		}}
	}
	return &onnxpb.NodeProto{Name: proto.String("if"), OpType: proto.String("If"), Input: []string{"cond"}, Output: []string{"y"},
		Attribute: []*onnxpb.AttributeProto{branch("then_branch", thenUses), branch("else_branch", "x")}}
}

func TestSubgraphOuterValues(t *testing.T) {
	// A subgraph using a value defined before its node is fine.
	m := protoModel(t, []*onnxpb.NodeProto{ifNode("x")})
	if ps := Check(m); len(ps) != 0 {
		t.Fatalf("valid If flagged: %v", ps)
	}
	// An outer name defined nowhere.
	m = protoModel(t, []*onnxpb.NodeProto{ifNode("nowhere")})
	ps := Check(m)
	if len(ps) != 1 || !strings.Contains(ps[0].Msg, `input 0 "nowhere" is not defined`) || ps[0].OpType != "Identity" ||
		ps[0].Path != `graph.node[0].attribute "then_branch".g` {
		t.Fatalf("got %v", ps)
	}
	// An outer value defined after the If node.
	later := &onnxpb.NodeProto{Name: proto.String("late"), OpType: proto.String("Relu"), Input: []string{"x"}, Output: []string{"r"}}
	m = protoModel(t, []*onnxpb.NodeProto{ifNode("r"), later})
	ps = Check(m)
	if len(ps) != 1 || !strings.Contains(ps[0].Msg, "defined after the node that holds this subgraph") {
		t.Fatalf("got %v", ps)
	}
}

func TestIfBranchOutputCount(t *testing.T) {
	n := ifNode("x")
	n.Output = append(n.Output, "y2")
	m := protoModel(t, []*onnxpb.NodeProto{n})
	ps := Check(m)
	if len(ps) != 2 || !strings.Contains(ps[0].Msg, "then_branch has 1 outputs but the node has 2") || ps[0].OpType != "If" {
		t.Fatalf("got %v", ps)
	}
}

func TestFunctionBody(t *testing.T) {
	b := newModel(t, 17)
	x := b.input("x", canonical.Float, 2)
	body := canonical.NewGraph("body")
	in, err := body.AddInput("a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := body.AddNode("bad", "", "Softmax", []*canonical.Value{in}, []string{"r"}, canonical.StringAttr("axis", "1")); err != nil {
		t.Fatal(err)
	}
	body.Outputs = append(body.Outputs, body.Lookup("r"))
	f := &canonical.Function{Domain: "local", Name: "F", Body: body}
	f.OpsetImports = []canonical.OpsetID{{Domain: "", Version: 17}}
	b.m.Functions = append(b.m.Functions, f)
	b.m.SetOpset("local", 1)
	if _, err := b.g.AddNode("call", "local", "F", []*canonical.Value{x}, []string{"y"}); err != nil {
		t.Fatal(err)
	}
	ps := Check(b.m)
	if len(ps) != 1 || ps[0].Path != `functions[0] "local.F"` || !strings.Contains(ps[0].Msg, "attribute axis has type STRING") {
		t.Fatalf("got %v", ps)
	}
	if err := Error(ps); err == nil || !strings.Contains(err.Error(), "1 schema problem") {
		t.Errorf("Error() = %v", err)
	}
}

func TestSchemaExcludesScoping(t *testing.T) {
	m := protoModel(t, []*onnxpb.NodeProto{ifNode("nowhere")})
	if ps := Schema(m); len(ps) != 0 {
		t.Errorf("Schema reports scoping problems that Validate already lists: %v", ps)
	}
	if len(canonical.Validate(m)) == 0 {
		t.Error("Validate does not report the undefined name")
	}
	b := newModel(t, 17)
	x := b.input("x", canonical.Float, 2)
	b.node(b.g, "Relux", []*canonical.Value{x}, []string{"y"})
	ps := Schema(b.m)
	if len(ps) != 1 || ps[0].Node != `"n_Relux" (Relux) #0` || ps[0].Path != "graph.node[0]" {
		t.Errorf("got %#v", ps)
	}
}

func TestCustomDomainSkipped(t *testing.T) {
	b := newModel(t, 17)
	b.m.SetOpset("com.example", 1)
	x := b.input("x", canonical.Float, 2)
	if _, err := b.g.AddNode("c", "com.example", "Anything", []*canonical.Value{x, x}, []string{"y"}, canonical.IntAttr("whatever", 1)); err != nil {
		t.Fatal(err)
	}
	if ps := Check(b.m); len(ps) != 0 {
		t.Errorf("custom domain node flagged: %v", ps)
	}
}
