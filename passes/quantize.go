package passes

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/errmap"
)

// QuantMode is how activations are quantized.
type QuantMode string

const (
	// Static: activation ranges calibrated (min-max) from samples, fixed
	// QuantizeLinear/DequantizeLinear pairs (uint8, asymmetric).
	Static QuantMode = "static"
	// Dynamic: activations quantized at run time (DynamicQuantizeLinear,
	// uint8) before DequantizeLinear; no calibration.
	Dynamic QuantMode = "dynamic"
)

// CalibMethod is how static mode picks each activation's range from the
// calibration samples.
type CalibMethod string

const (
	// MinMax: the smallest and largest value seen (the default).
	MinMax CalibMethod = "minmax"
	// Percentile: the values at (100-P)/2 % and 100-(100-P)/2 % of a
	// histogram (2048 bins over the min-max range) of every value seen,
	// as ONNX Runtime's percentile calibrator (P = QuantOptions.Percentile).
	Percentile CalibMethod = "percentile"
	// Entropy: the clipping threshold T that minimizes the KL divergence
	// between the histogram of |x| (2048 bins) and its quantized form
	// (TensorRT's entropy calibration, as ONNX Runtime's entropy
	// calibrator); the range is [max(min, -T), min(max, T)].
	Entropy CalibMethod = "entropy"
)

// DefaultPercentile is QuantOptions.Percentile's default (ONNX Runtime's).
const DefaultPercentile = 99.999

// QuantOptions configure Quantize.
type QuantOptions struct {
	Mode QuantMode
	// Method picks activation ranges in static mode ("" = MinMax).
	Method CalibMethod
	// Percentile is the share of values the Percentile method keeps
	// inside the range, in percent (0: DefaultPercentile).
	Percentile float64
	// Calibration are the samples that calibrate activation ranges
	// (static mode), each in graph-input order.
	Calibration [][]*canonical.Tensor
	// PerChannel quantizes weights per output channel (opset >= 13).
	PerChannel bool
	// Ops lists the op types quantized (default: static mode the ops
	// ONNX Runtime's static quantizer wraps, staticOps; dynamic mode
	// Conv, MatMul, Gemm).
	Ops []string
	// Held are samples to measure the accuracy change on (default the
	// calibration samples); nil with no calibration: unmeasured.
	Held [][]*canonical.Tensor
	// Backend is the executor's GoMLX backend.
	Backend string
	// BlockSize (Int4 mode) is the number of weights along K that share a
	// scale (0: DefaultBlockSize).
	BlockSize int
	// Format (Int4 mode) is how the weights are written ("": MatMulNBits).
	Format Int4Format
	// AccuracyLevel (Int4 mode, MatMulNBits) is the nodes'
	// accuracy_level (0: not written, which is 0): 4 lets a runtime
	// quantize A to int8 by the weights' blocks (ONNX Runtime does, and
	// the executor computes its numbers); 1–3 (float32, float16,
	// bfloat16 A) compute as 0 in ONNX Runtime's CPU provider.
	AccuracyLevel int
	// Unmeasured skips running the float and the quantized model to
	// measure the accuracy change (--no-verify): on a large model that run
	// holds float copies of the weights. The report says it was skipped.
	Unmeasured bool
}

// QuantReport is what Quantize did.
type QuantReport struct {
	Mode   QuantMode   `json:"mode"`
	Method CalibMethod `json:"method,omitempty"`
	// Ranges are the calibrated activation ranges (static mode), in the
	// order the activations are first quantized.
	Ranges     []CalibRange `json:"ranges,omitempty"`
	PerChannel bool         `json:"per_channel"`
	Before     Stats        `json:"before"`
	After      Stats        `json:"after"`
	Quantized  int          `json:"quantized_nodes"`
	// Fused counts the Relu and Clip nodes static mode removed, their
	// clamp computed by the quantization of their input.
	Fused int `json:"fused_activations,omitempty"`
	// Top1 is the top-1 agreement with the float model on the held
	// samples for [N, C] outputs (-1 when there is none).
	Top1   float64 `json:"top1"`
	MaxAbs float64 `json:"max_abs"`
	// MeanAbs is the mean absolute error over the float outputs.
	MeanAbs float64 `json:"mean_abs"`
	// BlockSize and Format of Int4 mode.
	BlockSize     int        `json:"block_size,omitempty"`
	Format        Int4Format `json:"format,omitempty"`
	AccuracyLevel int        `json:"accuracy_level,omitempty"`
	// Steps are the logits' agreement at each step of a decoder verified
	// over a prefill and decode steps.
	Steps []StepAgreement `json:"steps,omitempty"`
	// Unmeasured: the accuracy change was not measured (Unmeasured).
	Unmeasured bool           `json:"unmeasured,omitempty"`
	Final      *verify.Report `json:"-"`
	// Map is the error map of the result against the input on the first
	// sample, every intermediate tensor compared (pipeline's
	// TransformOptions.Map); nil unless asked for.
	Map *errmap.Map `json:"map,omitempty"`
}

// StepAgreement is how a quantized decoder's logits agree with the float
// model's at one step: their cosine similarity and the share of positions
// whose top-1 token is the same.
type StepAgreement struct {
	Step   string  `json:"step"`
	Cosine float64 `json:"cosine"`
	Top1   float64 `json:"top1"`
}

// setFinal records the comparison of the quantized model with the float
// one: the worst top-1 agreement, the largest errors, and per decode step
// the logits' agreement.
func (rep *QuantReport) setFinal(cmp *verify.Report) {
	rep.Final = cmp
	rep.MaxAbs, _ = errorOf(cmp)
	for _, o := range cmp.Outputs {
		if o.Classifier != nil && (rep.Top1 < 0 || o.Classifier.Top1 < rep.Top1) {
			rep.Top1 = o.Classifier.Top1
		}
		if o.Float != nil {
			rep.MeanAbs = math.Max(rep.MeanAbs, o.Float.MeanAbs)
		}
		if cmp.Decode != nil && o.Classifier != nil && o.Float != nil {
			rep.Steps = append(rep.Steps, StepAgreement{Step: o.Name, Cosine: o.Float.Cosine, Top1: o.Classifier.Top1})
		}
	}
}

// Quantize rewrites m as int8 QDQ: weights int8 symmetric (per channel
// with PerChannel), activations uint8 asymmetric. Static mode follows ONNX
// Runtime's QDQ quantizer (staticRole): the inputs and outputs of Conv,
// MatMul, Gemm, Add, Mul, Concat, Sigmoid, LeakyRelu, Softmax and
// GlobalAveragePool are quantized with calibrated ranges (Softmax's
// output over [0, 1]), same-scale ops (Reshape, Transpose, Flatten,
// Squeeze, Unsqueeze, MaxPool, AveragePool, Resize) take their quantized
// input's scale, and a Relu or Clip after a quantized output is removed,
// its clamp computed by that output's quantization; every reader of a
// quantized activation reads its DequantizeLinear. Dynamic mode
// quantizes the activation input of Conv, MatMul and Gemm at run time.
// It returns a new model; m is not changed.
func Quantize(ctx context.Context, m *canonical.Model, opts QuantOptions) (*canonical.Model, *QuantReport, error) {
	if m == nil || m.Graph == nil {
		return nil, nil, fmt.Errorf("quantize: the model has no graph")
	}
	if opts.Mode == Int4 {
		return quantizeInt4(ctx, m, opts)
	}
	opset := m.Opset("")
	if opset < 10 {
		return nil, nil, fmt.Errorf("quantize: the model imports ai.onnx opset %d; QuantizeLinear needs 10 (convert it first: onnxconv opset --opset 13)", opset)
	}
	if opts.Mode == "" {
		opts.Mode = Static
	}
	if opts.Mode != Static && opts.Mode != Dynamic {
		return nil, nil, fmt.Errorf("quantize: unknown mode %q (static, dynamic or int4)", opts.Mode)
	}
	if opts.PerChannel && opset < 13 {
		return nil, nil, fmt.Errorf("quantize: per-channel weights need opset 13 (the model has %d)", opset)
	}
	if opts.Mode == Static && opts.Method == "" {
		opts.Method = MinMax
	}
	switch opts.Method {
	case "", MinMax, Entropy:
	case Percentile:
		if opts.Percentile == 0 {
			opts.Percentile = DefaultPercentile
		}
		if opts.Percentile <= 50 || opts.Percentile > 100 || math.IsNaN(opts.Percentile) {
			return nil, nil, fmt.Errorf("quantize: percentile %g out of (50, 100]", opts.Percentile)
		}
	default:
		return nil, nil, fmt.Errorf("quantize: unknown calibration method %q (minmax, percentile or entropy)", opts.Method)
	}
	if opts.Mode == Static && len(opts.Calibration) == 0 {
		return nil, nil, fmt.Errorf("quantize: static mode needs calibration samples")
	}
	ops := map[string]bool{}
	list := opts.Ops
	if list == nil {
		list = []string{"Conv", "MatMul", "Gemm"}
		if opts.Mode == Static {
			list = staticOps
		}
	}
	for _, o := range list {
		ops[o] = true
	}
	c, err := m.Clone()
	if err != nil {
		return nil, nil, fmt.Errorf("quantize: %w", err)
	}
	fail := func(err error) (*canonical.Model, *QuantReport, error) {
		_ = c.Close()
		return nil, nil, fmt.Errorf("quantize: %w", err)
	}
	inferTypes(c)
	g := c.Graph
	rep := &QuantReport{Mode: opts.Mode, Method: opts.Method, PerChannel: opts.PerChannel, Before: StatsOf(m), Top1: -1, MaxAbs: -1, Unmeasured: opts.Unmeasured}

	if opts.Mode == Static {
		plan, err := planStatic(g, ops, opset)
		if err != nil {
			return fail(err)
		}
		ranges := map[*canonical.Value][2]float64{}
		if acts := plan.calibrated(); len(acts) > 0 {
			cr, err := calibrate(ctx, m, acts, opts)
			if err != nil {
				return fail(err)
			}
			for i, v := range acts {
				// A graph output keeps its min-max range whatever the
				// method: clipping the outputs (the logits) to a
				// histogram's bulk saturates the largest ones and loses
				// the ranking (entropy: resnet_small's top-1 agreement
				// fell from 100 % to 0).
				if isGraphOutput(v) {
					cr[i].Lo, cr[i].Hi = cr[i].Min, cr[i].Max
				}
				ranges[v] = [2]float64{cr[i].Lo, cr[i].Hi}
			}
			rep.Ranges = cr
		}
		if err := quantizeStatic(ctx, c, plan, ranges, opts, rep); err != nil {
			return fail(err)
		}
	} else if err := quantizeDynamic(c, ops, opts, rep); err != nil {
		return fail(err)
	}
	if err := tidyQuantized(c, rep); err != nil {
		return fail(err)
	}
	// Accuracy on the held samples.
	held := opts.Held
	if held == nil {
		held = opts.Calibration
	}
	if len(held) > 0 && !opts.Unmeasured {
		cmp, err := verify.Compare(ctx, verify.ModelSide("float", m), verify.ModelSide("int8", c),
			verify.Options{Inputs: held, Profile: "int8", Backend: opts.Backend})
		if err != nil {
			return fail(fmt.Errorf("running the quantized model: %w", err))
		}
		rep.setFinal(cmp)
	}
	return c, rep, nil
}

// tidyQuantized removes what quantizing left unused (the float weights),
// sorts the graph and records the result's size.
func tidyQuantized(c *canonical.Model, rep *QuantReport) error {
	if _, err := eliminateDead(c, Options{}); err != nil {
		return err
	}
	order, err := c.Graph.TopoSort()
	if err != nil {
		return err
	}
	c.Graph.Nodes = order
	rep.After = StatsOf(c)
	return nil
}

// quantizeDynamic quantizes the activation input of each Conv, MatMul
// and Gemm in ops (DynamicQuantizeLinear, read by that node only) and
// its weight.
func quantizeDynamic(c *canonical.Model, ops map[string]bool, opts QuantOptions, rep *QuantReport) error {
	g := c.Graph
	nm := canonical.NewNamer(c)
	dq := map[*canonical.Value]*canonical.Value{}
	for _, n := range slices.Clone(g.Nodes) {
		if !ops[n.OpType] || (n.Domain != "" && n.Domain != "ai.onnx") || !weightedTarget(n) {
			continue
		}
		x := n.Input(0)
		xq := dq[x]
		if xq == nil {
			var err error
			if xq, err = qdqDynamic(g, nm, x); err != nil {
				return err
			}
			dq[x] = xq
		}
		wq, err := qdqWeight(g, nm, n.Input(1), opts.PerChannel, weightAxisOf(n))
		if err != nil {
			return err
		}
		n.SetInput(0, xq)
		n.SetInput(1, wq)
		rep.Quantized++
	}
	return nil
}

// qdqDynamic inserts DynamicQuantizeLinear/DequantizeLinear for x.
func qdqDynamic(g *canonical.Graph, nm *canonical.Namer, x *canonical.Value) (*canonical.Value, error) {
	e := build.On(g, nm, x.Name)
	q := e.OpN("DynamicQuantizeLinear", 3, []*canonical.Value{x})
	d := e.Op("DequantizeLinear", q)
	return d, e.Err()
}

// qdqWeight stores w as int8 (symmetric, zero point 0), per channel along
// axis or per tensor, and returns the DequantizeLinear output.
func qdqWeight(g *canonical.Graph, nm *canonical.Namer, w *canonical.Value, perChannel bool, axis int64) (*canonical.Value, error) {
	t := w.Const
	f, n, err := floatReader(t)
	if err != nil {
		return nil, fmt.Errorf("weight %q: %w", w.Name, err)
	}
	dims := t.Dims
	channels, inner := int64(1), int64(1)
	if perChannel && len(dims) > 0 && int(axis) < len(dims) {
		channels = dims[axis]
		for _, d := range dims[axis+1:] {
			inner *= d
		}
	} else {
		perChannel = false
	}
	scales := make([]float64, channels)
	for i := range n {
		c := (int64(i) / inner) % channels
		scales[c] = math.Max(scales[c], math.Abs(f(i)))
	}
	for c := range scales {
		scales[c] /= 127
		if scales[c] == 0 {
			scales[c] = 1
		}
	}
	q := make([]byte, n)
	for i := range n {
		c := (int64(i) / inner) % channels
		v := math.RoundToEven(f(i) / scales[c])
		q[i] = byte(int8(math.Max(-127, math.Min(127, v))))
	}
	e := build.On(g, nm, w.Name)
	qv := e.Const("quantized", canonical.NewTensor("", canonical.Int8, append([]int64{}, dims...), q))
	var sdims []int64
	if perChannel {
		sdims = []int64{channels}
	} else {
		scales = scales[:1]
	}
	sv := e.Const("scale", canonical.NumberTensor("", canonical.Float, sdims, scales))
	zv := e.Const("zero_point", canonical.NewTensor("", canonical.Int8, sdims, make([]byte, len(scales))))
	var attrs []*canonical.Attribute
	if perChannel {
		attrs = append(attrs, canonical.IntAttr("axis", axis))
	}
	d := e.Op("DequantizeLinear", []*canonical.Value{qv, sv, zv}, attrs...)
	return d, e.Err()
}
