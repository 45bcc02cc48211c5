package pipeline

import (
	"context"

	"github.com/onnxconv/onnxconv/runtimes"
)

// ortSetup returns the ONNX Runtime setup that runs a result where it will
// run (inTarget). It is the one place inTarget meets the runtimes API.
func (c *converter) ortSetup(ctx context.Context) (*runtimes.Setup, error) {
	return runtimes.NewSetup(ctx, []string{"onnxruntime"}, 0, c.opts.Plugins)
}
