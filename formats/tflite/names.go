package tflite

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// Sanitize makes a TFLite tensor name a valid ONNX name: valid UTF-8
// without NUL bytes.
func Sanitize(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "_")
}

// TensorNames gives a subgraph's tensors (their TFLite names, in tensor
// order) stable unique ONNX names: the sanitized name; "tensor_I" for an
// empty one; NAME_I (then NAME_I_2, …) for the second and later tensors
// of a name already taken, I being the tensor's index. The importer names
// subgraphs' tensors so; the main graph's through IONames, which the TFLite
// runtime also applies to the inputs and outputs of a model whose names are
// empty or repeated, so the two match by position.
func TensorNames(raw []string) []string { return tensorNames(raw, nil) }

// tensorNames is TensorNames with the names of fixed (by index) given and
// taken.
func tensorNames(raw []string, fixed map[int]string) []string {
	used := make(map[string]bool, len(raw))
	for _, n := range fixed {
		used[n] = true
	}
	out := make([]string, len(raw))
	for i, s := range raw {
		if n, ok := fixed[i]; ok {
			out[i] = n
			continue
		}
		name := Sanitize(s)
		if name == "" {
			name = "tensor_" + strconv.Itoa(i)
		}
		if used[name] {
			base := name + "_" + strconv.Itoa(i)
			name = base
			for k := 2; used[name]; k++ {
				name = base + "_" + strconv.Itoa(k)
			}
		}
		used[name] = true
		out[i] = name
	}
	return out
}

// IO is the inputs and outputs of a model's main subgraph.
type IO struct {
	// Raw are the TFLite names, ONNX the names IONames gives them (as the
	// importer names them), Key their keys in the model's signature ("" for
	// none; runtimes that name tensors by signature key, LiteRT.js, bind
	// through them).
	InRaw, InONNX, OutRaw, OutONNX []string
	InKey, OutKey                  []string
}

// Ambiguous reports whether the TFLite names cannot bind the inputs and
// outputs by name: one is empty or two are the same.
func (io IO) Ambiguous() bool {
	seen := map[string]bool{}
	for _, n := range append(append([]string{}, io.InRaw...), io.OutRaw...) {
		if n == "" || seen[n] {
			return true
		}
		seen[n] = true
	}
	return false
}

// MainIO reads the names of the main subgraph's inputs and outputs from a
// TFLite flatbuffer.
func MainIO(model []byte) (io IO, err error) {
	defer func() {
		if r := recover(); r != nil {
			io, err = IO{}, fmt.Errorf("reading the model's inputs and outputs: the flatbuffer is malformed (%v)", r)
		}
	}()
	if len(model) < 8 || string(model[4:8]) != "TFL3" {
		return IO{}, fmt.Errorf("not a TFLite flatbuffer (no \"TFL3\" identifier)")
	}
	m := Root(model)
	var g fb.SubGraph
	if m.SubgraphsLength() == 0 || !m.Subgraphs(&g, 0) {
		return IO{}, fmt.Errorf("the model has no subgraph")
	}
	if g.TensorsLength() > len(model)/4 {
		// Each tensor takes a 4-byte offset: a larger count is a lie.
		return IO{}, fmt.Errorf("the main subgraph claims %d tensors in a %d-byte file", g.TensorsLength(), len(model))
	}
	raw := make([]string, g.TensorsLength())
	var t fb.Tensor
	for i := range raw {
		if g.Tensors(&t, i) {
			raw[i] = string(t.Name())
		}
	}
	var ins, outs []int32
	if g.InputsLength() > len(model)/4 || g.OutputsLength() > len(model)/4 {
		return IO{}, fmt.Errorf("%d inputs and %d outputs in a %d-byte file", g.InputsLength(), g.OutputsLength(), len(model))
	}
	for i := 0; i < g.InputsLength(); i++ {
		ins = append(ins, g.Inputs(i))
	}
	for i := 0; i < g.OutputsLength(); i++ {
		outs = append(outs, g.Outputs(i))
	}
	sig, err := SignatureNames(m, 0, len(model))
	if err != nil {
		return IO{}, err
	}
	names := IONames(raw, ins, outs, sig)
	pick := func(n int, at func(int) int32) (r, o, k []string, err error) {
		if n > len(model)/4 {
			return nil, nil, nil, fmt.Errorf("%d inputs or outputs in a %d-byte file", n, len(model))
		}
		for i := 0; i < n; i++ {
			idx := at(i)
			if idx < 0 || int(idx) >= len(raw) {
				return nil, nil, nil, fmt.Errorf("tensor index %d out of range (%d tensors)", idx, len(raw))
			}
			r, o, k = append(r, raw[idx]), append(o, names[idx]), append(k, sig[idx])
		}
		return r, o, k, nil
	}
	if io.InRaw, io.InONNX, io.InKey, err = pick(g.InputsLength(), g.Inputs); err != nil {
		return IO{}, err
	}
	if io.OutRaw, io.OutONNX, io.OutKey, err = pick(g.OutputsLength(), g.Outputs); err != nil {
		return IO{}, err
	}
	return io, nil
}
