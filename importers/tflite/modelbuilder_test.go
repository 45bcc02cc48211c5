package tflite

import (
	"encoding/binary"
	"fmt"
	"math"

	flatbuffers "github.com/google/flatbuffers/go"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// A TFLite model written with the flatbuffers builder, for the one-op
// tests: tensors (constants carry their bytes), operators and the main
// subgraph's inputs and outputs.

type tspec struct {
	name     string
	typ      fb.TensorType
	shape    []int32
	sig      []int32 // shape_signature; nil for none
	data     []byte  // constant bytes; nil for an activation
	scale    []float32
	zp       []int64
	qdim     int32
	variable bool
	// sparsity writes the tensor's SparsityParameters (data then holds
	// the stored values only).
	sparsity func(*flatbuffers.Builder) flatbuffers.UOffsetT
}

type opspec struct {
	code   fb.BuiltinOperator
	custom string
	// customOpts are the custom_options bytes of a custom operator.
	customOpts []byte
	inputs     []int32
	outputs    []int32
	optType    fb.BuiltinOptions
	opts       func(*flatbuffers.Builder) flatbuffers.UOffsetT
	// optType2, opts2 are builtin_options_2 (the StableHLO builtins').
	optType2 fb.BuiltinOptions2
	opts2    func(*flatbuffers.Builder) flatbuffers.UOffsetT
	version  int32
}

type mspec struct {
	tensors         []tspec
	ops             []opspec
	inputs, outputs []int32
	// subgraphs are the model's further subgraphs (1, 2, ...), for IF,
	// WHILE and CALL_ONCE.
	subgraphs []mspec
}

// add appends a tensor and returns its index.
func (m *mspec) add(t tspec) int32 {
	m.tensors = append(m.tensors, t)
	return int32(len(m.tensors) - 1)
}

func (m *mspec) bytes() []byte {
	b := flatbuffers.NewBuilder(4096)
	ivec := func(v []int32, start func(*flatbuffers.Builder, int) flatbuffers.UOffsetT) flatbuffers.UOffsetT {
		start(b, len(v))
		for i := len(v) - 1; i >= 0; i-- {
			b.PrependInt32(v[i])
		}
		return b.EndVector(len(v))
	}
	offs := func(v []flatbuffers.UOffsetT, start func(*flatbuffers.Builder, int) flatbuffers.UOffsetT) flatbuffers.UOffsetT {
		start(b, len(v))
		for i := len(v) - 1; i >= 0; i-- {
			b.PrependUOffsetT(v[i])
		}
		return b.EndVector(len(v))
	}
	// Buffers: 0 empty, then one per constant tensor of each subgraph.
	graphs := []*mspec{m}
	for i := range m.subgraphs {
		graphs = append(graphs, &m.subgraphs[i])
	}
	var bufs []flatbuffers.UOffsetT
	fb.BufferStart(b)
	bufs = append(bufs, fb.BufferEnd(b))
	bufIdx := make([][]uint32, len(graphs))
	for gi, g := range graphs {
		bufIdx[gi] = make([]uint32, len(g.tensors))
		for i, t := range g.tensors {
			if t.data == nil {
				continue
			}
			b.StartVector(1, len(t.data), 16)
			for j := len(t.data) - 1; j >= 0; j-- {
				b.PrependByte(t.data[j])
			}
			d := b.EndVector(len(t.data))
			fb.BufferStart(b)
			fb.BufferAddData(b, d)
			bufIdx[gi][i] = uint32(len(bufs))
			bufs = append(bufs, fb.BufferEnd(b))
		}
	}
	// Operator codes, one per distinct (code, custom), shared by the
	// subgraphs.
	type key struct {
		code   fb.BuiltinOperator
		custom string
	}
	codeIdx := map[key]uint32{}
	var codes []flatbuffers.UOffsetT
	var sgs []flatbuffers.UOffsetT
	for gi, g := range graphs {
		tens := g.tensorOffsets(b, ivec, bufIdx[gi])
		var ops []flatbuffers.UOffsetT
		for _, o := range g.ops {
			k := key{o.code, o.custom}
			if _, ok := codeIdx[k]; !ok {
				var cn flatbuffers.UOffsetT
				if o.custom != "" {
					cn = b.CreateString(o.custom)
				}
				fb.OperatorCodeStart(b)
				fb.OperatorCodeAddBuiltinCode(b, o.code)
				fb.OperatorCodeAddDeprecatedBuiltinCode(b, int8(min(int32(o.code), 127)))
				if o.custom != "" {
					fb.OperatorCodeAddCustomCode(b, cn)
				}
				fb.OperatorCodeAddVersion(b, max(o.version, 1))
				codeIdx[k] = uint32(len(codes))
				codes = append(codes, fb.OperatorCodeEnd(b))
			}
			var opt, opt2 flatbuffers.UOffsetT
			if o.opts != nil {
				opt = o.opts(b)
			}
			if o.opts2 != nil {
				opt2 = o.opts2(b)
			}
			in := ivec(o.inputs, fb.OperatorStartInputsVector)
			out := ivec(o.outputs, fb.OperatorStartOutputsVector)
			var co flatbuffers.UOffsetT
			if o.customOpts != nil {
				co = b.CreateByteVector(o.customOpts)
			}
			fb.OperatorStart(b)
			if o.customOpts != nil {
				fb.OperatorAddCustomOptions(b, co)
			}
			fb.OperatorAddOpcodeIndex(b, codeIdx[k])
			fb.OperatorAddInputs(b, in)
			fb.OperatorAddOutputs(b, out)
			if o.opts != nil {
				fb.OperatorAddBuiltinOptionsType(b, o.optType)
				fb.OperatorAddBuiltinOptions(b, opt)
			}
			if o.opts2 != nil {
				fb.OperatorAddBuiltinOptions2Type(b, o.optType2)
				fb.OperatorAddBuiltinOptions2(b, opt2)
			}
			ops = append(ops, fb.OperatorEnd(b))
		}
		tv := offs(tens, fb.SubGraphStartTensorsVector)
		ov := offs(ops, fb.SubGraphStartOperatorsVector)
		gin := ivec(g.inputs, fb.SubGraphStartInputsVector)
		gout := ivec(g.outputs, fb.SubGraphStartOutputsVector)
		gname := b.CreateString("main")
		if gi > 0 {
			gname = b.CreateString(fmt.Sprintf("subgraph%d", gi))
		}
		fb.SubGraphStart(b)
		fb.SubGraphAddTensors(b, tv)
		fb.SubGraphAddInputs(b, gin)
		fb.SubGraphAddOutputs(b, gout)
		fb.SubGraphAddOperators(b, ov)
		fb.SubGraphAddName(b, gname)
		sgs = append(sgs, fb.SubGraphEnd(b))
	}
	cv := offs(codes, fb.ModelStartOperatorCodesVector)
	sv := offs(sgs, fb.ModelStartSubgraphsVector)
	bv := offs(bufs, fb.ModelStartBuffersVector)
	desc := b.CreateString("onnxconv one-op test")
	fb.ModelStart(b)
	fb.ModelAddVersion(b, 3)
	fb.ModelAddOperatorCodes(b, cv)
	fb.ModelAddSubgraphs(b, sv)
	fb.ModelAddBuffers(b, bv)
	fb.ModelAddDescription(b, desc)
	mo := fb.ModelEnd(b)
	b.FinishWithFileIdentifier(mo, []byte("TFL3"))
	return b.FinishedBytes()
}

// tensorOffsets writes the subgraph's tensors (bufIdx gives each constant's
// buffer).
func (m *mspec) tensorOffsets(b *flatbuffers.Builder, ivec func([]int32, func(*flatbuffers.Builder, int) flatbuffers.UOffsetT) flatbuffers.UOffsetT, bufIdx []uint32) []flatbuffers.UOffsetT {
	var tens []flatbuffers.UOffsetT
	for i, t := range m.tensors {
		name := b.CreateString(t.name)
		shape := ivec(t.shape, fb.TensorStartShapeVector)
		var sig flatbuffers.UOffsetT
		if t.sig != nil {
			sig = ivec(t.sig, fb.TensorStartShapeSignatureVector)
		}
		var q flatbuffers.UOffsetT
		if len(t.scale) > 0 {
			fb.QuantizationParametersStartScaleVector(b, len(t.scale))
			for j := len(t.scale) - 1; j >= 0; j-- {
				b.PrependFloat32(t.scale[j])
			}
			sc := b.EndVector(len(t.scale))
			zps := t.zp
			if len(zps) == 0 {
				zps = make([]int64, len(t.scale))
			}
			fb.QuantizationParametersStartZeroPointVector(b, len(zps))
			for j := len(zps) - 1; j >= 0; j-- {
				b.PrependInt64(zps[j])
			}
			zv := b.EndVector(len(zps))
			fb.QuantizationParametersStart(b)
			fb.QuantizationParametersAddScale(b, sc)
			fb.QuantizationParametersAddZeroPoint(b, zv)
			fb.QuantizationParametersAddQuantizedDimension(b, t.qdim)
			q = fb.QuantizationParametersEnd(b)
		}
		var sp flatbuffers.UOffsetT
		if t.sparsity != nil {
			sp = t.sparsity(b)
		}
		fb.TensorStart(b)
		fb.TensorAddName(b, name)
		if sp != 0 {
			fb.TensorAddSparsity(b, sp)
		}
		fb.TensorAddShape(b, shape)
		if t.sig != nil {
			fb.TensorAddShapeSignature(b, sig)
		}
		fb.TensorAddType(b, t.typ)
		fb.TensorAddBuffer(b, bufIdx[i])
		if q != 0 {
			fb.TensorAddQuantization(b, q)
		}
		fb.TensorAddIsVariable(b, t.variable)
		tens = append(tens, fb.TensorEnd(b))
	}
	return tens
}

func f32Bytes(v ...float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

func i32Bytes(v ...int32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
	}
	return out
}

func i64Bytes(v ...int64) []byte {
	out := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(out[8*i:], uint64(x))
	}
	return out
}

func i8Bytes(v ...int8) []byte {
	out := make([]byte, len(v))
	for i, x := range v {
		out[i] = byte(x)
	}
	return out
}
