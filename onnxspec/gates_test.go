package onnxspec

import (
	"slices"
	"testing"
)

// The orders the frameworks document: Keras LSTM kernels stack i, f, c, o
// (keras.layers.LSTMCell), PyTorch's weight_ih_l0 i, f, g, o and GRU's
// r, z, n (torch.nn.LSTM, torch.nn.GRU docs); ONNX's LSTM W is i, o, f, c
// and GRU's z, r, h (ONNX operator docs).
func TestGateOrder(t *testing.T) {
	for _, c := range []struct {
		op, from string
		want     []int
	}{
		{"LSTM", "ifco", []int{0, 3, 1, 2}},
		{"GRU", "rzh", []int{1, 0, 2}},
		{"GRU", "zrh", []int{0, 1, 2}},
		{"RNN", "h", []int{0}},
	} {
		got, err := GateOrder(c.op, c.from)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("GateOrder(%s, %s) = %v, %v; want %v", c.op, c.from, got, err, c.want)
		}
	}
	for _, bad := range [][2]string{{"Conv", "i"}, {"LSTM", "ifc"}, {"LSTM", "iffo"}, {"GRU", "abc"}} {
		if _, err := GateOrder(bad[0], bad[1]); err == nil {
			t.Errorf("GateOrder(%s, %s) gave no error", bad[0], bad[1])
		}
	}
}
