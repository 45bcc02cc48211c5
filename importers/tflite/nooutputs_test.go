package tflite

import (
	"strings"
	"testing"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
	"github.com/onnxconv/onnxconv/internal/recovered"
)

// An operator without outputs (a hostile or truncated file) is refused
// with an error naming it, never a panic (FuzzImport found WHERE indexing
// its missing output). Every builtin code is tried with 1–3 float inputs;
// one refused before its converter runs (options, input count) passes
// too. The graph's output is the operator's first input, so that the
// model is otherwise whole.
func TestOperatorsWithoutOutputs(t *testing.T) {
	for code := range fb.EnumNamesBuiltinOperator {
		for n := 1; n <= 3; n++ {
			var ins []tspec
			for range n {
				ins = append(ins, tspec{typ: fb.TensorTypeFLOAT32, shape: []int32{2, 2}})
			}
			m := single(code, 0, nil, ins)
			m.outputs = []int32{0}
			_, err := Import(m.bytes(), Options{})
			if err == nil {
				continue
			}
			if recovered.In(err) {
				t.Errorf("%s with %d inputs and no outputs: %v", fb.EnumNamesBuiltinOperator[code], n, strings.SplitN(err.Error(), "\n", 2)[0])
			}
		}
	}
}
