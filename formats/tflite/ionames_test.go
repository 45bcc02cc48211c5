package tflite

import (
	"reflect"
	"testing"
)

func TestIONames(t *testing.T) {
	for _, c := range []struct {
		raw       []string
		ins, outs []int32
		sig       map[int32]string
		want      []string
	}{
		// Named inputs and outputs: TensorNames.
		{[]string{"x", "", "y"}, []int32{0}, []int32{2}, nil, []string{"x", "tensor_1", "y"}},
		// Empty and repeated: input_K/output_K; a tensor already called
		// input_0 keeps its name.
		{[]string{"", "", "input_0", "same", "same"}, []int32{0, 1}, []int32{4, 3}, nil,
			[]string{"input_0_2", "input_1", "input_0", "output_1", "output_0"}},
		// Signature keys, when they are free.
		{[]string{"", "", "t", "t"}, []int32{0, 1}, []int32{3}, map[int32]string{0: "audio", 1: "t", 3: "probs"},
			[]string{"audio", "input_1", "t", "probs"}},
		// A pass-through tensor is named as the input.
		{[]string{""}, []int32{0}, []int32{0}, nil, []string{"input_0"}},
		// Out-of-range indices are ignored.
		{[]string{""}, []int32{5}, []int32{-1}, nil, []string{"tensor_0"}},
	} {
		if got := IONames(c.raw, c.ins, c.outs, c.sig); !reflect.DeepEqual(got, c.want) {
			t.Errorf("IONames(%q, %v, %v, %v) = %q, want %q", c.raw, c.ins, c.outs, c.sig, got, c.want)
		}
	}
}
