//go:build cgo

package adapt

import (
	"encoding/binary"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/opset/convert"
)

func f32(dims ...int64) *onnxpb.TypeProto {
	return canonical.TensorType(onnxpb.TensorProto_FLOAT, dims)
}

func constF32(t testing.TB, g *canonical.Graph, name string, dims []int64, v ...float32) *canonical.Value {
	t.Helper()
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	c, err := g.AddInitializer(canonical.NewTensor(name, canonical.Float, dims, raw))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func constI64(t testing.TB, g *canonical.Graph, name string, v ...int64) *canonical.Value {
	t.Helper()
	raw := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(x))
	}
	c, err := g.AddInitializer(canonical.NewTensor(name, canonical.Int64, []int64{int64(len(v))}, raw))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// conv3d is a model with one 3-D Conv: a 1x1x2x2x2 kernel of ones over
// x (1x1x2x2x2), so y (1x1x1x1x1) is the sum of x. With declared is
// false the weights are a graph input without a shape and the Conv has no
// kernel_shape: the kernel rank is unknown.
func conv3d(t testing.TB, declared bool) *canonical.Model {
	t.Helper()
	m := &canonical.Model{IRVersion: 8, OpsetImports: []canonical.OpsetID{{Domain: "", Version: 17}}, Graph: canonical.NewGraph("g")}
	g := m.Graph
	x, err := g.AddInput("x", f32(1, 1, 2, 2, 2))
	if err != nil {
		t.Fatal(err)
	}
	var w *canonical.Value
	if declared {
		w = constF32(t, g, "w", []int64{1, 1, 2, 2, 2}, 1, 1, 1, 1, 1, 1, 1, 1)
	} else if w, err = g.AddInput("w", canonical.TensorType(onnxpb.TensorProto_FLOAT, nil)); err != nil {
		t.Fatal(err)
	}
	x.Type = f32(1, 1, 2, 2, 2)
	if !declared {
		x.Type = &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(onnxpb.TensorProto_FLOAT))}}}
	}
	n, err := g.AddNode("conv3", "", "Conv", []*canonical.Value{x, w}, []string{"y"})
	if err != nil {
		t.Fatal(err)
	}
	n.Outputs[0].Type = f32(1, 1, 1, 1, 1)
	g.Outputs = append(g.Outputs, n.Outputs[0])
	return m
}

// The WebGPU Conv restriction (conv3d is not supported) is decided from
// the kernel: nothing for squeezenet's 2-D convolutions, a violation
// naming the node for a 3-D one, a warning when the rank is unknown.
func TestConvRestrictionDecided(t *testing.T) {
	p := mustProfile(t, "onnxruntime-web-webgpu")
	m := load(t, "squeezenet")
	if c := countOps(m); c["Conv"] != 26 {
		t.Fatalf("fixture changed: %d Conv", c["Conv"])
	}
	r, err := Adapt(m, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range r.Violations {
		if v.OpType == "Conv" || strings.Contains(v.Problem, "conv3d") {
			t.Errorf("2-D convolutions: %s", v)
		}
	}

	m3 := conv3d(t, true)
	r, err = Adapt(m3, p, Options{})
	var ue *UnsupportedError
	if !errors.As(err, &ue) || len(ue.Violations) != 1 {
		t.Fatalf("3-D Conv: err = %v, want one violation", err)
	}
	v := ue.Violations[0]
	want := "onnxruntime-web-webgpu restricts Conv: 1-D or 2-D convolution only; it has 3 spatial dimension(s) (from input 1)"
	if v.Node != "conv3" || v.OpType != "Conv" || v.Index != 0 || v.Warning || v.Problem != want {
		t.Errorf("violation %+v, want node conv3: %s", v, want)
	}
	if !strings.Contains(err.Error(), `node 0 "conv3" (Conv)`) {
		t.Errorf("error does not name the node: %v", err)
	}

	r, err = Adapt(conv3d(t, false), p, Options{NoInfer: true})
	if err != nil {
		t.Fatalf("unknown rank: %v", err)
	}
	if len(r.Violations) != 1 || !r.Violations[0].Warning || !strings.Contains(r.Violations[0].Problem, "number of spatial dimensions is unknown") {
		t.Errorf("unknown rank: violations %v, want one warning", r.Violations)
	}

	// The same 3-D model is fine for ONNX Runtime, which computes it.
	rt := openORT(t)
	m3 = conv3d(t, true)
	if _, err := Adapt(m3, mustProfile(t, "onnxruntime-1.30"), Options{}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "conv3d.onnx")
	if err := canonical.Save(path, m3, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	in := &onnxpb.TensorProto{Name: proto.String("x"), DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), Dims: []int64{1, 1, 2, 2, 2},
		FloatData: []float32{1, 2, 3, 4, 5, 6, 7, 8}}
	outs, err := rt.Run(path, []*onnxpb.TensorProto{in})
	if err != nil {
		t.Fatal(err)
	}
	if got := floats(t, outs[0]); len(got) != 1 || got[0] != 36 {
		t.Errorf("3-D Conv of 1..8 with ones = %v, want [36]", got)
	}
}

// TensorRT's restrictions are decided per node: within them, nothing is
// said; outside, a violation (or a warning for a documented difference)
// names the node and what it has.
func TestTensorRTRestrictionsDecided(t *testing.T) {
	p := mustProfile(t, "tensorrt-10")
	type build func(g *canonical.Graph, x *canonical.Value) (*canonical.Node, error)
	cases := []struct {
		name    string
		build   build
		problem string // "" when the node is within the restrictions
		warning bool
	}{
		{"maxpool 2-D", func(g *canonical.Graph, x *canonical.Value) (*canonical.Node, error) {
			return g.AddNode("mp", "", "MaxPool", []*canonical.Value{x}, []string{"y"}, canonical.IntsAttr("kernel_shape", 2, 2))
		}, "", false},
		{"maxpool 1-D", func(g *canonical.Graph, x *canonical.Value) (*canonical.Node, error) {
			return g.AddNode("mp", "", "MaxPool", []*canonical.Value{x}, []string{"y"}, canonical.IntsAttr("kernel_shape", 2))
		}, "restricts MaxPool: 2-D or 3-D pooling only; it has 1 spatial dimension(s) (from kernel_shape)", false},
		{"maxpool dilated", func(g *canonical.Graph, x *canonical.Value) (*canonical.Node, error) {
			return g.AddNode("mp", "", "MaxPool", []*canonical.Value{x}, []string{"y"}, canonical.IntsAttr("kernel_shape", 2, 2), canonical.IntsAttr("dilations", 2, 2))
		}, "restricts MaxPool: dilations must be empty or all ones; dilations is [2 2]", false},
		{"maxpool indices", func(g *canonical.Graph, x *canonical.Value) (*canonical.Node, error) {
			n, err := g.AddNode("mp", "", "MaxPool", []*canonical.Value{x}, []string{"y", "idx"}, canonical.IntsAttr("kernel_shape", 2, 2))
			if err == nil {
				g.Outputs = append(g.Outputs, n.Outputs[1])
			}
			return n, err
		}, `restricts MaxPool: the Indices output is unsupported; output 1 "idx" is used`, false},
		{"topk small k", func(g *canonical.Graph, x *canonical.Value) (*canonical.Node, error) {
			return g.AddNode("topk", "", "TopK", []*canonical.Value{x, constI64(t, g, "k", 2)}, []string{"y", "i"})
		}, "", false},
		{"topk large k", func(g *canonical.Graph, x *canonical.Value) (*canonical.Node, error) {
			return g.AddNode("topk", "", "TopK", []*canonical.Value{x, constI64(t, g, "k", 4000)}, []string{"y", "i"})
		}, `restricts TopK: K must be less than 3840; input 1 "k" is 4000`, false},
		{"resize cubic", func(g *canonical.Graph, x *canonical.Value) (*canonical.Node, error) {
			return g.AddNode("rs", "", "Resize", []*canonical.Value{x, nil, constF32(t, g, "scales", []int64{4}, 1, 1, 2, 2)}, []string{"y"}, canonical.StringAttr("mode", "cubic"))
		}, "restricts Resize: modes nearest and linear only; mode is cubic", false},
		{"resize linear", func(g *canonical.Graph, x *canonical.Value) (*canonical.Node, error) {
			return g.AddNode("rs", "", "Resize", []*canonical.Value{x, nil, constF32(t, g, "scales", []int64{4}, 1, 1, 2, 2)}, []string{"y"}, canonical.StringAttr("mode", "linear"))
		}, "", false},
		{"reduce axes from a graph input", func(g *canonical.Graph, x *canonical.Value) (*canonical.Node, error) {
			axes, err := g.AddInput("axes", canonical.TensorType(onnxpb.TensorProto_INT64, []int64{1}))
			if err != nil {
				return nil, err
			}
			return g.AddNode("rsum", "", "ReduceSum", []*canonical.Value{x, axes}, []string{"y"})
		}, `restricts ReduceSum: axes must be an initializer; input 1 "axes" is a graph input`, false},
		{"reduce axes computed", func(g *canonical.Graph, x *canonical.Value) (*canonical.Node, error) {
			sh, err := g.AddNode("shape", "", "Shape", []*canonical.Value{x}, []string{"s"}, canonical.IntAttr("start", -1))
			if err != nil {
				return nil, err
			}
			return g.AddNode("rsum", "", "ReduceSum", []*canonical.Value{x, sh.Outputs[0]}, []string{"y"})
		}, `restricts ReduceSum: axes must be an initializer; input 1 "s" is computed by Shape node "shape" (the runtime may fold it)`, true},
		{"random seed", func(g *canonical.Graph, x *canonical.Value) (*canonical.Node, error) {
			return g.AddNode("rnd", "", "RandomNormalLike", []*canonical.Value{x}, []string{"y"}, canonical.FloatAttr("seed", 3))
		}, "restricts RandomNormalLike: seed is ignored: the values differ from run to run; seed is set", true},
		{"random", func(g *canonical.Graph, x *canonical.Value) (*canonical.Node, error) {
			return g.AddNode("rnd", "", "RandomNormalLike", []*canonical.Value{x}, []string{"y"})
		}, "", false},
		{"hardmax static axis", func(g *canonical.Graph, x *canonical.Value) (*canonical.Node, error) {
			return g.AddNode("hm", "", "Hardmax", []*canonical.Value{x}, []string{"y"})
		}, "", false},
	}
	for _, c := range cases {
		m := &canonical.Model{IRVersion: 8, OpsetImports: []canonical.OpsetID{{Domain: "", Version: 17}}, Graph: canonical.NewGraph("g")}
		x, err := m.Graph.AddInput("x", f32(1, 1, 4, 4))
		if err != nil {
			t.Fatal(err)
		}
		n, err := c.build(m.Graph, x)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		m.Graph.Outputs = append([]*canonical.Value{n.Outputs[0]}, m.Graph.Outputs...)
		r, err := Adapt(m, p, Options{NoInfer: true})
		if r == nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []Violation
		for _, v := range r.Violations {
			if v.Node == n.Name {
				got = append(got, v)
			}
		}
		if c.problem == "" {
			if len(got) != 0 || err != nil {
				t.Errorf("%s: violations %v, err %v; want none", c.name, got, err)
			}
			continue
		}
		if len(got) != 1 || got[0].Problem != "tensorrt-10 "+c.problem || got[0].Warning != c.warning {
			t.Errorf("%s: violations %v, want one (warning %v): tensorrt-10 %s", c.name, got, c.warning, c.problem)
			continue
		}
		var ue *UnsupportedError
		if c.warning != !errors.As(err, &ue) {
			t.Errorf("%s: err = %v (warning %v)", c.name, err, c.warning)
		}
	}
}

// The squeezenet fixture's 18 Identity nodes, which WebGPU runs on the CPU,
// are one line of the report (each still a Violation for programs).
func TestIdentityWarningsSummarized(t *testing.T) {
	m := load(t, "squeezenet")
	r, err := Adapt(m, mustProfile(t, "onnxruntime-web-webgpu"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range r.Violations {
		if v.OpType == "Identity" {
			n++
		}
	}
	if n != 18 {
		t.Fatalf("%d Identity violations, want 18", n)
	}
	var lines []string
	for _, l := range r.Lines() {
		if strings.Contains(l, "Identity") {
			lines = append(lines, l)
		}
	}
	want := `warning: main: 18 Identity nodes ("Identity_0", "Identity_1", "Identity_2" and 15 more): onnxruntime-web-webgpu does not implement Identity; runs on the fallback (CPU) provider: slower, with copies between devices`
	if len(lines) != 1 || lines[0] != want {
		t.Errorf("Identity lines:\n%s\nwant\n%s", strings.Join(lines, "\n"), want)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if c := strings.Count(b.String(), "does not implement Identity"); c != 1 {
		t.Errorf("WriteText has %d Identity lines:\n%s", c, b.String())
	}
	// Actions group the same way: 24 Constants of the encoder at opset 7.
	m = load(t, "transformer_encoder")
	r, err = Adapt(m, mustProfile(t, "onnx-opset7"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var consts []string
	for _, l := range r.Lines() {
		if strings.Contains(l, "Constant") {
			consts = append(consts, l)
		}
	}
	if len(consts) != 1 || !strings.HasPrefix(consts[0], `24 Constant nodes ("/layers.0/self_attn/Constant", `) {
		t.Errorf("Constant lines: %q", consts)
	}
}

// Shape inference runs on a typed blocker kind, not on the words of its fix.
func TestNeedsShapesTyped(t *testing.T) {
	if !needsShapes([]convert.Blocker{{Kind: convert.KindNeedsShapes, Fix: "declare the rank"}}) {
		t.Error("KindNeedsShapes not recognized")
	}
	if needsShapes([]convert.Blocker{{Kind: convert.KindNotExpressible, Fix: "run 'onnxconv infer' first"}}) {
		t.Error("a fix mentioning onnxconv infer taken for KindNeedsShapes")
	}
}

// TensorRT's limited element types are decided from where the values are:
// uint8 only at the network's edges, int8 only around Quantize/
// DequantizeLinear; double stays a warning (a documented cast).
func TestTensorRTLimitedTypesDecided(t *testing.T) {
	m := &canonical.Model{IRVersion: 8, OpsetImports: []canonical.OpsetID{{Domain: "", Version: 17}}, Graph: canonical.NewGraph("g")}
	g := m.Graph
	img, _ := g.AddInput("img", canonical.TensorType(onnxpb.TensorProto_UINT8, []int64{4}))
	c, err := g.AddNode("tofloat", "", "Cast", []*canonical.Value{img}, []string{"f"}, canonical.IntAttr("to", int64(onnxpb.TensorProto_FLOAT)))
	if err != nil {
		t.Fatal(err)
	}
	scale := constF32(t, g, "scale", nil, 0.5)
	q, err := g.AddNode("q", "", "QuantizeLinear", []*canonical.Value{c.Outputs[0], scale}, []string{"qi"})
	if err != nil {
		t.Fatal(err)
	}
	q.Outputs[0].Type = canonical.TensorType(onnxpb.TensorProto_INT8, []int64{4})
	dq, err := g.AddNode("dq", "", "DequantizeLinear", []*canonical.Value{q.Outputs[0], scale}, []string{"d"})
	if err != nil {
		t.Fatal(err)
	}
	back, err := g.AddNode("tou8", "", "Cast", []*canonical.Value{dq.Outputs[0]}, []string{"mid"}, canonical.IntAttr("to", int64(onnxpb.TensorProto_UINT8)))
	if err != nil {
		t.Fatal(err)
	}
	back.Outputs[0].Type = canonical.TensorType(onnxpb.TensorProto_UINT8, []int64{4})
	g.ValueInfo = append(g.ValueInfo, q.Outputs[0], back.Outputs[0])
	out, err := g.AddNode("out", "", "Cast", []*canonical.Value{back.Outputs[0]}, []string{"y"}, canonical.IntAttr("to", int64(onnxpb.TensorProto_FLOAT)))
	if err != nil {
		t.Fatal(err)
	}
	g.Outputs = append(g.Outputs, out.Outputs[0])

	r, err := Adapt(m, mustProfile(t, "tensorrt-10"), Options{NoInfer: true})
	var ue *UnsupportedError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v, want *UnsupportedError", err)
	}
	var typeLines []string
	for _, v := range r.Violations {
		if strings.Contains(v.Problem, "element type") {
			typeLines = append(typeLines, v.String())
		}
	}
	want := `main: value "mid" has element type uint8: tensorrt-10 accepts uint8 only as a network input or output tensor type; cast it to a supported type, or quantize through QuantizeLinear/DequantizeLinear`
	if len(typeLines) != 1 || typeLines[0] != want {
		t.Errorf("type violations:\n%s\nwant only\n%s", strings.Join(typeLines, "\n"), want)
	}
}
