package tflite

import (
	"encoding/binary"
	"fmt"
	"slices"

	flatbuffers "github.com/google/flatbuffers/go"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// TensorIndex returns the index of the main subgraph's tensor named name:
// an error when no tensor or more than one has that name.
func TensorIndex(model []byte, name string) (idx int32, err error) {
	idx = -1
	err = onMain(model, "reading the model's tensors", func(g *fb.SubGraph) error {
		var t fb.Tensor
		for i := 0; i < g.TensorsLength(); i++ {
			if !g.Tensors(&t, i) || string(t.Name()) != name {
				continue
			}
			if idx >= 0 {
				return fmt.Errorf("tensors %d and %d are both named %q", idx, i, name)
			}
			idx = int32(i)
		}
		if idx < 0 {
			return fmt.Errorf("no tensor of the main subgraph is named %q", name)
		}
		return nil
	})
	if err != nil {
		return -1, err
	}
	return idx, nil
}

// WithOutputs returns a copy of the TFLite flatbuffer model whose main
// subgraph has the tensors extra as outputs after its own (those that
// already are outputs are not repeated), and no signatures (they list
// only the model's own outputs, and interpreters that name outputs by
// signature would drop the others). An interpreter keeps every output's
// values, so the copy hands out intermediate tensors that the model's
// arena would otherwise reuse. The original bytes are not changed: the
// new output list and an empty signature list are appended to the copy
// and the tables point at them (flatbuffer offsets point forward, and the
// appended vectors follow every table).
func WithOutputs(model []byte, extra []int32) (out []byte, err error) {
	err = onMain(model, "adding outputs", func(g *fb.SubGraph) error {
		outs := make([]int32, 0, g.OutputsLength()+len(extra))
		for i := 0; i < g.OutputsLength(); i++ {
			outs = append(outs, g.Outputs(i))
		}
		for _, idx := range extra {
			if idx < 0 || int(idx) >= g.TensorsLength() {
				return fmt.Errorf("tensor %d out of range (%d tensors)", idx, g.TensorsLength())
			}
			if !slices.Contains(outs, idx) {
				outs = append(outs, idx)
			}
		}
		// SubGraph.outputs is field 2 (vtable slot 8), Model.signature_defs
		// field 7 (slot 18), as tflitefb reads them.
		st := g.Table()
		field := st.Offset(8)
		if field == 0 {
			return fmt.Errorf("the main subgraph has no output list to extend")
		}
		out = slices.Clone(model)
		out = appendVector(out, st.Pos+flatbuffers.UOffsetT(field), outs)
		mt := fb.GetRootAsModel(model, 0).Table()
		if sig := mt.Offset(18); sig != 0 {
			out = appendVector(out, mt.Pos+flatbuffers.UOffsetT(sig), nil)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// appendVector appends an int32 vector to buf, 4-byte aligned, and points
// the offset field at byte at (a uoffset, relative to itself) at it.
func appendVector(buf []byte, at flatbuffers.UOffsetT, v []int32) []byte {
	for len(buf)%4 != 0 {
		buf = append(buf, 0)
	}
	pos := len(buf)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(v)))
	for _, x := range v {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(x))
	}
	binary.LittleEndian.PutUint32(buf[at:], uint32(pos-int(at)))
	return buf
}

// mainSubgraph is subgraph 0 of a TFLite flatbuffer.
func mainSubgraph(model []byte) (*fb.SubGraph, error) {
	if len(model) < 8 || string(model[4:8]) != "TFL3" {
		return nil, fmt.Errorf("not a TFLite flatbuffer (no \"TFL3\" identifier)")
	}
	m := fb.GetRootAsModel(model, 0)
	g := new(fb.SubGraph)
	if m.SubgraphsLength() == 0 || !m.Subgraphs(g, 0) {
		return nil, fmt.Errorf("the model has no subgraph")
	}
	if g.TensorsLength() > len(model)/4 || g.OutputsLength() > len(model)/4 {
		return nil, fmt.Errorf("the main subgraph claims %d tensors and %d outputs in a %d-byte file", g.TensorsLength(), g.OutputsLength(), len(model))
	}
	return g, nil
}

// OutputIndexes returns the tensor indexes of the main subgraph's
// outputs, in order.
func OutputIndexes(model []byte) (idx []int32, err error) {
	err = onMain(model, "reading the model's outputs", func(g *fb.SubGraph) error {
		for i := 0; i < g.OutputsLength(); i++ {
			idx = append(idx, g.Outputs(i))
		}
		return nil
	})
	return idx, err
}

// onMain calls f on subgraph 0 of a TFLite flatbuffer; an error of f, or
// a malformed flatbuffer (a panic of the reader), is one prefixed with
// what.
func onMain(model []byte, what string, f func(*fb.SubGraph) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: the flatbuffer is malformed (%v)", what, r)
		}
	}()
	g, err := mainSubgraph(model)
	if err == nil {
		err = f(g)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
