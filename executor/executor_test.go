package executor

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

func f32Tensor(name string, dims []int64, v ...float32) *canonical.Tensor {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return canonical.NewTensor(name, canonical.Float, dims, b)
}

func i64Tensor(name string, dims []int64, v ...int64) *canonical.Tensor {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return canonical.NewTensor(name, canonical.Int64, dims, b)
}

func floats(t *testing.T, x *canonical.Tensor) []float32 {
	t.Helper()
	b, err := x.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func newModel(opset int64) (*canonical.Model, *canonical.Graph) {
	g := canonical.NewGraph("test")
	m := &canonical.Model{IRVersion: 8, Graph: g}
	m.SetOpset("", opset)
	return m, g
}

// must returns v, failing the test (by panicking) on err.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// y = Relu(x + c): run with two input shapes, check values and that each
// shape compiled its own plan and a repeated shape reused it.
func TestRunAndPlanCache(t *testing.T) {
	m, g := newModel(17)
	x := must(g.AddInput("x", nil))
	c := must(g.AddInitializer(f32Tensor("c", nil, -1)))
	n1 := must(g.AddNode("add", "", "Add", []*canonical.Value{x, c}, []string{"s"}))
	n2 := must(g.AddNode("relu", "", "Relu", []*canonical.Value{n1.Outputs[0]}, []string{"y"}))
	g.Outputs = []*canonical.Value{n2.Outputs[0]}
	e := must(New(m, Options{}))
	defer e.Close()
	ctx := context.Background()
	out := must(e.Run(ctx, []*canonical.Tensor{f32Tensor("x", []int64{2, 2}, 0, 1, 2, 3)}))
	if got := floats(t, out[0]); fmt.Sprint(got) != "[0 0 1 2]" {
		t.Fatalf("got %v, want [0 0 1 2]", got)
	}
	if out[0].Name != "y" {
		t.Errorf("output named %q, want y", out[0].Name)
	}
	out = must(e.Run(ctx, []*canonical.Tensor{f32Tensor("x", []int64{3}, 5, -5, 1.5)}))
	if got := floats(t, out[0]); fmt.Sprint(got) != "[4 0 0.5]" {
		t.Fatalf("got %v, want [4 0 0.5]", got)
	}
	_ = must(e.Run(ctx, []*canonical.Tensor{f32Tensor("x", []int64{2, 2}, 9, 9, 9, 9)}))
	if n := len(e.plans); n != 2 {
		t.Errorf("%d plans cached, want 2 (one per input shape)", n)
	}
}

// Reshape whose target shape is computed from a runtime input inside the
// graph: the segment must be split, the shape materialized, and a plan
// replayed with a different shape value must rebuild (guard), not reuse.
func TestValueDependentShape(t *testing.T) {
	m, g := newModel(17)
	x := must(g.AddInput("x", nil))
	s := must(g.AddInput("shape", nil))
	zero := must(g.AddInitializer(i64Tensor("zero", []int64{1}, 0)))
	sum := must(g.AddNode("sum", "", "Add", []*canonical.Value{s, zero}, []string{"s2"}))
	neg := must(g.AddNode("neg", "", "Neg", []*canonical.Value{x}, []string{"nx"}))
	rs := must(g.AddNode("reshape", "", "Reshape", []*canonical.Value{neg.Outputs[0], sum.Outputs[0]}, []string{"y"}))
	g.Outputs = []*canonical.Value{rs.Outputs[0]}
	e := must(New(m, Options{}))
	defer e.Close()
	ctx := context.Background()
	xv := f32Tensor("x", []int64{6}, 1, 2, 3, 4, 5, 6)
	for _, sh := range [][]int64{{2, 3}, {3, 2}, {2, 3}} {
		out := must(e.Run(ctx, []*canonical.Tensor{xv, i64Tensor("shape", []int64{2}, sh...)}))
		if fmt.Sprint(out[0].Dims) != fmt.Sprint(sh) {
			t.Fatalf("shape %v: output dims %v", sh, out[0].Dims)
		}
		if got := floats(t, out[0]); fmt.Sprint(got) != "[-1 -2 -3 -4 -5 -6]" {
			t.Fatalf("shape %v: got %v", sh, got)
		}
	}
}

func TestRunCapture(t *testing.T) {
	m, g := newModel(17)
	x := must(g.AddInput("x", nil))
	a := must(g.AddNode("a", "", "Mul", []*canonical.Value{x, x}, []string{"sq"}))
	b := must(g.AddNode("b", "", "Sqrt", []*canonical.Value{a.Outputs[0]}, []string{"y"}))
	g.Outputs = []*canonical.Value{b.Outputs[0]}
	e := must(New(m, Options{}))
	defer e.Close()
	got := must(e.RunCapture(context.Background(), []*canonical.Tensor{f32Tensor("x", []int64{2}, -3, 4)}, []string{"sq", "y"}))
	if v := floats(t, got["sq"]); fmt.Sprint(v) != "[9 16]" {
		t.Errorf("sq = %v, want [9 16]", v)
	}
	if v := floats(t, got["y"]); fmt.Sprint(v) != "[3 4]" {
		t.Errorf("y = %v, want [3 4]", v)
	}
	if _, err := e.RunCapture(context.Background(), []*canonical.Tensor{f32Tensor("x", []int64{2}, -3, 4)}, []string{"nope"}); err == nil {
		t.Error("capturing an unknown value did not fail")
	}
}

func TestConcurrentRuns(t *testing.T) {
	m, g := newModel(17)
	x := must(g.AddInput("x", nil))
	n := must(g.AddNode("sm", "", "Softmax", []*canonical.Value{x}, []string{"y"}))
	g.Outputs = []*canonical.Value{n.Outputs[0]}
	e := must(New(m, Options{}))
	defer e.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			v := float32(i)
			out, err := e.Run(context.Background(), []*canonical.Tensor{f32Tensor("x", []int64{1, 2}, v, v+float32(math.Log(3)))})
			if err != nil {
				errs <- err
				return
			}
			b, _ := out[0].Bytes()
			p0 := math.Float32frombits(binary.LittleEndian.Uint32(b))
			if math.Abs(float64(p0)-0.25) > 1e-6 {
				errs <- fmt.Errorf("run %d: softmax[0] = %v, want 0.25", i, p0)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestUnsupportedOpNamesNode(t *testing.T) {
	m, g := newModel(17)
	x := must(g.AddInput("x", nil))
	n := must(g.AddNode("weird", "", "NoSuchOp", []*canonical.Value{x}, []string{"y"}))
	g.Outputs = []*canonical.Value{n.Outputs[0]}
	_, err := New(m, Options{})
	if err == nil || !strings.Contains(err.Error(), `"weird" (NoSuchOp)`) {
		t.Fatalf("error %v does not name the node", err)
	}
}

func TestWrongInputCount(t *testing.T) {
	m, g := newModel(17)
	x := must(g.AddInput("x", nil))
	n := must(g.AddNode("id", "", "Identity", []*canonical.Value{x}, []string{"y"}))
	g.Outputs = []*canonical.Value{n.Outputs[0]}
	e := must(New(m, Options{}))
	defer e.Close()
	if _, err := e.Run(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "takes 1 inputs") {
		t.Fatalf("got %v", err)
	}
}

// Float16 is computed in float32 and rounded back at the boundary.
func TestFloat16RoundTrip(t *testing.T) {
	h := fromF64(canonical.Float16, []int{3}, []float64{1.0 / 3, 65504, 1e-8})
	ct, err := h.toCanonical("h")
	if err != nil {
		t.Fatal(err)
	}
	back, err := fromCanonical(ct)
	if err != nil {
		t.Fatal(err)
	}
	got := back.data.([]float32)
	if got[0] != 0.333251953125 || got[1] != 65504 || got[2] != 0 {
		t.Fatalf("float16 round trip: %v", got)
	}
}

func BenchmarkConv(b *testing.B) {
	m, g := newModel(17)
	x, _ := g.AddInput("x", nil)
	wv := make([]float32, 16*8*3*3)
	for i := range wv {
		wv[i] = float32(i%7) * 0.1
	}
	w, _ := g.AddInitializer(f32Tensor("w", []int64{16, 8, 3, 3}, wv...))
	n, _ := g.AddNode("conv", "", "Conv", []*canonical.Value{x, w}, []string{"y"}, canonical.IntsAttr("pads", 1, 1, 1, 1))
	g.Outputs = []*canonical.Value{n.Outputs[0]}
	e, err := New(m, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	xv := make([]float32, 8*32*32)
	in := []*canonical.Tensor{f32Tensor("x", []int64{1, 8, 32, 32}, xv...)}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.Run(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

func TestUnknownBackendIsAnError(t *testing.T) {
	m, g := newModel(17)
	x := must(g.AddInput("x", nil))
	n := must(g.AddNode("id", "", "Identity", []*canonical.Value{x}, []string{"y"}))
	g.Outputs = []*canonical.Value{n.Outputs[0]}
	if _, err := New(m, Options{Backend: "nosuchbackend"}); err == nil || !strings.Contains(err.Error(), "nosuchbackend") {
		t.Fatalf("got %v", err)
	}
}

// A Loop whose body doubles a carried value: control flow runs the body
// through its own cached plans.
func TestLoopBody(t *testing.T) {
	m, g := newModel(17)
	trip := must(g.AddInitializer(i64Tensor("trip", nil, 3)))
	x := must(g.AddInput("x", nil))
	body := canonical.NewGraph("body")
	_ = must(body.AddInput("i", nil))
	cond := must(body.AddInput("cond", nil))
	v := must(body.AddInput("v", nil))
	dbl := must(body.AddNode("dbl", "", "Add", []*canonical.Value{v, v}, []string{"v2"}))
	cid := must(body.AddNode("cid", "", "Identity", []*canonical.Value{cond}, []string{"cond_out"}))
	body.Outputs = []*canonical.Value{cid.Outputs[0], dbl.Outputs[0], dbl.Outputs[0]}
	loop := must(g.AddNode("loop", "", "Loop", []*canonical.Value{trip, nil, x}, []string{"final", "scan"}, canonical.GraphAttr("body", body)))
	body.Parent, body.Owner = g, loop
	g.Outputs = []*canonical.Value{loop.Outputs[0], loop.Outputs[1]}
	e := must(New(m, Options{}))
	defer e.Close()
	out := must(e.Run(context.Background(), []*canonical.Tensor{f32Tensor("x", []int64{2}, 1, -2)}))
	if got := floats(t, out[0]); fmt.Sprint(got) != "[8 -16]" {
		t.Fatalf("final = %v, want [8 -16]", got)
	}
	if fmt.Sprint(out[1].Dims) != "[3 2]" || fmt.Sprint(floats(t, out[1])) != "[2 -4 4 -8 8 -16]" {
		t.Fatalf("scan = %v %v", out[1].Dims, floats(t, out[1]))
	}
}
