//go:build cgo

package adapt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/onnxconv/onnxconv/canonical/unsupported"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// TestAttentionToOldOpsetsRunsInORT: the torch causal-attention fixture
// adapted to onnxruntime-1.30 at opsets 9, 10 and 11 loads in ONNX
// Runtime 1.30 and gives torch's output.
func TestAttentionToOldOpsetsRunsInORT(t *testing.T) {
	rt := openORT(t)
	for _, to := range []int{9, 10, 11} {
		t.Run(fmt.Sprint(to), func(t *testing.T) {
			m := load(t, "attention_causal")
			r, err := Adapt(m, mustProfile(t, "onnxruntime-1.30"), Options{Opset: to})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "model.onnx")
			if err := canonical.Save(path, m, canonical.SaveOptions{}); err != nil {
				t.Fatal(err)
			}
			d := runAndCompare(t, rt, path, "attention_causal", fmt.Sprintf("attention at opset %d", to))
			t.Logf("opset %d: %d actions, max abs diff to torch %g", to, len(r.Actions), d)
		})
	}
}

// kernelModel is a model at opset 14 whose nodes ONNX Runtime's CPU
// kernels lack for their types: Where on int8 and on bool, Relu, Max and
// ArgMax on int16. With ref, the same computation in types the kernels
// have (int32 for the integers, And/Or/Not for the bool Where): the
// reference ONNX Runtime computes.
func kernelModel(t *testing.T, ref bool) *canonical.Model {
	t.Helper()
	m := &canonical.Model{IRVersion: 8, Graph: canonical.NewGraph("kernels")}
	m.SetOpset("", 14)
	i8, i16 := canonical.Int8, canonical.Int16
	if ref {
		i8, i16 = canonical.Int32, canonical.Int32
	}
	g := m.Graph
	shape := []int64{2, 3}
	in := func(name string, dt canonical.DataType) *canonical.Value {
		v, err := g.AddInput(name, canonical.TensorType(dt, shape))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	a, b, c, d, f, h := in("a", i8), in("b", i8), in("c", canonical.Bool), in("d", canonical.Bool), in("f", i16), in("h", i16)
	node := func(name, op string, ins []*canonical.Value, dt canonical.DataType, attrs ...*canonical.Attribute) *canonical.Value {
		n, err := g.AddNode(name, "", op, ins, []string{name + "_out"}, attrs...)
		if err != nil {
			t.Fatal(err)
		}
		dims := shape
		if op == "ArgMax" {
			dims = shape[:1]
		}
		n.Outputs[0].Type = canonical.TensorType(dt, dims)
		return n.Outputs[0]
	}
	out := func(v *canonical.Value) { g.Outputs = append(g.Outputs, v) }
	out(node("relu_i16", "Relu", []*canonical.Value{f}, i16))
	out(node("where_i8", "Where", []*canonical.Value{c, a, b}, i8))
	notD := node("not_d", "Not", []*canonical.Value{d}, canonical.Bool)
	if ref {
		cd := node("c_and_d", "And", []*canonical.Value{c, d}, canonical.Bool)
		notC := node("not_c", "Not", []*canonical.Value{c}, canonical.Bool)
		ncnd := node("notc_and_notd", "And", []*canonical.Value{notC, notD}, canonical.Bool)
		out(node("where_bool", "Or", []*canonical.Value{cd, ncnd}, canonical.Bool))
	} else {
		out(node("where_bool", "Where", []*canonical.Value{c, d, notD}, canonical.Bool))
	}
	out(node("max_i16", "Max", []*canonical.Value{f, h}, i16))
	out(node("argmax_i16", "ArgMax", []*canonical.Value{f}, canonical.Int64, canonical.IntAttr("axis", 1), canonical.IntAttr("keepdims", 0)))
	return m
}

// kernelInputs are the inputs of kernelModel: a, b int8 (int32 for the
// reference), c, d bool, f, h int16 (int32).
func kernelInputs(ref bool) []*onnxpb.TensorProto {
	vals := map[string][]int64{
		"a": {-60, -3, 0, 7, 59, 1}, "b": {60, 3, -9, 8, -59, 2},
		"c": {1, 0, 1, 0, 1, 0}, "d": {1, 1, 0, 0, 1, 0},
		"f": {-300, 2, 1000, 5, -5, 0}, "h": {-299, 3, -1000, 4, 7, -1},
	}
	var out []*onnxpb.TensorProto
	for _, name := range []string{"a", "b", "c", "d", "f", "h"} {
		dt := canonical.Int32
		switch {
		case name == "c" || name == "d":
			dt = canonical.Bool
		case ref:
		case name == "a" || name == "b":
			dt = canonical.Int8
		default:
			dt = canonical.Int16
		}
		out = append(out, intTensor(name, dt, []int64{2, 3}, vals[name]))
	}
	return out
}

func intTensor(name string, dt canonical.DataType, dims []int64, vals []int64) *onnxpb.TensorProto {
	size := canonical.ElemBits(dt) / 8
	raw := make([]byte, size*len(vals))
	for i, v := range vals {
		switch size {
		case 1:
			raw[i] = byte(v)
		case 2:
			binary.LittleEndian.PutUint16(raw[2*i:], uint16(v))
		case 4:
			binary.LittleEndian.PutUint32(raw[4*i:], uint32(v))
		case 8:
			binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
		}
	}
	return &onnxpb.TensorProto{Name: new(name), DataType: new(int32(dt)), Dims: dims, RawData: raw}
}

// ints decodes an integer or bool tensor ONNX Runtime returned.
func ints(t *testing.T, tp *onnxpb.TensorProto) []int64 {
	t.Helper()
	dt := canonical.DataType(tp.GetDataType())
	tt, err := canonical.TensorFromProto(tp)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := tt.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	switch dt {
	case canonical.Int8:
		for _, b := range raw {
			out = append(out, int64(int8(b)))
		}
	case canonical.Bool, canonical.Uint8:
		for _, b := range raw {
			out = append(out, int64(b))
		}
	case canonical.Int16:
		for i := 0; i+2 <= len(raw); i += 2 {
			out = append(out, int64(int16(binary.LittleEndian.Uint16(raw[i:]))))
		}
	case canonical.Int32:
		for i := 0; i+4 <= len(raw); i += 4 {
			out = append(out, int64(int32(binary.LittleEndian.Uint32(raw[i:]))))
		}
	case canonical.Int64:
		for i := 0; i+8 <= len(raw); i += 8 {
			out = append(out, int64(binary.LittleEndian.Uint64(raw[i:])))
		}
	default:
		t.Fatalf("tensor %q: unexpected type %v", tp.GetName(), dt)
	}
	return out
}

// TestKernelLoweringsRunInORT: a model whose nodes ONNX Runtime 1.30's CPU
// kernels lack for their element types is refused by ONNX Runtime as it
// is; adapted to onnxruntime-1.30 it loads, every such node computed in a
// wider type between Casts, and its outputs equal what ONNX Runtime
// computes with kernels it has (int32, And/Or/Not).
func TestKernelLoweringsRunInORT(t *testing.T) {
	rt := openORT(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src.onnx")
	if err := canonical.Save(src, kernelModel(t, false), canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Run(src, kernelInputs(false)); err == nil || !strings.Contains(err.Error(), "Could not find an implementation") {
		t.Fatalf("ONNX Runtime runs the unadapted model (err %v): the test shows nothing", err)
	}
	refPath := filepath.Join(dir, "ref.onnx")
	if err := canonical.Save(refPath, kernelModel(t, true), canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	want, err := rt.Run(refPath, kernelInputs(true))
	if err != nil {
		t.Fatal(err)
	}

	m := kernelModel(t, false)
	r, err := Adapt(m, mustProfile(t, "onnxruntime-1.30"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	lowered := map[string]bool{}
	for _, a := range r.Actions {
		if strings.Contains(a.What, "between Casts") {
			lowered[a.Node] = true
		}
	}
	for _, n := range []string{"relu_i16", "where_i8", "where_bool", "max_i16", "argmax_i16"} {
		if !lowered[n] {
			t.Errorf("node %q was not computed in another type; actions: %v", n, r.Actions)
		}
	}
	for _, l := range r.Lines() {
		t.Log(l)
	}
	out := filepath.Join(dir, "adapted.onnx")
	if err := canonical.Save(out, m, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := rt.Run(out, kernelInputs(false))
	if err != nil {
		t.Fatalf("ONNX Runtime refuses the adapted model: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d outputs, want %d", len(got), len(want))
	}
	for i := range want {
		if g, w := canonical.DataType(got[i].GetDataType()), canonical.DataType(m.Graph.Outputs[i].Type.GetTensorType().GetElemType()); g != w {
			t.Errorf("output %d (%s): type %v, want the source's %v", i, m.Graph.Outputs[i].Name, g, w)
		}
		g, w := ints(t, got[i]), ints(t, want[i])
		if fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("output %d (%s): %v, want %v", i, m.Graph.Outputs[i].Name, g, w)
		}
	}
}

// TestKernelRefusalNamesNode: a node no wider type can compute exactly on
// a kernel the target has (Erf on int32: ONNX Runtime has only float Erf)
// is refused (a violation of the target, the node's entry in the one
// unsupported-op shape), naming the node, operator, type and target; ONNX
// Runtime indeed refuses the model.
func TestKernelRefusalNamesNode(t *testing.T) {
	m := &canonical.Model{IRVersion: 8, Graph: canonical.NewGraph("erf")}
	m.SetOpset("", 13)
	x, err := m.Graph.AddInput("x", canonical.TensorType(canonical.Int32, []int64{4}))
	if err != nil {
		t.Fatal(err)
	}
	n, err := m.Graph.AddNode("my_erf", "", "Erf", []*canonical.Value{x}, []string{"y"})
	if err != nil {
		t.Fatal(err)
	}
	n.Outputs[0].Type = canonical.TensorType(canonical.Int32, []int64{4})
	m.Graph.Outputs = append(m.Graph.Outputs, n.Outputs[0])
	path := filepath.Join(t.TempDir(), "erf.onnx")
	if err := canonical.Save(path, m, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	rt := openORT(t)
	if _, err := rt.Run(path, []*onnxpb.TensorProto{intTensor("x", canonical.Int32, []int64{4}, []int64{0, 1, 2, 3})}); err == nil {
		t.Fatal("ONNX Runtime runs an int32 Erf: the table says it has no such kernel")
	}
	_, err = Adapt(m, mustProfile(t, "onnxruntime-1.30"), Options{})
	var ue *UnsupportedError
	if !errors.As(err, &ue) {
		t.Fatalf("Adapt: %v, want an *UnsupportedError", err)
	}
	msg := err.Error()
	t.Log(msg)
	for _, want := range []string{"my_erf", "Erf", "int32", "onnxruntime-1.30"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not name %q: %s", want, msg)
		}
	}
	if len(ue.Violations) != 1 || ue.Violations[0].OpType != "Erf" || ue.Violations[0].Node != "my_erf" {
		t.Errorf("violations %+v, want Erf at my_erf", ue.Violations)
	}
	// Classified as the one unsupported-op shape, naming the node.
	var ops *unsupported.OpsError
	if !errors.As(err, &ops) {
		t.Fatalf("Adapt: %v, want it to unwrap to *unsupported.OpsError", err)
	}
	if len(ops.Ops) != 1 || ops.Ops[0].Op != "Erf" || ops.Ops[0].Node != "my_erf" {
		t.Errorf("unsupported ops %+v, want Erf at my_erf", ops.Ops)
	}
}

// TestKernelTablesPerRelease: Add-14 on int8 has a CPU kernel in ONNX
// Runtime 1.25's table but not in 1.13.1's, so adapting to
// onnxruntime-1.13 computes it in int32 and adapting to onnxruntime-1.30
// leaves it.
func TestKernelTablesPerRelease(t *testing.T) {
	build := func() *canonical.Model {
		m := &canonical.Model{IRVersion: 8, Graph: canonical.NewGraph("add")}
		m.SetOpset("", 14)
		a, _ := m.Graph.AddInput("a", canonical.TensorType(canonical.Int8, []int64{3}))
		n, err := m.Graph.AddNode("add", "", "Add", []*canonical.Value{a, a}, []string{"y"})
		if err != nil {
			t.Fatal(err)
		}
		n.Outputs[0].Type = canonical.TensorType(canonical.Int8, []int64{3})
		m.Graph.Outputs = append(m.Graph.Outputs, n.Outputs[0])
		return m
	}
	for _, c := range []struct {
		profile string
		lowered bool
	}{{"onnxruntime-1.13", true}, {"onnxruntime-1.30", false}} {
		m := build()
		r, err := Adapt(m, mustProfile(t, c.profile), Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.profile, err)
		}
		casts := countOps(m)["Cast"]
		if got := casts == 3; got != c.lowered {
			t.Errorf("%s: %d Cast nodes (actions %v), lowered %v, want %v", c.profile, casts, r.Actions, got, c.lowered)
		}
	}
}

// BenchmarkAdaptKernelTypes adapts the transformer block to
// onnxruntime-1.30 with its CPU kernel tables (kernel-type check with
// shape inference) and without them (the same profile, tables cleared):
// the difference is the cost of the kernel-type check.
func BenchmarkAdaptKernelTypes(b *testing.B) {
	path := filepath.Join(fixtureDir(b, "transformer_block_opset21"), "model.onnx")
	for _, tables := range []bool{true, false} {
		b.Run(fmt.Sprintf("tables=%v", tables), func(b *testing.B) {
			p := mustProfile(b, "onnxruntime-1.30")
			if !tables {
				p.KernelTables = nil
			}
			for b.Loop() {
				m, err := canonical.Load(path, canonical.LoadOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Adapt(m, p, Options{}); err != nil {
					b.Fatal(err)
				}
				m.Close()
			}
		})
	}
}

// TestTorchMasksRunInORT: torch 1.13's own export of a model with a Where
// on bool masks and Relu and Max on int16 (testdata/torch_masks, made by
// its make.py) is refused by ONNX Runtime 1.30; adapted to
// onnxruntime-1.30 it loads and gives torch's output.
func TestTorchMasksRunInORT(t *testing.T) {
	rt := openORT(t)
	d := filepath.Join("testdata", "torch_masks")
	src := filepath.Join(d, "model.onnx")
	in := readPB(t, filepath.Join(d, "test_data_set_0", "input_0.pb"))
	want := readPB(t, filepath.Join(d, "test_data_set_0", "output_0.pb"))
	if _, err := rt.Run(src, []*onnxpb.TensorProto{in}); err == nil || !strings.Contains(err.Error(), "Could not find an implementation") {
		t.Fatalf("ONNX Runtime on torch's export: %v; want a missing kernel", err)
	}
	m, err := canonical.Load(src, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	r, err := Adapt(m, mustProfile(t, "onnxruntime-1.30"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	lowered := map[string]bool{}
	for _, a := range r.Actions {
		if strings.Contains(a.What, "between Casts") {
			lowered[a.OpType] = true
			t.Log(a)
		}
	}
	for _, op := range []string{"Where", "Relu", "Max"} {
		if !lowered[op] {
			t.Errorf("%s was not computed in another type", op)
		}
	}
	out := filepath.Join(t.TempDir(), "adapted.onnx")
	if err := canonical.Save(out, m, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := rt.Run(out, []*onnxpb.TensorProto{in})
	if err != nil {
		t.Fatalf("ONNX Runtime refuses the adapted model: %v", err)
	}
	t.Logf("max abs diff to torch %g", assertClose(t, "torch_masks", got[0], want))
}
