package runtimes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/onnxconv/onnxconv/canonical"
)

// ONNXLoader is a Runtime that loads ONNX files as they are (ONNX
// Runtime): a copy of a model with more graph outputs runs in it too, so
// the sides it runs can hand out intermediate values (verify.CaptureRunner,
// for bisection).
type ONNXLoader interface {
	Runtime
	LoadsONNX()
}

// captureRunner is a Runner on an ONNXLoader that also captures
// intermediate values of its model.
type captureRunner struct {
	*Runner
	model *canonical.Model
}

// RunCapture returns the values named (any value of the main graph: inputs,
// initializers, node outputs) for one sample. Node outputs are computed by
// a copy of the model that lists them as graph outputs, saved to a
// temporary file and loaded in the runtime for the call.
func (c captureRunner) RunCapture(ctx context.Context, inputs []*canonical.Tensor, names []string) (map[string]*canonical.Tensor, error) {
	res := map[string]*canonical.Tensor{}
	g := c.model.Graph
	graphIn := map[*canonical.Value]int{}
	for i, v := range c.opts.InputNames {
		if gv := g.Lookup(v); gv != nil {
			graphIn[gv] = i
		}
	}
	m, err := c.model.Clone()
	if err != nil {
		return nil, fmt.Errorf("runtime %s: capture: %w", c.Runtime(), err)
	}
	defer m.Close()
	cg := m.Graph
	outputs := map[*canonical.Value]bool{}
	for _, v := range cg.Outputs {
		outputs[v] = true
	}
	for _, n := range names {
		v := g.Lookup(n)
		if v == nil {
			return nil, fmt.Errorf("runtime %s: capture: no value named %q in the main graph", c.Runtime(), n)
		}
		if i, ok := graphIn[v]; ok && i < len(inputs) {
			res[n] = inputs[i]
			continue
		}
		if v.Const != nil {
			res[n] = v.Const
			continue
		}
		cv := cg.Lookup(n)
		if outputs[cv] {
			continue
		}
		outputs[cv] = true
		cg.Outputs = append(cg.Outputs, cv)
	}
	dir, err := os.MkdirTemp("", "onnxconv-capture-*")
	if err != nil {
		return nil, fmt.Errorf("runtime %s: capture: %w", c.Runtime(), err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "capture.onnx")
	if err := canonical.Save(path, m, canonical.SaveOptions{}); err != nil {
		return nil, fmt.Errorf("runtime %s: capture: %w", c.Runtime(), err)
	}
	sess, err := c.rt.Open(ctx, path, c.opts)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	outs, err := sess.Run(ctx, inputs)
	if err != nil {
		return nil, err
	}
	if len(outs) != len(cg.Outputs) {
		return nil, fmt.Errorf("runtime %s: capture: %d outputs, want %d", c.Runtime(), len(outs), len(cg.Outputs))
	}
	for i, o := range outs {
		res[cg.Outputs[i].Name] = o
	}
	for _, n := range names {
		if _, ok := res[n]; !ok {
			return nil, fmt.Errorf("runtime %s: capture: value %q was not computed", c.Runtime(), n)
		}
	}
	return res, nil
}
