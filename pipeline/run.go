package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/backendtest"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// RunOptions tune Run.
type RunOptions struct {
	// Inputs is the folder of inputs: NAME.pb / NAME.npy named after the
	// graph inputs, or input_N.pb / input_N.npy in graph-input order (the
	// same lookup as verification inputs). Sequence and optional inputs
	// are input_N.pb holding a SequenceProto or OptionalProto.
	Inputs string
	// OutDir, when set, receives output_N.pb (TensorProto, in graph-output
	// order).
	OutDir string
	// Backend is the executor's GoMLX backend ("" for the default).
	Backend string
	// Threads bounds the executor's kernel goroutines (0: all cores).
	Threads int
	// Dims sets the symbolic dims of generated inputs (when Inputs is
	// ""), NAME or INPUT:AXIS; unset ones are 1.
	Dims map[string]int64
	// Importers name the format of a path that is not ONNX (see
	// LoadOptions).
	Importers *importers.Registry
}

// RunResult holds the outputs of Run.
type RunResult struct {
	Outputs []*executor.Value
	// Files are the output files written (OutDir).
	Files []string
}

// Run runs the model at path with the built-in executor on the inputs in
// opts.Inputs, and writes the outputs to opts.OutDir when set.
func Run(ctx context.Context, path string, opts RunOptions) (*RunResult, error) {
	m, err := Load(path, LoadOptions{Importers: opts.Importers})
	if err != nil {
		return nil, err
	}
	defer m.Close()
	ex, err := executor.New(m, executor.Options{Backend: opts.Backend, Threads: opts.Threads})
	if err != nil {
		return nil, invalidErr(fmt.Errorf("%s: %w", path, err))
	}
	defer ex.Close()
	var ins []*executor.Value
	if opts.Inputs == "" {
		// Generated inputs, sized by Dims (as verification sizes them).
		ts, err := verify.GenerateInputs(m, verify.GenOptions{Dims: defaultDims(m, opts.Dims, func(string, ...any) {})}, 0)
		if err != nil {
			return nil, inputErr(fmt.Errorf("run %s: %w (or give --inputs)", path, err))
		}
		for _, t := range ts {
			ins = append(ins, &executor.Value{Tensor: t})
		}
	} else if ins, err = runInputs(opts.Inputs, ex.Inputs()); err != nil {
		return nil, inputErr(err)
	}
	outs, err := ex.RunValues(ctx, ins)
	if err != nil {
		return nil, invalidErr(fmt.Errorf("run %s: %w", path, err))
	}
	res := &RunResult{Outputs: outs}
	if opts.OutDir == "" {
		return res, nil
	}
	for i, o := range outs {
		if o.Tensor == nil {
			return res, invalidErr(fmt.Errorf("run %s: output %d is a sequence or optional; only tensors can be written", path, i))
		}
	}
	if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
		return res, inputErr(fmt.Errorf("run: %w", err))
	}
	for i, o := range outs {
		p := filepath.Join(opts.OutDir, "output_"+strconv.Itoa(i)+".pb")
		if err := canonical.WriteTensorFile(p, o.Tensor); err != nil {
			return res, inputErr(err)
		}
		res.Files = append(res.Files, p)
	}
	return res, nil
}

// runInputs reads one value per graph input. Tensor inputs use the shared
// sample lookup (as verification does); a model with sequence or optional
// inputs reads input_N.pb for each, decoded by the input's type.
func runInputs(dir string, inputs []*canonical.Value) ([]*executor.Value, error) {
	vals := make([]*executor.Value, len(inputs))
	plain := true
	for _, v := range inputs {
		if v.Type.GetSequenceType() != nil || v.Type.GetOptionalType() != nil {
			plain = false
		}
	}
	if !plain {
		for i, v := range inputs {
			x, err := backendtest.ReadValue(filepath.Join(dir, "input_"+strconv.Itoa(i)+".pb"), v.Type)
			if err != nil {
				return nil, fmt.Errorf("input %d (%s): %w", i, v.Name, err)
			}
			vals[i] = x
		}
		return vals, nil
	}
	sets, err := tensorio.LoadSamples(dir, "input", inputs, false)
	if err != nil {
		return nil, err
	}
	if len(sets) != 1 {
		return nil, fmt.Errorf("%s holds %d samples; run takes one folder of inputs", dir, len(sets))
	}
	for i, t := range sets[0] {
		vals[i] = executor.TensorValue(t)
	}
	return vals, nil
}

// executorFor starts the built-in executor on m.
func executorFor(m *canonical.Model) (*executor.Executor, error) {
	ex, err := executor.New(m, executor.Options{})
	if err != nil {
		return nil, fmt.Errorf("executor: %w", err)
	}
	return ex, nil
}
