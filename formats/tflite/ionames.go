package tflite

import (
	"fmt"
	"strconv"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// IONames is TensorNames for the main subgraph: an input or output tensor
// whose TFLite name is empty or shared with another tensor gets a readable
// name of its own: its key in the model's signature (sig, by tensor index)
// when it has one, else input_K or output_K (K its position). A tensor
// that is both an input and an output is named as the input. The other
// tensors are named as TensorNames names them, around those names. With
// no such input or output, it is TensorNames.
func IONames(raw []string, inputs, outputs []int32, sig map[int32]string) []string {
	count := make(map[string]int, len(raw))
	for _, s := range raw {
		count[Sanitize(s)]++
	}
	fixed := map[int]string{}
	taken := map[string]bool{}
	pick := func(list []int32, kind string) {
		for k, idx := range list {
			i := int(idx)
			if i < 0 || i >= len(raw) {
				continue
			}
			if _, done := fixed[i]; done {
				continue
			}
			if s := Sanitize(raw[i]); s != "" && count[s] == 1 {
				continue
			}
			name := Sanitize(sig[idx])
			if name == "" || taken[name] || count[name] > 0 {
				name = kind + "_" + strconv.Itoa(k)
			}
			for n := 2; taken[name] || count[name] > 0; n++ {
				name = kind + "_" + strconv.Itoa(k) + "_" + strconv.Itoa(n)
			}
			fixed[i] = name
			taken[name] = true
		}
	}
	pick(inputs, "input")
	pick(outputs, "output")
	return tensorNames(raw, fixed)
}

// SignatureNames returns, for subgraph sub, the signature keys of its
// input and output tensors (tensor index -> key) from the first signature
// def of that subgraph; nil when there is none. bufLen bounds the vector
// lengths a malformed file may claim.
func SignatureNames(m *fb.Model, sub int, bufLen int) (map[int32]string, error) {
	n := m.SignatureDefsLength()
	if n < 0 || n > bufLen/4 {
		return nil, fmt.Errorf("signature_defs vector length %d in a %d-byte file", n, bufLen)
	}
	var sd fb.SignatureDef
	var tm fb.TensorMap
	for i := 0; i < n; i++ {
		if !m.SignatureDefs(&sd, i) || int(sd.SubgraphIndex()) != sub {
			continue
		}
		out := map[int32]string{}
		for _, side := range []struct {
			n  int
			at func(*fb.TensorMap, int) bool
		}{{sd.InputsLength(), sd.Inputs}, {sd.OutputsLength(), sd.Outputs}} {
			if side.n < 0 || side.n > bufLen/4 {
				return nil, fmt.Errorf("signature %d: tensor map length %d in a %d-byte file", i, side.n, bufLen)
			}
			for j := 0; j < side.n; j++ {
				if !side.at(&tm, j) {
					continue
				}
				idx := int32(tm.TensorIndex())
				if _, dup := out[idx]; !dup && idx >= 0 {
					out[idx] = string(tm.Name())
				}
			}
		}
		return out, nil
	}
	return nil, nil
}
