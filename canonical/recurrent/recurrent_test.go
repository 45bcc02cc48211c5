package recurrent

import (
	"slices"
	"testing"
)

// The ONNX operator docs stack an LSTM's gates as i, o, f, c and a GRU's
// as z, r, h; Keras's LSTM stacks i, f, c, o and PyTorch's GRU r, z, n.
func TestDataToONNX(t *testing.T) {
	for _, tc := range []struct {
		op, order string
		in, want  []float32
	}{
		{"LSTM", KerasLSTM, []float32{1, 1, 2, 2, 3, 3, 4, 4}, []float32{1, 1, 4, 4, 2, 2, 3, 3}},
		{"GRU", TorchGRU, []float32{1, 2, 3}, []float32{2, 1, 3}},
		{"GRU", KerasGRU, []float32{1, 2, 3}, []float32{1, 2, 3}},
	} {
		l, err := NewLayout(tc.op, tc.order)
		if err != nil {
			t.Fatal(err)
		}
		got, err := l.DataToONNX(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s %s: %v, want %v", tc.op, tc.order, got, tc.want)
		}
	}
}

func TestLayoutRefusesBadInput(t *testing.T) {
	if _, err := NewLayout("LSTM", "ifc"); err == nil {
		t.Error("a three-letter LSTM order was taken")
	}
	if _, err := NewLayout("Conv", "x"); err == nil {
		t.Error("Conv was taken as a recurrent op")
	}
	l, err := NewLayout("LSTM", TFLiteLSTM)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.DataToONNX(make([]float32, 7)); err == nil {
		t.Error("7 values were split into 4 gates")
	}
	if _, err := ToONNX(l, []string{"i", "f"}); err == nil {
		t.Error("2 items were ordered as 4 gates")
	}
	if g := l.ONNXGate(3); g != 1 {
		t.Errorf("TFLite's o is ONNX gate %d, want 1", g)
	}
}
