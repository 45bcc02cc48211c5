package tflite

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	formats "github.com/onnxconv/onnxconv/formats/tflite"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// handlers maps each TFLite builtin operator that has its own converter
// (the ops_*.go files, lstm.go) to it; the Unary and Binary rows of the
// op table in formats/tflite are the one-to-one ops (unary, binary).
// TestOpTable checks that the builtins imported here are the table's.
func handlers() map[fb.BuiltinOperator]func(*converter, *operator) error {
	return map[fb.BuiltinOperator]func(*converter, *operator) error{
		fb.BuiltinOperatorCONV_2D:           (*converter).conv2d,
		fb.BuiltinOperatorDEPTHWISE_CONV_2D: (*converter).depthwise,
		fb.BuiltinOperatorTRANSPOSE_CONV:    (*converter).transposeConv,
		fb.BuiltinOperatorFULLY_CONNECTED:   (*converter).fullyConnected,
		fb.BuiltinOperatorAVERAGE_POOL_2D:   (*converter).pool,
		fb.BuiltinOperatorMAX_POOL_2D:       (*converter).pool,
		fb.BuiltinOperatorL2_POOL_2D:        (*converter).pool,
		fb.BuiltinOperatorRELU6:             func(c *converter, o *operator) error { return c.clip(o, 0, 6) },
		fb.BuiltinOperatorRELU_N1_TO_1:      func(c *converter, o *operator) error { return c.clip(o, -1, 1) },
		fb.BuiltinOperatorRELU_0_TO_1:       func(c *converter, o *operator) error { return c.clip(o, 0, 1) },
		fb.BuiltinOperatorLEAKY_RELU: func(c *converter, o *operator) error {
			opt, err := options[fb.LeakyReluOptions](o, fb.BuiltinOptionsLeakyReluOptions)
			if err != nil {
				return err
			}
			return c.unary(o, "LeakyRelu", canonical.FloatAttr("alpha", opt.Alpha()))
		},
		fb.BuiltinOperatorGELU: func(c *converter, o *operator) error {
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
			return c.unary(o, "Gelu", canonical.StringAttr("approximate", a))
		},
		fb.BuiltinOperatorRSQRT:              func(c *converter, o *operator) error { return c.unaryChain(o, "Sqrt", "Reciprocal") },
		fb.BuiltinOperatorSQUARE:             (*converter).square,
		fb.BuiltinOperatorSQUARED_DIFFERENCE: func(c *converter, o *operator) error { return c.binary(o, "Sub", "square") },
		fb.BuiltinOperatorFLOOR_DIV: func(c *converter, o *operator) error {
			if len(o.outputs) > 0 && c.tensor(o.outputs[0]).typ != fb.TensorTypeFLOAT32 {
				return fmt.Errorf("FLOOR_DIV on %s is not supported (float only)", c.tensor(o.outputs[0]).typ)
			}
			return c.binary(o, "Div", "floor")
		},
		fb.BuiltinOperatorNOT_EQUAL:                    func(c *converter, o *operator) error { return c.binary(o, "Equal", "not") },
		fb.BuiltinOperatorSOFTMAX:                      (*converter).softmax,
		fb.BuiltinOperatorLOG_SOFTMAX:                  (*converter).softmax,
		fb.BuiltinOperatorRESHAPE:                      (*converter).reshape,
		fb.BuiltinOperatorSQUEEZE:                      (*converter).squeeze,
		fb.BuiltinOperatorEXPAND_DIMS:                  (*converter).expandDims,
		fb.BuiltinOperatorCONCATENATION:                (*converter).concat,
		fb.BuiltinOperatorPAD:                          (*converter).pad,
		fb.BuiltinOperatorPADV2:                        (*converter).pad,
		fb.BuiltinOperatorMIRROR_PAD:                   (*converter).pad,
		fb.BuiltinOperatorMEAN:                         (*converter).reduce,
		fb.BuiltinOperatorSUM:                          (*converter).reduce,
		fb.BuiltinOperatorREDUCE_MAX:                   (*converter).reduce,
		fb.BuiltinOperatorREDUCE_MIN:                   (*converter).reduce,
		fb.BuiltinOperatorREDUCE_PROD:                  (*converter).reduce,
		fb.BuiltinOperatorTRANSPOSE:                    (*converter).transpose,
		fb.BuiltinOperatorSTRIDED_SLICE:                (*converter).stridedSlice,
		fb.BuiltinOperatorSLICE:                        (*converter).slice,
		fb.BuiltinOperatorGATHER:                       (*converter).gather,
		fb.BuiltinOperatorRESIZE_BILINEAR:              (*converter).resize,
		fb.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR:      (*converter).resize,
		fb.BuiltinOperatorQUANTIZE:                     (*converter).quantize,
		fb.BuiltinOperatorDEQUANTIZE:                   (*converter).quantize,
		fb.BuiltinOperatorCAST:                         (*converter).cast,
		fb.BuiltinOperatorDEPTH_TO_SPACE:               (*converter).depthSpace,
		fb.BuiltinOperatorSPACE_TO_DEPTH:               (*converter).depthSpace,
		fb.BuiltinOperatorUNIDIRECTIONAL_SEQUENCE_LSTM: (*converter).lstm,
		fb.BuiltinOperatorLSTM:                         (*converter).lstm,
		fb.BuiltinOperatorBIDIRECTIONAL_SEQUENCE_LSTM:  (*converter).bidiLSTM,
		fb.BuiltinOperatorSPLIT:                        (*converter).split,
		fb.BuiltinOperatorSPLIT_V:                      (*converter).split,
		fb.BuiltinOperatorPACK:                         (*converter).pack,
		fb.BuiltinOperatorUNPACK:                       (*converter).unpack,
		fb.BuiltinOperatorBATCH_MATMUL:                 (*converter).batchMatMul,
		fb.BuiltinOperatorARG_MAX:                      (*converter).argMinMax,
		fb.BuiltinOperatorARG_MIN:                      (*converter).argMinMax,
		fb.BuiltinOperatorTILE:                         (*converter).tile,
		fb.BuiltinOperatorSHAPE:                        (*converter).shape,
		fb.BuiltinOperatorSELECT:                       (*converter).selectV2,
		fb.BuiltinOperatorSELECT_V2:                    (*converter).selectV2,
		fb.BuiltinOperatorADD_N:                        (*converter).addN,
		fb.BuiltinOperatorIF:                           (*converter).ifOp,
		fb.BuiltinOperatorWHILE:                        (*converter).whileOp,
		fb.BuiltinOperatorCALL_ONCE:                    (*converter).callOnce,
		fb.BuiltinOperatorVAR_HANDLE:                   (*converter).varHandle,
		fb.BuiltinOperatorREAD_VARIABLE:                (*converter).readVariable,
		fb.BuiltinOperatorASSIGN_VARIABLE:              (*converter).assignVariable,
		fb.BuiltinOperatorSVDF:                         (*converter).svdf,
		fb.BuiltinOperatorTOPK_V2:                      (*converter).topK,
		fb.BuiltinOperatorBROADCAST_TO:                 (*converter).broadcastTo,
		fb.BuiltinOperatorCUMSUM:                       (*converter).cumSum,
		fb.BuiltinOperatorRANGE:                        (*converter).rangeOp,
		fb.BuiltinOperatorGATHER_ND:                    (*converter).gatherND,
		fb.BuiltinOperatorZEROS_LIKE:                   (*converter).likeOp,
		fb.BuiltinOperatorFILL:                         (*converter).fill,
		fb.BuiltinOperatorREVERSE_V2:                   (*converter).reverse,
		fb.BuiltinOperatorFLOOR_MOD:                    (*converter).floorMod,
		fb.BuiltinOperatorL2_NORMALIZATION:             (*converter).l2Norm,
		fb.BuiltinOperatorSCATTER_ND:                   (*converter).scatterND,
		fb.BuiltinOperatorWHERE:                        (*converter).whereOp,
		fb.BuiltinOperatorRANK:                         (*converter).rankOp,
		fb.BuiltinOperatorLOCAL_RESPONSE_NORMALIZATION: (*converter).localResponseNorm,
		fb.BuiltinOperatorONE_HOT:                      (*converter).oneHot,
		fb.BuiltinOperatorEMBEDDING_LOOKUP:             (*converter).embeddingLookup,
		fb.BuiltinOperatorREDUCE_ANY:                   (*converter).reduceAnyAll,
		fb.BuiltinOperatorREDUCE_ALL:                   (*converter).reduceAnyAll,
		fb.BuiltinOperatorDENSIFY:                      func(c *converter, o *operator) error { return c.unary(o, "Identity") },
		fb.BuiltinOperatorATAN2:                        (*converter).atan2,
		fb.BuiltinOperatorRIGHT_SHIFT:                  (*converter).shift,
		fb.BuiltinOperatorSTABLEHLO_SHIFT_LEFT:         (*converter).shift,
		fb.BuiltinOperatorBITWISE_XOR:                  func(c *converter, o *operator) error { return c.bitwise(o, "Xor", "BitwiseXor") },
		fb.BuiltinOperatorSTABLEHLO_AND:                func(c *converter, o *operator) error { return c.bitwise(o, "And", "BitwiseAnd") },
		fb.BuiltinOperatorBUCKETIZE:                    (*converter).bucketize,
		fb.BuiltinOperatorFAKE_QUANT:                   (*converter).fakeQuant,
		fb.BuiltinOperatorSEGMENT_SUM:                  (*converter).segment,
		fb.BuiltinOperatorUNSORTED_SEGMENT_SUM:         (*converter).segment,
		fb.BuiltinOperatorUNSORTED_SEGMENT_PROD:        (*converter).segment,
		fb.BuiltinOperatorUNSORTED_SEGMENT_MAX:         (*converter).segment,
		fb.BuiltinOperatorUNSORTED_SEGMENT_MIN:         (*converter).segment,
		fb.BuiltinOperatorUNIQUE:                       (*converter).uniqueOp,
		fb.BuiltinOperatorMATRIX_DIAG:                  (*converter).matrixDiag,
		fb.BuiltinOperatorMATRIX_SET_DIAG:              (*converter).matrixSetDiag,
		fb.BuiltinOperatorBROADCAST_ARGS:               (*converter).broadcastArgs,
		fb.BuiltinOperatorSTABLEHLO_ADD:                func(c *converter, o *operator) error { return c.binary(o, "Add") },
		fb.BuiltinOperatorSTABLEHLO_MULTIPLY:           func(c *converter, o *operator) error { return c.binary(o, "Mul") },
		fb.BuiltinOperatorSTABLEHLO_MAXIMUM:            func(c *converter, o *operator) error { return c.binary(o, "Max") },
		fb.BuiltinOperatorSTABLEHLO_MINIMUM:            func(c *converter, o *operator) error { return c.binary(o, "Min") },
		fb.BuiltinOperatorSPACE_TO_BATCH_ND:            (*converter).spaceBatch,
		fb.BuiltinOperatorBATCH_TO_SPACE_ND:            (*converter).spaceBatch,
		fb.BuiltinOperatorREVERSE_SEQUENCE:             (*converter).reverseSequence,
		fb.BuiltinOperatorSPARSE_TO_DENSE:              (*converter).sparseToDense,
		fb.BuiltinOperatorDYNAMIC_UPDATE_SLICE:         (*converter).dynamicUpdateSlice,
		fb.BuiltinOperatorDILATE:                       (*converter).dilate,
		fb.BuiltinOperatorSTABLEHLO_PAD:                (*converter).stablehloPad,
		fb.BuiltinOperatorCONV_3D:                      (*converter).conv3d,
		fb.BuiltinOperatorCONV_3D_TRANSPOSE:            (*converter).conv3dTranspose,
		fb.BuiltinOperatorREDUCE_WINDOW:                (*converter).reduceWindow,
		fb.BuiltinOperatorSTABLEHLO_REDUCE_WINDOW:      (*converter).stablehloReduceWindow,
		fb.BuiltinOperatorSTABLEHLO_COMPOSITE:          (*converter).composite,
		fb.BuiltinOperatorSTABLEHLO_CASE:               (*converter).caseOp,
		fb.BuiltinOperatorRFFT2D:                       (*converter).rfft2d,
		fb.BuiltinOperatorREAL:                         (*converter).complexPart,
		fb.BuiltinOperatorIMAG:                         (*converter).complexPart,
		fb.BuiltinOperatorCOMPLEX_ABS:                  (*converter).complexPart,
		fb.BuiltinOperatorHASHTABLE_LOOKUP:             (*converter).hashtableLookup,
		fb.BuiltinOperatorRNN:                          (*converter).rnnCell,
		fb.BuiltinOperatorUNIDIRECTIONAL_SEQUENCE_RNN:  (*converter).sequenceRNN,
		fb.BuiltinOperatorBIDIRECTIONAL_SEQUENCE_RNN:   (*converter).bidiRNN,
		fb.BuiltinOperatorNON_MAX_SUPPRESSION_V4:       (*converter).nms,
		fb.BuiltinOperatorNON_MAX_SUPPRESSION_V5:       (*converter).nms,
		fb.BuiltinOperatorSTABLEHLO_GATHER:             (*converter).stablehloGather,
		fb.BuiltinOperatorSTABLEHLO_SCATTER:            (*converter).stablehloScatter,
		fb.BuiltinOperatorRANDOM_UNIFORM:               (*converter).randomOp,
		fb.BuiltinOperatorRANDOM_STANDARD_NORMAL:       (*converter).randomOp,
		fb.BuiltinOperatorEMBEDDING_LOOKUP_SPARSE:      (*converter).embeddingLookupSparse,
		fb.BuiltinOperatorHASHTABLE:                    (*converter).hashtable,
		fb.BuiltinOperatorHASHTABLE_IMPORT:             (*converter).hashtableImport,
		fb.BuiltinOperatorHASHTABLE_FIND:               (*converter).hashtableFind,
		fb.BuiltinOperatorHASHTABLE_SIZE:               (*converter).hashtableSize,
		fb.BuiltinOperatorMULTINOMIAL:                  (*converter).multinomial,
		fb.BuiltinOperatorSTABLEHLO_RNG_BIT_GENERATOR:  (*converter).rngBitGenerator,
		fb.BuiltinOperatorBITCAST:                      (*converter).bitcast,
	}
}

func (c *converter) convertOp(o *operator) error {
	if o.code == fb.BuiltinOperatorCUSTOM {
		if h := customHandlers()[o.custom]; h != nil {
			return h(c, o)
		}
		if c.st.custom.Lookup(o.custom) != nil {
			return c.userCustomOp(o)
		}
		return fmt.Errorf("custom operator %q is not supported", o.custom)
	}
	if row, ok := formats.Elementwise(o.code); ok {
		if row.Since > c.opts.Opset {
			if o.code == fb.BuiltinOperatorHARD_SWISH {
				return c.hardSwish13(o)
			}
			return fmt.Errorf("%s needs opset %d", row.ONNX, row.Since)
		}
		if row.Kind == formats.Unary {
			return c.unary(o, row.ONNX)
		}
		return c.binary(o, row.ONNX)
	}
	if h, ok := handlers()[o.code]; ok {
		return h(c, o)
	}
	return fmt.Errorf("operator %s is not supported", opName(o))
}
