package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/unsupported"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/backendtest"
	"github.com/onnxconv/onnxconv/verify/errmap"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// options turns VerifyOptions into verify.Options (without inputs).
func (v *VerifyOptions) options() verify.Options {
	return verify.Options{
		Samples: v.Samples, Profile: v.Profile, RTol: v.RTol, ATol: v.ATol,
		ByOrder: v.ByOrder, Bisect: v.Bisect, BisectBatch: v.BisectBatch, Map: v.Map,
		Backend: v.Backend, Threads: v.Threads, Progress: v.Progress,
		Gen:    verify.GenOptions{Seed: v.Seed, Distribution: v.Distribution, Dims: v.Dims, Ranges: v.Ranges},
		Decode: v.decode(),
	}
}

// decode returns the decode-loop options of a decoder with a KV cache.
func (v *VerifyOptions) decode() *verify.Decode {
	steps := v.DecodeSteps
	switch {
	case steps < 0:
		return nil
	case steps == 0:
		steps = verify.DefaultDecodeSteps
	}
	return &verify.Decode{Steps: steps, Caches: v.KVCache}
}

// verify compares the result with its source, as the source's own
// framework computes it (an importer's direct predictor, or the reference
// runtime of the format: ONNX Runtime for ONNX, with the source model on
// the executor where ONNX Runtime is missing or cannot run it), then with
// the stored outputs of Reference, and writes the reports. When nothing
// computes the source, the result is run once and checked (every output
// produced, no NaN or Inf), the comparison with the imported model is made
// when the model was adapted, and the facts say NOT VERIFIED.
func (c *converter) verify(ctx context.Context, imported, result *canonical.Model, cand *verify.Side) error {
	vo := c.storedSamples(imported)
	inputs := vo.Inputs
	if inputs == "" && vo.Reference != "" {
		inputs = vo.Reference
	}
	samples, source, err := c.samples(imported, inputs)
	if err != nil {
		return err
	}
	cv := &c.res.Conversion
	ref, err := c.sourceSide(ctx, imported)
	if err != nil {
		return err
	}
	if ref != nil && ref.Runner != nil {
		ref = &verify.Side{Name: ref.Name, Model: ref.Model, Runner: sourceRunner(ref.Runner, imported)}
	}
	srcFailed := false
	if ref != nil {
		first := cand
		if ref.Runner != nil && c.isONNX() && cand.Runner == nil {
			// ONNX Runtime computes the source: the result computes
			// float16 as its CPU provider does (float32 inside).
			asORT := *cand
			asORT.Float16AsORT = true
			first = &asORT
		}
		rep, err := c.compare(ctx, ref, first, samples, source)
		if err != nil && ref.Runner != nil && c.isONNX() && !verify.FailedB(err) {
			// ONNX Runtime could not compute this ONNX source (an op or
			// element type it lacks, a model it does not load): said in
			// one line, and the source is computed by the executor.
			c.ortRefused = oneLineErr(rootCause(err))
			c.res.Notes = append(c.res.Notes, "ONNX Runtime could not run the source, so the built-in executor computed it: "+c.ortRefused)
			cv.Reference = executorReference + " (ONNX Runtime could not run it)"
			c.describeRef = nil
			ref = verify.ModelSide(c.in, imported)
			rep, err = c.compare(ctx, ref, cand, samples, source)
		}
		c.refreshReference(rep)
		switch {
		case err != nil && verify.FailedB(err) && source == "generated":
			// The source's reference ran a generated sample and the
			// result did not: either the inputs do not fit the model (a
			// runtime that does not check an index computes garbage) or
			// the result fails where it should not; the error names the
			// result's node either way.
			return inputErr(fmt.Errorf("%s: the generated inputs do not fit the model, or the result fails where its source runs: the source's runtime (%s) computed them, the result did not (%w); give inputs with --inputs DIR, or sizes with --dim NAME=N", c.in, cv.Reference, err))
		case err != nil && verify.FailedB(err):
			// Given inputs the source's reference ran and the result did
			// not: the result's fault, said as such (not the reference's).
			return invalidErr(fmt.Errorf("%s: the converted model fails on an input its source runs (the source computed by %s): %w", c.in, cv.Reference, err))
		case err != nil && ref.Runner != nil:
			srcFailed = true
			// The reference runtime could not compute this source (a
			// build without an op, a file it does not read): the result
			// is not verified, and the facts say why.
			cv.NotVerified = fmt.Sprintf("the reference (%s) could not compute the source: %s", cv.Reference, oneLineErr(err))
			if c.opts.Verbose && oneLineErr(err) != err.Error() {
				c.res.Notes = append(c.res.Notes, "the reference's whole error: "+err.Error())
			}
			cv.Reference = ""
			ref = nil
		case err != nil:
			return err
		default:
			c.ortNoise(ctx, ref, rep, imported, result, samples, source)
			// The shapes generated for free ranks and dims, said with the
			// comparison (its summary and report).
			rep.Notes = append(rep.Notes, c.genNotes...)
			c.genNotes = nil
			c.res.Comparisons = append(c.res.Comparisons, Comparison{What: "against the source (" + cv.Reference + ")", Report: rep})
			c.res.Verified = true
		}
	}
	if ref == nil {
		c.res.Notes = append(c.res.Notes, c.genNotes...)
		c.genNotes = nil
		if vo.Reference != "" {
			// Stored outputs are the fallback: the result is checked
			// against them below, and the facts say the source itself
			// did not run.
			c.res.Notes = append(c.res.Notes, "the source itself was not run ("+cv.NotVerified+"); the result is checked against the stored outputs in "+vo.Reference)
			cv.Reference = "stored outputs in " + vo.Reference + " (the source itself was not run: " + cv.NotVerified + ")"
			cv.NotVerified = ""
		}
		if imported != result {
			rep, err := c.compare(ctx, verify.ModelSide(c.in+" (as imported)", imported), cand, samples, source)
			if err != nil {
				return err
			}
			c.res.Comparisons = append(c.res.Comparisons, Comparison{What: "against " + c.in + " as imported (not its source framework)", Report: rep})
		}
		if cv.NotVerified != "" {
			o := vo.options()
			o.Inputs, o.InputSource = samples, source
			rep, err := verify.RunOnce(ctx, cand, o)
			if err != nil && srcFailed && source == "generated" {
				// Neither the source's own runtime nor the result runs on
				// these inputs: the generated inputs do not fit the model
				// (a dim too small for a convolution, an index out of
				// range), which is not the conversion's fault.
				return inputErr(fmt.Errorf("%s: the generated inputs do not fit the model: its own runtime (%s) and the result both refuse them (%v); give inputs with --inputs DIR, or sizes with --dim NAME=N", c.in, cv.NotVerified, err))
			}
			if err != nil {
				return invalidErr(fmt.Errorf("%s: the converted model does not run: %w", c.in, err))
			}
			rep.Summary = "NOT VERIFIED against the source: " + cv.NotVerified
			c.res.Comparisons = append(c.res.Comparisons, Comparison{What: "run once (NOT VERIFIED against the source)", Report: rep, RunOnce: true})
		}
	}
	if vo.Reference != "" {
		rep, err := c.compareReference(ctx, result, inputs)
		switch {
		case err != nil && c.storedRef:
			// Stored outputs the user did not name are a second
			// reference: one that cannot be read (a sequence or an
			// optional output) is said, not fatal.
			c.res.Notes = append(c.res.Notes, "the stored outputs in "+vo.Reference+" were not compared: "+oneLineErr(err))
		case err != nil:
			return err
		default:
			c.res.Comparisons = append(c.res.Comparisons, Comparison{What: storedWhat + vo.Reference, Report: rep})
			c.res.Verified = true
		}
	}
	if err := c.inTarget(ctx, ref, result, samples, source); err != nil {
		return err
	}
	c.excuseEngines(imported)
	if c.candidateNote != "" && cv.NotVerified == "" {
		cv.NotVerified = c.candidateNote
		c.res.Verified = false
	}
	c.timed("verify")
	return c.writeReports()
}

// writeReports attaches the provenance and the conversion facts to every
// comparison, settles Equivalent, and writes the report files: the first
// comparison to the names given, a comparison with stored reference
// outputs to the same names with "-reference" before the extension, any
// other to "-N".
func (c *converter) writeReports() error {
	c.res.ReportFiles = nil // written again once the output is (its SHA-256)
	for i, cmp := range c.res.Comparisons {
		cmp.Report.Provenance = &c.res.Provenance
		conv := c.res.Conversion
		cmp.Report.Conversion = &conv
		if !cmp.passed() {
			c.res.Equivalent = false
		}
		for _, p := range c.opts.Reports {
			if i > 0 {
				ext := filepath.Ext(p)
				suffix := "-" + strconv.Itoa(i+1)
				if strings.HasPrefix(cmp.What, storedWhat) {
					suffix = "-reference"
				}
				p = strings.TrimSuffix(p, ext) + suffix + ext
			}
			if err := verify.WriteReport(p, cmp.Report); err != nil {
				return inputErr(fmt.Errorf("report: %w", err))
			}
			c.res.ReportFiles = append(c.res.ReportFiles, p)
		}
	}
	return nil
}

// excuseEngines settles an ONNX source that ONNX Runtime computed where
// the result on the executor differs from it (the first comparison fails)
// while the result run in ONNX Runtime matches it, and either the result on
// the executor matches the stored outputs of ONNX's reference
// implementation (ONNX Runtime and that reference differ there: Attention's
// masked scores as the lowest float rather than -Inf, Resize align_corners
// with rounded scales) or the model draws random numbers (Dropout in
// training mode: the executor's generator is not ONNX Runtime's, which a
// seed makes repeat). It is then the engines that differ, not the
// conversion, which ONNX Runtime proves: the first comparison is excused,
// with a note naming its outputs.
func (c *converter) excuseEngines(m *canonical.Model) {
	cmps := c.res.Comparisons
	if !c.isONNX() || c.ortRefused != "" || len(cmps) < 2 || cmps[0].RunOnce || cmps[0].Report.Equivalent {
		return
	}
	inORT, stored := false, false
	for _, cmp := range cmps[1:] {
		inORT = inORT || (cmp.What == inORTWhat && cmp.Report.Equivalent)
		stored = stored || (strings.HasPrefix(cmp.What, storedWhat) && cmp.Report.Equivalent)
	}
	why := "the result on the executor matches the stored outputs: ONNX Runtime and ONNX's reference implementation differ on this model, not the conversion"
	if op := randomOp(m); op != "" {
		why = "the model draws random numbers (" + op + "), which the executor draws with a generator other than ONNX Runtime's"
		stored = true
	}
	if !inORT || !stored {
		return
	}
	var outs []string
	for _, o := range cmps[0].Report.Outputs {
		if !o.Pass {
			outs = append(outs, o.Name)
		}
	}
	cmps[0].Excused = true
	c.res.Notes = append(c.res.Notes, fmt.Sprintf("the result on the built-in executor differs from the source in ONNX Runtime (%s), "+
		"but the result run in ONNX Runtime matches the source there, and %s", strings.Join(outs, ", "), why))
}

// passed tells whether a comparison passed: equivalent (or excused), or
// for a run without a reference, every check held.
func (cmp Comparison) passed() bool {
	if cmp.Excused {
		return true
	}
	if !cmp.RunOnce {
		return cmp.Report.Equivalent
	}
	for _, o := range cmp.Report.Outputs {
		if !o.Pass {
			return false
		}
	}
	return true
}

// storedSamples returns the verification options of the run: those given,
// or for an ONNX source with test_data_set_N folders beside it (the ONNX
// backend-test layout) and neither Inputs nor Reference given, those
// folders as both: the result is verified on the stored inputs, and the
// stored outputs are a second reference (a separate comparison). Stored
// inputs that do not fit the model's inputs are set aside, and the inputs
// generated.
func (c *converter) storedSamples(m *canonical.Model) *VerifyOptions {
	vo := c.opts.Verify
	if vo.Inputs != "" || vo.Reference != "" || !c.isONNX() {
		return vo
	}
	dir := filepath.Dir(c.in)
	sets, err := tensorio.SetDirs(dir)
	if err != nil || len(sets) == 0 || sets[0] == dir {
		return vo
	}
	// Read by position, as ONNX defines the layout (input_N.pb, output_N.pb;
	// an output named output_1 is output_0.pb when it comes first), each as
	// its declared type tells.
	ins := verify.GraphInputs(m)
	ds, err := backendtest.LoadDataSets(dir, ins, m.Graph.Outputs)
	for _, d := range ds {
		if err == nil && len(d.Inputs) != len(ins) {
			err = fmt.Errorf("%s holds %d inputs, the model takes %d", d.Name, len(d.Inputs), len(ins))
		}
	}
	if err != nil {
		// Not the positional .pb layout: by name (NAME.pb, NAME.npy) as
		// --inputs reads them, when they are there.
		if _, err2 := tensorio.LoadSamples(dir, "input", ins, false); err2 != nil || verify.HasValues(m) {
			c.res.Notes = append(c.res.Notes, fmt.Sprintf("the %d sample(s) stored beside the model in %s were not used (%s); the inputs were generated", len(sets), dir, oneLineErr(err)))
			return vo
		}
		ds = nil
	}
	complete := len(ds) > 0
	for _, d := range ds {
		c.valueIns, c.valueOuts = append(c.valueIns, d.Inputs), append(c.valueOuts, d.Outputs)
		complete = complete && len(d.Outputs) == len(m.Graph.Outputs)
	}
	if !complete {
		c.valueOuts = nil
	}
	if !verify.HasValues(m) {
		// Tensors: the samples of every comparison.
		c.storedIns, c.storedOuts = tensorsOf(c.valueIns), tensorsOf(c.valueOuts)
		c.valueIns, c.valueOuts = nil, nil
	}
	stored := *vo
	stored.Inputs, stored.Reference = dir, dir
	c.opts.Verify, c.storedRef = &stored, true
	second := fmt.Sprintf("their stored outputs are a second reference (with a relative tolerance of at least %g, the ONNX backend-test runner's)", backendtest.DefaultRTol)
	if ds != nil && !complete {
		stored.Reference = ""
		second = "not every sample stores every output, so the stored outputs are not compared"
	}
	if op := randomOp(m); op != "" {
		// Numbers drawn by another implementation's generator cannot be
		// reproduced: the stored outputs are not compared.
		stored.Reference = ""
		second = "their stored outputs are not compared (the model draws random numbers: " + op + ")"
	}
	c.res.Notes = append(c.res.Notes, fmt.Sprintf("verified on the %d input sample(s) stored beside the model (%s/test_data_set_*), not on generated inputs (--inputs DIR verifies on others); %s", len(sets), dir, second))
	return &stored
}

// tensorsOf returns the tensors of value samples, nil when there are
// none.
func tensorsOf(vals [][]*executor.Value) [][]*canonical.Tensor {
	if vals == nil {
		return nil
	}
	out := make([][]*canonical.Tensor, len(vals))
	for i, s := range vals {
		out[i] = make([]*canonical.Tensor, len(s))
		for j, v := range s {
			out[i][j] = v.Tensor
		}
	}
	return out
}

// randomOp names an operator of m that draws random numbers, or "".
func randomOp(m *canonical.Model) string {
	found := ""
	_ = canonical.Walk(m.Graph, func(_ *canonical.Graph, _ string, _ int, n *canonical.Node) error {
		random := false
		switch n.OpType {
		case "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Bernoulli", "Multinomial":
			random = true
		case "Dropout":
			// In training mode (a training_mode input given) it draws its mask.
			random = len(n.Inputs) > 2 && n.Inputs[2] != nil
		}
		if random && found == "" && (n.Domain == "" || n.Domain == "ai.onnx") {
			found = n.OpType
		}
		return nil
	})
	return found
}

// samples returns the verification inputs: read from inputs, or generated
// once (so that every comparison sees the same ones) and saved to
// SaveInputs when asked.
func (c *converter) samples(m *canonical.Model, inputs string) ([][]*canonical.Tensor, string, error) {
	vo := c.opts.Verify
	if c.valueIns != nil || c.storedIns != nil {
		// Read by storedSamples (compare passes values on).
		return c.storedIns, inputs, nil
	}
	if verify.HasValues(m) {
		// Sequences or optionals: the samples are values (compare
		// passes them on), read or generated.
		vals, source, err := c.valueSamples(m, inputs)
		if err != nil {
			return nil, "", err
		}
		c.valueIns = vals
		return nil, source, nil
	}
	state := canonical.StartState(m)
	if inputs != "" {
		s, err := loadWithoutState(inputs, verify.GraphInputs(m), state)
		if err != nil {
			return nil, "", inputErr(fmt.Errorf("inputs: %w", err))
		}
		return c.startState(m, state, s), inputs, nil
	}
	gen := vo.options().Gen
	n := max(vo.Samples, 1)
	var out [][]*canonical.Tensor
	dec := vo.decode()
	isDecoder := dec.Applies(m)
	if !isDecoder {
		var why map[string]string
		gen.Dims, why = dimsWhy(m, vo.Dims, c.logf)
		c.genNotes = shapeNotes(m, gen.Dims, why, vo.Dims)
	}
	for k := range n {
		var s []*canonical.Tensor
		var err error
		if isDecoder {
			// A decoder with a KV cache: a prefill, then decode steps.
			s, err = verify.PrefillInputs(m, dec, gen, k)
		} else {
			s, err = verify.GenerateInputs(m, gen, k)
		}
		if err != nil {
			return nil, "", inputErr(fmt.Errorf("%s: generating verification inputs: %w (give --inputs DIR, or --dim NAME=N)", c.in, err))
		}
		out = append(out, s)
	}
	out = c.startState(m, state, out)
	if vo.SaveInputs != "" {
		if err := tensorio.SaveSamples(vo.SaveInputs, out); err != nil {
			return nil, "", inputErr(fmt.Errorf("saving the inputs: %w", err))
		}
		c.logf("saved the generated inputs to %s (repeat the run with --inputs %s)", vo.SaveInputs, vo.SaveInputs)
	}
	return out, "generated", nil
}

// loadWithoutState reads the samples of the inputs ins other than the
// state inputs (those get nil, then zeros from startState).
func loadWithoutState(dir string, ins []*canonical.Value, state map[string]bool) ([][]*canonical.Tensor, error) {
	if state == nil {
		return tensorio.LoadSamples(dir, "input", ins, false)
	}
	var keep []*canonical.Value
	var idx []int
	for i, v := range ins {
		if !state[v.Name] {
			keep, idx = append(keep, v), append(idx, i)
		}
	}
	rows, err := tensorio.LoadSamples(dir, "input", keep, false)
	if err != nil {
		return nil, err
	}
	for r, row := range rows {
		full := make([]*canonical.Tensor, len(ins))
		for j, i := range idx {
			full[i] = row[j]
		}
		rows[r] = full
	}
	return rows, nil
}

// startState sets the state inputs of every sample (canonical.StartState)
// to zeros: the state the source starts each call from after a reset,
// which it keeps inside itself and is never passed.
func (c *converter) startState(m *canonical.Model, state map[string]bool, samples [][]*canonical.Tensor) [][]*canonical.Tensor {
	if state == nil {
		return samples
	}
	var names []string
	for i, v := range verify.GraphInputs(m) {
		if !state[v.Name] {
			continue
		}
		names = append(names, v.Name)
		dt, dims, _, _ := canonical.TensorTypeOf(v.Type)
		shape := make([]int64, len(dims))
		n := int64(1)
		for j, d := range dims {
			shape[j] = max(d.Value, 0)
			n *= shape[j]
		}
		for _, s := range samples {
			if i < len(s) {
				s[i] = canonical.NewTensor(v.Name, dt, shape, make([]byte, n*int64(canonical.ElemBits(dt)/8)))
			}
		}
	}
	c.res.Notes = append(c.res.Notes, fmt.Sprintf("the state inputs (%s) are zeros, the state the source starts from after a reset: the source keeps its state inside itself, so they are not passed to it", strings.Join(names, ", ")))
	return samples
}

// compare runs ref and cand on the samples.
func (c *converter) compare(ctx context.Context, ref, cand *verify.Side, samples [][]*canonical.Tensor, source string) (*verify.Report, error) {
	o := c.opts.Verify.options()
	o.Inputs, o.InputSource, o.Values = samples, source, c.valueIns
	_, capture := ref.Runner.(verify.CaptureRunner)
	_, partial := ref.Runner.(errmap.Provider)
	if ref.Runner != nil && (!capture || partial) {
		// Bisection needs every intermediate value, which the executor
		// and ONNX Runtime hand out; a source computed elsewhere is
		// compared by outputs (and by the values the error map can get).
		o.Bisect = false
	}
	if ref.Runner != nil && ref.ComputedBy == "" && c.res.Conversion.Reference != "" {
		// The source's runtime, wrapped (layout) or run in process.
		ref.ComputedBy = c.res.Conversion.Reference
	}
	c.logf("verifying %s against %s", c.out, ref.Name)
	rep, err := verify.Compare(ctx, ref, cand, o)
	if err != nil {
		return nil, inputErr(fmt.Errorf("%s: verification could not run: %w", c.in, err))
	}
	return rep, nil
}

// refreshReference names the source's runtime again once it has run: a
// runtime with two engines (tflite: LiteRT.js, else tfjs-tflite) knows
// only then which computed the source (runtimes.SessionNoter).
func (c *converter) refreshReference(rep *verify.Report) {
	if c.describeRef == nil {
		return
	}
	d := c.describeRef()
	if rep != nil && rep.A.ComputedBy == c.res.Conversion.Reference {
		rep.A.ComputedBy = d
	}
	c.res.Conversion.Reference = d
}

// sourceSide returns the side that computes the source as its framework
// does, and records what it is (Conversion.Reference), or nil with the
// reason recorded in Conversion.NotVerified.
func (c *converter) sourceSide(ctx context.Context, imported *canonical.Model) (*verify.Side, error) {
	cv := &c.res.Conversion
	if p, ok := c.imp.(importers.Predictor); ok {
		src := c.src
		if src == nil {
			var err error
			if src, err = p.Source(ctx, c.in, c.opts.ImportOptions); err != nil {
				return nil, inputErr(fmt.Errorf("%s: computing the source directly: %w", c.in, err))
			}
			c.release = append(c.release, src.Close)
		}
		cv.Reference = src.Describe()
		return &verify.Side{Name: c.in, Model: imported, Runner: src, ComputedBy: cv.Reference}, nil
	}
	d := c.imp.Describe()
	why := fmt.Sprintf("no reference runtime or direct predictor for format %s", d.FormatName())
	missing := c.runtimeMissing(d.Runtime)
	if missing != "" && !c.isONNX() {
		// One line, said once: the runtime is not installed.
		cv.NotVerified = missing
		return nil, nil
	}
	text := c.isONNX() && IsText(c.in)
	if d.Runtime != "" && missing == "" && !text {
		setup, err := runtimes.NewSetup([]string{d.Runtime}, 0, c.opts.Env.Runtimes)
		if err == nil {
			c.release = append(c.release, setup.Close)
			side, err2 := setup.Side(0, c.in, imported)
			if err2 == nil && !c.isONNX() {
				// Load the source now: ops the runtime lacks mean NOT
				// VERIFIED, named, not a failed verification.
				if r, ok := side.Runner.(interface{ Open(context.Context) error }); ok {
					if err := r.Open(ctx); err != nil {
						var ue *unsupported.OpsError
						if errors.As(err, &ue) {
							cv.NotVerified = fmt.Sprintf("the reference runtime %s cannot compute the source: %v", d.Runtime, err)
							return nil, nil
						}
						return nil, inputErr(fmt.Errorf("%s: the reference runtime %s could not load the source: %w", c.in, d.Runtime, err))
					}
				}
			}
			if err2 == nil && c.isONNX() && blockwiseMatMul(imported) {
				// ONNX Runtime's optimizer turns a blockwise
				// DequantizeLinear and its MatMul into a MatMulNBits
				// that quantizes the activations to 8 bits (accuracy
				// level 4): the source is computed as written.
				if un, err := setup.UnoptimizedSide(0, c.in, imported); err == nil {
					side = un
					c.res.Notes = append(c.res.Notes, "ONNX Runtime computed the source with its graph optimizations off: they fuse its blockwise DequantizeLinear + MatMul into a MatMulNBits with 8-bit activations, an approximation of its own")
				}
			}
			if err2 == nil {
				cv.Reference = setup.DescribeSide(0)
				side.ComputedBy = cv.Reference
				c.describeRef = func() string { return setup.DescribeSide(0) }
				c.unoptimizedRef = func() (*verify.Side, error) { return setup.UnoptimizedSide(0, c.in, imported) }
				return side, nil
			}
			err = err2
		}
		why = fmt.Sprintf("the reference runtime %q for format %s is not available: %v", d.Runtime, d.FormatName(), err)
	}
	if c.isONNX() {
		// The source is ONNX itself and its runtime is not there: the
		// unchanged source model on the built-in executor computes it,
		// named as such with the reason in one line.
		cv.Reference = executorReference
		switch {
		case text:
			cv.Reference += " (ONNX Runtime reads binary .onnx files only)"
		case missing != "":
			cv.Reference += " (" + missing + ")"
		case d.Runtime != "":
			line, _, _ := strings.Cut(why, "\n")
			cv.Reference += " (" + line + ")"
		}
		return verify.ModelSide(c.in, imported), nil
	}
	cv.NotVerified = why
	return nil, nil
}

// blockwiseMatMul reports whether a MatMul of m takes a blockwise
// DequantizeLinear (block_size set) as its weight.
func blockwiseMatMul(m *canonical.Model) bool {
	for _, n := range m.Graph.Nodes {
		if n.OpType != "MatMul" || n.Domain != "" && n.Domain != "ai.onnx" || n.Input(1) == nil {
			continue
		}
		if dq, _ := n.Input(1).Producer(); dq != nil && dq.OpType == "DequantizeLinear" && dq.AttrInt("block_size", 0) != 0 {
			return true
		}
	}
	return false
}

// executorReference names the executor as what computed an ONNX source
// that ONNX Runtime did not.
const executorReference = "the source ONNX model on the built-in executor"

// compareReference runs result on the inputs and compares the outputs that
// have a stored counterpart in Reference.
func (c *converter) compareReference(ctx context.Context, result *canonical.Model, inputs string) (*verify.Report, error) {
	vo := c.opts.Verify
	o := vo.options()
	if c.storedRef {
		// The outputs ONNX stored for a backend test (computed by its
		// reference implementation, often in float64) are checked with at
		// least the relative tolerance of ONNX's own backend-test runner;
		// the absolute one stays the profile's, scaled by the output.
		o.MinRTol = backendtest.DefaultRTol
	}
	if c.valueIns != nil {
		o.Values, o.InputSource = c.valueIns, inputs
		c.logf("verifying %s against %s", c.out, vo.Reference)
		rep, err := verify.Compare(ctx, verify.ModelSide(c.out, result), &verify.Side{Name: vo.Reference, ExpectedValues: c.valueOuts}, o)
		if err != nil {
			return nil, inputErr(fmt.Errorf("%s: verification against %s could not run: %w", c.in, vo.Reference, err))
		}
		return rep, nil
	}
	var err error
	o.InputSource = inputs
	outs := result.Graph.Outputs
	expected := c.storedOuts
	if expected != nil {
		o.Inputs = c.storedIns
	} else {
		if o.Inputs, err = tensorio.LoadSamples(inputs, "input", verify.GraphInputs(result), false); err != nil {
			return nil, inputErr(fmt.Errorf("inputs: %w", err))
		}
		if expected, err = tensorio.LoadSamples(vo.Reference, "output", outs, true); err != nil {
			return nil, inputErr(fmt.Errorf("reference: %w", err))
		}
	}
	// Keep the outputs every sample has a file for.
	var keep []*canonical.Value
	var idx []int
	for i, v := range outs {
		all := true
		for _, s := range expected {
			if s[i] == nil {
				all = false
			}
		}
		if all {
			keep, idx = append(keep, v), append(idx, i)
		}
	}
	if len(keep) == 0 {
		return nil, inputErr(fmt.Errorf("reference %s holds no file for any output of the model (%s); name them OUTPUT.npy, OUTPUT.pb or output_N.pb",
			vo.Reference, strings.Join(valueNames(outs), ", ")))
	}
	if len(expected) != len(o.Inputs) {
		return nil, inputErr(fmt.Errorf("%d input sample(s) in %s but %d set(s) of reference outputs in %s", len(o.Inputs), inputs, len(expected), vo.Reference))
	}
	side := &verify.Side{Name: vo.Reference}
	for _, s := range expected {
		row := make([]*canonical.Tensor, len(idx))
		for j, i := range idx {
			row[j] = s[i]
		}
		side.Expected = append(side.Expected, row)
	}
	model := result
	if len(keep) < len(outs) {
		c.logf("reference: comparing %d of %d outputs (%s)", len(keep), len(outs), strings.Join(valueNames(keep), ", "))
		// Compare only those outputs, on a clone whose output list is
		// narrowed: the result itself is written unchanged.
		if model, err = result.Clone(); err != nil {
			return nil, inputErr(fmt.Errorf("%s: %w", c.in, err))
		}
		defer model.Close()
		var narrowed []*canonical.Value
		for _, i := range idx {
			narrowed = append(narrowed, model.Graph.Outputs[i])
		}
		model.Graph.Outputs = narrowed
	}
	c.logf("verifying %s against %s", c.out, vo.Reference)
	rep, err := verify.Compare(ctx, verify.ModelSide(c.out, model), side, o)
	if err != nil {
		return nil, inputErr(fmt.Errorf("%s: verification against %s could not run: %w", c.in, vo.Reference, err))
	}
	return rep, nil
}

// tabularRows is the default number of generated rows of a 2-D input.
const tabularRows = 64

// defaultDims returns dims completed with 1 for every symbolic or unknown
// dim of m's graph inputs that dims does not set, logging each default.
func defaultDims(m *canonical.Model, dims map[string]int64, logf func(string, ...any)) map[string]int64 {
	out, _ := dimsWhy(m, dims, logf)
	return out
}

// dimsWhy is defaultDims, and why each default took its size, by dim key.
func dimsWhy(m *canonical.Model, dims map[string]int64, logf func(string, ...any)) (map[string]int64, map[string]string) {
	why := map[string]string{}
	out := map[string]int64{}
	for k, v := range dims {
		out[k] = v
	}
	// The sizes the source's runtime runs (a TFLite interpreter cannot
	// resize), then the least sizes the graph's constant indices need.
	rt := verify.RuntimeDims(m)
	least := verify.MinDims(m)
	img := verify.ImageDims(m)
	audio := verify.AudioDims(m)
	for k, n := range dims {
		if least[k] > n {
			logf("verify: --dim %s=%d is below the %d the graph needs (a constant index or a convolution/pooling window along it); the inputs may not fit", k, n, least[k])
		}
	}
	for _, v := range verify.GraphInputs(m) {
		_, ds, hasShape, ok := canonical.TensorTypeOf(v.Type)
		if !ok || !hasShape {
			continue
		}
		isAudio := false
		if k := len(ds) - 1; k >= 0 && !ds[k].Known {
			key := ds[k].Param
			if key == "" {
				key = v.Name + ":" + strconv.Itoa(k)
			}
			isAudio = audio[key] > 0
		}
		for i, d := range ds {
			if d.Known {
				continue
			}
			key := d.Param
			if key == "" {
				key = v.Name + ":" + strconv.Itoa(i)
			}
			if _, set := out[key]; !set {
				// A tabular input [rows, features] gets 64 rows: cheap,
				// and enough to reach many paths of a tree model; the
				// height and width of an image feeding a convolution get
				// verify.ImageSide (224), audio a few frames of its
				// windows (verify.AudioDims; its batch 1); other dims get 1.
				size := int64(1)
				why[key] = "nothing in the graph fixes it"
				switch {
				case rt[key] > 0:
					size = rt[key]
					why[key] = "the size the source's runtime runs"
				case audio[key] > 0:
					size = audio[key]
					why[key] = "audio: four frames of the widest window that reads it"
				case img[key] > 0:
					size = img[key]
					why[key] = "an image's height or width: a convolution or pooling window reads it"
				case i == 0 && len(ds) == 2 && !isAudio:
					size = tabularRows
					why[key] = "the rows of a tabular [rows, features] input"
				}
				if least[key] > size {
					size = least[key]
					why[key] = "the least the graph needs (a constant index or a window along it)"
				}
				out[key] = size
				logf("verify: generated inputs use %s=%d (set it with --dim %s=SIZE)", key, size, key)
			}
		}
	}
	return out, why
}

// shapeNotes says, one line per graph input of m whose rank or dims the
// model leaves free, the shape its generated values took and why.
func shapeNotes(m *canonical.Model, dims map[string]int64, why map[string]string, given map[string]int64) []string {
	var notes []string
	for _, v := range verify.GraphInputs(m) {
		_, ds, hasShape, ok := canonical.TensorTypeOf(v.Type)
		if !ok {
			continue
		}
		if !hasShape {
			if _, w, ok := verify.FreeRankChoice(v); ok {
				notes = append(notes, fmt.Sprintf("generated input %s: %s", v.Name, w))
			}
			continue
		}
		shape := make([]string, len(ds))
		var parts []string
		for i, d := range ds {
			if d.Known {
				shape[i] = strconv.FormatInt(d.Value, 10)
				continue
			}
			key := d.Param
			if key == "" {
				key = v.Name + ":" + strconv.Itoa(i)
			}
			shape[i] = strconv.FormatInt(dims[key], 10)
			w := why[key]
			if _, set := given[key]; set {
				w = "--dim"
			}
			name := "dim " + strconv.Itoa(i)
			if d.Param != "" {
				name += " (" + d.Param + ")"
			}
			parts = append(parts, fmt.Sprintf("%s = %d: %s", name, dims[key], w))
		}
		if len(parts) > 0 {
			notes = append(notes, fmt.Sprintf("generated input %s: free dims → [%s] (%s; --dim sets them)", v.Name, strings.Join(shape, ","), strings.Join(parts, "; ")))
		}
	}
	return notes
}

func valueNames(vs []*canonical.Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name
	}
	return out
}

// ortNoise measures, for an ONNX source that computes in a lower precision
// inside (float16 steps between float32 inputs and outputs) and that ONNX
// Runtime computed, how far ONNX Runtime's outputs move when its graph
// optimizations are off, and says it in rep's notes beside the result's
// difference: the runtime's own noise, which the result's difference is
// to be read against.
func (c *converter) ortNoise(ctx context.Context, ref *verify.Side, rep *verify.Report, imported, result *canonical.Model, samples [][]*canonical.Tensor, source string) {
	if !c.isONNX() || c.ortRefused != "" || c.unoptimizedRef == nil || ref.Runner == nil || verify.InsidePrecision(imported, result) == "" {
		return
	}
	un, err := c.unoptimizedRef()
	if err != nil {
		rep.Notes = append(rep.Notes, "ONNX Runtime's own noise was not measured: "+oneLineErr(err))
		return
	}
	un.Runner = sourceRunner(un.Runner, imported)
	noise, err := c.compare(ctx, ref, un, samples, source)
	if err != nil {
		rep.Notes = append(rep.Notes, "ONNX Runtime's own noise was not measured: "+oneLineErr(rootCause(err)))
		return
	}
	name, n := worstAbs(noise)
	_, d := worstAbs(rep)
	rep.Notes = append(rep.Notes, fmt.Sprintf("ONNX Runtime's own noise on this model: its outputs with and without graph optimizations differ by up to %.3g (%s); the result differs from the source by up to %.3g", n, name, d))
}

// worstAbs is the largest max_abs over rep's float outputs and its output.
func worstAbs(rep *verify.Report) (string, float64) {
	name, w := "", 0.0
	for _, o := range rep.Outputs {
		if o.Float != nil && o.Float.MaxAbs >= w {
			name, w = o.Name, o.Float.MaxAbs
		}
	}
	return name, w
}

// valueSamples returns the samples of a model with sequence or optional
// inputs: read from inputs (its test_data_set_N folders, or input_N.pb in
// it: a TensorProto, SequenceProto or OptionalProto as each input's type
// tells), or generated (verify.GenerateValues).
func (c *converter) valueSamples(m *canonical.Model, inputs string) ([][]*executor.Value, string, error) {
	ins := verify.GraphInputs(m)
	if inputs != "" {
		ds, err := backendtest.LoadDataSets(inputs, ins, m.Graph.Outputs)
		if err == nil && len(ds) == 0 {
			var one []*executor.Value
			for i, v := range ins {
				val, err2 := backendtest.ReadValue(filepath.Join(inputs, "input_"+strconv.Itoa(i)+".pb"), v.Type)
				if err2 != nil {
					err = err2
					break
				}
				one = append(one, val)
			}
			ds = []backendtest.DataSet{{Inputs: one}}
		}
		if err != nil {
			return nil, "", inputErr(fmt.Errorf("inputs: %s: the model takes sequences or optionals, read from input_N.pb (TensorProto, SequenceProto, OptionalProto): %w", inputs, err))
		}
		var out [][]*executor.Value
		for _, d := range ds {
			if len(d.Inputs) != len(ins) {
				return nil, "", inputErr(fmt.Errorf("inputs: %s holds %d inputs, the model takes %d", inputs, len(d.Inputs), len(ins)))
			}
			out = append(out, d.Inputs)
		}
		return out, inputs, nil
	}
	vo := c.opts.Verify
	gen := vo.options().Gen
	gen.Dims = defaultDims(m, vo.Dims, c.logf)
	// The free dims of sequence and optional elements take 1, as other
	// free dims do (--dim sets them).
	for _, v := range ins {
		elem := v.Type
		if o := elem.GetOptionalType(); o != nil {
			elem = o.GetElemType()
		}
		if sq := elem.GetSequenceType(); sq != nil {
			elem = sq.GetElemType()
		}
		_, ds, hasShape, ok := canonical.TensorTypeOf(elem)
		if !ok || !hasShape || elem == v.Type {
			continue
		}
		for i, d := range ds {
			for j := range verify.GeneratedSequenceLength {
				key := d.Param
				if key == "" {
					key = fmt.Sprintf("%s[%d]:%d", v.Name, j, i)
				}
				if _, set := gen.Dims[key]; !d.Known && !set {
					gen.Dims[key] = 1
				}
			}
		}
	}
	var out [][]*executor.Value
	for k := range max(vo.Samples, 1) {
		s, err := verify.GenerateValues(m, gen, k)
		if err != nil {
			return nil, "", inputErr(fmt.Errorf("%s: generating verification inputs: %w (give --inputs DIR)", c.in, err))
		}
		out = append(out, s)
	}
	return out, "generated", nil
}
