package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/passes"
	"github.com/onnxconv/onnxconv/pipeline"
	rtbuiltin "github.com/onnxconv/onnxconv/runtimes/builtin"
)

// newQuantizeCmd returns `onnxconv quantize IN OUT --mode dynamic|static`.
func newQuantizeCmd() *cobra.Command {
	var (
		tf          transformFlags
		mode, calib string
		perChannel  bool
		method      string
		percentile  float64
		nCalib      int
		blockSize   int
		format      string
		accLevel    int
	)
	cmd := &cobra.Command{
		Use:   "quantize IN OUT --mode dynamic|static|int4",
		Short: "Quantize a model to int8 QDQ (or MatMul weights to int4) and report the accuracy change",
		Long: `Rewrite IN as QDQ (QuantizeLinear/DequantizeLinear) and write OUT:
weights int8 symmetric (--per-channel: one scale per output channel),
activations uint8 asymmetric. --mode static calibrates activation ranges
(min-max) from the samples in --calibration DIR (or --calibration-samples
generated ones) and wraps the ops ONNX Runtime's static quantizer wraps:
Conv, MatMul, Gemm, Add, Mul, Concat, Sigmoid, LeakyRelu, Softmax and
GlobalAveragePool; Reshape, Transpose, Flatten, Squeeze, Unsqueeze,
MaxPool, AveragePool and Resize at their input's scale; a Relu or Clip
after a quantized output is removed (the quantization clamps; see
docs/optimize.md). --mode dynamic quantizes the activation input of Conv,
MatMul and Gemm at run time (DynamicQuantizeLinear).
The result is verified against IN on the held samples with the int8
tolerance profile and refused when not equivalent (--no-verify: written
anyway, the summary says NOT VERIFIED, and the accuracy change is not
measured). The report gives top-1 agreement with the float model on the held samples
(--inputs, default the calibration samples) for [N, C] outputs, the max and
mean absolute error, and the size change.

--mode int4 quantizes only the weights of MatMul nodes (as LLM weights
ship): 4-bit symmetric, one scale per --block-size weights along K and
output column, written as ONNX Runtime's MatMulNBits (--format
matmulnbits, the default) or as INT4 with opset-21 blockwise
DequantizeLinear (--format qdq). It is verified with the int4 tolerance
profile; a decoder with a KV cache over a prefill and 3 decode steps, the
report giving the logits' cosine and top-1 agreement at each step.
--accuracy-level 4 writes MatMulNBits' accuracy_level 4, which lets ONNX
Runtime quantize the activations to int8 by the weights' blocks (faster
on CPUs with VNNI; the executor computes the same numbers); without it
the attribute is not written (0: float32 activations), as ONNX Runtime's
own quantizer does when given none.

--format qoperator or --format qdq without --mode rewrites an already
quantized IN in the other form: QDQ Conv/MatMul (and the ops listed in
docs/optimize.md) as ONNX Runtime's QLinearConv, QLinearMatMul and
com.microsoft QLinear ops, or those back as QDQ. Both models are run by
ONNX Runtime and compared with the int8 profile (one quantization step);
a result that is not equivalent is not written (--no-verify: written
anyway, NOT VERIFIED).`,
		Example: `  onnxconv quantize model.onnx model.int8.onnx --mode static --calibration calib/ --per-channel
  onnxconv quantize model.onnx model.int8.onnx --mode dynamic
  onnxconv quantize decoder.onnx decoder.int4.onnx --mode int4 --block-size 32 --format matmulnbits
  onnxconv quantize model.int8.onnx model.qop.onnx --format qoperator`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if mode == "" && cmd.Flags().Changed("format") {
				return quantizedForm(cmd, tf, format, args)
			}
			if mode != "static" && mode != "dynamic" && mode != "int4" {
				return badInput(fmt.Errorf("quantize: --mode must be static, dynamic or int4 (or give --format qoperator|qdq alone to rewrite a quantized model's form)"))
			}
			if mode != "int4" && (cmd.Flags().Changed("block-size") || cmd.Flags().Changed("format") || cmd.Flags().Changed("accuracy-level")) {
				return badInput(fmt.Errorf("quantize: --block-size, --format and --accuracy-level are for --mode int4"))
			}
			if accLevel < 0 || accLevel > 4 {
				return badInput(fmt.Errorf("quantize: --accuracy-level %d: want 0 to 4 (MatMulNBits' accuracy_level)", accLevel))
			}
			if accLevel != 0 && passes.Int4Format(format) != passes.MatMulNBits {
				return badInput(fmt.Errorf("quantize: --accuracy-level is MatMulNBits' attribute: it needs --format matmulnbits, not %s", format))
			}
			if blockSize < 16 || blockSize&(blockSize-1) != 0 {
				return badInput(fmt.Errorf("quantize: --block-size %d: want a power of two, at least 16", blockSize))
			}
			if f := passes.Int4Format(format); f != passes.MatMulNBits && f != passes.Int4QDQ {
				return badInput(fmt.Errorf("quantize: --format %q: want matmulnbits or qdq", format))
			}
			opts := passes.QuantOptions{Mode: passes.QuantMode(mode), PerChannel: perChannel,
				Method: passes.CalibMethod(method), Percentile: percentile,
				BlockSize: blockSize, Format: passes.Int4Format(format), AccuracyLevel: accLevel}
			o, err := tf.options()
			if err != nil {
				return badInput(fmt.Errorf("quantize: %w", err))
			}
			rep, err := pipeline.Quantize(cmd.Context(), args[0], args[1], opts, calib, nCalib, o)
			if rep != nil {
				printVerdict(cmd.OutOrStdout(), rep.Final, rep.Map, args[0], o.Unchecked)
			}
			if err != nil {
				return pipelineError(err)
			}
			return rep.WriteText(cmd.OutOrStdout(), args[1])
		},
	}
	tf.add(cmd, "quantization")
	cmd.Flags().StringVar(&mode, "mode", "", "static (calibrated activation ranges), dynamic, or int4 (weight-only, blockwise)")
	cmd.Flags().IntVar(&blockSize, "block-size", passes.DefaultBlockSize, "int4: weights along K that share a scale (a power of two, at least 16)")
	cmd.Flags().IntVar(&accLevel, "accuracy-level", 0, "int4 with --format matmulnbits: MatMulNBits' accuracy_level (4: int8 activations by blocks; 0: not written)")
	cmd.Flags().StringVar(&format, "format", string(passes.MatMulNBits), "int4: matmulnbits (ONNX Runtime's com.microsoft MatMulNBits) or qdq (INT4 with opset-21 blockwise DequantizeLinear; a model below opset 21 is converted first); without --mode: qoperator or qdq, the form to rewrite a quantized IN in")
	cmd.Flags().StringVar(&calib, "calibration", "", "folder of calibration input samples (static mode)")
	cmd.Flags().IntVar(&nCalib, "calibration-samples", 32, "generated calibration samples when --calibration is not given")
	cmd.Flags().BoolVar(&perChannel, "per-channel", false, "one weight scale per output channel (opset >= 13)")
	cmd.Flags().StringVar(&method, "calibration-method", "minmax", "activation ranges in static mode: minmax, percentile or entropy")
	cmd.Flags().Float64Var(&percentile, "percentile", 0, "with --calibration-method percentile: the share of values kept, in percent (default 99.999)")
	return cmd
}

// quantizedForm is `quantize IN OUT --format qoperator|qdq` without
// --mode: IN's quantized nodes rewritten in that form, checked in ONNX
// Runtime.
func quantizedForm(cmd *cobra.Command, tf transformFlags, format string, args []string) error {
	if format != pipeline.FormQOperator && format != pipeline.FormQDQ {
		return badInput(fmt.Errorf("quantize: --format %q without --mode: want qoperator or qdq (matmulnbits is for --mode int4)", format))
	}
	for _, f := range []string{"block-size", "per-channel", "calibration", "calibration-samples", "calibration-method", "percentile"} {
		if cmd.Flags().Changed(f) {
			return badInput(fmt.Errorf("quantize: --%s quantizes: it needs --mode (--format %s alone rewrites a quantized model)", f, format))
		}
	}
	o, err := tf.options()
	if err != nil {
		return badInput(fmt.Errorf("quantize: %w", err))
	}
	if o.Map {
		return badInput(fmt.Errorf("quantize: --map is not available with --format %s alone (ONNX Runtime hands out no intermediate values of QLinear ops)", format))
	}
	o.Runtimes = rtbuiltin.Set(nil)
	rep, err := pipeline.QuantizedForm(cmd.Context(), args[0], args[1], format, o)
	if rep != nil && (rep.Final != nil || o.Unchecked) {
		printVerdict(cmd.OutOrStdout(), rep.Final, nil, args[0], o.Unchecked)
	}
	if err != nil {
		return pipelineError(err)
	}
	return rep.WriteText(cmd.OutOrStdout(), args[1])
}
