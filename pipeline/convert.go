package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/exporters"
	"github.com/onnxconv/onnxconv/exporters/adapt"
	"github.com/onnxconv/onnxconv/exporters/profiles"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/opset/convert"
	"github.com/onnxconv/onnxconv/passes"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// Options tune Convert (and Opset).
type Options struct {
	// From names the source format or importer ("tflite", "xgboost",
	// "onnx", a plugin's format) instead of detecting it.
	From string
	// ImportOptions are passed to the importer (see its Description).
	ImportOptions importers.Options
	// Env holds the importers, exporters and runtimes of the run (see
	// Env; builtinenv.New gives the built-ins in this process). It must
	// hold importers and exporters.
	Env Env

	// Opset and MLOpset move the model to these ai.onnx / ai.onnx.ml
	// opsets (0: unchanged). With Target, they are forced within the
	// target's range.
	Opset, MLOpset int
	// Target fits the model to a runtime profile (exporters/profiles).
	Target string
	// AllowViolations writes a target adaptation even when the target
	// does not support all of it (the facts list the violations).
	AllowViolations bool
	// KeepIOLayout keeps the ONNX layout of the inputs and outputs of a
	// file whose exporter changes layout (exporters.Options.KeepIOLayout).
	KeepIOLayout bool
	// SetDims fixes symbolic dims of the result's inputs and outputs by
	// name (--set-dim NAME=N); Dynamic makes fixed dims symbolic
	// (--dynamic NAME:AXIS); Rename renames inputs and outputs (--rename
	// OLD=NEW). The shapes inside are inferred again and the result is
	// verified as any other.
	SetDims map[string]int64
	Dynamic []DynamicDim
	Rename  map[string]string

	// Optimize runs the graph passes (passes.Builtin, or the names in
	// OptimizePasses) after import, before adaptation (after it when
	// Opset raises the opset, so that fusions may use its ops): each pass is
	// checked on the executor and rolled back when it changes an output.
	Optimize       bool
	OptimizePasses []string
	// FP16 converts the adapted model's weights and compute to float16
	// (bfloat16 with BF16), keeping in float32 the nodes that diverge;
	// Quantize makes it int8 QDQ. Verification then uses the fp16, bf16 or
	// int8 tolerance profile unless one is given.
	FP16     *passes.FP16Options
	Quantize *passes.QuantOptions
	// Calibration is a folder of input samples (as Inputs) that calibrate
	// static quantization; empty generates 32 samples.
	Calibration string

	// Verify, when set, checks that the result computes what the source
	// computes before anything is written.
	Verify *VerifyOptions
	// Reports are report files to write (.json, .md, .html, .xml); their
	// paths are checked before any work. With a second comparison (against
	// stored outputs) its report goes to the same name with "-reference"
	// before the extension.
	Reports []string
	// KeepFailed writes a result whose verification failed next to the
	// output, with ".not-equivalent" before the extension.
	KeepFailed bool
	// Force allows the output to replace the input.
	Force bool

	// Save tunes how the result is written.
	Save SaveOptions
	// Verbose keeps the whole text of a reference runtime's error (a C++
	// backtrace) in the notes; otherwise only its first line is said.
	Verbose bool
	// Log, when set, receives progress lines ("x.tflite: format tflite").
	Log func(format string, args ...any)
	// Command is recorded in reports (the command line, or a description
	// of the calling program); nil records os.Args.
	Command []string
}

// VerifyOptions tune the verification of a conversion or a comparison.
type VerifyOptions struct {
	// Inputs is a folder (or .npz) of input samples: NAME.pb, NAME.npy,
	// input_N.pb, input_N.npy, or test_data_set_N folders of them; ""
	// generates inputs from the input types.
	Inputs string
	// Reference is a folder (or .npz) of expected outputs to compare the
	// result with (NAME.npy, NAME.pb, output_N.pb/.npy), computed from
	// Inputs (default: Reference itself).
	Reference string
	// Dims sets symbolic dims of generated inputs (NAME or INPUT:AXIS);
	// unset ones are 1, and each default is logged.
	Dims map[string]int64
	// Samples, Seed and Distribution ("normal", "uniform") shape generated
	// inputs.
	Samples      int
	Seed         uint64
	Distribution string
	// Profile names a tolerance profile; RTol and ATol override it.
	Profile    string
	RTol, ATol *float64
	// ByOrder matches outputs and inputs by position instead of name.
	ByOrder bool
	// Bisect looks for the first diverging node when outputs differ.
	Bisect      bool
	BisectBatch int
	// Map builds the whole-graph error map of the result against the
	// source (verify.Options.Map).
	Map bool
	// Backend is the executor's GoMLX backend ("" for the default).
	Backend string
	// Threads bounds the executor's kernel goroutines (0: all cores).
	Threads int
	// Ranges set the range of generated input values by input name ("*"
	// for all): audio samples in [-1, 1], pixels in [0, 255], ...
	Ranges map[string]verify.Range
	// SaveInputs, when set, is a folder the generated inputs are written
	// to (NAME.npy, one test_data_set_N folder per sample when there are
	// several), so that the run can be repeated with Inputs.
	SaveInputs string
	// Progress is called after each sample.
	Progress func(done, total int)
	// DecodeSteps is the number of decode steps a decoder with a KV cache
	// is verified over after its prefill: 0 means verify.DefaultDecodeSteps,
	// a negative number single calls with generated caches.
	DecodeSteps int
	// KVCache pairs the past inputs of a decoder with its present
	// outputs; nil finds them by name (verify.DetectCaches).
	KVCache []verify.CachePair
}

// Comparison is one verification of a result.
type Comparison struct {
	// What says against what ("against model.onnx", "against the
	// reference outputs in data/").
	What   string
	Report *verify.Report
	// RunOnce marks the run of a result that nothing computes the source
	// of: Report holds its checks (outputs produced, no NaN or Inf), not
	// a comparison.
	RunOnce bool
	// Excused marks a failed comparison of an ONNX source in ONNX Runtime
	// with the result on the executor where ONNX Runtime and ONNX's
	// reference implementation differ, not the conversion (see the notes).
	Excused bool
}

// The What of the comparison with stored outputs (followed by their
// folder) and of the result run in ONNX Runtime.
const (
	storedWhat = "against the reference outputs in "
	inORTWhat  = "against the source, the result run in ONNX Runtime"
)

// Result is what Convert did.
type Result struct {
	Provenance verify.Provenance
	Conversion verify.Conversion
	// Comparisons are the verifications made (none without Verify).
	Comparisons []Comparison
	// Equivalent is true when every comparison passed (and when none was
	// made).
	Equivalent bool
	// Verified is true when the result was compared with its source as
	// the source's own framework (or a direct predictor, or ONNX's
	// reference runtime) computes it; false when no reference exists for
	// the format (Conversion.NotVerified says why) or nothing was
	// verified.
	Verified bool
	// Notes are remarks for the user ("nothing to verify against ...").
	Notes []string
	// Written is the output file, once written; Kept the file a failed
	// result was kept in (KeepFailed).
	Written string
	Kept    string
	// ReportFiles are the report files written.
	ReportFiles []string
}

// converter is one run of Convert.
type converter struct {
	in, out string
	opts    Options
	// genNotes say the shapes generated for inputs of free rank or dims
	// and why, until a comparison carries them.
	genNotes []string
	imp      importers.Importer
	// src is the source opened with the import, in the importer's
	// process, when verification will compute it (importers.SourceImporter).
	src importers.Source
	// exp is the exporter of the target (or of OUT's file format) and
	// expTarget its target; fileOut: exp writes a file format other than
	// ONNX (Result.Bytes), the last step.
	exp       exporters.Exporter
	expTarget string
	fileOut   bool
	// srcExternal: the imported model had tensors in external data, so
	// the result is written with external data too (its rewritten
	// weights, fp16 or int8, are in memory and would be written inline).
	srcExternal bool
	// candidateNote, when set, says why the result itself was not run
	// where it will run (the TFLite runtime missing): the conversion is
	// then NOT VERIFIED even when its source was computed.
	candidateNote string
	// describeRef names the source's reference runtime as it stands (what
	// computed the source is known once it ran), nil when none runs it.
	describeRef func() string
	// unoptimizedRef opens the source in the reference runtime with its
	// graph optimizations off (ONNX Runtime's noise); nil when none.
	unoptimizedRef func() (*verify.Side, error)
	// storedRef: the samples and reference outputs are the
	// test_data_set_N folders beside an ONNX source (storedSamples).
	storedRef bool
	// valueIns and valueOuts: the stored samples of a model whose inputs
	// or outputs are sequences or optionals, read as values; storedIns and
	// storedOuts those of any other (storedSamples).
	valueIns, valueOuts   [][]*executor.Value
	storedIns, storedOuts [][]*canonical.Tensor
	// ortRefused, when set, is why ONNX Runtime could not compute the ONNX
	// source (the executor did): the result not running there either is
	// then a note, not a failure.
	ortRefused string
	release    []func() error
	res        *Result
	start      time.Time
	step       time.Time
	closers    []*canonical.Model
}

func (c *converter) logf(format string, args ...any) {
	if c.opts.Log != nil {
		c.opts.Log(format, args...)
	}
}

// timed records the time since the last step under name.
func (c *converter) timed(name string) {
	now := time.Now()
	c.res.Conversion.Timings = append(c.res.Conversion.Timings, verify.Timing{Step: name, MS: float64(now.Sub(c.step).Microseconds()) / 1000})
	c.step = now
}

func (c *converter) warn(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	c.res.Conversion.Warnings = append(c.res.Conversion.Warnings, s)
	c.logf("warning: %s", s)
}

// Convert reads in (any format an importer of opts.Importers reads),
// imports it into a canonical ONNX model, moves it to opts.Opset /
// opts.MLOpset or fits it to opts.Target, verifies the result when
// opts.Verify is set, and writes it to out atomically: binary protobuf, the
// ONNX text syntax when out ends in .onnxtxt, or the file of the Env's
// exporter of out's format (its extension, or opts.Target): one exit for
// every format (converter.write). Nothing is written when
// a step fails or the result is not equivalent (see KeepFailed). Errors
// are *Error; a failed verification is also a *NotEquivalentError.
func Convert(ctx context.Context, in, out string, opts Options) (*Result, error) {
	c := &converter{in: in, out: out, opts: opts, start: time.Now()}
	c.step = c.start
	c.res = &Result{Provenance: provenance(opts.Command, c.start), Equivalent: true}
	c.res.Conversion = verify.Conversion{Source: in, Output: out, Target: opts.Target, Applied: []string{}, Warnings: []string{}, Timings: []verify.Timing{}}
	defer c.close()
	if err := c.check(); err != nil {
		return c.res, err
	}
	if len(opts.Reports) > 0 {
		// Only for report files: hashing reads the whole source, and
		// otherwise the host reads no more of it than the detection head
		// (the importer plugins parse it).
		c.res.Conversion.SourceSHA256 = fileSHA256(in)
	}
	imported, err := c.importModel(ctx)
	if err != nil {
		return c.res, err
	}
	c.srcExternal = canonical.HasExternalData(imported)
	// The passes run at the higher of the two opsets: before a
	// downgrade, after an upgrade (a fusion into an op of the new opset,
	// RMSNormalization or Attention at 23, needs the new opset).
	upgrade := opts.Opset > 0 && int64(opts.Opset) > imported.Opset("")
	source := imported
	if at := c.fuseOpset(imported); at > 0 {
		// The target runs the fused ops of a higher opset in a form of
		// its own (ONNX Runtime's contrib ops, which any opset may
		// carry): fuse on a copy at that opset, fit it to the target
		// there, and move the rest back to the opset asked for. When
		// that gives none of the target's own ops, or fails, the model
		// goes the usual way and the attempt leaves no trace but a line.
		cv := &c.res.Conversion
		applied, warnings := len(cv.Applied), len(cv.Warnings)
		result, err := c.fuseAbove(ctx, imported, at)
		if err == nil && result != nil {
			return c.finish(ctx, imported, result)
		}
		if ctx.Err() != nil {
			return c.res, err
		}
		cv.Applied, cv.Warnings = cv.Applied[:applied], cv.Warnings[:warnings]
		if err != nil {
			c.logf("optimize: fusing at opset %d did not fit %s (%s); optimizing at the model's opset", at, opts.Target, oneLineErr(err))
		} else {
			c.logf("optimize: fusing at opset %d gave none of %s's own operators; optimizing at the model's opset", at, opts.Target)
		}
	}
	if opts.Optimize && !upgrade {
		if source, err = c.optimize(ctx, imported); err != nil {
			return c.res, err
		}
	}
	result, err := c.adapt(ctx, source)
	if err != nil {
		return c.res, err
	}
	if opts.Optimize && upgrade {
		if result, err = c.optimize(ctx, result); err != nil {
			return c.res, err
		}
		if opts.Target != "" && !c.fileOut {
			// Fit again: the ops fused at the new opset may have a
			// faster form in the target (ONNX Runtime's contrib ops).
			if result, err = c.adapt(ctx, result); err != nil {
				return c.res, err
			}
		}
	}
	return c.finish(ctx, imported, result)
}

// fuseOpset is the opset at which --optimize fuses for the target when
// the result stays below it (exporters.FuseOpset), else 0.
func (c *converter) fuseOpset(imported *canonical.Model) int {
	o := c.opts
	if !o.Optimize || o.Target == "" || c.fileOut || c.exp == nil {
		return 0
	}
	at := exporters.FuseOpset(c.exp, c.expTarget)
	if at == 0 || imported.Opset("") >= int64(at) || o.Opset >= at {
		return 0
	}
	return at
}

// fuseAbove moves a copy of imported to opset at, runs the passes there,
// fits the result to the target at that opset and then at the opset
// asked for (the model's own when none was). It returns nil when the fit
// at that opset added none of the target's own operators (nodes outside
// the ONNX domains).
func (c *converter) fuseAbove(ctx context.Context, imported *canonical.Model, at int) (*canonical.Model, error) {
	up, err := imported.Clone()
	if err != nil {
		return nil, inputErr(fmt.Errorf("%s: %w", c.in, err))
	}
	c.closers = append(c.closers, up)
	if _, err := adapt.Opset(up, convert.Options{To: at}); err != nil {
		return nil, c.blocked(err)
	}
	c.logf("optimize: fusing at opset %d for %s (its own forms of the fused ops), then back to the opset asked for", at, c.opts.Target)
	fused, err := c.optimize(ctx, up)
	if err != nil {
		return nil, err
	}
	fitted, err := c.export(ctx, fused, at)
	if err != nil {
		return nil, err
	}
	if foreignNodes(fitted) <= foreignNodes(imported) {
		return nil, nil
	}
	to := c.opts.Opset
	if to == 0 {
		to = int(imported.Opset(""))
	}
	return c.export(ctx, fitted, to)
}

// foreignNodes counts m's main-graph nodes outside the ONNX domains.
func foreignNodes(m *canonical.Model) int {
	n := 0
	for _, node := range m.Graph.Nodes {
		if node.Domain != "" && node.Domain != "ai.onnx" && node.Domain != canonical.MLDomain {
			n++
		}
	}
	return n
}

// finish reduces the result, edits its inputs and outputs as asked, and
// writes (and verifies) it.
func (c *converter) finish(ctx context.Context, imported, result *canonical.Model) (*Result, error) {
	result, err := c.reduce(ctx, result)
	if err != nil {
		return c.res, err
	}
	if result, err = c.editIO(imported, result); err != nil {
		return c.res, err
	}
	cv := &c.res.Conversion
	cv.OpsetAfter, cv.MLOpsetAfter, cv.IRAfter = result.Opset(""), result.Opset("ai.onnx.ml"), result.IRVersion
	o, err := c.output(ctx, result)
	if err != nil {
		return c.res, err
	}
	return c.res, c.write(ctx, imported, result, o)
}

func (c *converter) saveOptions() SaveOptions {
	so := c.opts.Save
	so.ExternalData = so.ExternalData || c.srcExternal && !so.Inline
	return so
}

func (c *converter) close() {
	for i := len(c.release) - 1; i >= 0; i-- {
		_ = c.release[i]()
	}
	for i := len(c.closers) - 1; i >= 0; i-- {
		_ = c.closers[i].Close()
	}
}

// check validates the options before any work.
func (c *converter) check() error {
	o := c.opts
	if err := o.Env.check(); err != nil {
		return err
	}
	if o.Opset < 0 || o.MLOpset < 0 {
		return usageErr("the opset and ml opset must be positive")
	}
	exp, target, err := c.opts.Env.Exporters.Find(c.out, o.Target)
	if err != nil {
		return &Error{Kind: KindUsage, Err: err}
	}
	c.exp, c.expTarget = exp, target
	format, warning := Binary, ""
	if exp != nil && exp.Describe().Format != exporters.FormatONNX {
		c.fileOut = true
		c.res.Conversion.Target = target
	} else if format, warning, err = outputFormat(c.out, c.opts.Env.Exporters); err != nil {
		return err
	} else if o.Target != "" {
		p, err := profiles.Get(o.Target)
		if err != nil {
			return &Error{Kind: KindUsage, Err: fmt.Errorf("target: %w", err)}
		}
		if o.Opset != 0 && (o.Opset < p.MinOpset || o.Opset > p.MaxOpset) {
			return usageErr("opset %d is outside the range of target %s (%d to %d)", o.Opset, p.Name, p.MinOpset, p.MaxOpset)
		}
		if o.MLOpset != 0 && p.MLMaxOpset != 0 && (o.MLOpset < p.MLMinOpset || o.MLOpset > p.MLMaxOpset) {
			return usageErr("ml opset %d is outside the ai.onnx.ml range of target %s (%d to %d)", o.MLOpset, p.Name, p.MLMinOpset, p.MLMaxOpset)
		}
	}
	if err := checkReports(o.Reports); err != nil {
		return err
	}
	if o.Verify == nil && len(o.Reports) > 0 {
		return usageErr("reports need verification: drop the report, or verify")
	}
	if format == Text && o.Save.ExternalData {
		return usageErr("%s: the text syntax cannot reference external data; write a .onnx file for external data", c.out)
	}
	in, err := inputFile(o.Env.Importers, c.in)
	if err != nil {
		return err
	}
	c.in = in
	if sameFile(c.in, c.out) && !o.Force {
		return &Error{Kind: KindUsage, Err: &OverwriteError{Path: c.in}}
	}
	if err := checkOutputPath(c.out); err != nil {
		return err
	}
	if warning != "" {
		c.warn("%s", warning)
	}
	return nil
}

func checkReports(paths []string) error {
	for _, r := range paths {
		if err := verify.CheckReportPath(r); err != nil {
			return &Error{Kind: KindUsage, Err: fmt.Errorf("report: %w", err)}
		}
	}
	return nil
}

// importModel detects the format and imports the model.
func (c *converter) importModel(ctx context.Context) (*canonical.Model, error) {
	imp, err := findImporter(c.opts.Env.Importers, c.in, c.opts.From)
	if err != nil {
		return nil, err
	}
	c.imp = imp
	d := imp.Describe()
	cv := &c.res.Conversion
	cv.SourceFormat, cv.Importer = d.FormatName(), d.Name
	c.logf("%s: format %s (importer %s)", c.in, cv.SourceFormat, cv.Importer)
	r, err := c.importFile(ctx, imp)
	if err != nil {
		return nil, classifyImport(c.in, err)
	}
	c.closers = append(c.closers, r.Model)
	for _, w := range r.Warnings {
		c.warn("%s: %s", d.Name, w)
	}
	m := r.Model
	for _, n := range importers.TakeNotes(m) {
		c.res.Notes = append(c.res.Notes, d.Name+": "+n)
		c.logf("%s: %s", d.Name, n)
	}
	cv.OpsetBefore, cv.MLOpsetBefore, cv.IRBefore = m.Opset(""), m.Opset("ai.onnx.ml"), m.IRVersion
	c.timed("import")
	if m.Graph != nil {
		c.logf("%s: imported: opset %d, IR %d, %d node(s)", c.in, cv.OpsetBefore, cv.IRBefore, len(m.Graph.Nodes))
	}
	return m, nil
}

// importFile imports the file with imp. When the source will be computed
// for verification and imp can open it with the import, it does: one
// reader (one plugin process) serves both.
func (c *converter) importFile(ctx context.Context, imp importers.Importer) (*importers.Result, error) {
	opts := c.importOptions(imp)
	si, ok := imp.(importers.SourceImporter)
	if !ok || c.opts.Verify == nil {
		return imp.Import(ctx, c.in, opts)
	}
	r, src, err := si.ImportSource(ctx, c.in, opts)
	if err != nil {
		return nil, err
	}
	if src != nil {
		c.src = src
		c.release = append(c.release, src.Close)
	}
	return r, nil
}

// importOptions are the import options of the run: those given, and for
// an importer that reads its inputs' shapes from samples
// (importers.OptionInputs) the --inputs folder, unless shapes or that
// option are given.
func (c *converter) importOptions(imp importers.Importer) importers.Options {
	o := c.opts.ImportOptions
	vo := c.opts.Verify
	if vo == nil || vo.Inputs == "" || o["shapes"] != "" || o[importers.OptionInputs] != "" {
		return o
	}
	for _, s := range imp.Describe().Options {
		if s.Name == importers.OptionInputs {
			out := importers.Options{importers.OptionInputs: vo.Inputs}
			for k, v := range o {
				out[k] = v
			}
			c.logf("%s: the input shapes are read from %s", c.in, vo.Inputs)
			return out
		}
	}
	return o
}

// findImporter resolves from (a format or importer name) or detects the
// format of path.
func findImporter(reg *importers.Registry, path, from string) (importers.Importer, error) {
	if from != "" {
		imp, err := reg.Lookup(from)
		if err != nil {
			return nil, &Error{Kind: KindUsage, Err: err}
		}
		return imp, nil
	}
	if _, err := inputFile(reg, path); err != nil {
		return nil, err
	}
	imp, _, err := reg.Detect(path)
	if err != nil {
		return nil, inputErr(err)
	}
	return imp, nil
}

// classifyImport maps an importer's error to a Kind: option errors are
// usage errors, the rest unreadable input.
func classifyImport(path string, err error) error {
	var oe *importers.OptionError
	if errors.As(err, &oe) {
		return &Error{Kind: KindUsage, Err: err}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return inputErr(fmt.Errorf("importing %s: %w", path, err))
	}
	return inputErr(err)
}

// adapt applies Target or Opset/MLOpset to a clone of imported and returns
// the result (imported itself when nothing is asked).
func (c *converter) adapt(ctx context.Context, imported *canonical.Model) (*canonical.Model, error) {
	o := c.opts
	switch {
	case o.Target != "" && !c.fileOut:
		return c.export(ctx, imported, o.Opset)
	case o.Opset > 0 || o.MLOpset > 0:
		m, err := imported.Clone()
		if err != nil {
			return nil, inputErr(fmt.Errorf("%s: %w", c.in, err))
		}
		c.closers = append(c.closers, m)
		r, err := adapt.Opset(m, convert.Options{To: o.Opset, ToML: o.MLOpset})
		if err != nil {
			return nil, c.blocked(err)
		}
		c.timed("opset")
		c.logf("opset %d -> %d", r.FromOpset, r.ToOpset)
		if r.FromMLOpset != r.ToMLOpset {
			c.logf("ai.onnx.ml opset %d -> %d", r.FromMLOpset, r.ToMLOpset)
		}
		c.adaptFacts(r)
		return m, nil
	}
	return imported, nil
}

// export fits m to the target's exporter at opset (0: the target's
// choice).
func (c *converter) export(ctx context.Context, m *canonical.Model, opset int) (*canonical.Model, error) {
	o := c.opts
	if c.exp == nil {
		return nil, usageErr("target %s: no exporter serves it", o.Target)
	}
	r, err := c.exp.Export(ctx, m, c.expTarget, exporters.Options{Opset: opset, MLOpset: o.MLOpset, AllowViolations: o.AllowViolations})
	if r != nil {
		c.exportFacts(r)
	}
	if err != nil {
		return nil, classifyExport(c.in, err)
	}
	if r.Model == nil {
		return nil, inputErr(fmt.Errorf("%s: the %s exporter returned no model", c.in, c.exp.Describe().Name))
	}
	c.closers = append(c.closers, r.Model)
	c.timed("adapt")
	c.logf("%s", r.Summary)
	if r.Profile != "" {
		c.defaultProfile(r.Profile)
	}
	return r.Model, nil
}

// adaptFacts records what an opset adaptation did: the actions and notes
// (nodes changed the same way summarised in one line) and the warnings.
func (c *converter) adaptFacts(r *adapt.Report) {
	applied, warnings := r.Facts()
	c.facts(applied, warnings)
}

// exportFacts records what an export did.
func (c *converter) exportFacts(r *exporters.Result) { c.facts(r.Applied, r.Warnings) }

func (c *converter) facts(applied, warnings []string) {
	cv := &c.res.Conversion
	for _, w := range warnings {
		c.warn("%s", w)
	}
	for _, l := range applied {
		cv.Applied = append(cv.Applied, l)
		c.logf("  %s", l)
	}
}

// blocked classifies an opset conversion error.
func (c *converter) blocked(err error) error {
	var be *convert.BlockedError
	if errors.As(err, &be) {
		hint := "; 'onnxconv opset --dry-run' lists the blockers"
		if imp := c.res.Conversion.Importer; imp != "" && imp != "onnx" {
			hint += fmt.Sprintf(", or ask the %s importer for the opset directly (-O opset=N, -O ml_opset=N where it takes them)", imp)
		}
		return invalidErr(fmt.Errorf("%s: %w\nnothing was written%s", c.in, err, hint))
	}
	return usageErr("%s: %v", c.in, err)
}

// classifyExport maps an export error to a Kind: a model that does not
// fit the target is invalid for it, anything else unreadable input.
func classifyExport(path string, err error) error {
	var ue *exporters.UnfitError
	if errors.As(err, &ue) {
		return invalidErr(fmt.Errorf("%s: %w\nnothing was written", path, err))
	}
	return inputErr(fmt.Errorf("%s: %w", path, err))
}

// failed handles a result that is not equivalent: keep it when asked, and
// return the error.
func (c *converter) failed(o *output) error {
	ne := &NotEquivalentError{Input: c.in, Output: c.out, Result: c.res}
	if c.opts.KeepFailed {
		kept := keptName(c.out)
		if err := o.save(kept); err != nil {
			return inputErr(fmt.Errorf("keeping the failed result: %w", err))
		}
		c.res.Kept, ne.Kept = kept, kept
		c.logf("kept the failed result as %s", kept)
	}
	// The reports name the file actually written: the kept one, or none.
	if err := c.recordWritten(c.res.Kept); err != nil {
		return err
	}
	return &Error{Kind: KindInvalid, Err: ne}
}

// isONNX tells whether the source was read by the ONNX importer.
func (c *converter) isONNX() bool {
	return strings.EqualFold(c.res.Conversion.SourceFormat, "onnx")
}

// optimize runs the graph passes on the imported model; every pass is
// checked on the executor against the model before it and rolled back when
// it changes an output.
func (c *converter) optimize(ctx context.Context, m *canonical.Model) (*canonical.Model, error) {
	list := passes.Builtin()
	if len(c.opts.OptimizePasses) > 0 {
		var err error
		if list, err = passes.Lookup(c.opts.OptimizePasses); err != nil {
			return nil, &Error{Kind: KindUsage, Err: fmt.Errorf("optimize: %w", err)}
		}
	}
	check := &passes.Check{Samples: 2, Gen: verify.GenOptions{Dims: c.genDims(m)}}
	out, rep, err := passes.Run(ctx, m, list, passes.RunOptions{Check: check})
	if err != nil {
		return nil, inputErr(fmt.Errorf("%s: optimize: %w", c.in, err))
	}
	c.closers = append(c.closers, out)
	cv := &c.res.Conversion
	for _, p := range rep.Passes {
		switch {
		case p.RolledBack:
			c.warn("optimize: pass %s rolled back: %s", p.Name, p.Reason)
		case p.Kept:
			cv.Applied = append(cv.Applied, fmt.Sprintf("optimize: %s: %d -> %d nodes, %d -> %d bytes", p.Name, p.Before.Nodes, p.After.Nodes, p.Before.Bytes, p.After.Bytes))
		}
	}
	c.timed("optimize")
	c.logf("optimize: %d -> %d nodes", rep.Before.Nodes, rep.After.Nodes)
	return out, nil
}

// reduce converts the adapted model to float16 or int8 when asked.
func (c *converter) reduce(ctx context.Context, m *canonical.Model) (*canonical.Model, error) {
	o := c.opts
	cv := &c.res.Conversion
	switch {
	case o.FP16 != nil && o.Quantize != nil:
		return nil, usageErr("fp16 and quantize exclude each other: choose one")
	case o.FP16 != nil:
		fo := *o.FP16
		if fo.Check == nil {
			fo.Check = &passes.Check{Samples: 2, Gen: verify.GenOptions{Dims: c.genDims(m)}}
		}
		if fo.Runs == nil && !c.fileOut {
			runs, err := kernelRuns(c.opts.Target)
			if err != nil {
				return nil, &Error{Kind: KindUsage, Err: err}
			}
			fo.Runs = runs
		}
		out, rep, err := passes.Float16(ctx, m, fo)
		if err != nil {
			return nil, inputErr(fmt.Errorf("%s: %s: %w", c.in, map[bool]string{true: "bf16", false: "fp16"}[fo.BF16], err))
		}
		c.closers = append(c.closers, out)
		cv.Applied = append(cv.Applied, fmt.Sprintf("%s: %d node(s) converted, %d kept in float32 by the block list, %d for lack of a %s type or kernel, %d by the fallback; %d -> %d bytes",
			rep.Type, rep.Converted, rep.Blocked, rep.Unsupported, rep.Type, len(rep.Kept), rep.Before.Bytes, rep.After.Bytes))
		for _, k := range rep.Kept {
			cv.Applied = append(cv.Applied, fmt.Sprintf("%s %q kept in float32: %s", k.OpType, k.Node, k.Reason))
		}
		c.defaultProfile(map[bool]string{true: "bf16", false: "fp16"}[fo.BF16])
		c.timed(rep.Type)
		return out, nil
	case o.Quantize != nil:
		qo := *o.Quantize
		if o.Calibration != "" && qo.Calibration == nil {
			s, err := tensorio.LoadSamples(o.Calibration, "input", verify.GraphInputs(m), false)
			if err != nil {
				return nil, inputErr(fmt.Errorf("calibration: %w", err))
			}
			qo.Calibration = s
		}
		if qo.Mode == passes.Static && qo.Calibration == nil {
			var err error
			gen := verify.GenOptions{Dims: c.genDims(m)}
			for k := range 32 {
				s, err2 := verify.GenerateInputs(m, gen, 1000+k)
				if err2 != nil {
					err = err2
					break
				}
				qo.Calibration = append(qo.Calibration, s)
			}
			if err != nil {
				return nil, inputErr(fmt.Errorf("%s: quantize: generating calibration samples: %w (give a calibration folder)", c.in, err))
			}
		}
		out, rep, err := passes.Quantize(ctx, m, qo)
		if err != nil {
			return nil, inputErr(fmt.Errorf("%s: quantize: %w", c.in, err))
		}
		c.closers = append(c.closers, out)
		cv.Applied = append(cv.Applied, fmt.Sprintf("quantize (%s, per-channel %v): %d node(s) int8 QDQ; %d -> %d bytes", rep.Mode, rep.PerChannel, rep.Quantized, rep.Before.Bytes, rep.After.Bytes))
		c.defaultProfile("int8")
		c.timed("quantize")
		return out, nil
	}
	return m, nil
}

// defaultProfile sets the verification tolerance profile when none was
// given.
func (c *converter) defaultProfile(p string) {
	if v := c.opts.Verify; v != nil && v.Profile == "" && v.RTol == nil && v.ATol == nil {
		cp := *v
		cp.Profile = p
		c.opts.Verify = &cp
	}
}

// genDims are the dims of generated inputs: the verification's, with 1 for
// the rest.
func (c *converter) genDims(m *canonical.Model) map[string]int64 {
	var dims map[string]int64
	if c.opts.Verify != nil {
		dims = c.opts.Verify.Dims
	}
	return defaultDims(m, dims, func(string, ...any) {})
}
