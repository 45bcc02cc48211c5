// Package tflite is the TFLite exporter: it writes a canonical ONNX model as
// a TFLite flatbuffer (schema version 3), float32, with float16 weights, or
// int8 full integer calibrated on samples (Options.Int8); a QDQ model
// (QuantizeLinear/DequantizeLinear) is written int8 with its own scales
// and zero points, not recalibrated (qdq.go).
//
// Export never changes its argument. It works on a clone: first the
// graph passes of package passes (Constant nodes to initializers, no-ops
// removed, constants and static shape arithmetic folded, BatchNormalization
// folded into Conv, dead code removed; each pass checked on the executor and
// rolled back when Options.Check is set), then type and shape inference,
// then one walk over the nodes in topological order that emits TFLite
// operators.
//
// Layout. TFLite convolutions, pools and resizes are NHWC. Every ONNX value
// is held as one or more TFLite tensors, each a known permutation of the
// ONNX value (its layout). A Conv asks for its input in NHWC and produces
// its output in NHWC; elementwise ops, Concat, Pad, Slice, Softmax and the
// reductions run in the layout their input already has (constants are
// permuted at export time, axes remapped); ONNX Transpose nodes are not
// emitted but compose with the layout; only an op that needs a layout its
// input is not in gets a TRANSPOSE. So Transposes are pushed through
// elementwise ops and pairs cancel by construction, and
// Report.TransposesOut counts the ones left. Graph inputs of rank 4 that
// feed a convolution become NHWC (and outputs stay in the layout they are
// computed in) unless Options.KeepNCHWIO; Report.Inputs and Report.Outputs
// say which.
//
// Dynamic dims become shape_signature -1 (the static shape holds 1).
// A model that TFLite cannot express is an *unsupported.OpsError
// naming every op it cannot express, its first node and why.
package tflite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/infer"
	unsupportedpkg "github.com/onnxconv/onnxconv/canonical/unsupported"
	"github.com/onnxconv/onnxconv/passes"
)

// Target names the exporter as a conversion target; Profiles are the
// profile names that select it.
const Target = "tflite"

// Profiles are the target profiles served by the exporter: float32,
// float16 weights, int8 full-integer (calibrated: Options.Calibration).
var Profiles = []string{"tflite-float32", "tflite-float16", "tflite-int8"}

// Options controls Export.
type Options struct {
	// KeepNCHWIO keeps every graph input and output in its ONNX layout;
	// otherwise 4-D inputs that feed convolutions become NHWC and outputs
	// keep the layout they are computed in (Report.Inputs/Outputs).
	KeepNCHWIO bool
	// Float16 stores float weights as float16, each followed by a
	// DEQUANTIZE to float32 (TFLite's float16 quantization).
	Float16 bool
	// Int8 quantizes the model to full integer (TFLite's int8 scheme):
	// int8 weights symmetric per output channel (per tensor for
	// FULLY_CONNECTED), int8 activations asymmetric with min-max ranges
	// calibrated on Calibration (run on the executor), int32 biases;
	// float inputs and outputs through QUANTIZE and DEQUANTIZE unless
	// Int8IO. Ops without an int8 kernel stay float between DEQUANTIZE and
	// QUANTIZE (Report.Int8.Float).
	Int8 bool
	// Int8IO makes the graph inputs and outputs int8 too
	// (Report.Inputs/Outputs give their scale and zero point).
	Int8IO bool
	// Calibration are the samples that calibrate the int8 activation
	// ranges, each in graph-input order in the ONNX layout.
	Calibration [][]*canonical.Tensor
	// Check, when set, runs every graph pass checked on the executor and
	// rolls back a pass that changes an output (passes.RunOptions.Check).
	Check *passes.Check
	// Description is written into the model (default "onnxconv").
	Description string
}

// OptionsForProfile returns the Options of a profile name (one of
// Profiles, or "tflite" = "tflite-float32").
func OptionsForProfile(name string) (Options, error) {
	switch name {
	case "tflite", "tflite-float32":
		return Options{}, nil
	case "tflite-float16":
		return Options{Float16: true}, nil
	case "tflite-int8":
		return Options{Int8: true}, nil
	}
	return Options{}, fmt.Errorf("tflite export: unknown profile %q (known: tflite, %s)", name, strings.Join(Profiles, ", "))
}

// IO describes a graph input or output of the exported model.
type IO struct {
	Name string `json:"name"`
	// Shape is the TFLite shape (-1: dynamic, written as shape_signature).
	Shape []int64 `json:"shape"`
	// Perm is the permutation of the ONNX value the TFLite tensor holds
	// (nil: the ONNX layout); [0 2 3 1] is NCHW -> NHWC.
	Perm []int `json:"perm,omitempty"`
	// Layout says it in words ("as ONNX", "NHWC (ONNX NCHW)", ...).
	Layout string `json:"layout"`
	// Type is "int8" for an int8 input or output (Options.Int8IO), with
	// real = Scale * (q - ZeroPoint); empty: float as in the ONNX model.
	Type      string  `json:"type,omitempty"`
	Scale     float64 `json:"scale,omitempty"`
	ZeroPoint int64   `json:"zero_point,omitempty"`
}

// Report says what the export did.
type Report struct {
	// Ops counts the TFLite operators per builtin name.
	Ops map[string]int `json:"ops"`
	// Nodes is the number of ONNX nodes of the source model.
	Nodes int `json:"nodes"`
	// TransposesIn counts the Transpose nodes of the source model;
	// TransposesOut the TRANSPOSE operators of the TFLite model.
	TransposesIn  int `json:"transposes_in"`
	TransposesOut int `json:"transposes_out"`
	// LayoutTransposes counts the TRANSPOSE operators added for layout
	// (of TransposesOut).
	LayoutTransposes int  `json:"layout_transposes"`
	Inputs           []IO `json:"inputs"`
	Outputs          []IO `json:"outputs"`
	// LayoutChanged is set when an input or output is not in its ONNX
	// layout.
	LayoutChanged bool `json:"layout_changed"`
	// Fused lists the activations fused into the op before them.
	Fused []string `json:"fused,omitempty"`
	// Notes are other things worth saying (decompositions, fp16 weights).
	Notes []string `json:"notes,omitempty"`
	// Int8 is what the int8 quantization did (Options.Int8).
	Int8 *Int8Report `json:"int8,omitempty"`
	// Passes is the report of the graph passes run before the export.
	Passes *passes.Report `json:"passes,omitempty"`
}

// Result is an exported model.
type Result struct {
	// Data is the TFLite flatbuffer.
	Data   []byte
	Report *Report
}

// unsupportedNode is one node that TFLite (or this exporter) cannot
// express: an *unsupported.OpsError of one op, which Export merges into
// the one listing every such node.
func unsupported(n *canonical.Node, format string, args ...any) error {
	return &unsupportedpkg.OpsError{Format: exportFormat, Stage: unsupportedpkg.StageExport,
		Ops: []unsupportedpkg.Op{{Op: n.OpType, Domain: n.Domain, Node: n.Name, Reason: fmt.Sprintf(format, args...)}}}
}

// exportFormat names the exporter in its *unsupported.OpsError.
const exportFormat = "tflite export"

// prePasses are the graph passes run before the export.
var prePasses = []string{"constant-to-initializer", "eliminate-noop", "fold-constants", "fuse-conv-bn", "eliminate-noop", "eliminate-dead"}

// Export converts m to a TFLite flatbuffer; m is not changed. Errors are
// wrapped with context; nodes TFLite cannot express are listed, all of
// them, in an *unsupported.OpsError (errors.As).
func Export(ctx context.Context, m *canonical.Model, opts Options) (*Result, error) {
	if m == nil || m.Graph == nil {
		return nil, errors.New("tflite export: model has no graph")
	}
	if opts.Int8 && opts.Float16 {
		return nil, errors.New("tflite export: Int8 and Float16 exclude each other")
	}
	if opts.Int8IO && !opts.Int8 {
		return nil, errors.New("tflite export: Int8IO needs Int8")
	}
	qdq := hasQDQ(m.Graph)
	if qdq && opts.Float16 {
		return nil, errors.New("tflite export: the model is quantized (QuantizeLinear/DequantizeLinear); Float16 does not apply (export it as tflite or tflite-int8, which keep its quantization)")
	}
	if opts.Int8 && !qdq && len(opts.Calibration) == 0 {
		return nil, errors.New("tflite export: int8 quantization needs calibration samples (Options.Calibration; the pipeline loads --calibration DIR or generates 32)")
	}
	var qnotes []string
	if qdq && passes.HasQOperator(m.Graph) {
		// ONNX Runtime's com.microsoft QLinear ops included: read as QDQ
		// before anything looks at domains.
		qw, n, err := passes.QOperatorToQDQ(m)
		if err != nil {
			return nil, fmt.Errorf("tflite export: %w", err)
		}
		defer qw.Close()
		m = qw
		qnotes = append(qnotes, fmt.Sprintf("%d QOperator node(s) read as QDQ", n))
	}
	foreign := &unsupportedpkg.OpsError{Format: exportFormat, Stage: unsupportedpkg.StageExport}
	for _, n := range m.Graph.Nodes {
		if n.Domain != "" && n.Domain != "ai.onnx" {
			foreign.AddOp(unsupportedpkg.Op{Op: n.OpType, Domain: n.Domain, Node: n.Name, Reason: fmt.Sprintf("domain %q has no TFLite equivalent", n.Domain)})
		}
	}
	if err := foreign.Err(); err != nil {
		return nil, fmt.Errorf("tflite export: %w", err)
	}
	rep := &Report{Ops: map[string]int{}, Nodes: len(m.Graph.Nodes), Notes: qnotes}
	for _, n := range m.Graph.Nodes {
		if n.OpType == "Transpose" {
			rep.TransposesIn++
		}
	}
	ps, err := passes.Lookup(prePasses)
	if err != nil {
		return nil, fmt.Errorf("tflite export: %w", err)
	}
	work, prep, err := passes.Run(ctx, m, ps, passes.RunOptions{Check: opts.Check})
	if err != nil {
		return nil, fmt.Errorf("tflite export: preparing the graph: %w", err)
	}
	defer work.Close()
	rep.Passes = prep
	why, notes, err := lowerControl(work.Graph)
	if err != nil {
		return nil, fmt.Errorf("tflite export: lowering If/Loop: %w", err)
	}
	if len(notes) > 0 {
		// the inlined branches and bodies get the same preparing passes
		again, _, err := passes.Run(ctx, work, ps, passes.RunOptions{Check: opts.Check})
		if err != nil {
			return nil, fmt.Errorf("tflite export: preparing the graph after lowering If/Loop: %w", err)
		}
		defer again.Close()
		work = again
		rep.Notes = append(rep.Notes, notes...)
	}
	var qi *qdqInfo
	if qdq {
		if qi, err = stripQDQ(work.Graph); err != nil {
			return nil, fmt.Errorf("tflite export: reading the model's quantization: %w", err)
		}
		opts.Int8 = true
		rep.Notes = append(rep.Notes, fmt.Sprintf("int8 from the model's own quantization: %d QuantizeLinear/DequantizeLinear pairs and %d quantized constants, no calibration", qi.pairs, qi.constants))
	}
	if _, err := infer.Infer(work, infer.Options{}); err != nil {
		return nil, fmt.Errorf("tflite export: shape inference: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("tflite export: %w", err)
	}
	c := newConverter(work, opts, rep)
	c.controlWhy = why
	c.qdq = qi
	if err := c.run(ctx); err != nil {
		return nil, fmt.Errorf("tflite export: %w", err)
	}
	if opts.Int8 {
		if err := c.quantizeInt8(ctx); err != nil {
			return nil, fmt.Errorf("tflite export: %w", err)
		}
	}
	desc := opts.Description
	if desc == "" {
		desc = "onnxconv"
	}
	data := c.t.write(desc)
	rep.Ops = c.t.opCounts()
	rep.TransposesOut = rep.Ops["TRANSPOSE"]
	return &Result{Data: data, Report: rep}, nil
}

// ExportFile exports m and writes the flatbuffer to path atomically (a
// failed export leaves no file and an existing one untouched).
func ExportFile(ctx context.Context, m *canonical.Model, path string, opts Options) (*Result, error) {
	res, err := Export(ctx, m, opts)
	if err != nil {
		return res, err
	}
	if err := canonical.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := io.Copy(w, bytes.NewReader(res.Data))
		return err
	}); err != nil {
		return res, fmt.Errorf("tflite export: %w", err)
	}
	return res, nil
}

// Summary is the report on a few lines, for logs and the CLI.
func (r *Report) Summary() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d ONNX nodes -> %d TFLite ops (", r.Nodes, sumOps(r.Ops))
	for i, k := range sortedKeys(r.Ops) {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "%s %d", k, r.Ops[k])
	}
	fmt.Fprintf(&sb, "); Transposes: %d in the ONNX model, %d in the TFLite model (%d for layout)\n", r.TransposesIn, r.TransposesOut, r.LayoutTransposes)
	for _, io := range r.Inputs {
		fmt.Fprintf(&sb, "input %s %v: %s\n", io.Name, io.Shape, io.Layout)
	}
	for _, io := range r.Outputs {
		fmt.Fprintf(&sb, "output %s %v: %s\n", io.Name, io.Shape, io.Layout)
	}
	if q := r.Int8; q != nil {
		from := fmt.Sprintf("calibrated on %d samples", q.Samples)
		if q.FromModel {
			from = "the QDQ model's own scales and zero points (not calibrated)"
		}
		fmt.Fprintf(&sb, "int8: %d ops int8 (%d weights per channel), %d kept float, %d QUANTIZE, %d DEQUANTIZE; %s\n",
			q.Quantized, q.PerChannel, len(q.Float), q.Quantize, q.Dequantize, from)
	}
	return sb.String()
}

func sumOps(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
