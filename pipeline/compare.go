package pipeline

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// CompareOptions tune Verify.
type CompareOptions struct {
	VerifyOptions
	// Runtimes run the sides: nil for the built-in executor on both; one
	// name for both, or two (A's, then B's). "executor" is the built-in
	// executor; others are built-in runtimes ("tflite") or runtime plugins
	// ("onnxruntime") of Env.
	Runtimes       []string
	RuntimeThreads int
	// Env holds the runtimes (see Env; zero: none, the executor only).
	Env Env
	// Reports are report files to write (checked before any work).
	Reports []string
	// Command is recorded in the reports (nil: os.Args).
	Command []string
	// Progress reports the bytes of a long model read.
	LoadProgress Progress
}

// Verify runs model a (the reference) and b (the candidate) on the same
// inputs and compares every output. b may be a folder of stored outputs
// (output_N.pb, NAME.npy, or test_data_set_N folders of them), whose
// inputs come from Inputs or from the folder itself. With two runtimes, b
// may be "": a is compared with itself across them. The report says
// whether they are equivalent; an error means the comparison could not be
// made.
func Verify(ctx context.Context, a, b string, opts CompareOptions) (*verify.Report, error) {
	start := time.Now()
	if err := checkReports(opts.Reports); err != nil {
		return nil, err
	}
	if len(opts.Runtimes) > 2 {
		return nil, usageErr("give one runtime, or two (A's, then B's)")
	}
	if opts.RuntimeThreads < 0 {
		return nil, usageErr("runtime threads must not be negative")
	}
	if opts.Distribution != "" && opts.Distribution != "normal" && opts.Distribution != "uniform" {
		return nil, usageErr("distribution %q: use normal or uniform", opts.Distribution)
	}
	if opts.Profile != "" {
		if _, err := verify.LookupProfile(opts.Profile); err != nil {
			return nil, &Error{Kind: KindUsage, Err: fmt.Errorf("profile: %w", err)}
		}
	}
	if b == "" && len(opts.Runtimes) != 2 {
		return nil, usageErr("give two models (A B), or one model and two runtimes to compare it across")
	}
	pathB := b
	if b == "" {
		pathB = a
	}
	stB, err := os.Stat(pathB)
	if err != nil {
		return nil, inputErr(fmt.Errorf("B: %w", err))
	}
	if stB.IsDir() && len(opts.Runtimes) == 2 {
		return nil, usageErr("a runtime is named for B, but B (%s) is stored outputs", pathB)
	}
	rts, err := runtimes.NewSetup(opts.Runtimes, opts.RuntimeThreads, opts.Env.Runtimes)
	if err != nil {
		return nil, inputErr(err)
	}
	defer rts.Close()

	ma, err := Load(a, LoadOptions{Progress: opts.LoadProgress, Importers: opts.Env.Importers})
	if err != nil {
		return nil, err
	}
	defer ma.Close()
	if err := runnable(a, ma); err != nil {
		return nil, err
	}
	sa, err := rts.Side(0, a, ma)
	if err != nil {
		return nil, inputErr(err)
	}
	o := opts.options()
	inputs := opts.Inputs
	var sb *verify.Side
	if stB.IsDir() {
		sb = &verify.Side{Name: pathB}
		if inputs == "" {
			inputs = pathB
		}
		expected, err := tensorio.LoadSamples(pathB, "output", ma.Graph.Outputs, false)
		if err != nil {
			return nil, inputErr(fmt.Errorf("stored outputs: %w", err))
		}
		sb.Expected = expected
	} else {
		mb := ma
		if b != "" {
			if mb, err = Load(b, LoadOptions{Progress: opts.LoadProgress, Importers: opts.Env.Importers}); err != nil {
				return nil, err
			}
			defer mb.Close()
			if err := runnable(b, mb); err != nil {
				return nil, err
			}
		}
		if sb, err = rts.Side(1, pathB, mb); err != nil {
			return nil, inputErr(err)
		}
	}
	if inputs != "" {
		if o.Inputs, err = tensorio.LoadSamples(inputs, "input", verify.GraphInputs(ma), false); err != nil {
			return nil, inputErr(fmt.Errorf("inputs: %w", err))
		}
		o.InputSource = inputs
	}
	rep, err := verify.Compare(ctx, sa, sb, o)
	if err != nil {
		return nil, inputErr(err)
	}
	if len(opts.Runtimes) > 0 {
		rep.Notes = append(rep.Notes, rts.Describe(sb))
	}
	prov := provenance(opts.Command, start)
	rep.Provenance = &prov
	for _, p := range opts.Reports {
		if err := verify.WriteReport(p, rep); err != nil {
			return rep, inputErr(fmt.Errorf("report: %w", err))
		}
	}
	return rep, nil
}

// runnable refuses an ONNX file without a main graph (a library of
// functions): there is nothing to run.
func runnable(path string, m *canonical.Model) error {
	if m.Graph != nil {
		return nil
	}
	return inputErr(fmt.Errorf("%s holds %d ONNX function(s) and no graph: a function library (as -O custom= takes), not a model to run", path, len(m.Functions)))
}
