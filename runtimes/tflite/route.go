package tflite

import (
	"fmt"
	"slices"
	"strings"

	formats "github.com/onnxconv/onnxconv/formats/tflite"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// Interpreter names one of the two WebAssembly builds of TFLite the
// runtime runs a model in.
type Interpreter string

const (
	// LiteRT is LiteRT.js (LiteRTPackage, litert.js), the maintained
	// build, tried first: it reads files the older build refuses
	// (per-axis quantization parameters on a 1-D tensor, newer op
	// versions).
	LiteRT Interpreter = "litert"
	// TFJSTFLite is tfjs-tflite (Package, runner.js): every element type
	// at the model's inputs and outputs, variable tensors (LSTM, SVDF
	// state) with a fresh interpreter per sample.
	TFJSTFLite Interpreter = "tfjs-tflite"
)

// liteRTTypes are the element types LiteRT.js takes at a model's inputs
// and outputs (its Tensor's float32, int32 and uint8): it refuses any
// other ("Element type INT8 is not supported").
var liteRTTypes = []fb.TensorType{fb.TensorTypeFLOAT32, fb.TensorTypeINT32, fb.TensorTypeUINT8}

// Route returns the order in which the interpreters are tried on model
// (the bytes of a .tflite file) and why: LiteRT.js first, unless the
// model has what LiteRT.js cannot run — an input or output of another
// element type than float32, int32 or uint8, state (variable tensors,
// resource variables: "Variable tensors not yet supported"), or an output
// computed when the model is prepared (see preparedOutputs) — or
// LiteRT.js is not installed; then tfjs-tflite first. The other is tried
// when the first refuses the model (Session.Refused).
func Route(env Env, model []byte) ([]Interpreter, string) {
	if env.LiteRTVersion == "" {
		return []Interpreter{TFJSTFLite}, LiteRTPackage + " is not installed"
	}
	if why := liteRTCannot(model); why != "" {
		return []Interpreter{TFJSTFLite, LiteRT}, why
	}
	return []Interpreter{LiteRT, TFJSTFLite}, ""
}

// liteRTCannot says why LiteRT.js cannot run the model ("" when it may):
// an input or output of an element type it does not take, or state.
// A corrupt flatbuffer says nothing: the interpreter then reports it.
func liteRTCannot(model []byte) (why string) {
	defer func() {
		if recover() != nil {
			why = ""
		}
	}()
	if stateful(model) {
		return "the model keeps state, in variable tensors or resource variables, which " + LiteRTPackage + " does not run"
	}
	m := formats.Root(model)
	var g fb.SubGraph
	if m.SubgraphsLength() == 0 || !m.Subgraphs(&g, 0) {
		return ""
	}
	var t fb.Tensor
	var odd []string
	check := func(idx int32) {
		if idx >= 0 && int(idx) < g.TensorsLength() && g.Tensors(&t, int(idx)) && !slices.Contains(liteRTTypes, t.Type()) {
			odd = append(odd, fmt.Sprintf("%q %s", t.Name(), strings.ToLower(t.Type().String())))
		}
	}
	for i := 0; i < g.InputsLength(); i++ {
		check(g.Inputs(i))
	}
	for i := 0; i < g.OutputsLength(); i++ {
		check(g.Outputs(i))
	}
	if len(odd) > 0 {
		return "its inputs or outputs are of element types " + LiteRTPackage + " does not take: " + strings.Join(odd, ", ")
	}
	if outs := preparedOutputs(m, &g); len(outs) > 0 {
		return "its outputs " + strings.Join(outs, ", ") + " are computed when the model is prepared, which " + LiteRTPackage +
			" does not copy to its output tensors (it answered garbage for SHAPE, RANK and a RANGE of constants)"
	}
	if outs := dynamicOutputs(m, &g); len(outs) > 0 {
		return "its outputs " + strings.Join(outs, ", ") + " are resized when the model runs, which " + LiteRTPackage +
			" does not do (it answered the prepared buffer for UNIQUE, SEGMENT_SUM, UNSORTED_SEGMENT_* and MULTINOMIAL)"
	}
	return ""
}

// dynamicOutputs names the outputs of subgraph g written by ops that
// resize their output when they run (its shape follows the values of an
// input): LiteRT.js 2.5.3 answers the buffer of the prepared shape for
// them, unwritten.
func dynamicOutputs(m *fb.Model, g *fb.SubGraph) []string {
	resized := map[fb.BuiltinOperator]bool{
		fb.BuiltinOperatorUNIQUE: true, fb.BuiltinOperatorSEGMENT_SUM: true,
		fb.BuiltinOperatorUNSORTED_SEGMENT_SUM: true, fb.BuiltinOperatorUNSORTED_SEGMENT_PROD: true,
		fb.BuiltinOperatorUNSORTED_SEGMENT_MAX: true, fb.BuiltinOperatorUNSORTED_SEGMENT_MIN: true,
		// MULTINOMIAL of logits computed by the graph (int32 samples came
		// back as garbage).
		fb.BuiltinOperatorMULTINOMIAL: true,
	}
	outs := map[int32]bool{}
	for i := 0; i < g.OutputsLength(); i++ {
		outs[g.Outputs(i)] = true
	}
	var op fb.Operator
	var code fb.OperatorCode
	var t fb.Tensor
	var names []string
	for i := 0; i < g.OperatorsLength(); i++ {
		if !g.Operators(&op, i) || int(op.OpcodeIndex()) >= m.OperatorCodesLength() || !m.OperatorCodes(&code, int(op.OpcodeIndex())) {
			continue
		}
		if !resized[max(code.BuiltinCode(), fb.BuiltinOperator(code.DeprecatedBuiltinCode()))] {
			continue
		}
		for j := 0; j < op.OutputsLength(); j++ {
			if idx := op.Outputs(j); outs[idx] && int(idx) < g.TensorsLength() && g.Tensors(&t, int(idx)) {
				names = append(names, fmt.Sprintf("%q", t.Name()))
			}
		}
	}
	return names
}

// preparedOutputs names the outputs of subgraph g that TFLite computes
// when the model is prepared rather than when it runs: an output of SHAPE
// or RANK, or of an op whose every input is a constant or such a value
// (constant folding at prepare, as RANGE of constants), or a constant
// itself. LiteRT.js 2.5.3 leaves those output tensors unwritten.
func preparedOutputs(m *fb.Model, g *fb.SubGraph) []string {
	known := map[int32]bool{}
	var t fb.Tensor
	var buf fb.Buffer
	constant := func(idx int32) bool {
		if known[idx] {
			return true
		}
		if idx < 0 || int(idx) >= g.TensorsLength() || !g.Tensors(&t, int(idx)) || t.IsVariable() {
			return false
		}
		b := int(t.Buffer())
		return b > 0 && b < m.BuffersLength() && m.Buffers(&buf, b) && (buf.DataLength() > 0 || buf.Size() > 0)
	}
	var op fb.Operator
	var code fb.OperatorCode
	for i := 0; i < g.OperatorsLength(); i++ {
		if !g.Operators(&op, i) || int(op.OpcodeIndex()) >= m.OperatorCodesLength() || !m.OperatorCodes(&code, int(op.OpcodeIndex())) {
			continue
		}
		b := code.BuiltinCode()
		if dep := fb.BuiltinOperator(code.DeprecatedBuiltinCode()); dep > b {
			b = dep
		}
		folded := b == fb.BuiltinOperatorSHAPE || b == fb.BuiltinOperatorRANK
		if !folded && op.InputsLength() > 0 && len(code.CustomCode()) == 0 {
			folded = true
			for j := 0; j < op.InputsLength(); j++ {
				if in := op.Inputs(j); in >= 0 && !constant(in) {
					folded = false
					break
				}
			}
		}
		if folded {
			for j := 0; j < op.OutputsLength(); j++ {
				known[op.Outputs(j)] = true
			}
		}
	}
	var names []string
	for i := 0; i < g.OutputsLength(); i++ {
		if idx := g.Outputs(i); constant(idx) && g.Tensors(&t, int(idx)) {
			names = append(names, fmt.Sprintf("%q", t.Name()))
		}
	}
	return names
}

// describe names interpreter in as installed in env ("@litertjs/core
// 2.5.3").
func (e Env) describe(in Interpreter) string {
	if in == LiteRT {
		return LiteRTPackage + " " + e.LiteRTVersion
	}
	return Package + " " + e.Version
}
