package onnxspec

import (
	"fmt"
	"strings"
)

// gates returns the gates of an ONNX recurrent op in the order its W, R
// and B stack them, one letter each: LSTM input, output, forget, cell; GRU
// update, reset, hidden; RNN its one gate.
func gates(op string) (string, bool) {
	switch op {
	case "LSTM":
		return "iofc", true
	case "GRU":
		return "zrh", true
	case "RNN":
		return "h", true
	}
	return "", false
}

// GateOrder returns, for each gate of the ONNX recurrent op in ONNX's
// order, its position in a framework's order, given as the same letters:
// GateOrder("LSTM", "ifco") is [0 3 1 2] (Keras and TFLite stack i, f, c,
// o; PyTorch's i, f, g, o is "ifco" too, its g being ONNX's c), and
// GateOrder("GRU", "rzh") is [1 0 2] (PyTorch's r, z, n). Rows (or
// values) of ONNX gate j are the framework's gate order[j].
func GateOrder(op, framework string) ([]int, error) {
	onnx, ok := gates(op)
	if !ok {
		return nil, fmt.Errorf("onnxspec: %q is not a recurrent op (LSTM, GRU, RNN)", op)
	}
	if len(framework) != len(onnx) {
		return nil, fmt.Errorf("onnxspec: %s has %d gates (%s), the order %q names %d", op, len(onnx), onnx, framework, len(framework))
	}
	order := make([]int, len(onnx))
	for j, g := range onnx {
		k := strings.IndexRune(framework, g)
		if k < 0 || strings.Count(framework, string(g)) != 1 {
			return nil, fmt.Errorf("onnxspec: the order %q of %s does not name gate %c once (want the letters of %s)", framework, op, g, onnx)
		}
		order[j] = k
	}
	return order, nil
}
