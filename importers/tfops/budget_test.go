package tfops

import (
	"strconv"
	"strings"
	"testing"
)

// fanOut is a library of depth functions, each calling the next width
// times in a chain (the last an Identity): a few hundred bytes that
// expand to width^depth calls.
func fanOut(depth, width int) *Graph {
	lib := map[string]*Graph{}
	for k := 0; k < depth; k++ {
		f := &Graph{Inputs: []IO{{Name: "a", Tensor: "a"}}}
		in := "a"
		for i := 0; i < width; i++ {
			name := "c" + strconv.Itoa(i)
			f.Nodes = append(f.Nodes, Node{Name: name, Op: "PartitionedCall", Inputs: []string{in},
				Attrs: map[string]Attr{"f": {Func: "f" + strconv.Itoa(k+1)}}})
			in = name + ":output:0"
		}
		f.Outputs = []IO{{Name: "output_0", Tensor: in}}
		lib["f"+strconv.Itoa(k)] = f
	}
	lib["f"+strconv.Itoa(depth)] = &Graph{Inputs: []IO{{Name: "a", Tensor: "a"}},
		Nodes:   []Node{{Name: "id", Op: "Identity", Inputs: []string{"a"}}},
		Outputs: []IO{{Name: "output_0", Tensor: "id:output:0"}}}
	return &Graph{Nodes: []Node{
		{Name: "x", Op: "Placeholder", Attrs: map[string]Attr{"dtype": {Type: "DT_FLOAT"}}},
		{Name: "call", Op: "PartitionedCall", Inputs: []string{"x"}, Attrs: map[string]Attr{"f": {Func: "f0"}}},
	}, Functions: lib}
}

// Calls that fan out 4^15 times are refused by the expansion budget
// (naming a function and the fan-out), while a library that expands a
// little converts.
func TestExpansionBudget(t *testing.T) {
	if _, err := Convert(fanOut(3, 2), Options{File: "m.pb"}); err != nil {
		t.Fatalf("2^3 calls: %v", err)
	}
	_, err := Convert(fanOut(15, 4), Options{File: "m.pb"})
	if err == nil || !strings.Contains(err.Error(), "fan out") {
		t.Fatalf("4^15 calls: err = %v, want the expansion budget's refusal", err)
	}
}
