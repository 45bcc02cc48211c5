package onnxtext

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"google.golang.org/protobuf/proto"
)

func mustParse(t *testing.T, src string) *onnxpb.ModelProto {
	t.Helper()
	m, err := Parse("test.onnxtxt", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return m
}

// roundTrip checks that a parsed model is expressible and survives Format→Parse.
func roundTrip(t *testing.T, m *onnxpb.ModelProto) {
	t.Helper()
	if err := Expressible(m); err != nil {
		t.Fatalf("Expressible of a parsed model: %v", err)
	}
	text, err := Format(m)
	if err != nil {
		t.Fatalf("Format: %v", err)
	}
	back, err := Parse("formatted", text)
	if err != nil {
		t.Fatalf("Parse(Format): %v\n%s", err, text)
	}
	if !proto.Equal(back, m) {
		t.Fatalf("round trip differs:\n%s", text)
	}
}

func dims(t *testing.T, tp *onnxpb.TypeProto) []string {
	t.Helper()
	tt := tp.GetTensorType()
	if tt == nil {
		t.Fatalf("not a tensor type: %v", tp)
	}
	var out []string
	for _, d := range tt.GetShape().GetDim() {
		switch v := d.Value.(type) {
		case *onnxpb.TensorShapeProto_Dimension_DimParam:
			out = append(out, v.DimParam)
		case *onnxpb.TensorShapeProto_Dimension_DimValue:
			out = append(out, strconv.FormatInt(v.DimValue, 10))
		default:
			out = append(out, "?")
		}
	}
	return out
}

// The example from Syntax.md.
func TestParseSyntaxMDExample(t *testing.T) {
	m := mustParse(t, `
<
  ir_version: 7,
  opset_import: [ "" : 10 ]
>
agraph (float[N, 128] X, float[128, 10] W, float[10] B) => (float[N, 10] C)
{
    T = MatMul(X, W)
    S = Add(T, B)
    C = Softmax(S)
}
`)
	if m.GetIrVersion() != 7 {
		t.Errorf("ir_version = %d, want 7", m.GetIrVersion())
	}
	if len(m.OpsetImport) != 1 || m.OpsetImport[0].Domain == nil || m.OpsetImport[0].GetDomain() != "" || m.OpsetImport[0].GetVersion() != 10 {
		t.Errorf("opset_import = %v", m.OpsetImport)
	}
	g := m.GetGraph()
	if g.GetName() != "agraph" || len(g.Input) != 3 || len(g.Output) != 1 || len(g.Node) != 3 {
		t.Fatalf("graph = %v", g)
	}
	if got := strings.Join(dims(t, g.Input[0].Type), ","); got != "N,128" {
		t.Errorf("X dims = %s", got)
	}
	if g.Input[0].GetType().GetTensorType().GetElemType() != int32(onnxpb.TensorProto_FLOAT) {
		t.Errorf("X elem type = %d", g.Input[0].GetType().GetTensorType().GetElemType())
	}
	want := []struct{ op, in, out string }{{"MatMul", "X,W", "T"}, {"Add", "T,B", "S"}, {"Softmax", "S", "C"}}
	for i, w := range want {
		n := g.Node[i]
		if n.GetOpType() != w.op || strings.Join(n.Input, ",") != w.in || strings.Join(n.Output, ",") != w.out {
			t.Errorf("node %d = %v, want %v", i, n, w)
		}
		if n.Domain != nil {
			t.Errorf("node %d domain set to %q, want unset", i, n.GetDomain())
		}
	}
	roundTrip(t, m)
}

func TestParseInitializersAndValueInfos(t *testing.T) {
	m := mustParse(t, `
<ir_version: 8, opset_import: ["" : 18, "com.microsoft": 1], producer_name: "hand", model_version: 3,
 doc_string: "a \"quoted\" doc", metadata_props: ["author": "me", "k": ""]>
g (float[N] X, float[2] W1 = {1.5, -2}, int64 k = {7}) => (float[N] Y)
   <float[2] W2 = {0.25, 1e-3}, float[N] T, string[2] names = {"a", "b\\c"}, int8[3] r = raw {-1, 0, 127}>
{
   T = Mul (X, W1)   # a comment
   [label] Y = com.microsoft.Fused (T, W2)
}
`)
	g := m.GetGraph()
	if len(g.Input) != 3 || len(g.Initializer) != 5 || len(g.ValueInfo) != 1 {
		t.Fatalf("inputs %d initializers %d value_infos %d", len(g.Input), len(g.Initializer), len(g.ValueInfo))
	}
	wantInits := []string{"W1", "k", "W2", "names", "r"}
	for i, w := range wantInits {
		if g.Initializer[i].GetName() != w {
			t.Errorf("initializer %d = %q, want %q", i, g.Initializer[i].GetName(), w)
		}
	}
	if got := g.Initializer[0].FloatData; len(got) != 2 || got[0] != 1.5 || got[1] != -2 {
		t.Errorf("W1 data = %v", got)
	}
	if got := g.Initializer[1]; len(got.Dims) != 0 || len(got.Int64Data) != 1 || got.Int64Data[0] != 7 {
		t.Errorf("k = %v", got)
	}
	if got := g.Initializer[2].FloatData; got[1] != float32(1e-3) {
		t.Errorf("W2 data = %v", got)
	}
	if got := g.Initializer[3].StringData; string(got[0]) != "a" || string(got[1]) != `b\c` {
		t.Errorf("names = %q", got)
	}
	if got := g.Initializer[4].RawData; string(got) != "\xff\x00\x7f" {
		t.Errorf("raw = %x", got)
	}
	if g.ValueInfo[0].GetName() != "T" {
		t.Errorf("value_info = %v", g.ValueInfo[0])
	}
	if n := g.Node[1]; n.GetName() != "label" || n.GetDomain() != "com.microsoft" || n.GetOpType() != "Fused" {
		t.Errorf("node 1 = %v", n)
	}
	if m.GetDocString() != `a "quoted" doc` || m.GetModelVersion() != 3 || len(m.MetadataProps) != 2 || m.MetadataProps[1].GetValue() != "" {
		t.Errorf("header = %v", m)
	}
	roundTrip(t, m)
}

func TestParseAttributesOfEveryKind(t *testing.T) {
	m := mustParse(t, `
<ir_version: 9, opset_import: ["" : 18]>
g (float[2] X) => (float[2] Y) {
   Y = Custom <i = 3, f = 2.5, fi: float = 2, s = "str", ints = [1, -2, 3], floats = [1.0, 2.5],
               floats2: floats = [1, 2], strs = ["a", "b"], t = float[2] {1, 2}, tn = int64[1] named {5},
               ts: tensors = [float {1}, int32[2] {3, 4}], tp: type_proto = seq(float[N]),
               tps = [float[2], map(int64, string)], e: ints = [], inf = -inf, n = nan,
               g = sub () => (float y) { y = Constant <value = float {1}> () },
               gs = [a () => (float ya) { ya = Constant <value_float = 1.0> () }, b () => () {}]> (X)
}
`)
	attrs := m.GetGraph().GetNode()[0].GetAttribute()
	byName := map[string]*onnxpb.AttributeProto{}
	for _, a := range attrs {
		byName[a.GetName()] = a
	}
	check := func(name string, typ onnxpb.AttributeProto_AttributeType) *onnxpb.AttributeProto {
		t.Helper()
		a := byName[name]
		if a == nil {
			t.Fatalf("attribute %s missing", name)
		}
		if a.GetType() != typ {
			t.Errorf("attribute %s type %s, want %s", name, a.GetType(), typ)
		}
		return a
	}
	if a := check("i", onnxpb.AttributeProto_INT); a.GetI() != 3 {
		t.Errorf("i = %d", a.GetI())
	}
	if a := check("f", onnxpb.AttributeProto_FLOAT); a.GetF() != 2.5 {
		t.Errorf("f = %v", a.GetF())
	}
	if a := check("fi", onnxpb.AttributeProto_FLOAT); a.GetF() != 2 {
		t.Errorf("fi = %v", a.GetF())
	}
	if a := check("s", onnxpb.AttributeProto_STRING); string(a.GetS()) != "str" {
		t.Errorf("s = %q", a.GetS())
	}
	if a := check("ints", onnxpb.AttributeProto_INTS); len(a.Ints) != 3 || a.Ints[1] != -2 {
		t.Errorf("ints = %v", a.Ints)
	}
	check("floats", onnxpb.AttributeProto_FLOATS)
	if a := check("floats2", onnxpb.AttributeProto_FLOATS); len(a.Floats) != 2 || a.Floats[1] != 2 {
		t.Errorf("floats2 = %v", a.Floats)
	}
	check("strs", onnxpb.AttributeProto_STRINGS)
	if a := check("t", onnxpb.AttributeProto_TENSOR); a.T.Name != nil || len(a.T.Dims) != 1 || a.T.Dims[0] != 2 || len(a.T.FloatData) != 2 {
		t.Errorf("t = %v", a.T)
	}
	if a := check("tn", onnxpb.AttributeProto_TENSOR); a.T.GetName() != "named" || a.T.Int64Data[0] != 5 {
		t.Errorf("tn = %v", a.T)
	}
	if a := check("ts", onnxpb.AttributeProto_TENSORS); len(a.Tensors) != 2 || a.Tensors[1].Int32Data[1] != 4 {
		t.Errorf("ts = %v", a.Tensors)
	}
	if a := check("tp", onnxpb.AttributeProto_TYPE_PROTO); a.Tp.GetSequenceType() == nil {
		t.Errorf("tp = %v", a.Tp)
	}
	if a := check("tps", onnxpb.AttributeProto_TYPE_PROTOS); len(a.TypeProtos) != 2 || a.TypeProtos[1].GetMapType().GetKeyType() != int32(onnxpb.TensorProto_INT64) {
		t.Errorf("tps = %v", a.TypeProtos)
	}
	if a := check("e", onnxpb.AttributeProto_INTS); len(a.Ints) != 0 {
		t.Errorf("e = %v", a.Ints)
	}
	if a := check("inf", onnxpb.AttributeProto_FLOAT); !math.IsInf(float64(a.GetF()), -1) {
		t.Errorf("inf = %v", a.GetF())
	}
	if a := check("n", onnxpb.AttributeProto_FLOAT); !math.IsNaN(float64(a.GetF())) {
		t.Errorf("n = %v", a.GetF())
	}
	if a := check("g", onnxpb.AttributeProto_GRAPH); a.G.GetName() != "sub" || len(a.G.Node) != 1 {
		t.Errorf("g = %v", a.G)
	}
	if a := check("gs", onnxpb.AttributeProto_GRAPHS); len(a.Graphs) != 2 || a.Graphs[1].GetName() != "b" {
		t.Errorf("gs = %v", a.Graphs)
	}
	roundTrip(t, m)
}

func TestParseTypes(t *testing.T) {
	m := mustParse(t, `
<ir_version: 9, opset_import: ["" : 18]>
types (seq(float[N]) a, map(int64, seq(string)) b, optional(seq(float)) c, sparse_tensor(float[2,3]) d,
       float[] unknown_rank, float scalar, float[?, "batch size", 0, -1] dimsx, bfloat16[1] bf, float16 h,
       float8e4m3fn f8, float8e4m3fnuz f8b, float8e5m2 f8c, float8e5m2fnuz f8d, float8e8m0 f8e,
       int4[2] i4, uint4[2] u4, float4e2m1 f4, int2 i2, uint2 u2, complex64 c64, complex128 c128, untyped) => () {
}
`)
	in := m.GetGraph().GetInput()
	if in[0].GetType().GetSequenceType().GetElemType().GetTensorType() == nil {
		t.Errorf("a = %v", in[0].Type)
	}
	if mt := in[1].GetType().GetMapType(); mt.GetKeyType() != int32(onnxpb.TensorProto_INT64) || mt.GetValueType().GetSequenceType() == nil {
		t.Errorf("b = %v", in[1].Type)
	}
	if in[2].GetType().GetOptionalType().GetElemType().GetSequenceType() == nil {
		t.Errorf("c = %v", in[2].Type)
	}
	if st := in[3].GetType().GetSparseTensorType(); st.GetElemType() != 1 || len(st.GetShape().GetDim()) != 2 {
		t.Errorf("d = %v", in[3].Type)
	}
	if in[4].GetType().GetTensorType().Shape != nil {
		t.Errorf("unknown rank has a shape: %v", in[4].Type)
	}
	if s := in[5].GetType().GetTensorType().Shape; s == nil || len(s.Dim) != 0 {
		t.Errorf("scalar shape = %v", s)
	}
	if got := strings.Join(dims(t, in[6].Type), "|"); got != "?|batch size|0|-1" {
		t.Errorf("dims = %s", got)
	}
	wantTypes := map[string]onnxpb.TensorProto_DataType{"bf": onnxpb.TensorProto_BFLOAT16, "h": onnxpb.TensorProto_FLOAT16,
		"f8": onnxpb.TensorProto_FLOAT8E4M3FN, "f8e": onnxpb.TensorProto_FLOAT8E8M0, "i4": onnxpb.TensorProto_INT4,
		"u4": onnxpb.TensorProto_UINT4, "f4": onnxpb.TensorProto_FLOAT4E2M1, "i2": onnxpb.TensorProto_INT2,
		"c128": onnxpb.TensorProto_COMPLEX128}
	for _, vi := range in {
		if w, ok := wantTypes[vi.GetName()]; ok && vi.GetType().GetTensorType().GetElemType() != int32(w) {
			t.Errorf("%s elem type = %d, want %s", vi.GetName(), vi.GetType().GetTensorType().GetElemType(), w)
		}
	}
	if last := in[len(in)-1]; last.GetName() != "untyped" || last.Type != nil {
		t.Errorf("untyped input = %v", last)
	}
	roundTrip(t, m)
}

func TestParseNodeForms(t *testing.T) {
	m := mustParse(t, `
g ("my input", float "float") => (y) {
   [] a, , b = .Split ("my input", , "float")
   [n2] = local.sub.Op:v2 (a) <k = 1>
   "out put" = Op ()
   y = Identity (x,)
}
`)
	if m.IrVersion != nil || m.OpsetImport != nil {
		t.Errorf("header fields set without a header: %v", m)
	}
	nodes := m.GetGraph().GetNode()
	n0 := nodes[0]
	if n0.Name == nil || n0.GetName() != "" || strings.Join(n0.Output, "|") != "a||b" || strings.Join(n0.Input, "|") != "my input||float" {
		t.Errorf("node 0 = %v", n0)
	}
	if n0.Domain == nil || n0.GetDomain() != "" {
		t.Errorf("node 0 domain should be set to empty: %v", n0.Domain)
	}
	n1 := nodes[1]
	if n1.GetName() != "n2" || len(n1.Output) != 0 || n1.GetDomain() != "local.sub" || n1.GetOpType() != "Op" || n1.GetOverload() != "v2" || len(n1.Attribute) != 1 {
		t.Errorf("node 1 = %v", n1)
	}
	if nodes[2].Output[0] != "out put" {
		t.Errorf("node 2 = %v", nodes[2])
	}
	if strings.Join(nodes[3].Input, "|") != "x" {
		t.Errorf("trailing comma: node 3 inputs = %q", nodes[3].Input)
	}
	roundTrip(t, m)
}

func TestParseFunctions(t *testing.T) {
	m := mustParse(t, `
<ir_version: 8, opset_import: ["" : 18, "local" : 1]>
main (float[N] X) => (float[N] Y) {
   Y = local.Selu <alpha = 2.0> (X)
}

<domain: "local", opset_import: ["" : 18], doc_string: "selu">
Selu <alpha, gamma: float = 1.05> (X) => (float C) <float T> {
   Alpha = Constant <value_float: float = @alpha> ()
   Gamma = Constant <value_float: float = @gamma> ()
   T = Mul (X, Alpha)
   C = Mul (T, Gamma)
}

<domain: "local", overload: "v2">
Other (x) => (y) {
   y = Identity (x)
}
`)
	if len(m.Functions) != 2 {
		t.Fatalf("functions = %d", len(m.Functions))
	}
	f := m.Functions[0]
	if f.GetName() != "Selu" || f.GetDomain() != "local" || f.GetDocString() != "selu" || len(f.OpsetImport) != 1 {
		t.Errorf("function = %v", f)
	}
	if strings.Join(f.Attribute, ",") != "alpha" || len(f.AttributeProto) != 1 || f.AttributeProto[0].GetName() != "gamma" || f.AttributeProto[0].GetF() != float32(1.05) {
		t.Errorf("function attributes = %v / %v", f.Attribute, f.AttributeProto)
	}
	if len(f.ValueInfo) != 2 || f.ValueInfo[0].GetName() != "C" || f.ValueInfo[1].GetName() != "T" {
		t.Errorf("function value_info = %v", f.ValueInfo)
	}
	ref := f.Node[0].Attribute[0]
	if ref.GetRefAttrName() != "alpha" || ref.GetType() != onnxpb.AttributeProto_FLOAT || ref.F != nil {
		t.Errorf("attribute reference = %v", ref)
	}
	if m.Functions[1].GetOverload() != "v2" || m.Functions[1].OpsetImport != nil {
		t.Errorf("function 2 = %v", m.Functions[1])
	}
	roundTrip(t, m)

	fn, err := ParseFunction("f", []byte(`<domain: "d"> F (a) => (b) { b = Neg (a) }`))
	if err != nil || fn.GetName() != "F" || fn.GetDomain() != "d" {
		t.Errorf("ParseFunction = %v, %v", fn, err)
	}
	n, err := ParseNode("n", []byte(`y = Add <axis = 1> (a, b)`))
	if err != nil || n.GetOpType() != "Add" || n.Attribute[0].GetI() != 1 {
		t.Errorf("ParseNode = %v, %v", n, err)
	}
	g, err := ParseGraph("g", []byte(`g (float x) => (float y) { y = Neg (x) }`))
	if err != nil || g.GetName() != "g" || len(g.Node) != 1 {
		t.Errorf("ParseGraph = %v, %v", g, err)
	}
}

func TestParseTensorData(t *testing.T) {
	m := mustParse(t, `
g () => () <
   float16[2] h = {15360, 48128}, bfloat16[1] b = raw {16256}, uint64[2] u = {18446744073709551615, 0},
   uint32[1] u32 = raw {4294967295}, double[2] d = {1e300, -0}, complex64[1] c = {1, 2},
   bool[2] bo = {1, 0}, int4[3] i4 = raw "f107", float[2] ext = ["location": "w.bin", "offset": "0"],
   float[2] fr = raw {1.5, -inf}, float[0] empty = {}, int64[2] neg = raw {-9223372036854775808, 9223372036854775807}
> {
}
`)
	inits := m.GetGraph().GetInitializer()
	byName := map[string]*onnxpb.TensorProto{}
	for _, x := range inits {
		byName[x.GetName()] = x
	}
	if got := byName["h"].Int32Data; len(got) != 2 || got[0] != 15360 {
		t.Errorf("h = %v", got)
	}
	if got := byName["b"].RawData; string(got) != "\x80\x3f" {
		t.Errorf("b raw = %x", got)
	}
	if got := byName["u"].Uint64Data; got[0] != math.MaxUint64 {
		t.Errorf("u = %v", got)
	}
	if got := byName["u32"].RawData; string(got) != "\xff\xff\xff\xff" {
		t.Errorf("u32 = %x", got)
	}
	if got := byName["d"].DoubleData; got[0] != 1e300 || !math.Signbit(got[1]) {
		t.Errorf("d = %v", got)
	}
	if got := byName["i4"].RawData; string(got) != "\xf1\x07" {
		t.Errorf("i4 = %x", got)
	}
	if e := byName["ext"]; e.GetDataLocation() != onnxpb.TensorProto_EXTERNAL || len(e.ExternalData) != 2 || e.ExternalData[0].GetValue() != "w.bin" {
		t.Errorf("ext = %v", e)
	}
	if got := byName["empty"]; len(got.Dims) != 1 || got.Dims[0] != 0 || got.RawData != nil {
		t.Errorf("empty = %v", got)
	}
	roundTrip(t, m)
}

// Text as onnx.printer writes it parses too.
func TestParseOnnxPrinterOutput(t *testing.T) {
	m := mustParse(t, `<
   ir_version: 8,
   opset_import: ["" : 13, "ai.onnx.ml" : 3],
   producer_name: "backend-test"
>
test_if (bool cond) => (float[5] res) {
   res = If (cond) <else_branch: graph = else_body () => (float[5] else_out) {
      else_out = Constant <value: tensor = float[5] {5,4,3,2,1}> ()
   }, then_branch: graph = then_body () => (float[5] then_out) {
      then_out = Constant <value: tensor = float[5] {1,2,3,4,5}> ()
   }>
}
`)
	a := m.GetGraph().GetNode()[0].GetAttribute()
	if len(a) != 2 || a[0].GetG().GetName() != "else_body" || a[1].GetG().GetNode()[0].GetAttribute()[0].GetT().FloatData[4] != 5 {
		t.Errorf("If attributes = %v", a)
	}
	roundTrip(t, m)
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"g (float x) => (float y) {\n  y = Neg (x\n}", "test.onnxtxt:3:1: expected \")\" to close the node inputs"},
		{"<ir_version: x> g () => () {}", "test.onnxtxt:1:14: expected integer"},
		{"<bogus: 1> g () => () {}", "unknown model header key"},
		{"g (float[N] x = {1}) => () {}", "numeric dimensions"},
		{"g () => () { y = Op <a = []> () }", "needs a type annotation"},
		{"g () => () { y = Op <a: int = 1.5> () }", "expected integer"},
		{"g () => () { y = Op <a: ints = 1> () }", "needs a list value"},
		{"g () => () { y = Op <a = [1, \"s\"]> () }", "does not match"},
		{"g () => () <int8[1] t = {3000000000}> {}", "out of int32 range"},
		{"g () => () <int8[1] t = raw {300}> {}", "out of range"},
		{"g () => () <int64[1] t = {9223372036854775808}> {}", "out of int64 range"},
		{"g () => () <float[1] t = {1e39}> {}", "out-of-range float"},
		{"g () => () { y = Op <a = 99999999999999999999> () }", "out of int64 range"},
		{"g () => () {", "expected \"=\" after node outputs, found end of input"},
		{"g (float x) => () {} trailing", "expected \"(\" to open the function inputs"},
		{`g ("unterminated) => () {}`, "unterminated string literal"},
		{"g () => () { y = Op <a: sparse_tensor = 1> () }", "sparse tensor"},
		{"g (map(float[2], int64) m) => () {}", "expected \",\" after the map key type"},
	}
	for _, c := range cases {
		_, err := Parse("test.onnxtxt", []byte(c.src))
		if err == nil {
			t.Errorf("Parse(%q) succeeded, want error containing %q", c.src, c.want)
			continue
		}
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) error %T, want *SyntaxError", c.src, err)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want it to contain %q", c.src, err, c.want)
		}
	}
}
