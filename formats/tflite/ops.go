// Package tflite is the knowledge of the TFLite file format that more than
// one role needs: the flatbuffers accessors (tflitefb), the one
// bidirectional operator table that importers/tflite and exporters/tflite
// both read, and TFLite's SAME padding rule.
//
// It builds no graphs and runs nothing.
package tflite

import (
	"slices"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// Kind says how a builtin maps onto ONNX.
type Kind string

const (
	// Unary is an elementwise op without options that is one ONNX op of the
	// same semantics in both directions.
	Unary Kind = "unary"
	// Binary is a broadcasting two-input op without options that is one
	// ONNX op in both directions.
	Binary Kind = "binary"
	// Special ops have their own converter in each direction.
	Special Kind = "special"
)

// Op is one TFLite builtin operator in both directions.
type Op struct {
	Builtin fb.BuiltinOperator `json:"-"`
	// Name is the schema's name of the builtin ("CONV_2D").
	Name string `json:"builtin"`
	Kind Kind   `json:"kind,omitempty"`
	// ONNX is the one ONNX op of a Unary or Binary builtin.
	ONNX string `json:"onnx,omitempty"`
	// Since is the ONNX opset the one op needs; below it the importer
	// builds the op from older ones.
	Since int `json:"since,omitempty"`
	// Fixed are ONNX float attributes whose value the builtin implies (ELU
	// is Elu with alpha 1): the exporter refuses other values.
	Fixed map[string]float32 `json:"fixed,omitempty"`
	// Import is what the importer builds for the builtin; empty when it
	// does not import.
	Import string `json:"import,omitempty"`
	// Export lists the ONNX ops the exporter writes as (or with the help
	// of) this builtin.
	Export []string `json:"export,omitempty"`
}

// Imported reports whether the importer converts the builtin.
func (o Op) Imported() bool { return o.Import != "" }

// entry is one row of the table before it is completed from Kind/ONNX.
type entry struct {
	code   fb.BuiltinOperator
	kind   Kind
	onnx   string
	since  int
	fixed  map[string]float32
	imp    string
	export []string
}

// entries is the one table. Unary and Binary rows import as and export
// from their ONNX op; Special rows say what each direction does.
func entries() []entry {
	u := func(code fb.BuiltinOperator, onnx string) entry {
		return entry{code: code, kind: Unary, onnx: onnx}
	}
	b := func(code fb.BuiltinOperator, onnx string) entry {
		return entry{code: code, kind: Binary, onnx: onnx}
	}
	s := func(code fb.BuiltinOperator, imp string, export ...string) entry {
		return entry{code: code, kind: Special, imp: imp, export: export}
	}
	elu := u(fb.BuiltinOperatorELU, "Elu")
	elu.fixed = map[string]float32{"alpha": 1}
	hswish := u(fb.BuiltinOperatorHARD_SWISH, "HardSwish")
	hswish.since = 14
	return []entry{
		u(fb.BuiltinOperatorLOGISTIC, "Sigmoid"),
		u(fb.BuiltinOperatorTANH, "Tanh"),
		u(fb.BuiltinOperatorRELU, "Relu"),
		u(fb.BuiltinOperatorEXP, "Exp"),
		u(fb.BuiltinOperatorLOG, "Log"),
		u(fb.BuiltinOperatorSQRT, "Sqrt"),
		u(fb.BuiltinOperatorABS, "Abs"),
		u(fb.BuiltinOperatorNEG, "Neg"),
		u(fb.BuiltinOperatorFLOOR, "Floor"),
		u(fb.BuiltinOperatorCEIL, "Ceil"),
		u(fb.BuiltinOperatorSIN, "Sin"),
		u(fb.BuiltinOperatorCOS, "Cos"),
		u(fb.BuiltinOperatorROUND, "Round"),
		u(fb.BuiltinOperatorSIGN, "Sign"),
		u(fb.BuiltinOperatorLOGICAL_NOT, "Not"),
		elu,
		hswish,

		b(fb.BuiltinOperatorADD, "Add"),
		b(fb.BuiltinOperatorSUB, "Sub"),
		b(fb.BuiltinOperatorMUL, "Mul"),
		b(fb.BuiltinOperatorDIV, "Div"),
		b(fb.BuiltinOperatorMAXIMUM, "Max"),
		b(fb.BuiltinOperatorMINIMUM, "Min"),
		b(fb.BuiltinOperatorPOW, "Pow"),
		b(fb.BuiltinOperatorLESS, "Less"),
		b(fb.BuiltinOperatorLESS_EQUAL, "LessOrEqual"),
		b(fb.BuiltinOperatorGREATER, "Greater"),
		b(fb.BuiltinOperatorGREATER_EQUAL, "GreaterOrEqual"),
		b(fb.BuiltinOperatorEQUAL, "Equal"),
		b(fb.BuiltinOperatorLOGICAL_AND, "And"),
		b(fb.BuiltinOperatorLOGICAL_OR, "Or"),
		b(fb.BuiltinOperatorPRELU, "PRelu"),

		s(fb.BuiltinOperatorCONV_2D, "Conv (+ fused activation)", "Conv"),
		s(fb.BuiltinOperatorDEPTHWISE_CONV_2D, "Conv with group = input channels", "Conv"),
		s(fb.BuiltinOperatorTRANSPOSE_CONV, "ConvTranspose", "ConvTranspose"),
		s(fb.BuiltinOperatorFULLY_CONNECTED, "Gemm, or MatMul + Add", "Gemm", "MatMul"),
		s(fb.BuiltinOperatorAVERAGE_POOL_2D, "AveragePool", "AveragePool"),
		s(fb.BuiltinOperatorMAX_POOL_2D, "MaxPool", "MaxPool"),
		s(fb.BuiltinOperatorL2_POOL_2D, "Sqrt(AveragePool(x*x))"),
		s(fb.BuiltinOperatorRELU6, "Clip(0, 6)", "Clip"),
		s(fb.BuiltinOperatorRELU_N1_TO_1, "Clip(-1, 1)", "Clip"),
		s(fb.BuiltinOperatorRELU_0_TO_1, "Clip(0, 1)"),
		s(fb.BuiltinOperatorLEAKY_RELU, "LeakyRelu", "LeakyRelu"),
		s(fb.BuiltinOperatorGELU, "Gelu (opset 20)", "Gelu"),
		s(fb.BuiltinOperatorRSQRT, "Sqrt + Reciprocal", "LayerNormalization", "InstanceNormalization", "GroupNormalization"),
		s(fb.BuiltinOperatorSQUARE, "Mul(x, x)"),
		s(fb.BuiltinOperatorSQUARED_DIFFERENCE, "Sub + Mul"),
		s(fb.BuiltinOperatorFLOOR_DIV, "Div + Floor (float)"),
		s(fb.BuiltinOperatorNOT_EQUAL, "Equal + Not"),
		s(fb.BuiltinOperatorSOFTMAX, "Softmax (beta as a Mul)", "Softmax"),
		s(fb.BuiltinOperatorLOG_SOFTMAX, "LogSoftmax", "LogSoftmax"),
		s(fb.BuiltinOperatorRESHAPE, "Reshape", "Reshape", "Flatten", "Squeeze", "Unsqueeze"),
		s(fb.BuiltinOperatorSQUEEZE, "Squeeze"),
		s(fb.BuiltinOperatorEXPAND_DIMS, "Unsqueeze"),
		s(fb.BuiltinOperatorCONCATENATION, "Concat", "Concat"),
		s(fb.BuiltinOperatorPAD, "Pad (zeros)", "Pad", "Conv", "MaxPool", "AveragePool"),
		s(fb.BuiltinOperatorPADV2, "Pad (constant value)", "Pad"),
		s(fb.BuiltinOperatorMIRROR_PAD, "Pad (reflect); symmetric as reversed Slices + Concat", "Pad"),
		s(fb.BuiltinOperatorMEAN, "ReduceMean", "ReduceMean", "GlobalAveragePool", "LayerNormalization", "InstanceNormalization", "GroupNormalization"),
		s(fb.BuiltinOperatorSUM, "ReduceSum", "ReduceSum"),
		s(fb.BuiltinOperatorREDUCE_MAX, "ReduceMax", "ReduceMax", "GlobalMaxPool"),
		s(fb.BuiltinOperatorREDUCE_MIN, "ReduceMin", "ReduceMin"),
		s(fb.BuiltinOperatorREDUCE_PROD, "ReduceProd", "ReduceProd"),
		s(fb.BuiltinOperatorTRANSPOSE, "Transpose", "Transpose"),
		s(fb.BuiltinOperatorSTRIDED_SLICE, "Slice (+ Reshape for shrink/new axes)", "Slice"),
		s(fb.BuiltinOperatorSLICE, "Slice"),
		s(fb.BuiltinOperatorGATHER, "Gather", "Gather"),
		s(fb.BuiltinOperatorRESIZE_BILINEAR, "Resize (linear)", "Resize", "Upsample"),
		s(fb.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR, "Resize (nearest)", "Resize", "Upsample"),
		s(fb.BuiltinOperatorQUANTIZE, "QuantizeLinear (requantize: Dequantize + Quantize)"),
		s(fb.BuiltinOperatorDEQUANTIZE, "DequantizeLinear (float16: Cast)"),
		s(fb.BuiltinOperatorCAST, "Cast", "Cast", "TopK"),
		s(fb.BuiltinOperatorDEPTH_TO_SPACE, "DepthToSpace"),
		s(fb.BuiltinOperatorSPACE_TO_DEPTH, "SpaceToDepth"),
		s(fb.BuiltinOperatorUNIDIRECTIONAL_SEQUENCE_LSTM, "LSTM (float), or the integer LSTM steps (int8/int16)", "LSTM"),
		s(fb.BuiltinOperatorLSTM, "LSTM (one step, float, full kernel without CIFG, projection or clipping)"),
		s(fb.BuiltinOperatorBIDIRECTIONAL_SEQUENCE_LSTM, "LSTM forward + LSTM reverse (float, no auxiliary input, CIFG, projection or clipping)"),
		s(fb.BuiltinOperatorSPLIT, "Split"),
		s(fb.BuiltinOperatorSPLIT_V, "Split", "Split"),
		s(fb.BuiltinOperatorPACK, "Unsqueeze + Concat"),
		s(fb.BuiltinOperatorUNPACK, "Split + Squeeze"),
		s(fb.BuiltinOperatorBATCH_MATMUL, "MatMul (adjoints as Transpose)", "MatMul", "GRU"),
		s(fb.BuiltinOperatorARG_MAX, "ArgMax", "ArgMax"),
		s(fb.BuiltinOperatorARG_MIN, "ArgMin", "ArgMin"),
		s(fb.BuiltinOperatorTILE, "Tile", "Tile"),
		s(fb.BuiltinOperatorSHAPE, "Shape", "Shape"),
		s(fb.BuiltinOperatorSELECT, "Where"),
		s(fb.BuiltinOperatorSELECT_V2, "Where", "Where", "If"),
		s(fb.BuiltinOperatorADD_N, "Sum"),
		s(fb.BuiltinOperatorIF, "If"),
		s(fb.BuiltinOperatorWHILE, "Loop"),
		s(fb.BuiltinOperatorCALL_ONCE, "the initialization subgraph run at import (variables become constants)"),
		s(fb.BuiltinOperatorVAR_HANDLE, "a resource variable (its CALL_ONCE value)"),
		s(fb.BuiltinOperatorREAD_VARIABLE, "the variable's value"),
		s(fb.BuiltinOperatorASSIGN_VARIABLE, "the variable's value (initialization only)"),
		s(fb.BuiltinOperatorSVDF, "MatMul + state shift (float, hybrid, int8 steps)"),
		s(fb.BuiltinOperatorTOPK_V2, "TopK (indices cast to int32)", "TopK"),
		s(fb.BuiltinOperatorBROADCAST_TO, "Expand", "Expand"),
		s(fb.BuiltinOperatorCUMSUM, "CumSum", "CumSum"),
		s(fb.BuiltinOperatorRANGE, "Range", "Range"),
		s(fb.BuiltinOperatorGATHER_ND, "GatherND", "GatherND"),
		s(fb.BuiltinOperatorZEROS_LIKE, "Shape + ConstantOfShape(0)"),
		s(fb.BuiltinOperatorFILL, "Expand of the value"),
		s(fb.BuiltinOperatorREVERSE_V2, "Slice with step -1"),
		s(fb.BuiltinOperatorFLOOR_MOD, "Mod (fmod 0) for integers; x - Floor(x/y)*y for floats"),
		s(fb.BuiltinOperatorL2_NORMALIZATION, "x / Sqrt(Max(ReduceSum(x*x), 1e-6))"),
		s(fb.BuiltinOperatorSCATTER_ND, "ScatterND (reduction add) into ConstantOfShape zeros"),
		s(fb.BuiltinOperatorWHERE, "NonZero + Transpose (coordinates)"),
		s(fb.BuiltinOperatorRANK, "Size(Shape)"),
		s(fb.BuiltinOperatorLOCAL_RESPONSE_NORMALIZATION, "LRN (alpha times the window size), NCHW"),
		s(fb.BuiltinOperatorONE_HOT, "OneHot with values [off, on]"),
		s(fb.BuiltinOperatorEMBEDDING_LOOKUP, "Gather on axis 0"),
		s(fb.BuiltinOperatorREDUCE_ANY, "ReduceMax of the values as int32"),
		s(fb.BuiltinOperatorREDUCE_ALL, "ReduceMin of the values as int32"),
		s(fb.BuiltinOperatorDENSIFY, "Identity (sparse constants are densified when the model is read)"),
		s(fb.BuiltinOperatorATAN2, "Atan(abs(y/x)) and fdlibm atan2f's quadrant arithmetic (Where)"),
		s(fb.BuiltinOperatorRIGHT_SHIFT, "BitShift (unsigned); Floor(x / 2^s) (signed)"),
		s(fb.BuiltinOperatorBITWISE_XOR, "BitwiseXor (opset 18)"),
		s(fb.BuiltinOperatorBUCKETIZE, "ReduceSum(x >= boundaries)"),
		s(fb.BuiltinOperatorFAKE_QUANT, "Clip + exact half-away rounding to the nudged steps"),
		s(fb.BuiltinOperatorSEGMENT_SUM, "ScatterND (reduction add) into max(ids)+1 rows"),
		s(fb.BuiltinOperatorUNSORTED_SEGMENT_SUM, "ScatterND (reduction add) into zeros"),
		s(fb.BuiltinOperatorUNSORTED_SEGMENT_PROD, "ScatterND (reduction mul) into ones"),
		s(fb.BuiltinOperatorUNSORTED_SEGMENT_MAX, "ScatterND (reduction max) into the type's lowest"),
		s(fb.BuiltinOperatorUNSORTED_SEGMENT_MIN, "ScatterND (reduction min) into the type's highest"),
		s(fb.BuiltinOperatorUNIQUE, "Unique (sorted 0)"),
		s(fb.BuiltinOperatorMATRIX_DIAG, "Where(eye, x, 0)"),
		s(fb.BuiltinOperatorMATRIX_SET_DIAG, "Where(eye, diagonal, x)"),
		s(fb.BuiltinOperatorBROADCAST_ARGS, "Where(a == 1, b, a) on the shapes padded with ones"),
		s(fb.BuiltinOperatorSTABLEHLO_ADD, "Add"),
		s(fb.BuiltinOperatorSTABLEHLO_MULTIPLY, "Mul"),
		s(fb.BuiltinOperatorSTABLEHLO_MAXIMUM, "Max"),
		s(fb.BuiltinOperatorSTABLEHLO_MINIMUM, "Min"),
		s(fb.BuiltinOperatorSTABLEHLO_AND, "And (bool), BitwiseAnd (integers)"),
		s(fb.BuiltinOperatorSTABLEHLO_SHIFT_LEFT, "BitShift on the unsigned type"),
		s(fb.BuiltinOperatorSPACE_TO_BATCH_ND, "Pad + Reshape + Transpose + Reshape"),
		s(fb.BuiltinOperatorBATCH_TO_SPACE_ND, "Reshape + Transpose + Reshape + Slice (crops)"),
		s(fb.BuiltinOperatorREVERSE_SEQUENCE, "ReverseSequence (other dims moved by Transpose)"),
		s(fb.BuiltinOperatorSPARSE_TO_DENSE, "ScatterND into the default value expanded"),
		s(fb.BuiltinOperatorDYNAMIC_UPDATE_SLICE, "ScatterND at the clamped start (constant index grid)"),
		s(fb.BuiltinOperatorDILATE, "Unsqueeze + Pad + Reshape + Slice per axis"),
		s(fb.BuiltinOperatorSTABLEHLO_PAD, "interior as DILATE, edges as Pad and Slice"),
		s(fb.BuiltinOperatorCONV_3D, "Conv (NCDHW, Transposes around it)"),
		s(fb.BuiltinOperatorCONV_3D_TRANSPOSE, "ConvTranspose (NCDHW, Transposes around it)"),
		s(fb.BuiltinOperatorREDUCE_WINDOW, "strided Slices folded by Add/Mul/Min/Max/And/Or"),
		s(fb.BuiltinOperatorSTABLEHLO_REDUCE_WINDOW, "base dilation + Pad, then strided Slices folded by the body's op"),
		s(fb.BuiltinOperatorSTABLEHLO_COMPOSITE, "the decomposition subgraph, inlined"),
		s(fb.BuiltinOperatorSTABLEHLO_CASE, "nested If on the branch index"),
		s(fb.BuiltinOperatorRFFT2D, "Slice + Pad to the lengths, DFT (one-sided) + DFT; complex as [..., 2]"),
		s(fb.BuiltinOperatorREAL, "Gather of the real part"),
		s(fb.BuiltinOperatorIMAG, "Gather of the imaginary part"),
		s(fb.BuiltinOperatorCOMPLEX_ABS, "Sqrt(ReduceSum(re² + im²))"),
		s(fb.BuiltinOperatorHASHTABLE_LOOKUP, "Equal + ArgMax + Gather, zeros where no key matches"),
		s(fb.BuiltinOperatorRNN, "RNN (one step from the zero state, float)"),
		s(fb.BuiltinOperatorUNIDIRECTIONAL_SEQUENCE_RNN, "RNN (float)"),
		s(fb.BuiltinOperatorBIDIRECTIONAL_SEQUENCE_RNN, "RNN forward + RNN reverse (float, no auxiliary input)"),
		s(fb.BuiltinOperatorNON_MAX_SUPPRESSION_V4, "NonMaxSuppression, indices padded to max_output_size"),
		s(fb.BuiltinOperatorNON_MAX_SUPPRESSION_V5, "NonMaxSuppression (soft_nms_sigma 0), indices and scores padded"),
		s(fb.BuiltinOperatorSTABLEHLO_GATHER, "GatherND at the clamped starts plus a constant slice grid, Reshape + Transpose"),
		s(fb.BuiltinOperatorSTABLEHLO_SCATTER, "ScatterND (the body's reduction) at the starts plus a constant window grid"),
		s(fb.BuiltinOperatorRANDOM_UNIFORM, "a constant: the first run's values (Philox-4x32-10 with the op's seeds)"),
		s(fb.BuiltinOperatorRANDOM_STANDARD_NORMAL, "a constant: the first run's values (Philox-4x32-10, Box-Muller)"),
		s(fb.BuiltinOperatorEMBEDDING_LOOKUP_SPARSE, "Gather * weights, ScatterND (add) into the rows; MEAN and SQRTN divide"),
		s(fb.BuiltinOperatorHASHTABLE, "the table (its id and types), held at conversion time"),
		s(fb.BuiltinOperatorHASHTABLE_IMPORT, "the table's constant keys and values (first value of a repeated key)"),
		s(fb.BuiltinOperatorHASHTABLE_FIND, "ai.onnx.ml LabelEncoder with the table's keys and values, the default's first element"),
		s(fb.BuiltinOperatorHASHTABLE_SIZE, "a constant: the table's key count"),
		s(fb.BuiltinOperatorMULTINOMIAL, "CumSum (double) of Exp(logit - max), counted against the first run's uniforms (Philox-4x32-10 with the op's seeds)"),
		s(fb.BuiltinOperatorSTABLEHLO_RNG_BIT_GENERATOR, "constants: the bits and new state from a constant state (Philox-4x32-10, Threefry-2x32)"),
		s(fb.BuiltinOperatorBITCAST, "integer arithmetic on the bytes (integers of 32 bits or fewer); constants folded"),
	}
}

// Elided are the ONNX ops the exporter writes as no TFLite op at all (an
// alias of their input).
func Elided() []string { return []string{"Identity", "Dropout"} }

// Decomposed are the ONNX ops the exporter writes as other builtins' rows
// list them (BatchNormalization as MUL + ADD, …): each names the builtins.
func Decomposed() map[string][]string {
	return map[string][]string{
		"BatchNormalization": {"MUL", "ADD"},
		"HardSigmoid":        {"MUL", "ADD", "RELU6 / MINIMUM + MAXIMUM"},
		"Reciprocal":         {"DIV"},
		"Sum":                {"ADD"},
		"Erf":                {"ABS", "MUL", "ADD", "DIV", "NEG", "EXP", "SUB", "SIGN"},
		"Einsum":             {"TRANSPOSE", "RESHAPE", "BATCH_MATMUL", "SUM"},
		"ReduceL1":           {"ABS", "SUM"},
		"ReduceL2":           {"MUL", "SUM", "SQRT"},
		"ReduceSumSquare":    {"MUL", "SUM"},
		"ReduceLogSum":       {"SUM", "LOG"},
		"ReduceLogSumExp":    {"EXP", "SUM", "LOG"},
		"GRU":                {"FULLY_CONNECTED", "BATCH_MATMUL", "LOGISTIC", "TANH", "MUL", "ADD", "SUB", "PACK"},
		"Loop":               {"the body's ops, once per iteration (constant trip count, unrolled)"},
	}
}

// Ops returns the table: one row per builtin of the schema (codes in
// order), imported, exported or neither.
func Ops() []Op {
	byCode := map[fb.BuiltinOperator]entry{}
	for _, e := range entries() {
		byCode[e.code] = e
	}
	codes := make([]fb.BuiltinOperator, 0, len(fb.EnumNamesBuiltinOperator))
	for c := range fb.EnumNamesBuiltinOperator {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	out := make([]Op, 0, len(codes))
	for _, c := range codes {
		op := Op{Builtin: c, Name: c.String()}
		if e, ok := byCode[c]; ok {
			op.Kind, op.ONNX, op.Since, op.Fixed = e.kind, e.onnx, e.since, e.fixed
			op.Import, op.Export = e.imp, e.export
			if e.kind == Unary || e.kind == Binary {
				op.Import, op.Export = e.onnx, []string{e.onnx}
			}
		}
		out = append(out, op)
	}
	return out
}

// Lookup returns the row of a builtin.
func Lookup(code fb.BuiltinOperator) (Op, bool) {
	for _, o := range Ops() {
		if o.Builtin == code {
			return o, o.Kind != ""
		}
	}
	return Op{}, false
}

// Elementwise returns the Unary or Binary row of a builtin: the one ONNX
// op it imports as.
func Elementwise(code fb.BuiltinOperator) (Op, bool) {
	for _, e := range entries() {
		if e.code == code && (e.kind == Unary || e.kind == Binary) {
			return Op{Builtin: code, Name: code.String(), Kind: e.kind, ONNX: e.onnx, Since: e.since, Fixed: e.fixed}, true
		}
	}
	return Op{}, false
}

// ElementwiseFor returns the Unary or Binary row whose ONNX op is onnx:
// the builtin the exporter writes it as.
func ElementwiseFor(onnx string) (Op, bool) {
	for _, e := range entries() {
		if e.onnx == onnx && (e.kind == Unary || e.kind == Binary) {
			return Op{Builtin: e.code, Name: e.code.String(), Kind: e.kind, ONNX: e.onnx, Since: e.since, Fixed: e.fixed}, true
		}
	}
	return Op{}, false
}

// Exported returns every ONNX op the exporter converts, sorted: the
// table's export lists, the decomposed and the elided ops.
func Exported() []string {
	var ops []string
	for _, o := range Ops() {
		ops = append(ops, o.Export...)
	}
	for k := range Decomposed() {
		ops = append(ops, k)
	}
	ops = append(ops, Elided()...)
	slices.Sort(ops)
	return slices.Compact(ops)
}
