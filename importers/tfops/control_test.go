package tfops

import (
	"errors"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// A While whose body runs the same While (a function calling itself), a
// missing function and a body of the wrong arity are *OpErrors naming the
// node and the function, not a stack overflow.
func TestControlFlowRefusals(t *testing.T) {
	x := Node{Name: "x", Op: "Placeholder", Attrs: map[string]Attr{"dtype": {Type: "DT_FLOAT"}}}
	loop := func(name, input, body string) Node {
		return Node{Name: name, Op: "StatelessWhile", Inputs: []string{input}, Attrs: map[string]Attr{"cond": {Func: "cond"}, "body": {Func: body}}}
	}
	cond := &Graph{Nodes: []Node{{Name: "zero", Op: "Const", Attrs: map[string]Attr{"value": {Tensor: canonical.Float32Tensor("", nil, []float32{0})}}}, {Name: "t", Op: "Greater", Inputs: []string{"a", "zero"}}},
		Inputs: []IO{{Name: "a", Tensor: "a"}}, Outputs: []IO{{Name: "output_0", Tensor: "t:z:0"}}}
	self := &Graph{Nodes: []Node{loop("inner", "a", "self")},
		Inputs: []IO{{Name: "a", Tensor: "a"}}, Outputs: []IO{{Name: "output_0", Tensor: "inner:output:0"}}}
	two := &Graph{Inputs: []IO{{Name: "a", Tensor: "a"}, {Name: "b", Tensor: "b"}}, Outputs: []IO{{Name: "output_0", Tensor: "a"}}}
	for _, tc := range []struct {
		body string
		want string
	}{
		{"self", "calls itself"},
		{"nowhere", "lacks"},
		{"two", "takes 2"},
	} {
		g := &Graph{Nodes: []Node{x, loop("loop", "x", tc.body)}, Functions: map[string]*Graph{"cond": cond, "self": self, "two": two}}
		_, err := Convert(g, Options{File: "m.pb"})
		var oe *OpError
		if !errors.As(err, &oe) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "loop") {
			t.Errorf("body %s: err = %v, want an *OpError naming the loop and %q", tc.body, err, tc.want)
		}
	}
}
