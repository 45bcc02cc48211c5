package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// options turns VerifyOptions into verify.Options (without inputs).
func (v *VerifyOptions) options() verify.Options {
	return verify.Options{
		Samples: v.Samples, Profile: v.Profile, RTol: v.RTol, ATol: v.ATol,
		ByOrder: v.ByOrder, Bisect: v.Bisect, BisectBatch: v.BisectBatch,
		Backend: v.Backend, Progress: v.Progress,
		Gen: verify.GenOptions{Seed: v.Seed, Distribution: v.Distribution, Dims: v.Dims},
	}
}

// verify compares the result with the source (ONNX input, or the
// imported model when it was adapted) and with the stored outputs of
// Reference, then writes the reports.
func (c *converter) verify(ctx context.Context, imported, result *canonical.Model) error {
	vo := c.opts.Verify
	inputs := vo.Inputs
	if inputs == "" && vo.Reference != "" {
		inputs = vo.Reference
	}
	if imported != result {
		what := c.in
		if !c.isONNX() {
			what = c.in + " (as imported)"
		}
		rep, err := c.compareModels(ctx, what, imported, result, inputs)
		if err != nil {
			return err
		}
		c.res.Comparisons = append(c.res.Comparisons, Comparison{What: "against " + what, Report: rep})
	}
	if vo.Reference != "" {
		rep, err := c.compareReference(ctx, result, inputs)
		if err != nil {
			return err
		}
		c.res.Comparisons = append(c.res.Comparisons, Comparison{What: "against the reference outputs in " + vo.Reference, Report: rep})
	}
	c.timed("verify")
	if len(c.res.Comparisons) == 0 {
		c.res.Notes = append(c.res.Notes, "verify: the result is the imported model unchanged, so there is nothing to compare it with; give a reference folder of expected outputs (--reference DIR, with --inputs DIR) to check it against stored outputs")
		return nil
	}
	for i, cmp := range c.res.Comparisons {
		cmp.Report.Provenance = &c.res.Provenance
		conv := c.res.Conversion
		cmp.Report.Conversion = &conv
		if !cmp.Report.Equivalent {
			c.res.Equivalent = false
		}
		for _, p := range c.opts.Reports {
			if i > 0 {
				ext := filepath.Ext(p)
				p = strings.TrimSuffix(p, ext) + "-reference" + ext
			}
			if err := verify.WriteReport(p, cmp.Report); err != nil {
				return inputErr(fmt.Errorf("report: %w", err))
			}
			c.res.ReportFiles = append(c.res.ReportFiles, p)
		}
	}
	return nil
}

// compareModels runs ref and result on the same inputs.
func (c *converter) compareModels(ctx context.Context, refName string, ref, result *canonical.Model, inputs string) (*verify.Report, error) {
	vo := c.opts.Verify
	o := vo.options()
	if inputs != "" {
		var err error
		if o.Inputs, err = tensorio.LoadSamples(inputs, "input", verify.GraphInputs(ref), false); err != nil {
			return nil, inputErr(fmt.Errorf("inputs: %w", err))
		}
		o.InputSource = inputs
	} else {
		o.Gen.Dims = defaultDims(ref, vo.Dims, c.logf)
	}
	c.logf("verifying %s against %s", c.out, refName)
	rep, err := verify.Compare(ctx, verify.ModelSide(refName, ref), verify.ModelSide(c.out, result), o)
	if err != nil {
		return nil, inputErr(fmt.Errorf("%s: verification could not run: %w", c.in, err))
	}
	return rep, nil
}

// compareReference runs result on the inputs and compares the outputs that
// have a stored counterpart in Reference.
func (c *converter) compareReference(ctx context.Context, result *canonical.Model, inputs string) (*verify.Report, error) {
	vo := c.opts.Verify
	o := vo.options()
	var err error
	if o.Inputs, err = tensorio.LoadSamples(inputs, "input", verify.GraphInputs(result), false); err != nil {
		return nil, inputErr(fmt.Errorf("inputs: %w", err))
	}
	o.InputSource = inputs
	outs := result.Graph.Outputs
	expected, err := tensorio.LoadSamples(vo.Reference, "output", outs, true)
	if err != nil {
		return nil, inputErr(fmt.Errorf("reference: %w", err))
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

// defaultDims returns dims completed with 1 for every symbolic or unknown
// dim of m's graph inputs that dims does not set, logging each default.
func defaultDims(m *canonical.Model, dims map[string]int64, logf func(string, ...any)) map[string]int64 {
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
			if d.Known {
				continue
			}
			key := d.Param
			if key == "" {
				key = v.Name + ":" + strconv.Itoa(i)
			}
			if _, set := out[key]; !set {
				out[key] = 1
				logf("verify: generated inputs use %s=1 (set it with --dim %s=SIZE)", key, key)
			}
		}
	}
	return out
}

func valueNames(vs []*canonical.Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name
	}
	return out
}
