package tfops

import (
	"strings"
	"testing"
)

// An input or output that names a control dependency ("^x") is refused
// with an error naming it, not a panic (found by FuzzGraphDef: the empty
// key tensorKey returns for it was split at −1).
func TestControlInputRefused(t *testing.T) {
	nodes := []Node{
		{Name: "x", Op: "Placeholder", Attrs: map[string]Attr{"dtype": {Type: "DT_FLOAT"}}},
		{Name: "y", Op: "Identity", Inputs: []string{"x"}, Attrs: map[string]Attr{"T": {Type: "DT_FLOAT"}}},
	}
	for _, g := range []*Graph{
		{Nodes: nodes, Inputs: []IO{{Name: "in", Tensor: "^x"}}, Outputs: []IO{{Name: "out", Tensor: "y"}}},
		{Nodes: nodes, Inputs: []IO{{Name: "in", Tensor: "x"}}, Outputs: []IO{{Name: "out", Tensor: "^y"}}},
	} {
		_, err := Convert(g, Options{File: "m.pb"})
		if err == nil || !strings.Contains(err.Error(), "control input") || !strings.Contains(err.Error(), "m.pb") {
			t.Errorf("inputs %v outputs %v: err = %v, want a refusal naming the control input", g.Inputs, g.Outputs, err)
		}
	}
	if k, n := splitKey(""); k != "" || n != 0 {
		t.Errorf(`splitKey("") = %q, %d`, k, n)
	}
}
