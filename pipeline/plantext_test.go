package pipeline

import (
	"context"
	"strings"
	"testing"
)

func TestPlanWriteText(t *testing.T) {
	path := "../fixtures/models/transformer_block_opset21/model.onnx"
	for _, c := range []struct {
		opset int
		want  string
	}{
		{7, path + ": 1 node(s) block opset 7:\n  main: node 45 \"Gelu_0\" (Gelu), Gelu 20 -> opset 7: Gelu needs Erf, which does not exist before opset 9; target opset 9 or later (Erf)\n"},
		{19, path + ": nothing blocks opset 19\n"},
	} {
		p, err := Plan(context.Background(), path, c.opset, 0, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := p.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("opset %d:\n%q\nwant\n%q", c.opset, b.String(), c.want)
		}
	}
}
