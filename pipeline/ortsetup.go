package pipeline

import (
	"context"
	"errors"
	"strings"

	"github.com/onnxconv/onnxconv/runtimes"
)

// ortSetup returns the setup of runtime (ONNX Runtime's, by the target's
// profile) that runs a result where it will run (inTarget), from the run's
// Env; it is closed with the run. It is the one place inTarget meets the
// runtimes API.
func (c *converter) ortSetup(_ context.Context, runtime string) (*runtimes.Setup, error) {
	s, err := runtimes.NewSetup([]string{runtime}, 0, c.opts.Env.Runtimes)
	if err == nil {
		c.release = append(c.release, s.Close)
	}
	return s, err
}

// runtimeMissing returns one line saying that the reference runtime name
// of the run's Env is not installed, with the command that installs it;
// "" when it is there, or when it is not one that says so (the setup
// then fails with its own error).
func (c *converter) runtimeMissing(name string) string {
	if name == "" {
		return ""
	}
	// Lookup fails with a Checker's error: a runtime under Node that is
	// not installed says so in one line.
	_, err := c.opts.Env.Runtimes.Lookup(name)
	var ni *runtimes.NotInstalledError
	if errors.As(err, &ni) {
		return ni.Line
	}
	return ""
}

// ortMissing says in one line why the result was not run in ONNX Runtime
// when ortSetup failed with err; the command that installs it is said once
// per run (not again when the source's reference already said it).
func (c *converter) ortMissing(err error) string {
	cv := c.res.Conversion
	var ni *runtimes.NotInstalledError
	if errors.As(err, &ni) && strings.Contains(cv.NotVerified+cv.Reference, runtimes.InstallCommand) {
		return "ONNX Runtime is not installed either"
	}
	return oneLineErr(err)
}

// runtimeLimit tells whether err is a runtime's limit, not the model's
// (runtimes.Limited: a graph input or output of a type ONNX Runtime under
// Node cannot pass).
func runtimeLimit(err error) bool {
	var l runtimes.Limited
	return errors.As(err, &l) && l.RuntimeLimit()
}
