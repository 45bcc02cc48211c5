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
	defer func() {
		if r := recover(); r != nil {
			idx, err = -1, fmt.Errorf("reading the model's tensors: the flatbuffer is malformed (%v)", r)
		}
	}()
	g, err := mainSubgraph(model)
	if err != nil {
		return -1, err
	}
	idx = -1
	var t fb.Tensor
	for i := 0; i < g.TensorsLength(); i++ {
		if !g.Tensors(&t, i) || string(t.Name()) != name {
			continue
		}
		if idx >= 0 {
			return -1, fmt.Errorf("tensors %d and %d are both named %q", idx, i, name)
		}
		idx = int32(i)
	}
	if idx < 0 {
		return -1, fmt.Errorf("no tensor of the main subgraph is named %q", name)
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
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("adding outputs: the flatbuffer is malformed (%v)", r)
		}
	}()
	g, err := mainSubgraph(model)
	if err != nil {
		return nil, err
	}
	outs := make([]int32, 0, g.OutputsLength()+len(extra))
	for i := 0; i < g.OutputsLength(); i++ {
		outs = append(outs, g.Outputs(i))
	}
	for _, idx := range extra {
		if idx < 0 || int(idx) >= g.TensorsLength() {
			return nil, fmt.Errorf("adding outputs: tensor %d out of range (%d tensors)", idx, g.TensorsLength())
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
		return nil, fmt.Errorf("adding outputs: the main subgraph has no output list to extend")
	}
	buf := slices.Clone(model)
	buf = appendVector(buf, st.Pos+flatbuffers.UOffsetT(field), outs)
	m := fb.GetRootAsModel(model, 0)
	mt := m.Table()
	if sig := mt.Offset(18); sig != 0 {
		buf = appendVector(buf, mt.Pos+flatbuffers.UOffsetT(sig), nil)
	}
	return buf, nil
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
	defer func() {
		if r := recover(); r != nil {
			idx, err = nil, fmt.Errorf("reading the model's outputs: the flatbuffer is malformed (%v)", r)
		}
	}()
	g, err := mainSubgraph(model)
	if err != nil {
		return nil, err
	}
	for i := 0; i < g.OutputsLength(); i++ {
		idx = append(idx, g.Outputs(i))
	}
	return idx, nil
}
