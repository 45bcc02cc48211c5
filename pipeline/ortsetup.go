package pipeline

import (
	"context"

	"github.com/onnxconv/onnxconv/runtimes"
)

// ortSetup returns the ONNX Runtime setup that runs a result where it will
// run (inTarget), from the run's Env; it is closed with the run. It is the
// one place inTarget meets the runtimes API.
func (c *converter) ortSetup(_ context.Context) (*runtimes.Setup, error) {
	s, err := runtimes.NewSetup([]string{"onnxruntime"}, 0, c.opts.Env.runtimes())
	if err == nil {
		c.release = append(c.release, s.Close)
	}
	return s, err
}
