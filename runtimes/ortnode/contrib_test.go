package ortnode

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxtext"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/verify"
)

// opValues makes the literal values of one-op test models: n numbers
// from f, comma separated, drawn from a seeded generator.
type opValues struct{ rng *rand.Rand }

func newOpValues(seed uint64) opValues { return opValues{rand.New(rand.NewPCG(seed, 2))} }

func (o opValues) list(n int, f func() string) string {
	s := make([]string, n)
	for i := range s {
		s[i] = f()
	}
	return strings.Join(s, ", ")
}

// floats is n values in [lo, hi).
func (o opValues) floats(n int, lo, hi float64) string {
	return o.list(n, func() string { return strconv.FormatFloat(lo+o.rng.Float64()*(hi-lo), 'g', 6, 64) })
}

// ints is n integers in [lo, hi).
func (o opValues) ints(n, lo, hi int) string {
	return o.list(n, func() string { return strconv.Itoa(lo + o.rng.IntN(hi-lo)) })
}

// runsLikeORT parses a one-op model written in ONNX text syntax, runs it
// on the executor and in ONNX Runtime (which defines the contrib ops) on
// 3 generated samples, and fails unless every output agrees.
func runsLikeORT(t *testing.T, r runtimes.Runtime, op, src string) {
	t.Helper()
	mp, err := onnxtext.Parse(op, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	m, err := canonical.FromProto(mp, "")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.onnx")
	if err := canonical.Save(path, m, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range verify.GraphInputs(m) {
		names = append(names, v.Name)
	}
	s, err := r.Open(context.Background(), path, runtimes.OpenOptions{InputNames: names, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := verify.Compare(context.Background(), &verify.Side{Name: "onnxruntime", Model: m, Runner: s}, verify.ModelSide("executor", m), verify.Options{Samples: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Equivalent {
		t.Errorf("the executor's %s differs from ONNX Runtime's: %s", op, rep.Summary)
	}
	t.Logf("%s", rep.Summary)
}

// TestContribNormsLikeORT runs SimplifiedLayerNormalization (ai.onnx
// domain, as ONNX Runtime registers it), SkipLayerNormalization and
// SkipSimplifiedLayerNormalization with every optional input and output,
// and without them, on the executor and in ONNX Runtime.
func TestContribNormsLikeORT(t *testing.T) {
	r := testRuntime(t)
	v := newOpValues(3)
	const H = 8
	head := `<ir_version: 9, opset_import: ["" : 17, "com.microsoft" : 1]>`
	cases := map[string]string{
		"simplified/axis-1": fmt.Sprintf(`%s
g (float[2,3,%d] x) => (float[2,3,%d] y, float[2,3,1] inv)
  <float[%d] scale = {%s}>
{
  y, inv = SimplifiedLayerNormalization <axis: int = -1, epsilon: float = 0.001> (x, scale)
}`, head, H, H, H, v.floats(H, 0.5, 1.5)),
		"simplified/axis1": fmt.Sprintf(`%s
g (float[2,3,%d] x) => (float[2,3,%d] y)
  <float[3,%d] scale = {%s}>
{
  y = SimplifiedLayerNormalization <axis: int = 1> (x, scale)
}`, head, H, H, H, v.floats(3*H, 0.5, 1.5)),
		"skip/all": fmt.Sprintf(`%s
g (float[2,3,%d] x, float[2,3,%d] skip) => (float[2,3,%d] y, float[2,3,1] mean, float[2,3,1] inv, float[2,3,%d] sum)
  <float[%d] gamma = {%s}, float[%d] beta = {%s}, float[%d] bias = {%s}>
{
  y, mean, inv, sum = com.microsoft.SkipLayerNormalization <epsilon: float = 0.0001> (x, skip, gamma, beta, bias)
}`, head, H, H, H, H, H, v.floats(H, 0.5, 1.5), H, v.floats(H, -1, 1), H, v.floats(H, -1, 1)),
		"skip/broadcast": fmt.Sprintf(`%s
g (float[2,3,%d] x) => (float[2,3,%d] y, float[2,3,%d] sum)
  <float[3,%d] skip = {%s}, float[%d] gamma = {%s}>
{
  y, , , sum = com.microsoft.SkipLayerNormalization <epsilon: float = 0.00001> (x, skip, gamma)
}`, head, H, H, H, H, v.floats(3*H, -1, 1), H, v.floats(H, 0.5, 1.5)),
		"skipsimplified/all": fmt.Sprintf(`%s
g (float[2,3,%d] x, float[2,3,%d] skip) => (float[2,3,%d] y, float[2,3,1] inv, float[2,3,%d] sum)
  <float[%d] gamma = {%s}, float[%d] bias = {%s}>
{
  y, , inv, sum = com.microsoft.SkipSimplifiedLayerNormalization <epsilon: float = 0.000001> (x, skip, gamma, bias)
}`, head, H, H, H, H, H, v.floats(H, 0.5, 1.5), H, v.floats(H, -1, 1)),
		"skipsimplified/plain": fmt.Sprintf(`%s
g (float[4,%d] x, float[4,%d] skip) => (float[4,%d] y)
  <float[%d] gamma = {%s}>
{
  y = com.microsoft.SkipSimplifiedLayerNormalization <epsilon: float = 0.00001> (x, skip, gamma)
}`, head, H, H, H, H, v.floats(H, 0.5, 1.5)),
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) { runsLikeORT(t, r, strings.SplitN(name, "/", 2)[0], src) })
	}
}
