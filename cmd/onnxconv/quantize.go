package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/passes"
	"github.com/onnxconv/onnxconv/pipeline"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// newQuantizeCmd returns `onnxconv quantize IN OUT --mode dynamic|static`.
func newQuantizeCmd() *cobra.Command {
	var (
		tf          transformFlags
		mode, calib string
		perChannel  bool
		nCalib      int
	)
	cmd := &cobra.Command{
		Use:   "quantize IN OUT --mode dynamic|static",
		Short: "Quantize Conv/MatMul/Gemm inputs to int8 QDQ and report the accuracy change",
		Long: `Rewrite the inputs of IN's Conv, MatMul and Gemm nodes as QDQ
(QuantizeLinear/DequantizeLinear) and write OUT: weights int8 symmetric
(--per-channel: one scale per output channel), activations uint8
asymmetric. --mode static calibrates activation ranges (min-max) from the
samples in --calibration DIR (or --calibration-samples generated ones);
--mode dynamic quantizes activations at run time (DynamicQuantizeLinear).
The report gives top-1 agreement with the float model on the held samples
(--inputs, default the calibration samples) for [N, C] outputs, the max and
mean absolute error, and the size change.`,
		Example: `  onnxconv quantize model.onnx model.int8.onnx --mode static --calibration calib/ --per-channel
  onnxconv quantize model.onnx model.int8.onnx --mode dynamic`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if mode != "static" && mode != "dynamic" {
				return badInput(fmt.Errorf("quantize: --mode must be static or dynamic"))
			}
			m, err := tf.load(args[0], args[1])
			if err != nil {
				return err
			}
			defer func() { _ = m.Close() }()
			opts := passes.QuantOptions{Mode: passes.QuantMode(mode), PerChannel: perChannel}
			if calib != "" {
				if opts.Calibration, err = tensorio.LoadSamples(calib, "input", verify.GraphInputs(m), false); err != nil {
					return badInput(fmt.Errorf("quantize: --calibration: %w", err))
				}
			} else {
				for s := range nCalib {
					in, err := verify.GenerateInputs(m, verify.GenOptions{Seed: tf.seed}, s)
					if err != nil {
						return badInput(fmt.Errorf("quantize: generating calibration inputs: %w", err))
					}
					opts.Calibration = append(opts.Calibration, in)
				}
			}
			if tf.inputs != "" {
				if opts.Held, err = tensorio.LoadSamples(tf.inputs, "input", verify.GraphInputs(m), false); err != nil {
					return badInput(fmt.Errorf("quantize: --inputs: %w", err))
				}
			}
			res, rep, err := passes.Quantize(cmd.Context(), m, opts)
			if err != nil {
				return invalid(fmt.Errorf("quantize %s: %w", args[0], err))
			}
			defer func() { _ = res.Close() }()
			if err := tf.writeReport(rep); err != nil {
				return err
			}
			if err := pipeline.Save(args[1], res, pipeline.SaveOptions{}); err != nil {
				return pipelineError(err)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%s: %s int8 QDQ, %d nodes quantized; initializer bytes %s -> %s\n", args[1], rep.Mode, rep.Quantized,
				canonical.HumanBytes(rep.Before.Bytes), canonical.HumanBytes(rep.After.Bytes))
			if rep.Top1 >= 0 {
				fmt.Fprintf(w, "top-1 agreement with the float model: %.2f%%\n", 100*rep.Top1)
			}
			if rep.MaxAbs >= 0 {
				fmt.Fprintf(w, "max abs error %.3g, mean abs error %.3g\n", rep.MaxAbs, rep.MeanAbs)
			}
			return nil
		},
	}
	tf.add(cmd, "quantization")
	cmd.Flags().StringVar(&mode, "mode", "", "static (calibrated activation ranges) or dynamic")
	cmd.Flags().StringVar(&calib, "calibration", "", "folder of calibration input samples (static mode)")
	cmd.Flags().IntVar(&nCalib, "calibration-samples", 32, "generated calibration samples when --calibration is not given")
	cmd.Flags().BoolVar(&perChannel, "per-channel", false, "one weight scale per output channel (opset >= 13)")
	return cmd
}
