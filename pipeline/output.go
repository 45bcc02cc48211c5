package pipeline

import (
	"context"
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/verify"
)

// An output is the result as Convert writes it, in whatever format: what
// verification compares with the source, the check before writing, and
// the writer. Convert has one exit (write) for every format.
type output struct {
	// candidate is the side compared with the source: the result on the
	// executor, or the exported file in its runtime.
	candidate func(ctx context.Context) (*verify.Side, error)
	// check refuses an invalid result, naming the node; nil for none.
	check func() error
	// save writes the output to path atomically; a failed save leaves no
	// file behind.
	save func(path string) error
	// what says what was written, for the log line.
	what string
}

// output is the result as the run writes it: ONNX (binary or the text
// syntax, by the output's extension: Save), or the file of the Env's
// exporter of another format (exportFile).
func (c *converter) output(ctx context.Context, result *canonical.Model) (*output, error) {
	if c.fileOut {
		return c.exportFile(ctx, result)
	}
	cv := c.res.Conversion
	return &output{
		candidate: func(context.Context) (*verify.Side, error) { return verify.ModelSide(c.out, result), nil },
		check:     func() error { return checkResult(c.out, result) },
		save:      func(path string) error { return Save(path, result, c.saveOptions()) },
		what:      fmt.Sprintf("opset %d, IR %d", cv.OpsetAfter, cv.IRAfter),
	}, nil
}

// write is Convert's one exit: it verifies o against the source when asked
// (a result that is not equivalent is not written: see KeepFailed),
// checks it, writes it to the output atomically and records the file in
// the reports.
func (c *converter) write(ctx context.Context, imported, result *canonical.Model, o *output) error {
	if c.opts.Verify != nil {
		cand, err := o.candidate(ctx)
		if err != nil {
			return err
		}
		if err := c.verify(ctx, imported, result, cand); err != nil {
			return err
		}
		if !c.res.Equivalent {
			return c.failed(o)
		}
	}
	if o.check != nil {
		if err := o.check(); err != nil {
			return err
		}
	}
	if err := o.save(c.out); err != nil {
		return err
	}
	c.timed("write")
	if err := c.recordWritten(c.out); err != nil {
		return err
	}
	c.res.Written = c.out
	c.logf("wrote %s (%s)", c.out, o.what)
	return nil
}
