package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxtext"
	"github.com/onnxconv/onnxconv/exporters/adapt"
	"github.com/onnxconv/onnxconv/exporters/profiles"
	onnximp "github.com/onnxconv/onnxconv/importers/onnx"
	"github.com/onnxconv/onnxconv/opset/convert"
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/plugins/sdk"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// progressMin is the file size from which a progress bar is drawn.
const progressMin = 100 << 20

// convertFlags are the options of `onnxconv convert`.
type convertFlags struct {
	external  bool
	threshold int64
	extFile   string

	from, target     string
	opset, mlOpset   int
	importOpts       []string
	verify           bool
	noVerify         bool
	inputs, refDir   string
	reports, dims    []string
	profile          string
	rtol, atol       float64
	rtolSet, atolSet bool
	quiet            bool
}

// newConvertCmd returns `onnxconv convert IN OUT`: detect IN's format,
// import it through its plugin, adapt the opset or fit a target profile,
// verify, and write OUT atomically.
func newConvertCmd(builtins map[string]func() sdk.Plugin) *cobra.Command {
	var f convertFlags
	cmd := &cobra.Command{
		Use:   "convert IN OUT",
		Short: "Convert a model to ONNX (from ONNX, TFLite, XGBoost or a plugin's format), optionally for a target runtime",
		Long: `Read IN in any format an importer plugin reads (see 'onnxconv plugins' and
'onnxconv formats'), found by its magic bytes, else its extension (or named
with --from), and write OUT as binary protobuf (.onnx) or ONNX text syntax
(.onnxtxt), chosen by extension. The importer runs out of process.

--opset N (and --ml-opset N) move the model to another opset with the
version converter; --target PROFILE fits it to a target runtime (opset,
operators, IR version; see 'onnxconv targets') with the onnx-export plugin.

Verification (--verify; on by default with --target, --inputs, --reference
or --report; off with --no-verify) runs the result and the source on the
same inputs with the built-in executor: the source model itself when IN is
ONNX, otherwise the imported model before adaptation. With --reference DIR it also compares the result
with stored expected outputs (NAME.npy, NAME.pb or output_N.pb/.npy, matched
by output name; outputs without a file are not compared), computed from the
inputs in --inputs DIR (default: DIR itself). A summary goes to standard
output; --report FILE writes the comparison (the one against --reference
goes to FILE with "-reference" before the extension when both are made).

OUT is written atomically, and only when everything passed: a failed run
leaves no output. Exit codes: 0 done, 1 not equivalent (or the model does
not fit the target / opset), 2 bad usage or unreadable input.

With --external-data, every tensor of at least --external-threshold bytes is
moved to one data file beside OUT (OUT's name + ".data" unless
--external-file is given), aligned to 4096 bytes. Without it, external data
of IN is inlined. A model whose protobuf would exceed 2 GiB is refused:
pass --external-data.`,
		Example: `  onnxconv convert model.tflite model.onnx --verify --inputs data/ --reference data/
  onnxconv convert booster.json booster.onnx --opset 13 --verify
  onnxconv convert model.onnx ort.onnx --target onnxruntime-1.17 --report verify.html`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			f.rtolSet, f.atolSet = fl.Changed("rtol"), fl.Changed("atol")
			c := &converter{
				flags: &f, builtins: builtins, in: args[0], out: args[1],
				stdout: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr(),
			}
			defer c.cleanup()
			// An interrupt cancels the run, so that the plugin processes
			// are stopped and the temporary files removed.
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return c.run(ctx)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.external, "external-data", false, "move tensors to an external data file beside OUT")
	fl.Int64Var(&f.threshold, "external-threshold", canonical.DefaultExternalThreshold, "size in bytes from which a tensor moves to external data")
	fl.StringVar(&f.extFile, "external-file", "", "name of the external data file, relative to OUT's folder (default OUT's name + \".data\")")
	fl.StringVar(&f.from, "from", "", "format (or importer plugin) of IN, instead of detecting it")
	fl.StringVar(&f.target, "target", "", "fit the model to a target runtime profile (see 'onnxconv targets')")
	fl.IntVar(&f.opset, "opset", 0, "target ai.onnx opset (with --target: forced within the target's range)")
	fl.IntVar(&f.mlOpset, "ml-opset", 0, "target ai.onnx.ml opset")
	fl.StringArrayVarP(&f.importOpts, "option", "O", nil, "importer option KEY=VALUE (repeatable), e.g. -O keep_nhwc=true for tflite")
	fl.BoolVar(&f.verify, "verify", false, "check that the result computes what the source computes (default with --target)")
	fl.BoolVar(&f.noVerify, "no-verify", false, "do not verify (also after --target)")
	fl.StringVar(&f.inputs, "inputs", "", "folder (or .npz) of verification inputs: input_N.pb/.npy, NAME.pb, NAME.npy, test_data_set_N/")
	fl.StringVar(&f.refDir, "reference", "", "folder (or .npz) of expected outputs to compare the result with: NAME.npy, NAME.pb, output_N.pb/.npy")
	fl.StringArrayVar(&f.reports, "report", nil, "write the verification report: .json, .md, .html or .xml (JUnit); repeatable")
	fl.StringArrayVar(&f.dims, "dim", nil, "symbolic dim value for generated inputs, NAME=N (repeatable)")
	fl.StringVar(&f.profile, "profile", "", "tolerance profile: "+strings.Join(verify.ProfileNames(), ", ")+" (default: by output type)")
	fl.Float64Var(&f.rtol, "rtol", 0, "relative tolerance (overrides the profile)")
	fl.Float64Var(&f.atol, "atol", 0, "absolute tolerance (overrides the profile)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress lines on standard error")
	return cmd
}

// converter is one run of `onnxconv convert`.
type converter struct {
	flags    *convertFlags
	builtins map[string]func() sdk.Plugin
	in, out  string
	stdout   io.Writer
	stderr   io.Writer

	host    *plugins.Host
	plugin  string             // the importer plugin
	work    string             // private temporary folder
	closers []*canonical.Model // models to close at the end
}

func (c *converter) logf(format string, args ...any) {
	if !c.flags.quiet {
		fmt.Fprintf(c.stderr, format+"\n", args...)
	}
}

func (c *converter) cleanup() {
	for _, m := range c.closers {
		_ = m.Close()
	}
	if c.work != "" {
		_ = os.RemoveAll(c.work)
	}
}

// load reads a model written by a plugin or by this run.
func (c *converter) load(path string) (*canonical.Model, error) {
	m, err := canonical.Load(path, canonical.LoadOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the intermediate model: %w", err)
	}
	c.closers = append(c.closers, m)
	return m, nil
}

// verifying tells whether the run verifies: --verify, --target (unless
// --no-verify), or any verification option.
func (c *converter) verifying() bool {
	f := c.flags
	if f.noVerify {
		return false
	}
	return f.verify || f.target != "" || f.refDir != "" || f.inputs != "" || len(f.reports) > 0
}

func (c *converter) check() error {
	f := c.flags
	if f.verify && f.noVerify {
		return badInput(errors.New("convert: --verify and --no-verify contradict each other"))
	}
	if f.noVerify && (f.refDir != "" || f.inputs != "" || len(f.reports) > 0) {
		return badInput(errors.New("convert: --no-verify with --reference, --inputs or --report: drop one of them"))
	}
	for _, r := range f.reports {
		if err := verify.CheckReportPath(r); err != nil {
			return badInput(fmt.Errorf("convert: --report: %w", err))
		}
	}
	if f.profile != "" {
		if _, err := verify.LookupProfile(f.profile); err != nil {
			return badInput(fmt.Errorf("convert: --profile: %w", err))
		}
	}
	if (f.rtolSet && f.rtol < 0) || (f.atolSet && f.atol < 0) {
		return badInput(errors.New("convert: --rtol and --atol must not be negative"))
	}
	if f.target != "" {
		p, err := profiles.Get(f.target)
		if err != nil {
			return badInput(fmt.Errorf("convert: --target: %w (see 'onnxconv targets')", err))
		}
		if f.opset != 0 && (f.opset < p.MinOpset || f.opset > p.MaxOpset) {
			return badInput(fmt.Errorf("convert: --opset %d is outside the range of target %s (%d to %d)", f.opset, p.Name, p.MinOpset, p.MaxOpset))
		}
	}
	if f.opset < 0 || f.mlOpset < 0 {
		return badInput(errors.New("convert: --opset and --ml-opset must be positive"))
	}
	if f.external && isText(c.out) {
		return badInput(fmt.Errorf("%s: the text syntax cannot reference external data; write a .onnx file for --external-data", c.out))
	}
	st, err := os.Stat(c.in)
	if err != nil {
		return badInput(fmt.Errorf("convert: cannot read the input: %w", err))
	}
	if !st.Mode().IsRegular() {
		return badInput(fmt.Errorf("convert: %s is not a regular file", c.in))
	}
	ai, err1 := filepath.Abs(c.in)
	ao, err2 := filepath.Abs(c.out)
	if err1 == nil && err2 == nil && ai == ao {
		return badInput(fmt.Errorf("convert: %s: the output would overwrite the input; choose another OUT", c.in))
	}
	return nil
}

func (c *converter) importOptions() (map[string]string, error) {
	opts := map[string]string{}
	for _, kv := range c.flags.importOpts {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, badInput(fmt.Errorf("convert: --option %q: want KEY=VALUE", kv))
		}
		opts[k] = v
	}
	return opts, nil
}

// formats lists the importers of the host for messages.
func (c *converter) formats() string {
	var parts []string
	for _, p := range c.host.Plugins() {
		if p.Err != nil || p.Importer == nil {
			continue
		}
		s := p.Importer.Format
		if p.Importer.Format != p.Name {
			s += " (plugin " + p.Name + ")"
		}
		if len(p.Importer.Extensions) > 0 {
			s += " " + strings.Join(p.Importer.Extensions, " ")
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// findImporter resolves --from: a format or an importer plugin name.
func (c *converter) findImporter(from string) (name, format string, err error) {
	for _, p := range c.host.Plugins() {
		if p.Err != nil || p.Importer == nil {
			continue
		}
		if strings.EqualFold(p.Name, from) || strings.EqualFold(p.Importer.Format, from) {
			return p.Name, p.Importer.Format, nil
		}
	}
	return "", "", badInput(fmt.Errorf("convert: --from %q: no importer reads this format; formats: %s", from, c.formats()))
}

// pluginError maps a plugin failure to an exit code and adds a hint.
func pluginError(err error, failedCode int) error {
	switch {
	case errors.Is(err, plugins.ErrTimeout):
		return badInput(fmt.Errorf("%w; the plugin took too long (the input may be hostile or too large)", err))
	case errors.Is(err, plugins.ErrMemoryLimit):
		return badInput(fmt.Errorf("%w; the input needs more memory than the plugin may use", err))
	case errors.Is(err, plugins.ErrFailed) && failedCode == exitInvalid:
		return invalid(err)
	}
	return badInput(err)
}

func (c *converter) run(ctx context.Context) error {
	f := c.flags
	if err := c.check(); err != nil {
		return err
	}
	importOpts, err := c.importOptions()
	if err != nil {
		return err
	}
	if c.host, err = plugins.NewHost(ctx, pluginHostOptions(c.builtins)); err != nil {
		return badInput(fmt.Errorf("convert: starting the plugin host: %w", err))
	}

	// Detect.
	var name, format string
	if f.from != "" {
		if name, format, err = c.findImporter(f.from); err != nil {
			return err
		}
	} else {
		name, format, err = c.host.Detect(ctx, c.in)
		if errors.Is(err, plugins.ErrNoMatch) {
			return badInput(fmt.Errorf("convert: %w.\nformats: %s", err, c.formats()))
		}
		if err != nil {
			return pluginError(err, exitBadInput)
		}
	}
	c.plugin = name
	c.logf("%s: format %s (plugin %s)", c.in, format, name)

	// Import.
	if c.work, err = os.MkdirTemp("", "onnxconv-convert-*"); err != nil {
		return badInput(fmt.Errorf("convert: creating a temporary folder: %w", err))
	}
	importedPath := filepath.Join(c.work, "imported.onnx")
	var imported *canonical.Model
	isONNX := name == onnximp.Name
	if isONNX && strings.EqualFold(filepath.Ext(c.in), ".onnx") && len(importOpts) == 0 {
		// A binary ONNX model: the host would parse the onnx plugin's output
		// with the same checked canonical loader, so going out of process
		// would only add a full copy of the model. Read it here,
		// memory-mapped; the export plugin reads the same file.
		if imported, err = loadModel(c.in, c.stderr); err != nil {
			return err
		}
		c.closers = append(c.closers, imported)
		importedPath = c.in
		c.logf("%s: read: opset %d, %d node(s)", c.in, imported.Opset(""), len(imported.Graph.Nodes))
	} else if err := c.importVia(ctx, name, importOpts, &importedPath, &imported); err != nil {
		return err
	}

	// Adapt.
	result, adapted, err := c.adapt(ctx, imported, importedPath)
	if err != nil {
		return err
	}

	// Verify.
	if c.verifying() {
		if err := c.verifyResult(ctx, isONNX, imported, result, adapted); err != nil {
			return err
		}
	}

	// Write.
	if err := saveModel(c.out, result, canonical.SaveOptions{
		ExternalData:      f.external,
		ExternalThreshold: f.threshold,
		ExternalFile:      f.extFile,
	}, c.stderr); err != nil {
		return badInput(err)
	}
	c.logf("wrote %s (opset %d)", c.out, result.Opset(""))
	return nil
}

// importVia imports c.in through the importer plugin name into
// *importedPath and loads it into *imported.
func (c *converter) importVia(ctx context.Context, name string, importOpts map[string]string, importedPath *string, imported **canonical.Model) error {
	warns, err := c.host.Import(ctx, name, c.in, *importedPath, importOpts)
	for _, w := range warns {
		c.logf("%s: warning: %s", name, w)
	}
	switch {
	case err != nil && name == onnximp.Name && strings.Contains(err.Error(), onnximp.TooLarge):
		// Over 2 GiB inlined: canonical reads it in process (it checks the
		// untrusted input itself), with its external data mapped.
		c.logf("%s: over the 2 GiB protobuf limit, read in process", c.in)
		*importedPath = ""
		m, err := loadModel(c.in, c.stderr)
		if err != nil {
			return err
		}
		*imported = m
		c.closers = append(c.closers, m)
	case err != nil:
		return pluginError(err, exitBadInput)
	default:
		m, err := c.load(*importedPath)
		if err != nil {
			return badInput(fmt.Errorf("convert %s: %w", c.in, err))
		}
		*imported = m
		c.logf("%s: imported: opset %d, %d node(s)", c.in, m.Opset(""), len(m.Graph.Nodes))
	}
	return nil
}

// adapt applies --target (through the onnx-export plugin) or --opset /
// --ml-opset (opset/convert). It returns the result and whether it differs
// from the imported model.
func (c *converter) adapt(ctx context.Context, imported *canonical.Model, importedPath string) (*canonical.Model, bool, error) {
	f := c.flags
	switch {
	case f.target != "":
		if importedPath == "" {
			return c.adaptInProcess(imported)
		}
		opts := map[string]string{}
		if f.opset > 0 {
			opts["opset"] = strconv.Itoa(f.opset)
		}
		if f.mlOpset > 0 {
			opts["ml_opset"] = strconv.Itoa(f.mlOpset)
		}
		adaptedPath := filepath.Join(c.work, "adapted.onnx")
		warns, err := c.host.Export(ctx, exportPlugin, importedPath, adaptedPath, f.target, opts)
		for _, w := range warns {
			c.logf("%s: %s", exportPlugin, w)
		}
		if err != nil {
			return nil, false, pluginError(fmt.Errorf("convert %s: %w\nnothing was written", c.in, err), exitInvalid)
		}
		m, err := c.load(adaptedPath)
		if err != nil {
			return nil, false, badInput(fmt.Errorf("convert %s: target %s: %w", c.in, f.target, err))
		}
		return m, true, nil
	case f.opset > 0 || f.mlOpset > 0:
		var m *canonical.Model
		var err error
		if importedPath == "" {
			m = imported // converted in place; verification compares with IN
		} else if m, err = c.load(importedPath); err != nil {
			return nil, false, badInput(fmt.Errorf("convert %s: %w", c.in, err))
		}
		res, err := convert.Convert(m, convert.Options{To: f.opset, ToML: f.mlOpset})
		var be *convert.BlockedError
		if errors.As(err, &be) {
			hint := ""
			if c.plugin != onnximp.Name {
				hint = fmt.Sprintf(", or ask the %s importer for the opset directly (-O opset=N, -O ml_opset=N where it takes them)", c.plugin)
			}
			return nil, false, invalid(fmt.Errorf("convert %s: %w\nnothing was written; 'onnxconv opset --dry-run' lists the blockers%s", c.in, err, hint))
		}
		if err != nil {
			return nil, false, badInput(fmt.Errorf("convert %s: --opset %d: %w", c.in, f.opset, err))
		}
		c.logf("opset %d -> %d", res.FromOpset, res.ToOpset)
		if res.FromMLOpset != res.ToMLOpset {
			c.logf("ai.onnx.ml opset %d -> %d", res.FromMLOpset, res.ToMLOpset)
		}
		c.logf("%d node(s) rewritten", res.Rewritten)
		for _, n := range res.Notes {
			c.logf("  note: %s", n)
		}
		return m, true, nil
	}
	return imported, false, nil
}

// adaptInProcess fits a model too large for the plugin handoff to the
// target in process.
func (c *converter) adaptInProcess(m *canonical.Model) (*canonical.Model, bool, error) {
	f := c.flags
	p, err := profiles.Get(f.target)
	if err != nil {
		return nil, false, badInput(fmt.Errorf("convert: --target: %w", err))
	}
	r, err := adapt.Adapt(m, p, adapt.Options{Opset: f.opset, MLOpset: f.mlOpset})
	if r != nil && !f.quiet {
		_ = r.WriteText(c.stderr)
	}
	if err != nil {
		return nil, false, invalid(fmt.Errorf("convert %s for %s: %w\nnothing was written", c.in, p.Name, err))
	}
	return m, true, nil
}

// verifyResult compares the result with the source (ONNX input) or the
// imported model (when adapted), and with --reference outputs.
func (c *converter) verifyResult(ctx context.Context, isONNX bool, imported, result *canonical.Model, adapted bool) error {
	f := c.flags
	opts := verify.Options{Profile: f.profile}
	if f.rtolSet {
		opts.RTol = &f.rtol
	}
	if f.atolSet {
		opts.ATol = &f.atol
	}
	var err error
	if opts.Gen.Dims, err = parseDims(f.dims); err != nil {
		return badInput(err)
	}
	inputs := f.inputs
	if inputs == "" && f.refDir != "" {
		inputs = f.refDir
	}

	type comparison struct {
		what string
		rep  *verify.Report
	}
	var reps []comparison

	// Model against model.
	var ref *canonical.Model
	refName := ""
	switch {
	case isONNX:
		if ref, err = loadModel(c.in, c.stderr); err != nil {
			return err
		}
		c.closers = append(c.closers, ref)
		refName = c.in
	case adapted:
		ref, refName = imported, c.in+" (imported)"
	}
	if ref != nil {
		o := opts
		if inputs != "" {
			if o.Inputs, err = loadSamples(inputs, "input", verify.GraphInputs(ref), false); err != nil {
				return badInput(fmt.Errorf("convert: --inputs: %w", err))
			}
			o.InputSource = inputs
		}
		if o.Inputs == nil {
			o.Gen.Dims = c.defaultDims(ref, o.Gen.Dims)
		}
		c.logf("verifying %s against %s", c.out, refName)
		rep, err := verify.Compare(ctx, verify.ModelSide(refName, ref), verify.ModelSide(c.out, result), o)
		if err != nil {
			return badInput(fmt.Errorf("convert %s: verification could not run: %w", c.in, err))
		}
		reps = append(reps, comparison{"against " + refName, rep})
	}

	// Model against stored outputs.
	if f.refDir != "" {
		rep, err := c.compareReference(ctx, result, inputs, opts)
		if err != nil {
			return err
		}
		reps = append(reps, comparison{"against the reference outputs in " + f.refDir, rep})
	}
	if len(reps) == 0 {
		c.logf("verify: the result is the imported model unchanged; give --reference DIR (and --inputs DIR) to check it against stored outputs")
		return nil
	}

	ok := true
	for i, cmp := range reps {
		printConvertSummary(c.stdout, cmp.what, cmp.rep)
		if !cmp.rep.Equivalent {
			ok = false
		}
		for _, p := range f.reports {
			if i > 0 {
				ext := filepath.Ext(p)
				p = strings.TrimSuffix(p, ext) + "-reference" + ext
			}
			if err := verify.WriteReport(p, cmp.rep); err != nil {
				return badInput(fmt.Errorf("convert: --report: %w", err))
			}
		}
	}
	if !ok {
		return invalid(fmt.Errorf("convert %s: the result is not equivalent (see the summary); nothing was written to %s", c.in, c.out))
	}
	return nil
}

// defaultDims returns dims completed with 1 for every symbolic or unknown
// dim of m's graph inputs that --dim does not set, so that generated inputs
// can be made; each default is logged.
func (c *converter) defaultDims(m *canonical.Model, dims map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range dims {
		out[k] = v
	}
	for _, v := range verify.GraphInputs(m) {
		_, ds, hasShape, ok := canonical.TensorTypeOf(v.Type)
		if !ok || !hasShape {
			continue
		}
		for i, d := range ds {
			key := d.Param
			if d.Known {
				continue
			}
			if key == "" {
				key = v.Name + ":" + strconv.Itoa(i)
			}
			if _, set := out[key]; !set {
				out[key] = 1
				c.logf("verify: generated inputs use %s=1 (set it with --dim %s=N)", key, key)
			}
		}
	}
	return out
}

// compareReference runs result on the inputs and compares the outputs that
// have a stored counterpart in --reference.
func (c *converter) compareReference(ctx context.Context, result *canonical.Model, inputs string, opts verify.Options) (*verify.Report, error) {
	f := c.flags
	var err error
	if opts.Inputs, err = loadSamples(inputs, "input", verify.GraphInputs(result), false); err != nil {
		return nil, badInput(fmt.Errorf("convert: --inputs: %w", err))
	}
	opts.InputSource = inputs
	g := result.Graph
	expected, err := loadSamples(f.refDir, "output", g.Outputs, true)
	if err != nil {
		return nil, badInput(fmt.Errorf("convert: --reference: %w", err))
	}
	// Keep the outputs every sample has a file for.
	var keep []*canonical.Value
	var idx []int
	for i, v := range g.Outputs {
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
		return nil, badInput(fmt.Errorf("convert: --reference %s holds no file for any output of the model (%s); name them OUTPUT.npy, OUTPUT.pb or output_N.pb",
			f.refDir, strings.Join(verifyValueNames(g.Outputs), ", ")))
	}
	if len(keep) < len(g.Outputs) {
		c.logf("reference: comparing %d of %d outputs (%s)", len(keep), len(g.Outputs), strings.Join(verifyValueNames(keep), ", "))
	}
	side := &verify.Side{Name: f.refDir}
	for _, s := range expected {
		row := make([]*canonical.Tensor, len(idx))
		for j, i := range idx {
			row[j] = s[i]
		}
		side.Expected = append(side.Expected, row)
	}
	if len(side.Expected) != len(opts.Inputs) {
		return nil, badInput(fmt.Errorf("convert: %d input sample(s) in %s but %d set(s) of reference outputs in %s", len(opts.Inputs), inputs, len(side.Expected), f.refDir))
	}
	// Compare only those outputs: the graph's output list is narrowed for
	// the comparison and restored afterwards.
	saved := g.Outputs
	g.Outputs = keep
	defer func() { g.Outputs = saved }()
	c.logf("verifying %s against %s", c.out, f.refDir)
	rep, err := verify.Compare(ctx, verify.ModelSide(c.out, result), side, opts)
	if err != nil {
		return nil, badInput(fmt.Errorf("convert %s: verification against %s could not run: %w", c.in, f.refDir, err))
	}
	return rep, nil
}

// loadSamples reads one tensor per value from each sample folder of path
// (see tensorio.SetDirs): PREFIX_N.pb, PREFIX_N.npy, NAME.pb, NAME.npy or an
// .npz member. With optional, a missing tensor is nil instead of an error.
func loadSamples(path, prefix string, vals []*canonical.Value, optional bool) ([][]*canonical.Tensor, error) {
	sets, err := tensorio.SetDirs(path)
	if err != nil {
		return nil, err
	}
	var out [][]*canonical.Tensor
	for _, dir := range sets {
		row := make([]*canonical.Tensor, len(vals))
		st, err := os.Stat(dir)
		if err != nil {
			return nil, err
		}
		var npz map[string]*canonical.Tensor
		if !st.IsDir() {
			if npz, err = tensorio.ReadNpz(dir); err != nil {
				return nil, err
			}
		}
		for i, v := range vals {
			var tried []string
			if npz != nil {
				if t, ok := npz[v.Name]; ok {
					row[i] = t
				} else if t, ok := npz[tensorio.SafeName(v.Name)]; ok {
					row[i] = t
				}
				tried = append(tried, filepath.Base(dir)+":"+v.Name)
			} else {
				for _, base := range []string{
					prefix + "_" + strconv.Itoa(i) + ".pb", prefix + "_" + strconv.Itoa(i) + ".npy",
					tensorio.SafeName(v.Name) + ".pb", tensorio.SafeName(v.Name) + ".npy",
				} {
					p := filepath.Join(dir, base)
					if _, err := os.Stat(p); err != nil {
						tried = append(tried, base)
						continue
					}
					t, err := tensorio.ReadTensorFile(p)
					if err != nil {
						return nil, fmt.Errorf("%s %d (%s): %w", prefix, i, v.Name, err)
					}
					row[i] = t
					break
				}
			}
			if row[i] == nil {
				if optional {
					continue
				}
				return nil, fmt.Errorf("%s: no %s %d (%q); looked for %s", dir, prefix, i, v.Name, strings.Join(tried, ", "))
			}
			row[i].Name = v.Name
		}
		out = append(out, row)
	}
	return out, nil
}

// printConvertSummary prints the equivalence summary of one comparison.
func printConvertSummary(w io.Writer, what string, r *verify.Report) {
	verdict := "EQUIVALENT"
	if !r.Equivalent {
		verdict = "NOT EQUIVALENT"
	}
	fmt.Fprintf(w, "verify %s: %s (%d output(s), %d sample(s))\n", what, verdict, len(r.Outputs), r.Samples)
	for _, o := range r.Outputs {
		res := "pass"
		if !o.Pass {
			res = "FAIL"
			if o.Reason != "" {
				res += " " + o.Reason
			}
		}
		switch {
		case o.Float != nil:
			fmt.Fprintf(w, "  %-16s %s %v  max_abs %.3g  max_rel %.3g  (rtol %g atol %g)  %s\n",
				o.Name, o.DType, o.Shape, o.Float.MaxAbs, o.Float.MaxRel, o.Tolerance.RTol, o.Tolerance.ATol, res)
		case o.Exact != nil:
			fmt.Fprintf(w, "  %-16s %s %v  %d of %d equal  %s\n", o.Name, o.DType, o.Shape, o.Exact.Equal, o.Exact.Total, res)
		default:
			fmt.Fprintf(w, "  %-16s %s %v  %s\n", o.Name, o.DType, o.Shape, res)
		}
	}
	for _, n := range r.Unmatched {
		fmt.Fprintf(w, "  %-16s FAIL no counterpart\n", n)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

// isText reports whether path names an ONNX text syntax file.
func isText(path string) bool {
	return strings.EqualFold(filepath.Ext(path), ".onnxtxt")
}

// bar returns a progress callback drawing on stderr when it is a terminal
// and size is big enough, and a function to finish it.
func bar(stderr io.Writer, size int64, what string) (func(done, total int64), func()) {
	f, ok := stderr.(*os.File)
	if !ok || size < progressMin || !term.IsTerminal(int(f.Fd())) {
		return nil, func() {}
	}
	pb := progressbar.NewOptions64(size,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowBytes(true),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionClearOnFinish(),
	)
	return func(done, total int64) {
			if total != pb.GetMax64() {
				pb.ChangeMax64(total)
			}
			_ = pb.Set64(done)
		}, func() {
			_ = pb.Finish()
		}
}

// loadModel reads a binary or text model; an unreadable file is a
// bad-input error (exit 2).
func loadModel(path string, stderr io.Writer) (*canonical.Model, error) {
	return loadModelOpts(path, stderr, canonical.LoadOptions{})
}

// loadModelOpts is loadModel with load options (opts.Progress is set here).
func loadModelOpts(path string, stderr io.Writer, opts canonical.LoadOptions) (*canonical.Model, error) {
	if isText(path) {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, badInput(fmt.Errorf("cannot read the model: %w", err))
		}
		mp, err := onnxtext.Parse(path, src)
		if err != nil {
			return nil, badInput(fmt.Errorf("%w; fix the text or re-export it", err))
		}
		dir, err := filepath.Abs(filepath.Dir(path))
		if err != nil {
			return nil, badInput(fmt.Errorf("%s: %w", path, err))
		}
		m, err := canonical.FromProto(mp, dir)
		if err != nil {
			return nil, badInput(fmt.Errorf("%s: %w", path, err))
		}
		return m, nil
	}
	var size int64
	if st, err := os.Stat(path); err == nil {
		size = st.Size()
	}
	progress, done := bar(stderr, size, "reading")
	opts.Progress = progress
	m, err := canonical.Load(path, opts)
	done()
	if err != nil {
		return nil, badInput(fmt.Errorf("%w; the file is not a readable ONNX model (re-export it, or check that its external data files are beside it)", err))
	}
	return m, nil
}

// saveModel writes m as binary or text by OUT's extension.
func saveModel(path string, m *canonical.Model, opts canonical.SaveOptions, stderr io.Writer) error {
	if isText(path) {
		if opts.ExternalData {
			return badInput(fmt.Errorf("%s: the text syntax cannot reference external data; write a .onnx file for --external-data", path))
		}
		mp, err := m.ToProtoInline()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		src, err := onnxtext.Format(mp)
		if err != nil {
			return fmt.Errorf("%s: cannot write the model as text: %w; write a .onnx file instead", path, err)
		}
		return canonical.WriteFileAtomic(path, func(w io.Writer) error {
			_, err := w.Write(src)
			return err
		})
	}
	var size int64
	if g := m.Graph; g != nil {
		for _, v := range g.Initializers {
			if b, err := v.Const.ByteSize(); err == nil {
				size += b
			}
		}
	}
	progress, done := bar(stderr, size, "writing")
	opts.Progress = progress
	err := canonical.Save(path, m, opts)
	done()
	return err
}
