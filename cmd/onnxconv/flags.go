package main

// The flag vocabulary shared by convert and opset (and, for verification,
// verify): one name for one thing everywhere.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/pipeline"
	"github.com/onnxconv/onnxconv/verify"
)

// verifyFlags are the verification options of convert and opset.
type verifyFlags struct {
	verify, noVerify bool
	inputs, refDir   string
	reports, dims    []string
	profile          string
	rtol, atol       float64
	bisect           bool
	errMap           bool
	keepFailed       bool
	ranges           []string
	saveInputs       string
	samples          int
	threads          int
	decodeSteps      int
	kvCache          []string
	fs               *pflag.FlagSet
}

func (f *verifyFlags) register(fs *pflag.FlagSet) {
	f.fs = fs
	fs.BoolVar(&f.verify, "verify", false, "check that the result computes what the source computes (the default)")
	fs.BoolVar(&f.noVerify, "no-verify", false, "do not verify (the result is written unchecked and the summary says so)")
	fs.StringVar(&f.inputs, "inputs", "", "folder (or .npz) of verification inputs: NAME.pb, NAME.npy, input_N.pb, input_N.npy, test_data_set_N/")
	fs.StringVar(&f.refDir, "reference", "", "folder (or .npz) of expected outputs to compare the result with: NAME.npy, NAME.pb, output_N.pb/.npy")
	fs.StringArrayVar(&f.reports, "report", nil, "write the verification report: .json, .md, .html or .xml (JUnit); repeatable")
	fs.StringArrayVar(&f.dims, "dim", nil, "symbolic dim value for generated inputs, NAME=N or INPUT:AXIS=N (repeatable)")
	fs.StringVar(&f.profile, "profile", "", "tolerance profile: "+strings.Join(verify.ProfileNames(), ", ")+" (default: by output type)")
	fs.Float64Var(&f.rtol, "rtol", 0, "relative tolerance (overrides the profile)")
	fs.Float64Var(&f.atol, "atol", 0, "absolute tolerance (overrides the profile)")
	fs.BoolVar(&f.bisect, "bisect", false, "when the result is not equivalent, find the first diverging node")
	fs.BoolVar(&f.errMap, "map", false, "compare every intermediate tensor of the result with the source's and rank the nodes by where the error starts (in the reports)")
	fs.BoolVar(&f.keepFailed, "keep-failed", false, "when the result is not equivalent, write it anyway as OUT with .not-equivalent before the extension")
	fs.StringArrayVar(&f.ranges, "input-range", nil, "range of generated input values, LO,HI for every input or NAME=LO,HI (repeatable), e.g. audio=-1,1 or 0,255")
	fs.StringVar(&f.saveInputs, "save-inputs", "", "write the generated verification inputs to this folder (repeat the run with --inputs)")
	fs.IntVar(&f.samples, "samples", 2, "number of generated input samples")
	fs.IntVar(&f.threads, "threads", 0, "executor kernel threads (0: all cores; results do not depend on it)")
	registerDecode(fs, &f.decodeSteps, &f.kvCache)
}

// options returns the verification options, or nil when the run does not
// verify. changed tells whether the command changes the model (opset or
// target), which turns verification on by default.
func (f *verifyFlags) options(changed bool) (*pipeline.VerifyOptions, error) {
	if f.verify && f.noVerify {
		return nil, errors.New("--verify and --no-verify contradict each other")
	}
	explicit := f.refDir != "" || f.inputs != "" || len(f.reports) > 0 || f.bisect || f.errMap || f.keepFailed ||
		len(f.ranges) > 0 || f.saveInputs != "" || f.fs.Changed("samples")
	if f.noVerify {
		if explicit {
			return nil, errors.New("--no-verify with a verification option (--reference, --inputs, --report, --bisect, --map, --keep-failed, --input-range, --save-inputs, --samples): drop one of them")
		}
		return nil, nil
	}
	if !f.verify && !changed && !explicit {
		return nil, nil
	}
	o := &pipeline.VerifyOptions{Inputs: f.inputs, Reference: f.refDir, Profile: f.profile, Bisect: f.bisect, Map: f.errMap,
		SaveInputs: f.saveInputs, Samples: f.samples, Threads: f.threads}
	if f.samples < 1 {
		return nil, errors.New("--samples must be at least 1")
	}
	if f.saveInputs != "" && f.inputs != "" {
		return nil, errors.New("--save-inputs writes generated inputs; with --inputs nothing is generated: drop one of them")
	}
	if f.profile != "" {
		if _, err := verify.LookupProfile(f.profile); err != nil {
			return nil, fmt.Errorf("--profile: %w", err)
		}
	}
	if f.fs.Changed("rtol") {
		if f.rtol < 0 {
			return nil, errors.New("--rtol must not be negative")
		}
		o.RTol = &f.rtol
	}
	if f.fs.Changed("atol") {
		if f.atol < 0 {
			return nil, errors.New("--atol must not be negative")
		}
		o.ATol = &f.atol
	}
	if err := setDecode(o, f.decodeSteps, f.kvCache); err != nil {
		return nil, err
	}
	var err error
	if o.Dims, err = pipeline.ParseDims(f.dims); err != nil {
		return nil, err
	}
	if o.Ranges, err = pipeline.ParseRanges(f.ranges); err != nil {
		return nil, err
	}
	return o, nil
}

// registerDecode registers --decode-steps and --kv-cache (convert, opset,
// verify).
func registerDecode(fs *pflag.FlagSet, steps *int, kvCache *[]string) {
	fs.IntVar(steps, "decode-steps", verify.DefaultDecodeSteps, "a decoder with a KV cache (past*/present*) is verified over a prefill and this many decode steps, each feeding its caches back (0: one call with generated caches)")
	fs.StringArrayVar(kvCache, "kv-cache", nil, "declare a KV cache a decoder feeds back, PAST_INPUT=PRESENT_OUTPUT (repeatable; default: found by name, past_key_values.N.key=present.N.key)")
}

// setDecode sets the decode-loop options of o from --decode-steps and
// --kv-cache.
func setDecode(o *pipeline.VerifyOptions, steps int, kvCache []string) error {
	switch {
	case steps < 0:
		return errors.New("--decode-steps must not be negative")
	case steps == 0:
		o.DecodeSteps = -1
	default:
		o.DecodeSteps = steps
	}
	for _, kv := range kvCache {
		past, present, ok := strings.Cut(kv, "=")
		if !ok || past == "" || present == "" {
			return fmt.Errorf("--kv-cache %q: want PAST_INPUT=PRESENT_OUTPUT, e.g. past_key_values.0.key=present.0.key", kv)
		}
		o.KVCache = append(o.KVCache, verify.CachePair{Past: past, Present: present})
	}
	return nil
}

// opsetFlags are the opset options of convert and opset.
type opsetFlags struct {
	opset, mlOpset int
}

func (f *opsetFlags) register(fs *pflag.FlagSet) {
	fs.IntVar(&f.opset, "opset", 0, "target ai.onnx opset, 7 to 28")
	fs.IntVar(&f.mlOpset, "ml-opset", 0, "target ai.onnx.ml opset, 1 to 5")
}

// writeFlags are the output options of convert and opset.
type writeFlags struct {
	force     bool
	external  bool
	inline    bool
	threshold int64
	extFile   string
}

func (f *writeFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.force, "force", false, "allow the output to replace the input")
	f.registerExternal(fs)
}

// registerExternal registers the external-data options only (a command
// that has no --force).
func (f *writeFlags) registerExternal(fs *pflag.FlagSet) {
	fs.BoolVar(&f.external, "external-data", false, "move tensors to an external data file beside OUT (done without it when IN had external data or OUT would exceed 2 GiB)")
	fs.BoolVar(&f.inline, "no-external-data", false, "write every tensor inside OUT, even when IN had external data (a model over 2 GiB is then refused)")
	fs.Int64Var(&f.threshold, "external-threshold", canonical.DefaultExternalThreshold, "size in bytes from which a tensor moves to external data")
	fs.StringVar(&f.extFile, "external-file", "", "name of the external data file, relative to OUT's folder (default OUT's name + \".data\")")
}

func (f *writeFlags) save(progress pipeline.Progress) pipeline.SaveOptions {
	return pipeline.SaveOptions{ExternalData: f.external, Inline: f.inline, ExternalThreshold: f.threshold, ExternalFile: f.extFile, Progress: progress}
}
