package tflite

import (
	"sort"

	flatbuffers "github.com/google/flatbuffers/go"

	fb "github.com/onnxconv/onnxconv/importers/tflite/tflitefb"
)

// The TFLite model as plain Go values, serialized at the end by write.

type ttensor struct {
	name  string
	typ   fb.TensorType
	shape []int64 // -1 for a dynamic dim
	buf   uint32  // 0: no data
}

// optFn builds an operator's options table.
type optFn func(b *flatbuffers.Builder) flatbuffers.UOffsetT

type top struct {
	code     fb.BuiltinOperator
	in, out  []int32
	optType  fb.BuiltinOptions
	opts     optFn
	fromNode string // the ONNX node it came from, for messages
}

type tmodel struct {
	tensors []*ttensor
	buffers [][]byte // buffers[0] is the empty buffer
	ops     []*top
	inputs  []int32
	outputs []int32
}

func newTModel() *tmodel { return &tmodel{buffers: [][]byte{nil}} }

func (t *tmodel) addTensor(name string, typ fb.TensorType, shape []int64, data []byte) int32 {
	tt := &ttensor{name: name, typ: typ, shape: append([]int64(nil), shape...)}
	if data != nil {
		tt.buf = uint32(len(t.buffers))
		t.buffers = append(t.buffers, data)
	}
	t.tensors = append(t.tensors, tt)
	return int32(len(t.tensors) - 1)
}

func (t *tmodel) addOp(code fb.BuiltinOperator, in, out []int32, optType fb.BuiltinOptions, opts optFn, node string) {
	t.ops = append(t.ops, &top{code: code, in: in, out: out, optType: optType, opts: opts, fromNode: node})
}

func int32Vec(b *flatbuffers.Builder, start func(*flatbuffers.Builder, int) flatbuffers.UOffsetT, v []int32) flatbuffers.UOffsetT {
	start(b, len(v))
	for i := len(v) - 1; i >= 0; i-- {
		b.PrependInt32(v[i])
	}
	return b.EndVector(len(v))
}

func offVec(b *flatbuffers.Builder, start func(*flatbuffers.Builder, int) flatbuffers.UOffsetT, v []flatbuffers.UOffsetT) flatbuffers.UOffsetT {
	start(b, len(v))
	for i := len(v) - 1; i >= 0; i-- {
		b.PrependUOffsetT(v[i])
	}
	return b.EndVector(len(v))
}

// write serializes the model (schema version 3, file identifier TFL3).
func (t *tmodel) write(description string) []byte {
	size := 1024
	for _, d := range t.buffers {
		size += len(d) + 32
	}
	b := flatbuffers.NewBuilder(size)

	// Operator codes, in first-use order.
	codeIdx := map[fb.BuiltinOperator]uint32{}
	var codes []fb.BuiltinOperator
	for _, o := range t.ops {
		if _, ok := codeIdx[o.code]; !ok {
			codeIdx[o.code] = uint32(len(codes))
			codes = append(codes, o.code)
		}
	}

	// Buffers (data 16-byte aligned).
	bufOffs := make([]flatbuffers.UOffsetT, len(t.buffers))
	for i := len(t.buffers) - 1; i >= 0; i-- {
		var data flatbuffers.UOffsetT
		if len(t.buffers[i]) > 0 {
			b.Prep(16, len(t.buffers[i]))
			data = b.CreateByteVector(t.buffers[i])
		}
		fb.BufferStart(b)
		if len(t.buffers[i]) > 0 {
			fb.BufferAddData(b, data)
		}
		bufOffs[i] = fb.BufferEnd(b)
	}
	buffers := offVec(b, fb.ModelStartBuffersVector, bufOffs)

	// Tensors.
	tOffs := make([]flatbuffers.UOffsetT, len(t.tensors))
	for i, tt := range t.tensors {
		name := b.CreateString(tt.name)
		shape := make([]int32, len(tt.shape))
		sig := make([]int32, len(tt.shape))
		dynamic := false
		for j, d := range tt.shape {
			if d < 0 {
				shape[j], sig[j] = 1, -1
				dynamic = true
			} else {
				shape[j], sig[j] = int32(d), int32(d)
			}
		}
		sh := int32Vec(b, fb.TensorStartShapeVector, shape)
		var sg flatbuffers.UOffsetT
		if dynamic {
			sg = int32Vec(b, fb.TensorStartShapeSignatureVector, sig)
		}
		fb.TensorStart(b)
		fb.TensorAddShape(b, sh)
		fb.TensorAddType(b, tt.typ)
		fb.TensorAddBuffer(b, tt.buf)
		fb.TensorAddName(b, name)
		if dynamic {
			fb.TensorAddShapeSignature(b, sg)
		}
		tOffs[i] = fb.TensorEnd(b)
	}
	tensors := offVec(b, fb.SubGraphStartTensorsVector, tOffs)

	// Operators.
	oOffs := make([]flatbuffers.UOffsetT, len(t.ops))
	for i, o := range t.ops {
		in := int32Vec(b, fb.OperatorStartInputsVector, o.in)
		out := int32Vec(b, fb.OperatorStartOutputsVector, o.out)
		var opt flatbuffers.UOffsetT
		if o.opts != nil {
			opt = o.opts(b)
		}
		fb.OperatorStart(b)
		fb.OperatorAddOpcodeIndex(b, codeIdx[o.code])
		fb.OperatorAddInputs(b, in)
		fb.OperatorAddOutputs(b, out)
		if o.opts != nil {
			fb.OperatorAddBuiltinOptionsType(b, o.optType)
			fb.OperatorAddBuiltinOptions(b, opt)
		}
		oOffs[i] = fb.OperatorEnd(b)
	}
	ops := offVec(b, fb.SubGraphStartOperatorsVector, oOffs)
	inputs := int32Vec(b, fb.SubGraphStartInputsVector, t.inputs)
	outputs := int32Vec(b, fb.SubGraphStartOutputsVector, t.outputs)
	sgName := b.CreateString("main")
	fb.SubGraphStart(b)
	fb.SubGraphAddTensors(b, tensors)
	fb.SubGraphAddInputs(b, inputs)
	fb.SubGraphAddOutputs(b, outputs)
	fb.SubGraphAddOperators(b, ops)
	fb.SubGraphAddName(b, sgName)
	sg := fb.SubGraphEnd(b)
	subgraphs := offVec(b, fb.ModelStartSubgraphsVector, []flatbuffers.UOffsetT{sg})

	cOffs := make([]flatbuffers.UOffsetT, len(codes))
	for i, c := range codes {
		fb.OperatorCodeStart(b)
		dep := int8(127) // PLACEHOLDER_FOR_GREATER_OP_CODES
		if c < 127 {
			dep = int8(c)
		}
		fb.OperatorCodeAddDeprecatedBuiltinCode(b, dep)
		fb.OperatorCodeAddBuiltinCode(b, c)
		fb.OperatorCodeAddVersion(b, opVersion(c))
		cOffs[i] = fb.OperatorCodeEnd(b)
	}
	opcodes := offVec(b, fb.ModelStartOperatorCodesVector, cOffs)
	desc := b.CreateString(description)
	fb.ModelStart(b)
	fb.ModelAddVersion(b, 3)
	fb.ModelAddOperatorCodes(b, opcodes)
	fb.ModelAddSubgraphs(b, subgraphs)
	fb.ModelAddDescription(b, desc)
	fb.ModelAddBuffers(b, buffers)
	root := fb.ModelEnd(b)
	b.FinishWithFileIdentifier(root, []byte("TFL3"))
	return b.FinishedBytes()
}

// opVersion is the operator version written in the operator code: the
// lowest version of each op that has the features the exporter uses.
func opVersion(c fb.BuiltinOperator) int32 {
	switch c {
	case fb.BuiltinOperatorFULLY_CONNECTED:
		return 5 // keep_num_dims
	case fb.BuiltinOperatorDEQUANTIZE:
		return 3 // float16 input
	case fb.BuiltinOperatorRESIZE_BILINEAR, fb.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR:
		return 3 // half_pixel_centers
	case fb.BuiltinOperatorBATCH_MATMUL:
		return 1
	case fb.BuiltinOperatorGATHER:
		return 1
	}
	return 1
}

// opCounts counts the operators per builtin name.
func (t *tmodel) opCounts() map[string]int {
	out := map[string]int{}
	for _, o := range t.ops {
		out[o.code.String()]++
	}
	return out
}

func sortedKeys(m map[string]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
