package pipeline

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/reduce"
	"github.com/onnxconv/onnxconv/verify/tensorio"
	"github.com/onnxconv/onnxconv/version"
)

// ReduceOptions tune Reduce.
type ReduceOptions struct {
	// VerifyOptions give the inputs (Inputs, else generated from Seed,
	// Distribution, Dims, Ranges: the first sample is used), the
	// tolerances (Profile, RTol, ATol) and the executor's Backend and
	// Threads.
	VerifyOptions
	// Against is the runtime of side A, the reference (""
	// the runtime of profiles.Default, ONNX Runtime); Candidate is B's ("": the executor).
	Against, Candidate string
	RuntimeThreads     int
	// Env holds the runtimes and importers.
	Env Env
	// Bundle is the folder the bundle is written to (new or empty).
	Bundle string
	// MaxTests bounds the candidate models tried (0: the default).
	MaxTests int
	// Command is recorded in the bundle (nil: os.Args).
	Command []string
	// Logf, when set, is told each step.
	Logf func(format string, args ...any)
}

// Reduce shrinks the model at path to the smallest subgraph on which A
// and B still diverge (or that the side that fails on the whole model
// still fails to load or run) and writes it as a bundle (verify/reduce).
// When the sides agree the error wraps reduce.ErrAgree.
func Reduce(ctx context.Context, path string, opts ReduceOptions) (*reduce.Result, error) {
	if opts.Bundle == "" {
		return nil, usageErr("reduce: give the bundle folder (-o DIR)")
	}
	if ents, err := os.ReadDir(opts.Bundle); err == nil && len(ents) > 0 {
		return nil, usageErr("reduce: %s is not empty: give a new folder for the bundle", opts.Bundle)
	}
	if opts.RuntimeThreads < 0 {
		return nil, usageErr("runtime threads must not be negative")
	}
	// The default reference is the runtime of the default target
	// (profiles.Default: ONNX Runtime's).
	def, err := targetRuntime("")
	if err != nil {
		return nil, inputErr(err)
	}
	names := []string{opts.Against, opts.Candidate}
	if names[0] == "" {
		names[0] = def
	}
	if names[1] == "" {
		names[1] = runtimes.Executor
	}
	if names[0] == names[1] {
		return nil, usageErr("reduce: both sides would run on %s: give another runtime to reduce against", names[0])
	}
	rts, err := runtimes.NewSetup(names, opts.RuntimeThreads, opts.Env.Runtimes)
	if err != nil {
		return nil, inputErr(err)
	}
	defer rts.Close()
	for _, n := range names {
		if n == runtimes.Executor {
			continue
		}
		rt, err := opts.Env.Runtimes.Lookup(n)
		if err != nil {
			return nil, inputErr(err)
		}
		if _, ok := rt.(runtimes.ONNXLoader); !ok {
			return nil, usageErr("reduce: runtime %s does not load ONNX files as they are, and reduce runs the cut ONNX models on both sides "+
				"(and reads intermediate values of the reference): reduce against %s, or convert the model and reduce the result", n, def)
		}
	}
	// Load takes ONNX files only (another format is refused with the
	// convert command that makes one): the runtimes load path as it is.
	m, err := Load(path, LoadOptions{Importers: opts.Env.Importers})
	if err != nil {
		return nil, err
	}
	defer m.Close()
	input, err := reduceInput(m, &opts.VerifyOptions, opts.Logf)
	if err != nil {
		return nil, err
	}
	sides := func(p string, sub *canonical.Model) (*verify.Side, *verify.Side, func() error, error) {
		s, err := runtimes.NewSetup(names, opts.RuntimeThreads, opts.Env.Runtimes)
		if err != nil {
			return nil, nil, nil, err
		}
		a, err := s.Side(0, p, sub)
		if err != nil {
			return nil, nil, nil, err
		}
		b, err := s.Side(1, p, sub)
		if err != nil {
			return nil, nil, nil, err
		}
		return a, b, s.Close, nil
	}
	vo := opts.VerifyOptions.options()
	res, err := reduce.Reduce(ctx, m, reduce.Options{Sides: sides, Path: path, Input: input, Verify: vo, MaxTests: opts.MaxTests, Logf: opts.Logf})
	if err != nil {
		return nil, inputErr(fmt.Errorf("%s: %w", path, err))
	}
	command := opts.Command
	if command == nil {
		command = slices.Clone(os.Args)
	}
	b := reduce.Bundle{Command: command, Tool: toolVersion(), Source: path,
		Sides:  [2]string{rts.DescribeSide(0), rts.DescribeSide(1)},
		Replay: replay(names, res, &opts.VerifyOptions)}
	if err := reduce.Write(opts.Bundle, res, b); err != nil {
		res.Close()
		return nil, inputErr(err)
	}
	return res, nil
}

// reduceInput is the sample Reduce runs: the first of Inputs, else one
// generated as verification generates them.
func reduceInput(m *canonical.Model, vo *VerifyOptions, logf func(string, ...any)) ([]*canonical.Tensor, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	gen := vo.options().Gen
	if vo.Inputs == "" {
		gen.Dims = defaultDims(m, vo.Dims, logf)
	}
	return firstSample(m, vo.Inputs, gen)
}

// firstSample is the first sample of the folder inputs, else (inputs "")
// the first one gen generates for m.
func firstSample(m *canonical.Model, inputs string, gen verify.GenOptions) ([]*canonical.Tensor, error) {
	if inputs != "" {
		s, err := tensorio.LoadSamples(inputs, "input", verify.GraphInputs(m), false)
		if err != nil {
			return nil, inputErr(fmt.Errorf("inputs: %w", err))
		}
		if len(s) == 0 {
			return nil, inputErr(fmt.Errorf("inputs: no sample in %s", inputs))
		}
		return s[0], nil
	}
	in, err := verify.GenerateInputs(m, gen, 0)
	if err != nil {
		return nil, inputErr(fmt.Errorf("generating inputs: %w (give --inputs DIR, or --dim NAME=N)", err))
	}
	return in, nil
}

// replay are the commands that replay a bundle, in its folder.
func replay(names []string, res *reduce.Result, vo *VerifyOptions) []reduce.Replay {
	var tol []string
	if vo.Profile != "" {
		tol = append(tol, "--profile", vo.Profile)
	}
	if vo.RTol != nil {
		tol = append(tol, "--rtol", strconv.FormatFloat(*vo.RTol, 'g', -1, 64))
	}
	if vo.ATol != nil {
		tol = append(tol, "--atol", strconv.FormatFloat(*vo.ATol, 'g', -1, 64))
	}
	extra := ""
	if len(tol) > 0 {
		extra = " " + strings.Join(tol, " ")
	}
	both := fmt.Sprintf("onnxconv verify --runtime %s,%s %s --inputs %s%s", names[0], names[1], reduce.ModelFile, reduce.DataDir, extra)
	if res.Mode == reduce.Fails {
		return []reduce.Replay{{Command: both, Shows: fmt.Sprintf("exits 2: %s fails on the model (the error is below)", names[res.Failing])}}
	}
	out := []reduce.Replay{{Command: both, Shows: fmt.Sprintf("exits 1, not equivalent: %s and %s still diverge", names[0], names[1])}}
	if names[1] == runtimes.Executor {
		out = append(out, reduce.Replay{Command: fmt.Sprintf("onnxconv verify %s %s%s", reduce.ModelFile, reduce.DataDir, extra),
			Shows: fmt.Sprintf("exits 1, not equivalent: the executor against the outputs %s computed, stored beside the inputs (needs no other runtime)", names[0])})
	}
	return out
}

// toolVersion names this build in one line: "onnxconv v0.3.0 (go1.26)".
func toolVersion() string {
	v := version.Get()
	s := "onnxconv " + v.Short()
	if v.GoVersion != "" {
		s += " (" + v.GoVersion + ")"
	}
	return s
}
