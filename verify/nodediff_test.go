package verify

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// nodeNamed returns the node of m named name.
func nodeNamed(t *testing.T, m *canonical.Model, name string) *canonical.Node {
	t.Helper()
	for _, n := range m.Graph.Nodes {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no node %q", name)
	return nil
}

// bisectDiff compares ref and cand with bisection and returns the first
// divergent node, which must carry a diff.
func bisectDiff(t *testing.T, ref, cand *canonical.Model) *DivergentNode {
	t.Helper()
	rep, err := Compare(context.Background(), ModelSide("ref.onnx", ref), ModelSide("cand.onnx", cand),
		Options{Samples: 1, Gen: GenOptions{Seed: 11}, Bisect: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Bisect == nil || rep.Bisect.First == nil {
		t.Fatalf("no divergent node: %s", rep.Summary)
	}
	if rep.Bisect.First.Diff == nil {
		t.Fatal("divergent node without a diff")
	}
	// Every format renders the diff.
	for _, w := range []func(*bytes.Buffer) error{
		func(b *bytes.Buffer) error { return WriteJSON(b, rep) },
		func(b *bytes.Buffer) error { return WriteMarkdown(b, rep) },
		func(b *bytes.Buffer) error { return WriteHTML(b, rep) },
		func(b *bytes.Buffer) error { return WriteJUnit(b, rep) },
	} {
		var buf bytes.Buffer
		if err := w(&buf); err != nil {
			t.Fatal(err)
		}
	}
	return rep.Bisect.First
}

func inputAt(t *testing.T, d *NodeDiff, i int) InputDiff {
	t.Helper()
	for _, in := range d.Inputs {
		if in.Index == i {
			return in
		}
	}
	t.Fatalf("diff has no input %d: %+v", i, d.Inputs)
	return InputDiff{}
}

func TestNodeDiffAttribute(t *testing.T) {
	// B's hidden Gemm gets alpha 1.01 (A leaves it at the default 1).
	ref := loadFixture(t, "mlp_opset17")
	cand := loadFixture(t, "mlp_opset17")
	nodeNamed(t, cand, "/2/Gemm").SetAttr(canonical.FloatAttr("alpha", 1.01))
	f := bisectDiff(t, ref, cand)
	d := f.Diff
	if f.Node != "/2/Gemm" || !d.Counterpart || d.BNode != "/2/Gemm" || d.OpTypeA != "Gemm" || d.OpTypeB != "Gemm" {
		t.Fatalf("node %q diff %+v", f.Node, d)
	}
	if d.DomainA != "ai.onnx" || d.VersionA != 13 || d.VersionB != 13 || d.OpsetA != 17 || d.OpsetB != 17 {
		t.Errorf("domain %q versions %d/%d opsets %d/%d, want ai.onnx Gemm-13 at opset 17", d.DomainA, d.VersionA, d.VersionB, d.OpsetA, d.OpsetB)
	}
	// The fixture sets alpha 1 explicitly (torch export).
	if len(d.Attrs) != 1 || d.Attrs[0] != (AttrDiff{Name: "alpha", A: "1", B: "1.01"}) {
		t.Errorf("attrs %+v, want alpha 1 vs 1.01", d.Attrs)
	}
	want := []InputDiff{
		{Index: 0, Name: "/1/Relu_output_0", BName: "/1/Relu_output_0", A: "float[1,64]", B: "float[1,64]"},
		{Index: 1, Name: "2.weight", BName: "2.weight", A: "float[64,64]", B: "float[64,64]"},
		{Index: 2, Name: "2.bias", BName: "2.bias", A: "float[64]", B: "float[64]"},
	}
	if len(d.Inputs) != len(want) {
		t.Fatalf("inputs %+v", d.Inputs)
	}
	for i, w := range want {
		// The batch of the generated input is the model's own; read it
		// from the report instead of assuming 1.
		if i == 0 {
			batch := strings.TrimSuffix(strings.TrimPrefix(d.Inputs[0].A, "float["), ",64]")
			if _, err := strconv.Atoi(batch); err != nil {
				t.Fatalf("input 0 type %q, want float[N,64]", d.Inputs[0].A)
			}
			w.A, w.B = "float["+batch+",64]", "float["+batch+",64]"
		}
		if d.Inputs[i] != w {
			t.Errorf("input %d: %+v, want %+v", i, d.Inputs[i], w)
		}
	}
	if d.Same {
		t.Error("Same is set although alpha differs")
	}
	if h := d.Headline(); !strings.Contains(h, "attribute alpha: 1 vs 1.01") {
		t.Errorf("headline %q", h)
	}

	// An absent attribute counts as its schema default: equal to an
	// explicit 1, different from 1.01.
	na := nodeNamed(t, ref, "/2/Gemm")
	na.DeleteAttr("alpha")
	if d := diffNode(na, ref, loadFixture(t, "mlp_opset17"), typeTable{}, typeTable{}); len(d.Attrs) != 0 || !d.Same {
		t.Errorf("absent alpha vs explicit 1: attrs %+v same %v", d.Attrs, d.Same)
	}
	d = diffNode(na, ref, cand, typeTable{}, typeTable{})
	if len(d.Attrs) != 1 || d.Attrs[0] != (AttrDiff{Name: "alpha", A: "1 (default)", B: "1.01"}) {
		t.Errorf("absent alpha vs 1.01: attrs %+v", d.Attrs)
	}
}

// transposed returns the float32 [r, c] tensor raw transposed to [c, r]
// and scaled by f.
func transposed(t *testing.T, raw []byte, r, c int, f float32) []byte {
	t.Helper()
	if len(raw) != 4*r*c {
		t.Fatalf("%d bytes for [%d,%d]", len(raw), r, c)
	}
	out := make([]byte, len(raw))
	for i := range r {
		for j := range c {
			x := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*(i*c+j):]))
			binary.LittleEndian.PutUint32(out[4*(j*r+i):], math.Float32bits(x*f))
		}
	}
	return out
}

func TestNodeDiffTransBAndScaledWeight(t *testing.T) {
	// B's last Gemm takes its weight transposed (transB 0, [64,10]) and
	// scaled by 1.01.
	ref := loadFixture(t, "mlp_opset17")
	cand := loadFixture(t, "mlp_opset17")
	n := nodeNamed(t, cand, "/4/Gemm")
	n.SetAttr(canonical.IntAttr("transB", 0))
	w := cand.Graph.Lookup("4.weight")
	raw, err := w.Const.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	w.Const.SetBytes(transposed(t, raw, 10, 64, 1.01))
	w.Const.Dims = []int64{64, 10}
	w.Type = canonical.TensorType(canonical.Float, []int64{64, 10})

	f := bisectDiff(t, ref, cand)
	d := f.Diff
	if f.Node != "/4/Gemm" || d.BNode != "/4/Gemm" {
		t.Fatalf("first divergent node %q, counterpart %q; want /4/Gemm", f.Node, d.BNode)
	}
	if len(d.Attrs) != 1 || d.Attrs[0] != (AttrDiff{Name: "transB", A: "1", B: "0"}) {
		t.Errorf("attrs %+v, want transB 1 vs 0", d.Attrs)
	}
	in := inputAt(t, d, 1)
	if in.Name != "4.weight" || in.A != "float[10,64]" || in.B != "float[64,10]" || !in.Differs {
		t.Errorf("weight input %+v, want float[10,64] vs float[64,10], differs", in)
	}
	if in.FirstDiff != "" {
		t.Errorf("first_diff %q for tensors of other shapes", in.FirstDiff)
	}
	if b := inputAt(t, d, 2); b.A != "float[10]" || b.B != "float[10]" || b.Differs {
		t.Errorf("bias input %+v", b)
	}
	h := d.Headline()
	if !strings.Contains(h, "attribute transB: 1 vs 0") || !strings.Contains(h, "input 1: float[10,64] vs float[64,10]") {
		t.Errorf("headline %q", h)
	}
}

func TestNodeDiffScaledInitializer(t *testing.T) {
	// Only the weight's values differ: the node is the same, and the diff
	// points at the first differing weight element.
	ref := loadFixture(t, "mlp_opset17")
	cand := scaledCopy(t, "mlp_opset17", "2.weight", 1.01)
	f := bisectDiff(t, ref, cand)
	d := f.Diff
	if !d.Same || len(d.Attrs) != 0 {
		t.Errorf("same %v attrs %+v, want the same node", d.Same, d.Attrs)
	}
	in := inputAt(t, d, 1)
	raw, err := ref.Graph.Lookup("2.weight").Const.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	// Element [0,0] is nonzero in the fixture, so it is the first that
	// differs: x vs 1.01x.
	x := math.Float32frombits(binary.LittleEndian.Uint32(raw))
	if x == 0 {
		t.Fatal("fixture weight [0,0] is 0")
	}
	prefix := "[0,0]: "
	if !strings.HasPrefix(in.FirstDiff, prefix) {
		t.Fatalf("first_diff %q, want it at [0,0]", in.FirstDiff)
	}
	var a, b float64
	parts := strings.Split(strings.TrimPrefix(in.FirstDiff, prefix), " vs ")
	if len(parts) != 2 {
		t.Fatalf("first_diff %q", in.FirstDiff)
	}
	if a, err = strconv.ParseFloat(parts[0], 64); err != nil {
		t.Fatal(err)
	}
	if b, err = strconv.ParseFloat(parts[1], 64); err != nil {
		t.Fatal(err)
	}
	if math.Abs(a-float64(x)) > 1e-6*math.Abs(float64(x)) || math.Abs(b/a-1.01) > 1e-5 {
		t.Errorf("first_diff %g vs %g, want %g vs 1.01 times that", a, b, x)
	}
	if h := d.Headline(); !strings.Contains(h, "initializer 2.weight differs (first at [0,0]") {
		t.Errorf("headline %q", h)
	}
}

func TestNodeDiffOpType(t *testing.T) {
	// B computes /1/Relu_output_0 with LeakyRelu (alpha 0.2).
	ref := loadFixture(t, "mlp_opset17")
	cand := loadFixture(t, "mlp_opset17")
	n := nodeNamed(t, cand, "/1/Relu")
	n.OpType = "LeakyRelu"
	n.SetAttr(canonical.FloatAttr("alpha", 0.2))
	f := bisectDiff(t, ref, cand)
	d := f.Diff
	if f.Node != "/1/Relu" || f.OpType != "Relu" {
		t.Fatalf("first divergent node %q (%s), want /1/Relu", f.Node, f.OpType)
	}
	if d.OpTypeA != "Relu" || d.OpTypeB != "LeakyRelu" || d.VersionA != 14 || d.VersionB != 16 || d.Same {
		t.Errorf("ops %s-%d vs %s-%d same %v, want Relu-14 vs LeakyRelu-16", d.OpTypeA, d.VersionA, d.OpTypeB, d.VersionB, d.Same)
	}
	if len(d.Attrs) != 1 || d.Attrs[0] != (AttrDiff{Name: "alpha", A: "(absent)", B: "0.2"}) {
		t.Errorf("attrs %+v, want alpha (absent) vs 0.2", d.Attrs)
	}
	if in := inputAt(t, d, 0); in.Name != "/0/Gemm_output_0" || in.A != in.B || !strings.HasSuffix(in.A, ",64]") || in.Differs {
		t.Errorf("input %+v, want the same float[N,64] on both sides", in)
	}
	if h := d.Headline(); !strings.HasPrefix(h, "op Relu in A, LeakyRelu in B") {
		t.Errorf("headline %q", h)
	}
	// The Markdown and JUnit reports name both ops.
	rep := &Report{A: SideInfo{Name: "a"}, B: SideInfo{Name: "b"}, Bisect: &Bisection{First: f}}
	var md, xml bytes.Buffer
	if err := WriteMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteJUnit(&xml, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"LeakyRelu (ai.onnx LeakyRelu-16, opset 17)", "| `alpha` | `(absent)` | `0.2` |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	for _, want := range []string{`name="bisect.b_op_type" value="LeakyRelu"`, `name="bisect.attr.alpha" value="(absent) vs 0.2"`} {
		if !strings.Contains(xml.String(), want) {
			t.Errorf("JUnit lacks %q:\n%s", want, xml.String())
		}
	}
}

// smallModel builds x -> Mul(x, c) -> y at opset 17 with c a Constant
// node holding value.
func smallModel(t *testing.T, value []float32, constAsInit bool) *canonical.Model {
	t.Helper()
	g := canonical.NewGraph("g")
	x, err := g.AddInput("x", canonical.TensorType(canonical.Float, []int64{2}))
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 4*len(value))
	for i, v := range value {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	ct := canonical.NewTensor("c", canonical.Float, []int64{int64(len(value))}, raw)
	var c *canonical.Value
	if constAsInit {
		if c, err = g.AddInitializer(ct); err != nil {
			t.Fatal(err)
		}
	} else {
		n, err := g.AddNode("make_c", "", "Constant", nil, []string{"c"}, canonical.TensorAttr("value", ct))
		if err != nil {
			t.Fatal(err)
		}
		c = n.Outputs[0]
	}
	m, err := g.AddNode("mul", "", "Mul", []*canonical.Value{x, c}, []string{"y"})
	if err != nil {
		t.Fatal(err)
	}
	g.Outputs = append(g.Outputs, m.Outputs[0])
	return &canonical.Model{IRVersion: 8, OpsetImports: []canonical.OpsetID{{Domain: "", Version: 17}}, Graph: g}
}

func TestNodeDiffTensorAttributeAndNoCounterpart(t *testing.T) {
	a := smallModel(t, []float32{1, 2}, false)
	b := smallModel(t, []float32{1, 2.5}, false)
	ta, tb := typeTable{}, typeTable{}
	d := diffNode(a.Graph.Nodes[0], a, b, ta, tb)
	if !d.Counterpart || d.BNode != "make_c" || d.OpTypeB != "Constant" || d.VersionA != 13 {
		t.Fatalf("diff %+v", d)
	}
	if len(d.Attrs) != 1 || d.Attrs[0] != (AttrDiff{Name: "value", A: "float[2] {1, 2}", B: "float[2] {1, 2.5}"}) {
		t.Errorf("attrs %+v", d.Attrs)
	}
	// The same tensor compares equal.
	if d := diffNode(a.Graph.Nodes[0], a, smallModel(t, []float32{1, 2}, false), ta, tb); len(d.Attrs) != 0 || !d.Same {
		t.Errorf("equal Constant nodes: attrs %+v same %v", d.Attrs, d.Same)
	}
	// Long tensors show four values and the count.
	long := smallModel(t, []float32{1, 2, 3, 4, 5, 6}, false)
	if s, _ := attrValue(long.Graph.Nodes[0].Attributes[0]); s != "float[6] {1, 2, 3, 4, … (6 values)}" {
		t.Errorf("tensor summary %q", s)
	}
	// In B the value is an initializer: no counterpart node.
	bi := smallModel(t, []float32{1, 2.5}, true)
	d = diffNode(a.Graph.Nodes[0], a, bi, ta, tb)
	if d.Counterpart || d.BNode != "" || d.Note != `"c" is an initializer of B` {
		t.Errorf("counterpart %v %q note %q", d.Counterpart, d.BNode, d.Note)
	}
	// Declared types stand in for shapes nobody captured.
	d = diffNode(a.Graph.Nodes[1], a, b, ta, tb)
	if in := inputAt(t, d, 0); in.A != "float[2]" || in.B != "float[2]" {
		t.Errorf("input 0 %+v, want the declared float[2]", in)
	}
	if in := inputAt(t, d, 1); in.A != "?" || in.Differs {
		t.Errorf("input 1 %+v, want unknown (?) and not differing", in)
	}
}

func TestAttrValueRendering(t *testing.T) {
	for _, c := range []struct {
		a    *canonical.Attribute
		want string
	}{
		{canonical.FloatAttr("alpha", 1.01), "1.01"},
		{canonical.IntAttr("axis", -1), "-1"},
		{canonical.StringAttr("mode", "constant"), `"constant"`},
		{canonical.IntsAttr("perm", 0, 2, 1), "[0, 2, 1]"},
		{canonical.IntsAttr("pads", 1, 2, 3, 4, 5, 6, 7, 8, 9), "[1, 2, 3, 4, 5, 6, 7, 8, … (9 items)]"},
		{canonical.FloatsAttr("scales", 1, 0.5), "[1, 0.5]"},
		{canonical.StringsAttr("acts", "Tanh", "Relu"), `["Tanh", "Relu"]`},
	} {
		if got, _ := attrValue(c.a); got != c.want {
			t.Errorf("%s: %q, want %q", c.a.Name, got, c.want)
		}
	}
	// Keys tell apart values that render alike.
	_, k1 := attrValue(canonical.IntsAttr("x", 1, 2, 3, 4, 5, 6, 7, 8, 9))
	_, k2 := attrValue(canonical.IntsAttr("x", 1, 2, 3, 4, 5, 6, 7, 8, 10))
	if k1 == k2 {
		t.Error("long lists that differ after the shown items compare equal")
	}
}
