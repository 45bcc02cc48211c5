package infer

import (
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxtext"
)

func parseModel(t *testing.T, src string) *canonical.Model {
	t.Helper()
	mp, err := onnxtext.Parse("test.onnxtxt", []byte(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	m, err := canonical.FromProto(mp, "")
	if err != nil {
		t.Fatalf("FromProto: %v", err)
	}
	return m
}

// typeOf finds a value by name in the main graph or any subgraph.
func typeOf(t *testing.T, m *canonical.Model, name string) string {
	t.Helper()
	var find func(g *canonical.Graph) *canonical.Value
	find = func(g *canonical.Graph) *canonical.Value {
		for _, n := range g.Nodes {
			for _, o := range n.Outputs {
				if o != nil && o.Name == name {
					return o
				}
			}
			for _, sg := range n.Subgraphs() {
				if v := find(sg); v != nil {
					return v
				}
			}
		}
		return nil
	}
	v := find(m.Graph)
	if v == nil {
		t.Fatalf("no value %q", name)
	}
	if v.Type == nil {
		return "nothing"
	}
	return typeString(v.Type)
}

func inferText(t *testing.T, src string, opts Options) (*canonical.Model, *Result) {
	t.Helper()
	m := parseModel(t, src)
	res, err := Infer(m, opts)
	if err != nil {
		t.Fatalf("Infer: %v", err)
	}
	return m, res
}

func expectTypes(t *testing.T, m *canonical.Model, want map[string]string) {
	t.Helper()
	for name, w := range want {
		if got := typeOf(t, m, name); got != w {
			t.Errorf("%s: got %s, want %s", name, got, w)
		}
	}
}

func TestSymbolicDims(t *testing.T) {
	m, _ := inferText(t, `<ir_version: 8, opset_import: ["" : 18]>
g (float[N, 3, 32, 32] x, float[N, 3, 32, 32] y, float[1, 16, 1, 1] b, float[16, 3, 3, 3] w) => (float z) {
  s = Add (x, y)
  c = Conv <pads = [1, 1, 1, 1], strides = [2, 2]> (s, w)
  cb = Add (c, b)
  p = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (cb)
  sh = Shape (p)
  zero = Constant <value = int64[1] {0}> ()
  n = Gather <axis = 0> (sh, zero)
  minus1 = Constant <value = int64[1] {-1}> ()
  target = Concat <axis = 0> (n, minus1)
  r = Reshape (p, target)
  f = Flatten <axis = 1> (p)
  t = Transpose <perm = [1, 0]> (r)
  mm = MatMul (r, t)
  z = Identity (mm)
}`, Options{})
	expectTypes(t, m, map[string]string{
		"s":      "tensor(float)[N,3,32,32]",
		"c":      "tensor(float)[N,16,16,16]",
		"cb":     "tensor(float)[N,16,16,16]",
		"p":      "tensor(float)[N,16,8,8]",
		"sh":     "tensor(int64)[4]",
		"target": "tensor(int64)[2]",
		"r":      "tensor(float)[N,1024]",
		"f":      "tensor(float)[N,1024]",
		"t":      "tensor(float)[1024,N]",
		"mm":     "tensor(float)[N,N]",
	})
}

func TestBroadcastSymbols(t *testing.T) {
	m, _ := inferText(t, `<ir_version: 8, opset_import: ["" : 18]>
g (float[N, 1, 4] a, float[1, M, 4] b, float[N, M, 1] c, float[K] d, float[N, 1, 4] e) => (float[] y) {
  ab = Add (a, b)
  abc = Mul (ab, c)
  ad = Add (a, d)
  ae = Sub (a, e)
  y = Identity (abc)
}`, Options{})
	expectTypes(t, m, map[string]string{
		"ab":  "tensor(float)[N,M,4]",
		"abc": "tensor(float)[N,M,4]",
		"ad":  "tensor(float)[N,1,4]",
		"ae":  "tensor(float)[N,1,4]",
	})
}

func TestUnknownDimNames(t *testing.T) {
	src := `<ir_version: 8, opset_import: ["" : 18]>
g (float[N, 4] a) => (int64[] y) {
  y = NonZero (a)
}`
	m, _ := inferText(t, src, Options{})
	expectTypes(t, m, map[string]string{"y": "tensor(int64)[2,?]"})
	m, _ = inferText(t, src, Options{SymbolicNames: true})
	expectTypes(t, m, map[string]string{"y": "tensor(int64)[2,unk__0]"})
}

func TestConstantShapeChains(t *testing.T) {
	m, _ := inferText(t, `<ir_version: 8, opset_import: ["" : 18]>
g (float[B, 6, 8] x) => (float[] y) <int64[1] zero = {0}, int64[1] one = {1}, int64[1] ax = {1}, int64 rs = {2}, int64 rl = {11}, int64 rd = {3},
   int64[2] ed = {4, 1}, int64[3] reps = {1, 2, 3}, int64[6] pads = {0, 1, 2, 0, 1, 2},
   int64[1] ss = {1}, int64[1] se = {-1}, int64[1] sa = {2}, int64[1] sst = {2}, int64[2] sp = {3, 5}> {
  shape = Shape (x)
  b = Slice (shape, zero, one)
  hw = Constant <value = int64[2] {0, -1}> ()
  tgt = Concat <axis = 0> (b, hw)
  r = Reshape (x, tgt)
  az = Constant <value = int64[4] {2, 0, 4, 12}> ()
  r2 = Reshape <allowzero = 0> (x, az)
  u = Unsqueeze (r, ax)
  sq = Squeeze (u, ax)
  cos = ConstantOfShape <value = int64[1] {7}> (shape)
  rng = Range (rs, rl, rd)
  e = Expand (rng, ed)
  tl = Tile (x, reps)
  pd = Pad (x, pads)
  sl = Slice (x, ss, se, sa, sst)
  k = Constant <value = int64[1] {3}> ()
  tv, ti = TopK <axis = 2> (x, k)
  p1, p2 = Split <axis = 2> (x, sp)
  sz = Size (x)
  y = Identity (r)
}`, Options{})
	expectTypes(t, m, map[string]string{
		"b":   "tensor(int64)[1]",
		"tgt": "tensor(int64)[3]",
		"r":   "tensor(float)[B,6,8]",
		"r2":  "tensor(float)[2,6,4,12]",
		"u":   "tensor(float)[B,1,6,8]",
		"sq":  "tensor(float)[B,6,8]",
		"cos": "tensor(int64)[B,6,8]",
		"rng": "tensor(int64)[3]",
		"e":   "tensor(int64)[4,3]",
		"tl":  "tensor(float)[B,12,24]",
		"pd":  "tensor(float)[B,8,12]",
		"sl":  "tensor(float)[B,6,3]",
		"tv":  "tensor(float)[B,6,3]",
		"ti":  "tensor(int64)[B,6,3]",
		"p1":  "tensor(float)[B,6,3]",
		"p2":  "tensor(float)[B,6,5]",
		"sz":  "tensor(int64)[]",
	})
}

func TestInputValuesResolveShapes(t *testing.T) {
	src := `<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 6] x, int64[2] s) => (float[] y) {
  y = Reshape (x, s)
}`
	m, _ := inferText(t, src, Options{})
	expectTypes(t, m, map[string]string{"y": "tensor(float)[?,?]"})
	shape := canonical.NewTensor("s", canonical.Int64, []int64{2}, []byte{3, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	m, _ = inferText(t, src, Options{InputValues: map[string]*canonical.Tensor{"s": shape}})
	expectTypes(t, m, map[string]string{"y": "tensor(float)[3,4]"})
}

func TestControlFlowBodies(t *testing.T) {
	m, _ := inferText(t, `<ir_version: 8, opset_import: ["" : 18]>
g (bool c, float[N, 4] x, float[N, 5] init, float[3, N, 5] seq, int64 trip) => (float[] y) <int64[1] ax = {1}, int64 five = {5}, bool cond0 = {1}> {
  i = If (c) <
    then_branch = t () => (float[] to) { to = Relu (x) },
    else_branch = e () => (float[] eo) { eo = Neg (x) }>
  st, so = Scan <num_scan_inputs = 1, body = b (float[] s_in, float[] elem) => (float[] s_out, float[] e_out) {
    s_out = Add (s_in, elem)
    e_out = ReduceSum <keepdims = 0> (elem, ax)
  }> (init, seq)
  lc, ls = Loop (five, cond0, x) <body = lb (int64 it, bool ci, float[] v) => (bool co, float[] vo, float[] sc) {
    co = Identity (ci)
    vo = Add (v, v)
    sc = Gather <axis = 1> (v, it)
  }>
  y = Identity (i)
}`, Options{})
	expectTypes(t, m, map[string]string{
		"to": "tensor(float)[N,4]", "i": "tensor(float)[N,4]",
		"s_out": "tensor(float)[N,5]", "e_out": "tensor(float)[N]",
		"st": "tensor(float)[N,5]", "so": "tensor(float)[3,N]",
		"vo": "tensor(float)[N,4]", "sc": "tensor(float)[N]",
		"lc": "tensor(float)[N,4]", "ls": "tensor(float)[5,N]",
	})
}

func TestSequences(t *testing.T) {
	m, _ := inferText(t, `<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 3] a, float[2, 5] b) => (float[] y) <int64 zero = {0}> {
  s = SequenceConstruct (a, b)
  first = SequenceAt (s, zero)
  n = SequenceLength (s)
  cat = ConcatFromSequence <axis = 1> (s)
  e = SequenceEmpty <dtype = 7> ()
  sp = SplitToSequence <axis = 1, keepdims = 0> (a)
  o = Optional (a)
  has = OptionalHasElement (o)
  y = Identity (first)
}`, Options{})
	expectTypes(t, m, map[string]string{
		"s": "seq(tensor(float)[2,?])", "first": "tensor(float)[2,3]", "n": "tensor(int64)[]",
		"cat": "tensor(float)[2,8]", "e": "seq(tensor(int64))", "sp": "seq(tensor(float)[2])",
		"o": "optional(tensor(float)[2,3])", "has": "tensor(bool)[]",
	})
}

func TestValueInfoAddedAndMerged(t *testing.T) {
	m, res := inferText(t, `<ir_version: 8, opset_import: ["" : 18]>
g (float[N, 4] x) => (float[N, 4] y) <float[?, ?] a> {
  a = Relu (x)
  b = Sigmoid (a)
  y = Identity (b)
}`, Options{})
	if len(m.Graph.ValueInfo) != 2 || res.Added != 1 {
		t.Fatalf("value_info has %d entries (added %d), want a and b", len(m.Graph.ValueInfo), res.Added)
	}
	expectTypes(t, m, map[string]string{"a": "tensor(float)[N,4]", "b": "tensor(float)[N,4]"})
	mp, err := m.ToProto()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, vi := range mp.Graph.ValueInfo {
		if vi.GetName() == "b" && typeString(vi.Type) == "tensor(float)[N,4]" {
			found = true
		}
	}
	if !found {
		t.Errorf("written value_info lacks b: %v", mp.Graph.ValueInfo)
	}
	if res.Typed == 0 || len(res.Untyped) != 0 {
		t.Errorf("result %+v", res)
	}
}

func TestConflictReportedOrStrict(t *testing.T) {
	src := `<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 4] x) => (float[3, 4] y) {
  y = Relu (x)
}`
	m, res := inferText(t, src, Options{})
	if len(res.Issues) != 1 || !strings.Contains(res.Issues[0].String(), "conflicts with declared") {
		t.Errorf("issues %v", res.Issues)
	}
	if typeString(m.Graph.Outputs[0].Type) != "tensor(float)[3,4]" {
		t.Errorf("declared type replaced: %s", typeString(m.Graph.Outputs[0].Type))
	}
	m = parseModel(t, src)
	if _, err := Infer(m, Options{Strict: true}); err == nil || !strings.Contains(err.Error(), "Relu") {
		t.Errorf("strict mode: err = %v", err)
	}
}

func TestBadModelGivesErrorNotPanic(t *testing.T) {
	m := parseModel(t, `<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 4] x) => (float[] y) {
  y = Transpose <perm = [5, 0]> (x)
}`)
	res, err := Infer(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Issues) != 1 || !strings.Contains(res.Issues[0].Msg, "perm") {
		t.Errorf("issues %v", res.Issues)
	}
	if _, err := Infer(&canonical.Model{}, Options{}); err == nil {
		t.Error("no error for a model without graph")
	}
}

func TestLocalFunctionWithAttributeRef(t *testing.T) {
	m, _ := inferText(t, `<ir_version: 8, opset_import: ["" : 18, "local" : 1]>
g (float[N, 3, 5] x) => (float[] y) {
  t1 = local.Perm <p = [2, 0, 1]> (x)
  t2 = local.Perm (x)
  y = Identity (t1)
}
<domain: "local", opset_import: ["" : 18]>
Perm <p = [0, 2, 1]> (a) => (b) {
  b = Transpose <perm: ints = @p> (a)
}`, Options{})
	expectTypes(t, m, map[string]string{"t1": "tensor(float)[5,N,3]", "t2": "tensor(float)[N,5,3]"})
	// The body is left as it was: no types, the reference in place.
	body := m.Functions[0].Body
	if body.Nodes[0].Outputs[0].Type != nil || body.Nodes[0].Attributes[0].RefAttrName != "p" {
		t.Error("function body modified by inference")
	}
}

func TestLoopGrowingState(t *testing.T) {
	m, _ := inferText(t, `<ir_version: 8, opset_import: ["" : 18]>
g (float[1, 4] x, int64 n) => (float[] y) <bool cond0 = {1}> {
  y = Loop (n, cond0, x) <body = lb (int64 it, bool ci, float[] v) => (bool co, float[] vo) {
    co = Identity (ci)
    vo = Concat <axis = 0> (v, v)
  }>
}`, Options{})
	expectTypes(t, m, map[string]string{"vo": "tensor(float)[?,4]", "y": "tensor(float)[?,4]"})
}

func TestBroadcastConflict(t *testing.T) {
	src := `<ir_version: 8, opset_import: ["" : 18]>
g (float[2, 3] a, float[2, 4] b) => (float[] y) {
  y = Add (a, b)
}`
	m, res := inferText(t, src, Options{})
	if len(res.Issues) != 1 || !strings.Contains(res.Issues[0].String(), "[2,3] and [2,4] cannot be broadcast: dim 1 is 3 and 4") {
		t.Errorf("issues %v", res.Issues)
	}
	expectTypes(t, m, map[string]string{"y": "tensor(float)"})
	m = parseModel(t, src)
	if _, err := Infer(m, Options{Strict: true}); err == nil || !strings.Contains(err.Error(), "cannot be broadcast") {
		t.Errorf("strict: %v", err)
	}
}

func TestReduceOfShape(t *testing.T) {
	m, _ := inferText(t, `<ir_version: 8, opset_import: ["" : 18]>
g (float[B, 4, 5] x) => (float[] y) <int64[1] one = {1}, int64[1] end = {3}, int64[1] zero = {0}> {
  s = Shape (x)
  tail = Slice (s, one, end)
  n = ReduceProd <keepdims = 1> (tail)
  b = Slice (s, zero, one)
  tgt = Concat <axis = 0> (b, n)
  y = Reshape (x, tgt)
}`, Options{})
	expectTypes(t, m, map[string]string{"n": "tensor(int64)[1]", "y": "tensor(float)[B,20]"})
}
