package executor

import (
	"context"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// TestIntegerSlowPathNoted: a 3-D ConvInteger (outside the integer GEMM's
// cases) still runs, on the per-element path, and the executor says so
// (SlowPaths, which bench prints); a 2-D one does not.
func TestIntegerSlowPathNoted(t *testing.T) {
	for _, dims := range [][]int64{{1, 1, 2, 2, 2}, {1, 1, 2, 2}} {
		m, g := newModel(13)
		x := must(g.AddInput("x", nil))
		wdims := append([]int64{1, 1}, dims[2:]...)
		w := must(g.AddInitializer(canonical.NewTensor("w", canonical.Uint8, wdims, make([]byte, numel(toInts(wdims))))))
		n := must(g.AddNode("conv", "", "ConvInteger", []*canonical.Value{x, w}, []string{"y"}))
		g.Outputs = []*canonical.Value{n.Outputs[0]}
		e := must(New(m, Options{}))
		in := canonical.NewTensor("x", canonical.Uint8, dims, make([]byte, numel(toInts(dims))))
		if _, err := e.Run(context.Background(), []*canonical.Tensor{in}); err != nil {
			t.Fatal(err)
		}
		slow := e.SlowPaths()
		e.Close()
		if want := len(dims) == 5; want != (len(slow) == 1 && strings.HasPrefix(slow[0], `ConvInteger "conv": `)) || !want && len(slow) > 0 {
			t.Errorf("input %v: slow paths %q", dims, slow)
		}
	}
}
