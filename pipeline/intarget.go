package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/verify"
)

// inTarget runs the result where it will run: when its target's profile
// (profiles.Default without one) names a runtime (ONNX Runtime's
// profiles) and that runtime is installed (ONNX Runtime under Node, else
// its plugin), the result is loaded in it and compared
// with the source on the verification inputs (or, without a reference, run
// once). A result ONNX Runtime cannot load or run is refused, unless ONNX
// Runtime could not run the ONNX source either (a note then says so).
// Without ONNX Runtime a note says the result was not run in it.
func (c *converter) inTarget(ctx context.Context, ref *verify.Side, result *canonical.Model, samples [][]*canonical.Tensor, source string) error {
	cv := &c.res.Conversion
	if c.fileOut {
		return nil
	}
	runtime, err := targetRuntime(c.opts.Target)
	if err != nil {
		return &Error{Kind: KindUsage, Err: err}
	}
	if runtime == "" {
		cv.NotRunIn = "onnxconv runs no runtime of the target " + c.opts.Target + ": it was checked by its profile (operators, opset, IR), not by running it"
		return nil
	}
	setup, err := c.ortSetup(ctx, runtime)
	if err != nil {
		cv.NotRunIn = c.ortMissing(err)
		c.res.Notes = append(c.res.Notes, "the result was not run in ONNX Runtime: "+cv.NotRunIn)
		return nil
	}
	dir, err := os.MkdirTemp("", "onnxconv-ort-*")
	if err != nil {
		return inputErr(fmt.Errorf("running the result in ONNX Runtime: %w", err))
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "result.onnx")
	if err := Save(path, result, SaveOptions{}); err != nil {
		return err
	}
	side, err := setup.Side(0, path, result)
	if err != nil {
		cv.NotRunIn = c.ortMissing(err)
		c.res.Notes = append(c.res.Notes, "the result was not run in ONNX Runtime: "+cv.NotRunIn)
		return nil
	}
	side.Name, side.ComputedBy = c.out+" ("+runtime+")", setup.DescribeSide(0)
	cv.RanIn = side.ComputedBy
	if ref != nil {
		if c.opts.Verify.Profile == "" && c.opts.Verify.RTol == nil && c.opts.Verify.ATol == nil {
			// The ONNX Runtime run is held to float32 precision at
			// least: its double kernels are not double-exact
			// everywhere (a polynomial SVR's double MatMul/Pow chain
			// differs by 1.9e-5 relative), while the comparison on
			// the executor above keeps the float64 profile.
			defer func(v *VerifyOptions) { c.opts.Verify = v }(c.opts.Verify)
			v := *c.opts.Verify
			v.Profile = "fp32"
			c.opts.Verify = &v
		}
		rep, err := c.compare(ctx, ref, side, samples, source)
		if err != nil && (c.ortRefused != "" || runtimeLimit(err)) {
			cv.RanIn, cv.NotRunIn = "", oneLineErr(rootCause(err))
			why := "the result was not run in ONNX Runtime, which cannot run it: "
			if c.ortRefused != "" {
				why = "the result was not run in ONNX Runtime, which cannot run it (nor, for an ONNX source, the source): "
			}
			c.res.Notes = append(c.res.Notes, why+cv.NotRunIn)
			return nil
		}
		if err != nil {
			return invalidErr(fmt.Errorf("%s: ONNX Runtime cannot run the result: %v; nothing was written", c.in, oneLineErr(err)))
		}
		c.res.Comparisons = append(c.res.Comparisons, Comparison{What: inORTWhat, Report: rep})
		return nil
	}
	o := c.opts.Verify.options()
	o.Inputs, o.InputSource = samples, source
	rep, err := verify.RunOnce(ctx, side, o)
	if err != nil && runtimeLimit(err) {
		cv.RanIn, cv.NotRunIn = "", oneLineErr(rootCause(err))
		c.res.Notes = append(c.res.Notes, "the result was not run in ONNX Runtime, which cannot run it: "+cv.NotRunIn)
		return nil
	}
	if err != nil {
		return invalidErr(fmt.Errorf("%s: ONNX Runtime cannot run the result: %v; nothing was written", c.in, oneLineErr(err)))
	}
	rep.Summary = "the result runs in ONNX Runtime (NOT VERIFIED against the source)"
	c.res.Comparisons = append(c.res.Comparisons, Comparison{What: "run once in ONNX Runtime", Report: rep, RunOnce: true})
	return nil
}

// rootCause is the innermost error of err's chain of single wraps: what
// failed, without the steps that led there.
func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

func oneLineErr(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
