package tflite

import (
	"fmt"

	fb "github.com/onnxconv/onnxconv/importers/tflite/tflitefb"
)

// convertOp dispatches each TFLite builtin operator to its converter (the
// ops_*.go files, lstm.go); unaryOp and binaryOp are the one-to-one maps.

// unaryOp maps TFLite ops without options onto one ONNX op of the same
// semantics; they keep the layout of their input.
func unaryOp(code fb.BuiltinOperator) (string, bool) {
	op, ok := map[fb.BuiltinOperator]string{
		fb.BuiltinOperatorLOGISTIC:    "Sigmoid",
		fb.BuiltinOperatorTANH:        "Tanh",
		fb.BuiltinOperatorRELU:        "Relu",
		fb.BuiltinOperatorEXP:         "Exp",
		fb.BuiltinOperatorLOG:         "Log",
		fb.BuiltinOperatorSQRT:        "Sqrt",
		fb.BuiltinOperatorABS:         "Abs",
		fb.BuiltinOperatorNEG:         "Neg",
		fb.BuiltinOperatorFLOOR:       "Floor",
		fb.BuiltinOperatorCEIL:        "Ceil",
		fb.BuiltinOperatorSIN:         "Sin",
		fb.BuiltinOperatorCOS:         "Cos",
		fb.BuiltinOperatorELU:         "Elu",
		fb.BuiltinOperatorROUND:       "Round",
		fb.BuiltinOperatorSIGN:        "Sign",
		fb.BuiltinOperatorLOGICAL_NOT: "Not",
	}[code]
	return op, ok
}

// binaryOp maps broadcasting binary ops.
func binaryOp(code fb.BuiltinOperator) (string, bool) {
	op, ok := map[fb.BuiltinOperator]string{
		fb.BuiltinOperatorADD:           "Add",
		fb.BuiltinOperatorSUB:           "Sub",
		fb.BuiltinOperatorMUL:           "Mul",
		fb.BuiltinOperatorDIV:           "Div",
		fb.BuiltinOperatorMAXIMUM:       "Max",
		fb.BuiltinOperatorMINIMUM:       "Min",
		fb.BuiltinOperatorPOW:           "Pow",
		fb.BuiltinOperatorLESS:          "Less",
		fb.BuiltinOperatorLESS_EQUAL:    "LessOrEqual",
		fb.BuiltinOperatorGREATER:       "Greater",
		fb.BuiltinOperatorGREATER_EQUAL: "GreaterOrEqual",
		fb.BuiltinOperatorEQUAL:         "Equal",
		fb.BuiltinOperatorLOGICAL_AND:   "And",
		fb.BuiltinOperatorLOGICAL_OR:    "Or",
	}[code]
	return op, ok
}

func (c *converter) convertOp(o *operator) error {
	if o.code == fb.BuiltinOperatorCUSTOM {
		return fmt.Errorf("custom operator %q is not supported", o.custom)
	}
	if op, ok := unaryOp(o.code); ok {
		return c.unary(o, op)
	}
	if op, ok := binaryOp(o.code); ok {
		return c.binary(o, op)
	}
	switch o.code {
	case fb.BuiltinOperatorCONV_2D:
		return c.conv2d(o)
	case fb.BuiltinOperatorDEPTHWISE_CONV_2D:
		return c.depthwise(o)
	case fb.BuiltinOperatorTRANSPOSE_CONV:
		return c.transposeConv(o)
	case fb.BuiltinOperatorFULLY_CONNECTED:
		return c.fullyConnected(o)
	case fb.BuiltinOperatorAVERAGE_POOL_2D, fb.BuiltinOperatorMAX_POOL_2D, fb.BuiltinOperatorL2_POOL_2D:
		return c.pool(o)
	case fb.BuiltinOperatorRELU6:
		return c.clip(o, 0, 6)
	case fb.BuiltinOperatorRELU_N1_TO_1:
		return c.clip(o, -1, 1)
	case fb.BuiltinOperatorRELU_0_TO_1:
		return c.clip(o, 0, 1)
	case fb.BuiltinOperatorLEAKY_RELU:
		opt, err := options[fb.LeakyReluOptions](o, fb.BuiltinOptionsLeakyReluOptions)
		if err != nil {
			return err
		}
		return c.unary(o, "LeakyRelu", attrFloat("alpha", opt.Alpha()))
	case fb.BuiltinOperatorHARD_SWISH:
		if c.opts.Opset < 14 {
			return c.hardSwish13(o)
		}
		return c.unary(o, "HardSwish")
	case fb.BuiltinOperatorGELU:
		opt, err := options[fb.GeluOptions](o, fb.BuiltinOptionsGeluOptions)
		if err != nil {
			return err
		}
		if c.opts.Opset < 20 {
			return fmt.Errorf("Gelu needs opset 20")
		}
		a := "none"
		if opt.Approximate() {
			a = "tanh"
		}
		return c.unary(o, "Gelu", attrString("approximate", a))
	case fb.BuiltinOperatorRSQRT:
		return c.unaryChain(o, "Sqrt", "Reciprocal")
	case fb.BuiltinOperatorSQUARE:
		return c.square(o)
	case fb.BuiltinOperatorSQUARED_DIFFERENCE:
		return c.binary(o, "Sub", "square")
	case fb.BuiltinOperatorFLOOR_DIV:
		if len(o.outputs) > 0 && c.tensor(o.outputs[0]).typ != fb.TensorTypeFLOAT32 {
			return fmt.Errorf("FLOOR_DIV on %s is not supported (float only)", c.tensor(o.outputs[0]).typ)
		}
		return c.binary(o, "Div", "floor")
	case fb.BuiltinOperatorNOT_EQUAL:
		return c.binary(o, "Equal", "not")
	case fb.BuiltinOperatorSOFTMAX, fb.BuiltinOperatorLOG_SOFTMAX:
		return c.softmax(o)
	case fb.BuiltinOperatorRESHAPE:
		return c.reshape(o)
	case fb.BuiltinOperatorSQUEEZE:
		return c.squeeze(o)
	case fb.BuiltinOperatorEXPAND_DIMS:
		return c.expandDims(o)
	case fb.BuiltinOperatorCONCATENATION:
		return c.concat(o)
	case fb.BuiltinOperatorPAD, fb.BuiltinOperatorPADV2, fb.BuiltinOperatorMIRROR_PAD:
		return c.pad(o)
	case fb.BuiltinOperatorMEAN, fb.BuiltinOperatorSUM, fb.BuiltinOperatorREDUCE_MAX,
		fb.BuiltinOperatorREDUCE_MIN, fb.BuiltinOperatorREDUCE_PROD:
		return c.reduce(o)
	case fb.BuiltinOperatorTRANSPOSE:
		return c.transpose(o)
	case fb.BuiltinOperatorSTRIDED_SLICE:
		return c.stridedSlice(o)
	case fb.BuiltinOperatorSLICE:
		return c.slice(o)
	case fb.BuiltinOperatorGATHER:
		return c.gather(o)
	case fb.BuiltinOperatorRESIZE_BILINEAR, fb.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR:
		return c.resize(o)
	case fb.BuiltinOperatorQUANTIZE, fb.BuiltinOperatorDEQUANTIZE:
		return c.quantize(o)
	case fb.BuiltinOperatorCAST:
		return c.cast(o)
	case fb.BuiltinOperatorDEPTH_TO_SPACE, fb.BuiltinOperatorSPACE_TO_DEPTH:
		return c.depthSpace(o)
	case fb.BuiltinOperatorUNIDIRECTIONAL_SEQUENCE_LSTM:
		return c.lstm(o)
	case fb.BuiltinOperatorSPLIT, fb.BuiltinOperatorSPLIT_V:
		return c.split(o)
	case fb.BuiltinOperatorPACK:
		return c.pack(o)
	case fb.BuiltinOperatorUNPACK:
		return c.unpack(o)
	case fb.BuiltinOperatorBATCH_MATMUL:
		return c.batchMatMul(o)
	case fb.BuiltinOperatorARG_MAX, fb.BuiltinOperatorARG_MIN:
		return c.argMinMax(o)
	case fb.BuiltinOperatorTILE:
		return c.tile(o)
	case fb.BuiltinOperatorSHAPE:
		return c.shape(o)
	case fb.BuiltinOperatorSELECT, fb.BuiltinOperatorSELECT_V2:
		return c.selectV2(o)
	case fb.BuiltinOperatorADD_N:
		return c.addN(o)
	case fb.BuiltinOperatorPRELU:
		return c.binary(o, "PRelu")
	case fb.BuiltinOperatorIF:
		return c.ifOp(o)
	case fb.BuiltinOperatorWHILE:
		return c.whileOp(o)
	case fb.BuiltinOperatorCALL_ONCE:
		return c.callOnce(o)
	case fb.BuiltinOperatorVAR_HANDLE:
		return c.varHandle(o)
	case fb.BuiltinOperatorREAD_VARIABLE:
		return c.readVariable(o)
	case fb.BuiltinOperatorASSIGN_VARIABLE:
		return c.assignVariable(o)
	case fb.BuiltinOperatorSVDF:
		return c.svdf(o)
	}
	return fmt.Errorf("operator %s is not supported", opName(o))
}
