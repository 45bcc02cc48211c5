package convert

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// The kind of a blocker comes from the error the step returned, not from
// the words of its message.
func TestBlockerKindIsTyped(t *testing.T) {
	cases := []struct {
		op   string
		err  error
		want string
	}{
		{"Softmax", needShapes("the input's rank is known", "rank unknown"), KindNeedsShapes},
		{"Scan", noAdapter("keep opset >= 9", "Scan-9 to Scan-8"), KindNoAdapter},
		{"Gelu", noExpansion("keep opset >= 20", "Gelu is missing"), KindNoAdapter}, // a function op
		{"Unique", noExpansion("keep opset >= 11", "Unique is missing"), KindNotExpressible},
		// Message words that the old text match took for other kinds.
		{"Gelu", blocked("run 'onnxconv infer' first", "there is no adapter and no rule; it has no expansion"), KindNotExpressible},
		{"Gelu", errString("no adapter"), KindNotExpressible},
	}
	for _, c := range cases {
		if got := kindOf(c.op, c.err); got != c.want {
			t.Errorf("kindOf(%s, %q) = %s, want %s", c.op, c.err, got, c.want)
		}
	}
	if fix := fixOf(needShapes("the input's rank is known", "x")); fix != "run 'onnxconv infer' first so the input's rank is known" {
		t.Errorf("needShapes fix = %q", fix)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// End to end: a Softmax-13 with axis -1 on an input of unknown rank going
// to opset 10 is blocked with KindNeedsShapes; with the rank declared it
// converts.
func TestPlanNeedsShapesKind(t *testing.T) {
	build := func(shape []int64) *canonical.Model {
		m := &canonical.Model{IRVersion: 8, OpsetImports: []canonical.OpsetID{{Domain: "", Version: 13}}, Graph: canonical.NewGraph("g")}
		var typ = canonical.TensorType(onnxpb.TensorProto_FLOAT, shape)
		if shape == nil {
			typ = nil
		}
		x, err := m.Graph.AddInput("x", typ)
		if err != nil {
			t.Fatal(err)
		}
		n, err := m.Graph.AddNode("sm", "", "Unsqueeze", []*canonical.Value{x, mustConst(t, m, []int64{-1})}, []string{"y"})
		if err != nil {
			t.Fatal(err)
		}
		m.Graph.Outputs = append(m.Graph.Outputs, n.Outputs[0])
		return m
	}
	bs, err := Plan(build(nil), Options{To: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 1 || bs[0].Kind != KindNeedsShapes || !strings.HasPrefix(bs[0].Fix, "run 'onnxconv infer' first") {
		t.Fatalf("blockers %+v, want one %s", bs, KindNeedsShapes)
	}
	if bs, err := Plan(build([]int64{2, 3}), Options{To: 10}); err != nil || len(bs) != 0 {
		t.Errorf("rank known: blockers %+v, err %v", bs, err)
	}
}

func mustConst(t *testing.T, m *canonical.Model, v []int64) *canonical.Value {
	t.Helper()
	raw := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(x))
	}
	tn := canonical.NewTensor("axes", canonical.DataType(onnxpb.TensorProto_INT64), []int64{int64(len(v))}, raw)
	c, err := m.Graph.AddInitializer(tn)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
