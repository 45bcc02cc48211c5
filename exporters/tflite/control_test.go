package tflite

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	unsupportedpkg "github.com/onnxconv/onnxconv/canonical/unsupported"
)

// TestIfLoop: an If (both branches read outer values) lowered to both
// branches and SELECT_V2, run with inputs that take each branch, and a
// Loop with a constant trip count that reads its iteration number,
// unrolled; each checked in the TFLite interpreter against the executor.
func TestIfLoop(t *testing.T) {
	src := `<ir_version: 8, opset_import: ["" : 17]>
g (float[2,5] x) => (float[2,5] y, float[2,5] z) {
  s = ReduceSum <keepdims: int = 0> (x)
  zero = Constant <value: tensor = float {0}> ()
  c = Greater (s, zero)
  y = If (c) <then_branch: graph = then () => (float[2,5] t1) {
      t0 = Mul (x, k)
      t1 = Add (t0, x)
  }, else_branch: graph = else () => (float[2,5] e1) {
      e0 = Neg (x)
      e1 = Sigmoid (e0)
  }>
  n = Constant <value: tensor = int64 {4}> ()
  tr = Constant <value: tensor = bool {1}> ()
  z = Loop (n, tr, y) <body: graph = body (int64 i, bool cin, float[2,5] h) => (bool cout, float[2,5] h2) {
      fi = Cast <to: int = 1> (i)
      a = Mul (h, half)
      b = Add (a, x)
      h2 = Add (b, fi)
      cout = Identity (cin)
  }>
}`
	for _, sign := range []float64{1, -1} {
		m := parseModel(t, src)
		fillInits(t, m, 0.8, map[string][]int64{"k": {5}})
		if _, err := m.Graph.AddInitializer(f32Tensor("half", nil, []float64{0.5})); err != nil {
			t.Fatal(err)
		}
		f := make([]float64, 10)
		for i := range f {
			f[i] = sign * (1 + math.Sin(float64(i)*1.37))
		}
		rep := checkInInterpreter(t, m, []*canonical.Tensor{f32Tensor("x", []int64{2, 5}, f)}, 1e-5)
		if rep.Ops["SELECT_V2"] != 1 || rep.Ops["IF"] != 0 || rep.Ops["WHILE"] != 0 {
			t.Errorf("ops %v, want one SELECT_V2, no IF or WHILE", rep.Ops)
		}
		t.Logf("notes: %v", rep.Notes)
	}
}

// TestControlRefused: a Loop whose body computes its exit condition (a
// while loop) is refused with the reason, in the one
// UnsupportedOpsError.
func TestControlRefused(t *testing.T) {
	m := parseModel(t, `<ir_version: 8, opset_import: ["" : 17]>
g (float[3] x) => (float[3] z) {
  n = Constant <value: tensor = int64 {10}> ()
  tr = Constant <value: tensor = bool {1}> ()
  z = Loop (n, tr, x) <body: graph = body (int64 i, bool cin, float[3] h) => (bool cout, float[3] h2) {
      h2 = Add (h, h)
      s = ReduceSum <keepdims: int = 0> (h2)
      lim = Constant <value: tensor = float {100}> ()
      cout = Less (s, lim)
  }>
}`)
	m.Graph.Nodes[len(m.Graph.Nodes)-1].Name = "the_loop"
	_, err := Export(context.Background(), m, Options{})
	var ue *unsupportedpkg.OpsError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v, want an *unsupportedpkg.OpsError", err)
	}
	if len(ue.Ops) != 1 || ue.Ops[0].Op != "Loop" || ue.Ops[0].Node != "the_loop" || !strings.Contains(ue.Ops[0].Reason, "exit condition") {
		t.Errorf("ops %+v, want Loop the_loop refused for its exit condition", ue.Ops)
	}
	t.Log(err)
}
