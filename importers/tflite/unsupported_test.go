package tflite

import (
	"errors"
	"sort"
	"strings"
	"testing"

	formats "github.com/onnxconv/onnxconv/formats/tflite"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
	"github.com/onnxconv/onnxconv/importers"
)

// A model with two different operators the importer cannot map (a custom
// one, twice, and a builtin without a mapping) and one it maps: the error
// names both unmapped ones at once, each with its first node, in the one
// unsupported-op shape.
func TestUnsupportedOpsNamedAtOnce(t *testing.T) {
	var unmapped fb.BuiltinOperator = -1
	var codes []int
	for code := range fb.EnumNamesBuiltinOperator {
		codes = append(codes, int(code))
	}
	sort.Ints(codes)
	h := handlers()
	for _, c := range codes {
		code := fb.BuiltinOperator(c)
		_, handled := h[code]
		if _, ew := formats.Elementwise(code); !ew && !handled && code != fb.BuiltinOperatorCUSTOM {
			unmapped = code
			break
		}
	}
	if unmapped < 0 {
		t.Skip("every builtin operator is mapped")
	}
	f23 := func(name string) tspec { return tspec{name: name, typ: fb.TensorTypeFLOAT32, shape: []int32{2, 3}} }
	m := mspec{}
	x, a, b, c, y := m.add(f23("x")), m.add(f23("a")), m.add(f23("b")), m.add(f23("c")), m.add(f23("y"))
	m.ops = []opspec{
		{code: fb.BuiltinOperatorCUSTOM, custom: "FancyOp", inputs: []int32{x}, outputs: []int32{a}},
		{code: fb.BuiltinOperatorRELU, inputs: []int32{a}, outputs: []int32{b}},
		{code: unmapped, inputs: []int32{b}, outputs: []int32{c}},
		{code: fb.BuiltinOperatorCUSTOM, custom: "FancyOp", inputs: []int32{c}, outputs: []int32{y}},
	}
	m.inputs, m.outputs = []int32{x}, []int32{y}
	_, err := Import(m.bytes(), Options{})
	var ue *importers.UnsupportedOpsError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v, want an *importers.UnsupportedOpsError", err)
	}
	got := ue.ByOp()
	if len(got) != 2 || got["CUSTOM:FancyOp"].Node != "a" || got["CUSTOM:FancyOp"].Count != 2 || got[unmapped.String()].Node != "c" {
		t.Errorf("ops %+v, want CUSTOM:FancyOp (a, 2 nodes) and %s (c)", ue.Ops, unmapped)
	}
	if msg := err.Error(); !strings.Contains(msg, "2 tflite operators not supported") {
		t.Errorf("message %q", msg)
	}
}
