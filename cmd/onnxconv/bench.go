package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/batch"
	"github.com/onnxconv/onnxconv/bench"
	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/pipeline"
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/plugins/sdk"
)

// newBenchCmd returns `onnxconv bench MODEL...`, a thin shell over
// bench.Run.
func newBenchCmd() *cobra.Command {
	var (
		inDir, rtName, backend string
		threads, reps, warmup  int
		noKernels, asJSON      bool
		dimFlags               []string
	)
	cmd := &cobra.Command{
		Use:   "bench MODEL... [--inputs DIR] [--threads N] [--runtime onnxruntime] [--reps N]",
		Short: "Time a model on the built-in executor, optionally against a runtime",
		Long: `Time MODEL on the built-in executor: warm-up runs (the first one compiles),
then --reps timed runs; print p50/p90/p99 latency, throughput, CPU time per
run and the process's peak resident memory. With --runtime the runtime
plugin runs the same inputs, interleaved with the executor, and the ratio
of the medians is printed (with several models, their geometric mean).

Inputs come from --inputs (NAME.pb / NAME.npy / input_N.pb), else the
model folder's test_data_set_0, else they are generated (symbolic dims
from --dim, else 1).

--threads N (default: all cores) holds the executor to N threads
(GOMAXPROCS and its kernels) and asks the runtime for N intra-op threads.
A runtime plugin is started once per model and serves the warm-up and
timed runs (the ONNX Runtime plugin keeps the model loaded between them),
so its figures are steady state plus the plugin protocol's copy of the
tensors; cmd/onnxconv-bench (cgo, in process) has none of that.`,
		Example: `  onnxconv bench fixtures/models/resnet_small/model.onnx --threads 1
  onnxconv bench fixtures/models/*/model.onnx --threads 1 --runtime onnxruntime --reps 20`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			results, err := runBench(cmd.Context(), args, rtName, bench.Options{Inputs: inDir, Threads: threads, Warmup: warmup, Reps: reps,
				Backend: backend, DisableKernels: noKernels}, dimFlags)
			if err != nil {
				if asJSON {
					// What failed, classified as a bench job records it: a
					// batch or serve job that ran this process reads it.
					_ = writeJSON(cmd.OutOrStdout(), map[string]any{"error": batch.BenchFailure(err)})
				}
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(results)
			}
			return bench.WriteTable(cmd.OutOrStdout(), results)
		},
	}
	f := cmd.Flags()
	f.StringVar(&inDir, "inputs", "", "folder of NAME.pb, NAME.npy, input_N.pb or input_N.npy files")
	f.IntVar(&threads, "threads", 0, "threads of the executor and of the runtime (0: all cores)")
	f.StringArrayVar(&dimFlags, "dim", nil, "symbolic dim value for generated inputs, NAME=N or INPUT:AXIS=N (repeatable; unset: 1)")
	f.StringVar(&rtName, "runtime", "", "a runtime plugin to time side by side (e.g. onnxruntime)")
	f.IntVar(&reps, "reps", 20, "timed runs per side")
	f.IntVar(&warmup, "warmup", 2, "untimed runs per side before timing (the first executor run compiles)")
	f.StringVar(&backend, "backend", "", "GoMLX backend (default: go, or $"+executor.BackendEnv+")")
	f.BoolVar(&noKernels, "no-kernels", false, "run MatMul, Gemm and Conv through GoMLX instead of the executor's kernels (for comparison)")
	f.BoolVar(&asJSON, "json", false, "print the results as JSON (a failure as {\"error\": {\"status\", \"kind\", \"message\"}})")
	return cmd
}

// runBench times each model of args (see newBenchCmd); opts carries the
// flags but Runtime and Dims.
func runBench(ctx context.Context, args []string, rtName string, opts bench.Options, dimFlags []string) ([]*bench.Result, error) {
	// Started by a batch or serve bench job: its memory limit.
	if err := sdk.LimitFromEnv(); err != nil {
		return nil, badInput(fmt.Errorf("bench: %w", err))
	}
	if opts.Reps < 1 || opts.Warmup < 0 || opts.Threads < 0 {
		return nil, badInput(errors.New("bench: --reps must be at least 1, --warmup and --threads not negative"))
	}
	dims, err := pipeline.ParseDims(dimFlags)
	if err != nil {
		return nil, badInput(fmt.Errorf("bench: %w", err))
	}
	opts.Dims = dims
	if opts.Threads > 0 {
		runtime.GOMAXPROCS(opts.Threads)
	}
	var host *plugins.Host
	if rtName != "" && rtName != "executor" {
		// Started by a batch or serve bench job: its plugin
		// folders and limits.
		popts, err := plugins.InheritedOptions()
		if err != nil {
			return nil, badInput(fmt.Errorf("bench: %w", err))
		}
		h, err := plugins.NewHost(ctx, popts)
		if err != nil {
			return nil, badInput(fmt.Errorf("bench: finding runtime plugins: %w", err))
		}
		host = h
	}
	// One plugin process per model serves every run.
	opts.Runtime = rtName + " (plugin)"
	var results []*bench.Result
	for _, path := range args {
		m, err := pipeline.Load(path, pipeline.LoadOptions{Importers: builtin.Registry()})
		if err != nil {
			return nil, pipelineError(err)
		}
		var other bench.Runner
		if host != nil {
			names := inputNames(m)
			r, err := host.OpenRuntime(ctx, rtName, path, names, plugins.RunOptions{Threads: opts.Threads})
			if err != nil {
				m.Close()
				return nil, badInput(fmt.Errorf("bench: %w", err))
			}
			other = r
		}
		res, err := bench.Run(ctx, path, m, opts, other)
		if c, ok := other.(interface{ Close() error }); ok {
			_ = c.Close()
		}
		m.Close()
		if err != nil {
			var ue *bench.UsageError
			if errors.As(err, &ue) {
				return nil, badInput(err)
			}
			return nil, invalid(err)
		}
		results = append(results, res)
	}
	return results, nil
}

// inputNames are the graph inputs that are not initializers, in order.
func inputNames(m *canonical.Model) []string {
	init := map[*canonical.Value]bool{}
	for _, v := range m.Graph.Initializers {
		init[v] = true
	}
	var names []string
	for _, v := range m.Graph.Inputs {
		if !init[v] {
			names = append(names, v.Name)
		}
	}
	return names
}
