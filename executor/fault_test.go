package executor

import (
	"context"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// AffineGrid's size must repeat theta's batch: a size that does not is an
// error naming the node, on the first run (the plan being built) and on a
// run that replays a plan built for a size that fit (it was an index out
// of range panic, reported without the node).
func TestAffineGridSizeMismatchNamesNode(t *testing.T) {
	m, g := newModel(20)
	theta := must(g.AddInput("theta", nil))
	size := must(g.AddInput("size", nil))
	n := must(g.AddNode("grid", "", "AffineGrid", []*canonical.Value{theta, size}, []string{"y"}))
	g.Outputs = []*canonical.Value{n.Outputs[0]}
	th := f32Tensor("theta", []int64{2, 2, 3}, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0)
	ctx := context.Background()
	for _, first := range []bool{true, false} {
		e := must(New(m, Options{}))
		if !first {
			if _, err := e.Run(ctx, []*canonical.Tensor{th, i64Tensor("size", []int64{4}, 2, 1, 3, 4)}); err != nil {
				t.Fatalf("a size that fits: %v", err)
			}
		}
		_, err := e.Run(ctx, []*canonical.Tensor{th, i64Tensor("size", []int64{4}, 12, 1, 3, 4)})
		if err == nil || !strings.Contains(err.Error(), `"grid" (AffineGrid)`) || !strings.Contains(err.Error(), "theta has shape [2 2 3]") {
			t.Errorf("first run %v: error %v does not name the node and the mismatch", first, err)
		}
		e.Close()
	}
}

// ReverseSequence lengths beyond the time axis are an error naming the
// node and the length (they indexed past the input: index 19 of 16).
func TestReverseSequenceLengthOutOfRange(t *testing.T) {
	m, g := newModel(10)
	x := must(g.AddInput("x", nil))
	lens := must(g.AddInput("lens", nil))
	n := must(g.AddNode("rev", "", "ReverseSequence", []*canonical.Value{x, lens}, []string{"y"}))
	g.Outputs = []*canonical.Value{n.Outputs[0]}
	e := must(New(m, Options{}))
	defer e.Close()
	in := f32Tensor("x", []int64{4, 4}, make([]float32, 16)...)
	_, err := e.Run(context.Background(), []*canonical.Tensor{in, i64Tensor("lens", []int64{4}, 1, 2, 8, 4)})
	if err == nil || !strings.Contains(err.Error(), `"rev" (ReverseSequence)`) || !strings.Contains(err.Error(), "sequence_lens[2] = 8") {
		t.Fatalf("error %v does not name the node and the length", err)
	}
}
