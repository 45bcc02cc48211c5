// Package verify decides whether two models compute the same thing: it
// makes (or takes) inputs, runs both models on the same inputs (or one
// model against stored outputs), compares every output with tolerances
// that depend on the element type, fits a drift line that separates
// systematic scale or offset error from noise, finds the first node whose
// output diverges, and writes the result as JSON, Markdown, HTML or JUnit
// XML.
//
// The models are run through the Runner interface, so any runtime can
// take a side: the built-in executor (the default), or ONNX Runtime
// through a plugin.
package verify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
)

// Runner runs a model: inputs in the order of the graph inputs that are
// not initializers, outputs in graph-output order.
type Runner interface {
	Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error)
}

// CaptureRunner is a Runner that can also hand out intermediate values by
// name (needed by Options.Bisect).
type CaptureRunner interface {
	Runner
	RunCapture(ctx context.Context, inputs []*canonical.Tensor, names []string) (map[string]*canonical.Tensor, error)
}

// ErrNoCapture is wrapped by a CaptureRunner that cannot hand out the
// intermediate values of its model after all (a TF.js layers model): the
// error map and bisection are then left out with a note.
var ErrNoCapture = errors.New("the runtime does not hand out intermediate values of this model")

// Side is one side of a comparison: a model (run by Runner, or by the
// built-in executor when Runner is nil), or stored outputs.
type Side struct {
	// Name identifies the side in reports (usually the file path).
	Name string
	// Model gives the graph: input types, output names, nodes for
	// bisection. Required unless Expected is set.
	Model *canonical.Model
	// Runner runs Model; nil means the built-in executor.
	Runner Runner
	// ComputedBy says what computes this side for reports ("TFLite
	// interpreter 2.16 under Node"); empty derives it: the built-in
	// executor, stored outputs or "an external runtime".
	ComputedBy string
	// Expected holds stored outputs, one slice per sample, in the order
	// of the reference's outputs (or named after them). A side with
	// Expected is not run.
	Expected [][]*canonical.Tensor
	// ExpectedValues is Expected for a model whose outputs are sequences
	// or optionals (see HasValues).
	ExpectedValues [][]*executor.Value
	// Float16AsORT runs Model on the built-in executor computing float16
	// as ONNX Runtime's CPU provider does (executor.Options.Float16AsORT):
	// for a side compared with ONNX Runtime.
	Float16AsORT bool
}

// ModelSide returns a side that runs m with the built-in executor.
func ModelSide(name string, m *canonical.Model) *Side { return &Side{Name: name, Model: m} }

// Options configure Compare.
type Options struct {
	// Inputs are explicit input samples, each in the order of A's graph
	// inputs. When nil, Samples samples are generated.
	Inputs [][]*canonical.Tensor
	// Samples is the number of generated samples (default
	// DefaultSamples).
	Samples int
	// Gen controls generated inputs (seed, distribution, symbolic dims).
	Gen GenOptions

	// Profile names a tolerance profile (fp32, fp16, bf16, int8, ...);
	// empty means the profile of each output's element type. RTol and
	// ATol, when set, override the profile.
	Profile    string
	RTol, ATol *float64
	// MinRTol, when RTol is not set, raises the relative tolerance of
	// every output to at least this (stored outputs computed by another
	// implementation in another precision: ONNX's backend tests).
	MinRTol float64

	// ByOrder matches outputs (and inputs) by position instead of name.
	ByOrder bool
	// Bisect looks for the first node of A whose output diverges.
	Bisect bool
	// BisectBatch is the number of values captured per run while
	// bisecting (default 64), and while building the error map.
	BisectBatch int
	// Map builds the whole-graph error map (package errmap): every node
	// output of B compared with its counterpart in A, on the first
	// sample, ranked by where the error starts.
	Map bool

	// Backend is the GoMLX backend for sides run by the built-in
	// executor ("" for the default).
	Backend string
	// Threads bounds the goroutines of one executor kernel call (0: all
	// cores); results do not depend on it.
	Threads int
	// Progress, when set, is called after each sample.
	Progress func(done, total int)
	// InputSource describes where Inputs came from, for the report.
	InputSource string
	// Decode verifies a decoder with a KV cache over a prefill and decode
	// steps (see Decode); nil, or Steps 0, compares single calls.
	Decode *Decode
	// Values are the input samples of a model whose inputs or outputs are
	// sequences or optionals (see HasValues), which is compared value by
	// value; Inputs is then not used.
	Values [][]*executor.Value
}

// errNoModel: a side that cannot be run or read.
var errNoModel = errors.New("side has neither a model nor stored outputs")

// Compare runs a (the reference) and b (the candidate) on the same inputs
// and compares their outputs. The error is for comparisons that could not
// be made (a model that does not run, inputs that do not fit); a
// difference in numbers is a Report with Equivalent false.
func Compare(ctx context.Context, a, b *Side, opts Options) (*Report, error) {
	start := time.Now()
	if a == nil || a.Model == nil || a.Model.Graph == nil {
		return nil, fmt.Errorf("verify: reference (A): %w", errNoModel)
	}
	if b == nil || (b.Model == nil && b.Expected == nil && b.ExpectedValues == nil) {
		return nil, fmt.Errorf("verify: candidate (B): %w", errNoModel)
	}
	if opts.Profile != "" {
		if _, err := LookupProfile(opts.Profile); err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
	}
	var inside string
	if opts.Profile == "" && opts.RTol == nil {
		// A graph that computes in a lower precision inside (float16
		// weights and casts, with float32 inputs and outputs) is held to
		// the tolerance of that precision: two runtimes round its float16
		// steps differently, by up to a few float16 ulps.
		if inside = InsidePrecision(a.Model, b.Model); inside != "" {
			opts.Profile = inside
		}
	}
	rep := newReport(a, b, &opts)
	if inside != "" {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the model computes in %s inside: its float outputs are held to the %s tolerance profile (give --profile, --rtol or --atol to choose another)", profileTypeName[inside], inside))
	}
	if opts.Values != nil || b.ExpectedValues != nil {
		return compareValues(ctx, a, b, opts, rep, start)
	}

	// Runners.
	ra, closeA, err := runnerFor(a, opts.Backend, opts.Threads)
	if err != nil {
		return nil, fmt.Errorf("verify: reference %s: %w", a.Name, err)
	}
	closeA = sync.OnceFunc(closeA)
	defer closeA()
	// seq: A runs on every sample and is closed before B's executor is
	// opened, so the two sides' copies of the weights are never held at
	// once (a 2 GiB model quantized and verified, issue 39). Bisection,
	// the error map and decoding need both sides open.
	seq := b.Expected == nil && a.Runner == nil && !opts.Bisect && !opts.Map && !opts.Decode.Applies(a.Model)
	var rb Runner
	closeB := func() {}
	defer func() { closeB() }()
	openB := func() error {
		r, c, err := runnerFor(b, opts.Backend, opts.Threads)
		if err != nil {
			return fmt.Errorf("verify: candidate %s: %w", b.Name, err)
		}
		rb, closeB = r, c
		return nil
	}
	if b.Expected == nil && !seq {
		if err := openB(); err != nil {
			return nil, err
		}
	}

	inA := GraphInputs(a.Model)
	var mapB []int // B's input i takes A's input mapB[i]
	if b.Expected == nil {
		if mapB, err = matchInputs(inA, GraphInputs(b.Model), opts.ByOrder); err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
	}

	// Output pairing.
	outA := names(a.Model.Graph.Outputs)
	var outB []string
	if b.Model != nil {
		outB = names(b.Model.Graph.Outputs)
	} else {
		outB = outA
	}
	pairs, unmatched := matchOutputs(outA, outB, opts.ByOrder)
	if unmatched != nil {
		rep.Unmatched = unmatched
	}
	if b.Expected == nil && opts.Decode.Applies(a.Model) {
		run := func(ctx context.Context, in []*canonical.Tensor, side int) ([]*canonical.Tensor, error) {
			if side == 0 {
				return ra.Run(ctx, in)
			}
			inB, err := inputsForB(in, mapB, GraphInputs(b.Model))
			if err != nil {
				return nil, err
			}
			return rb.Run(ctx, inB)
		}
		if err := compareDecode(ctx, a, b, opts, rep, run, pairs, outA, outB); err != nil {
			return nil, err
		}
		rep.DurationMS = float64(time.Since(start).Microseconds()) / 1000
		rep.Summary = rep.summary()
		return rep, nil
	}
	// Inputs.
	samples := opts.Inputs
	if samples == nil {
		k := opts.Samples
		if b.Expected != nil {
			return nil, fmt.Errorf("verify: comparing against stored outputs needs the inputs they were computed from (--inputs)")
		}
		if k <= 0 {
			k = DefaultSamples
		}
		for s := range k {
			in, err := GenerateInputs(a.Model, opts.Gen, s)
			if err != nil {
				return nil, fmt.Errorf("verify: generating inputs for %s: %w", a.Name, err)
			}
			samples = append(samples, in)
		}
		rep.Options.InputSource = "generated"
	}
	if b.Expected != nil && len(b.Expected) != len(samples) {
		return nil, fmt.Errorf("verify: %d input samples but %d sets of stored outputs in %s", len(samples), len(b.Expected), b.Name)
	}
	for si, s := range samples {
		if len(s) != len(inA) {
			return nil, fmt.Errorf("verify: sample %d has %d inputs, %s takes %d", si, len(s), a.Name, len(inA))
		}
	}
	rep.Samples = len(samples)
	for i, v := range inA {
		t := samples[0][i]
		rep.Inputs = append(rep.Inputs, InputInfo{Name: v.Name, DType: canonical.ElemTypeName(t.DataType), Shape: nonNil(t.Dims)})
	}
	accs := make([]*accumulator, len(pairs))

	var yas [][]*canonical.Tensor // A's outputs when seq
	if seq {
		for si, in := range samples {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("verify: %w", err)
			}
			ya, err := ra.Run(ctx, in)
			if err != nil {
				return nil, sideErr(false, a.Name, si, err)
			}
			yas = append(yas, ya)
		}
		closeA()
		if err := openB(); err != nil {
			return nil, err
		}
	}
	for si, in := range samples {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		var ya []*canonical.Tensor
		if seq {
			ya, yas[si] = yas[si], nil
		} else if ya, err = ra.Run(ctx, in); err != nil {
			return nil, sideErr(false, a.Name, si, err)
		}
		var yb []*canonical.Tensor
		if b.Expected != nil {
			yb = b.Expected[si]
		} else {
			inB, err := inputsForB(in, mapB, GraphInputs(b.Model))
			if err != nil {
				return nil, fmt.Errorf("verify: sample %d: %w", si, err)
			}
			if yb, err = rb.Run(ctx, inB); err != nil {
				return nil, sideErr(true, b.Name, si, err)
			}
		}
		if err := checkCounts(a.Name, b.Name, len(ya), len(yb), outA, pairs); err != nil {
			return nil, err
		}
		for pi, p := range pairs {
			ta, tb := ya[p.a], yb[p.b]
			if accs[pi] == nil {
				res := &OutputResult{Name: outA[p.a], BName: outB[p.b], Pass: true}
				if b.Expected != nil {
					res.BName = tb.Name
				}
				accs[pi] = newAccumulator(res, opts.toleranceFor(ta.DataType, tb.DataType), len(samples))
			}
			if err := accs[pi].add(ta, tb); err != nil {
				return nil, fmt.Errorf("verify: sample %d: %w", si, err)
			}
		}
		if opts.Progress != nil {
			opts.Progress(si+1, len(samples))
		}
	}
	rep.finishOutputs(len(unmatched) == 0 && len(pairs) > 0, accs)
	if len(unmatched) > 0 && !opts.ByOrder && len(outA) == len(outB) {
		rep.Notes = append(rep.Notes, fmt.Sprintf("outputs matched by name; B's outputs are named %s: use --by-order to match them by position",
			strings.Join(outB, ", ")))
	}

	if opts.Bisect {
		if b.Expected != nil {
			rep.Notes = append(rep.Notes, "bisection needs two models; B is stored outputs")
		} else {
			ca, okA := ra.(CaptureRunner)
			cb, okB := rb.(CaptureRunner)
			if !okA || !okB {
				rep.Notes = append(rep.Notes, "bisection needs runners that capture intermediate values")
			} else {
				inB, err := inputsForB(samples[0], mapB, GraphInputs(b.Model))
				if err != nil {
					return nil, fmt.Errorf("verify: %w", err)
				}
				bis, err := bisect(ctx, a.Model, b.Model, ca, cb, samples[0], inB, &opts)
				switch {
				case errors.Is(err, ErrNoCapture):
					rep.Notes = append(rep.Notes, "no bisection: "+err.Error())
				case err != nil:
					return nil, fmt.Errorf("verify: bisect: %w", err)
				default:
					rep.Bisect = bis
				}
			}
		}
	}
	if opts.Map {
		if err := buildMap(ctx, rep, a, b, ra, rb, samples[0], mapB, &opts); err != nil {
			return nil, err
		}
	}
	rep.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	rep.Summary = rep.summary()
	return rep, nil
}

// finishOutputs adds the outputs of the accumulators to the report and
// sets the verdict: paired (every output has a counterpart) and every one
// passed.
func (rep *Report) finishOutputs(paired bool, accs []*accumulator) {
	rep.Equivalent = paired
	for _, acc := range accs {
		if acc == nil {
			continue
		}
		acc.finish()
		rep.Outputs = append(rep.Outputs, acc.res)
		if !acc.res.Pass {
			rep.Equivalent = false
		}
	}
}

func nonNil(d []int64) []int64 {
	if d == nil {
		return []int64{}
	}
	return d
}

func names(vs []*canonical.Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name
	}
	return out
}

// runnerFor returns s.Runner, or a built-in executor for s.Model.
func runnerFor(s *Side, backend string, threads int) (Runner, func(), error) {
	if s.Runner != nil {
		return s.Runner, func() {}, nil
	}
	ex, err := executor.New(s.Model, executor.Options{Backend: backend, Threads: threads, Float16AsORT: s.Float16AsORT})
	if err != nil {
		return nil, nil, err
	}
	return ex, func() { _ = ex.Close() }, nil
}

// matchInputs maps each input of B to an input of A: by name when every
// input of B has a namesake in A (and not byOrder), else by position.
func matchInputs(a, b []*canonical.Value, byOrder bool) ([]int, error) {
	idx := map[string]int{}
	for i, v := range a {
		idx[v.Name] = i
	}
	m := make([]int, len(b))
	byName := !byOrder
	if byName {
		for i, v := range b {
			j, ok := idx[v.Name]
			if !ok {
				byName = false
				break
			}
			m[i] = j
		}
	}
	if byName {
		return m, nil
	}
	if len(a) != len(b) {
		return nil, fmt.Errorf("inputs do not match: A takes %s, B takes %s", valueList(a), valueList(b))
	}
	for i := range m {
		m[i] = i
	}
	return m, nil
}

func valueList(vs []*canonical.Value) string {
	return "[" + strings.Join(names(vs), ", ") + "]"
}

type outPair struct{ a, b int }

// checkCounts checks that A (named nameA) returned na outputs, one per
// graph output outA, and that the nb outputs of B hold every one the
// pairs take.
func checkCounts(nameA, nameB string, na, nb int, outA []string, pairs []outPair) error {
	if na != len(outA) {
		return fmt.Errorf("verify: %s returned %d outputs, its graph has %d", nameA, na, len(outA))
	}
	for _, p := range pairs {
		if p.b >= nb {
			return fmt.Errorf("verify: %s holds %d outputs, output %q needs index %d", nameB, nb, outA[p.a], p.b)
		}
	}
	return nil
}

// matchOutputs pairs outputs by name (or position); it returns the pairs
// in A's order and the outputs of A left without a partner.
func matchOutputs(a, b []string, byOrder bool) ([]outPair, []string) {
	var pairs []outPair
	var unmatched []string
	if byOrder {
		for i := range a {
			if i < len(b) {
				pairs = append(pairs, outPair{i, i})
			} else {
				unmatched = append(unmatched, a[i])
			}
		}
		return pairs, unmatched
	}
	idx := map[string]int{}
	for i, n := range b {
		idx[n] = i
	}
	for i, n := range a {
		if j, ok := idx[n]; ok {
			pairs = append(pairs, outPair{i, j})
		} else {
			unmatched = append(unmatched, n)
		}
	}
	return pairs, unmatched
}

// inputsForB arranges a sample for B and converts float inputs whose
// element type differs in B (a model converted to fp16 takes fp16 inputs).
func inputsForB(in []*canonical.Tensor, mapB []int, vb []*canonical.Value) ([]*canonical.Tensor, error) {
	out := make([]*canonical.Tensor, len(mapB))
	for i, j := range mapB {
		t := in[j]
		out[i] = t
		dt, _, _, ok := canonical.TensorTypeOf(vb[i].Type)
		if !ok || dt == t.DataType || dt == canonical.Undefined {
			continue
		}
		c, err := castFloat(t, dt)
		if err != nil {
			return nil, fmt.Errorf("input %q of B takes %s, the sample holds %s: %w", vb[i].Name,
				canonical.ElemTypeName(dt), canonical.ElemTypeName(t.DataType), err)
		}
		out[i] = c
	}
	return out, nil
}

// DefaultSamples is the number of generated samples when none is given:
// two, so that one input that agrees by chance does not decide.
const DefaultSamples = 2
