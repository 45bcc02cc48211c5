package tflite

import (
	"sort"

	flatbuffers "github.com/google/flatbuffers/go"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// The TFLite model as plain Go values, serialized at the end by write.

type ttensor struct {
	name  string
	typ   fb.TensorType
	shape []int64 // -1 for a dynamic dim
	buf   uint32  // 0: no data
	// q is the quantization of an int8/int32 tensor (nil: none).
	q *qparams
	// variable marks a variable tensor (an LSTM's state).
	variable bool
}

// qparams are a tensor's affine quantization: real = scale * (q - zero),
// per channel along dim when len(scale) > 1.
type qparams struct {
	scale []float32
	zero  []int64
	dim   int32
}

// optFn builds an operator's options table.
type optFn func(b *flatbuffers.Builder) flatbuffers.UOffsetT

type top struct {
	code     fb.BuiltinOperator
	in, out  []int32
	optType  fb.BuiltinOptions
	opts     optFn
	fromNode string // the ONNX node it came from, for messages
	int8     bool   // computes on int8 tensors (for the op version)
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
	versions := map[fb.BuiltinOperator]int32{}
	for _, o := range t.ops {
		if _, ok := codeIdx[o.code]; !ok {
			codeIdx[o.code] = uint32(len(codes))
			codes = append(codes, o.code)
		}
		versions[o.code] = max(versions[o.code], opVersion(o.code, o.int8))
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
		var qp flatbuffers.UOffsetT
		if tt.q != nil {
			fb.QuantizationParametersStartScaleVector(b, len(tt.q.scale))
			for j := len(tt.q.scale) - 1; j >= 0; j-- {
				b.PrependFloat32(tt.q.scale[j])
			}
			sc := b.EndVector(len(tt.q.scale))
			fb.QuantizationParametersStartZeroPointVector(b, len(tt.q.zero))
			for j := len(tt.q.zero) - 1; j >= 0; j-- {
				b.PrependInt64(tt.q.zero[j])
			}
			zp := b.EndVector(len(tt.q.zero))
			fb.QuantizationParametersStart(b)
			fb.QuantizationParametersAddScale(b, sc)
			fb.QuantizationParametersAddZeroPoint(b, zp)
			fb.QuantizationParametersAddQuantizedDimension(b, tt.q.dim)
			qp = fb.QuantizationParametersEnd(b)
		}
		fb.TensorStart(b)
		fb.TensorAddShape(b, sh)
		fb.TensorAddType(b, tt.typ)
		fb.TensorAddBuffer(b, tt.buf)
		fb.TensorAddName(b, name)
		if dynamic {
			fb.TensorAddShapeSignature(b, sg)
		}
		if tt.q != nil {
			fb.TensorAddQuantization(b, qp)
		}
		if tt.variable {
			fb.TensorAddIsVariable(b, true)
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
		fb.OperatorCodeAddVersion(b, versions[c])
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
// lowest version of each op that has the features the exporter uses
// (int8: the op computes on int8 tensors).
func opVersion(c fb.BuiltinOperator, q8 bool) int32 {
	if q8 {
		switch c {
		case fb.BuiltinOperatorFULLY_CONNECTED:
			return 5
		case fb.BuiltinOperatorCONV_2D, fb.BuiltinOperatorDEPTHWISE_CONV_2D:
			return 3 // per-channel int8
		case fb.BuiltinOperatorADD, fb.BuiltinOperatorSUB, fb.BuiltinOperatorMUL, fb.BuiltinOperatorMEAN,
			fb.BuiltinOperatorMAX_POOL_2D, fb.BuiltinOperatorAVERAGE_POOL_2D, fb.BuiltinOperatorPAD, fb.BuiltinOperatorPADV2,
			fb.BuiltinOperatorCONCATENATION, fb.BuiltinOperatorSOFTMAX, fb.BuiltinOperatorLOGISTIC, fb.BuiltinOperatorTANH,
			fb.BuiltinOperatorRELU, fb.BuiltinOperatorRELU6, fb.BuiltinOperatorLEAKY_RELU, fb.BuiltinOperatorTRANSPOSE,
			fb.BuiltinOperatorSTRIDED_SLICE, fb.BuiltinOperatorSLICE, fb.BuiltinOperatorSPLIT, fb.BuiltinOperatorREDUCE_MAX,
			fb.BuiltinOperatorRESIZE_BILINEAR, fb.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR, fb.BuiltinOperatorDEQUANTIZE:
			return 2 // the first version with int8
		}
		return 1 // type-agnostic (RESHAPE) or int8 from version 1 (QUANTIZE)
	}
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
	case fb.BuiltinOperatorBROADCAST_TO:
		return 2 // registered from version 2
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
