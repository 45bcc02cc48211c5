// Package tflite imports TensorFlow Lite flatbuffer models (.tflite) into
// ONNX.
//
// Import is a pure function of the input bytes. TFLite activations are NHWC;
// the importer keeps 4-D activations NCHW inside the graph (so Conv, pooling
// and Resize map onto ONNX ops directly), permutes constant weights at
// conversion time, and transposes only where a value has to change layout:
// at the graph inputs and outputs, which stay NHWC with the TFLite tensor
// names, and before the few layout-sensitive ops (RESHAPE, SQUEEZE, ...).
//
// Quantized models (int8, uint8, int16) become QDQ graphs: every quantized
// TFLite tensor is an ONNX value of the same integer type and name, and each
// op runs in float between DequantizeLinear and QuantizeLinear. int16 Q/DQ
// needs opset 21 or newer.
package tflite

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/internal/recovered"
)

// DefaultOpset is the ONNX opset Import targets when Options.Opset is 0.
const DefaultOpset = 21

// Options controls Import.
type Options struct {
	// Opset is the ai.onnx opset of the result, 13 to 23; 0 means
	// DefaultOpset. int16-quantized models need 21 or newer.
	Opset int
	// KeepNHWC keeps every value in the TFLite layout: NCHW-only ONNX ops
	// (Conv, pooling, Resize, ...) get a Transpose on each side instead of
	// the graph being kept NCHW inside.
	KeepNHWC bool
	// Subgraph selects the subgraph to convert (default 0, the main one).
	Subgraph int
	// Int8Kernels says whose integer arithmetic int8 ADD/SUB reproduce
	// bit for bit: Int8XNNPACK (the default; TFLite's CPU default delegate,
	// which the reference interpreter runs them on) or Int8Reference
	// (TFLite's reference kernels, as TFLite Micro runs them).
	Int8Kernels string
	// Custom is an ONNX file of functions defining custom operators by
	// their custom code ("" none; importers/custom).
	Custom string
}

// The values of Options.Int8Kernels.
const (
	Int8XNNPACK   = "xnnpack"
	Int8Reference = "reference"
)

// Import converts a .tflite model to ONNX. Hostile input yields an error,
// never a panic. Constant tensors are not copied: initializers keep their
// raw data in slices of data, which the caller must not modify afterwards.
func Import(data []byte, opts Options) (mp *canonical.Model, err error) {
	defer func() {
		if r := recover(); r != nil {
			mp = nil
			if inAccessor() {
				// A flatbuffer offset or length pointed outside the file.
				err = fmt.Errorf("tflite: corrupt model: %v", r)
			} else {
				err = &recovered.Error{Pkg: "tflite", Doing: "converting the model", Value: r, Stack: debug.Stack()}
			}
		}
	}()
	if opts.Opset == 0 {
		opts.Opset = DefaultOpset
	}
	if opts.Int8Kernels == "" {
		opts.Int8Kernels = Int8XNNPACK
	}
	if opts.Int8Kernels != Int8XNNPACK && opts.Int8Kernels != Int8Reference {
		return nil, fmt.Errorf("tflite: int8 kernels %q: want %q or %q", opts.Int8Kernels, Int8XNNPACK, Int8Reference)
	}
	if opts.Opset < 13 || opts.Opset > 23 {
		return nil, fmt.Errorf("tflite: opset %d not supported (13 to 23)", opts.Opset)
	}
	m, err := readModel(data)
	if err != nil {
		return nil, err
	}
	if opts.Subgraph < 0 || opts.Subgraph >= len(m.subgraphs) {
		return nil, fmt.Errorf("tflite: subgraph %d out of range (%d subgraphs)", opts.Subgraph, len(m.subgraphs))
	}
	return convertModel(m, opts)
}

// inAccessor reports, from inside a deferred recover, whether the panic
// was raised in the flatbuffers accessors (a bad offset in the input) rather
// than in the converter's own code (a bug).
func inAccessor() bool {
	pc := make([]uintptr, 64)
	n := runtime.Callers(3, pc)
	frames := runtime.CallersFrames(pc[:n])
	afterPanic := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			afterPanic = true
		case afterPanic && !strings.HasPrefix(f.Function, "runtime."):
			return strings.Contains(f.Function, "/tflitefb.") || strings.Contains(f.Function, "flatbuffers/go.")
		}
		if !more {
			return false
		}
	}
}
