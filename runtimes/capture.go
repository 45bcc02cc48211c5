package runtimes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/layout"
	"github.com/onnxconv/onnxconv/verify"
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

// NamedSession is a Session that computes tensors of its model named in
// the source's own terms (a TF.js graph model: node names), for the error
// map.
type NamedSession interface {
	Session
	RunNamed(ctx context.Context, inputs []*canonical.Tensor, names []string) ([]*canonical.Tensor, error)
}

// sourceCapture is a Runner on a source model (not ONNX) that hands out
// the values of the imported model its importer recorded the source
// tensor of (canonical.SourceTensors): the runtime computes the source
// tensor, laid out back as the imported model holds it.
type sourceCapture struct {
	*Runner
	model *canonical.Model
	src   map[string]canonical.SourceTensor
}

// Provides tells whether the value named can be captured (errmap.Provider):
// a graph input, an initializer, or a value with a recorded source tensor.
func (c sourceCapture) Provides(name string) bool {
	if _, ok := c.src[name]; ok {
		return true
	}
	v := c.model.Graph.Lookup(name)
	if v == nil {
		return false
	}
	p, _ := v.Producer()
	return p == nil
}

// RunCapture returns the values named for one sample.
func (c sourceCapture) RunCapture(ctx context.Context, inputs []*canonical.Tensor, names []string) (map[string]*canonical.Tensor, error) {
	res := map[string]*canonical.Tensor{}
	g := c.model.Graph
	graphIn := map[string]int{}
	for i, n := range c.opts.InputNames {
		graphIn[n] = i
	}
	var want, asked []string
	for _, n := range names {
		if i, ok := graphIn[n]; ok && i < len(inputs) {
			res[n] = inputs[i]
			continue
		}
		if v := g.Lookup(n); v != nil && v.Const != nil {
			res[n] = v.Const
			continue
		}
		s, ok := c.src[n]
		if !ok {
			return nil, fmt.Errorf("runtime %s: capture: value %q has no source tensor recorded: %w", c.Runtime(), n, verify.ErrNoCapture)
		}
		want, asked = append(want, s.Tensor), append(asked, n)
	}
	if len(want) == 0 {
		return res, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.open(ctx); err != nil {
		return nil, err
	}
	ns, ok := c.sess.(NamedSession)
	if !ok {
		return nil, fmt.Errorf("runtime %s: %w", c.Runtime(), verify.ErrNoCapture)
	}
	outs, err := ns.RunNamed(ctx, inputs, want)
	if err != nil {
		return nil, err
	}
	if len(outs) != len(want) {
		return nil, fmt.Errorf("runtime %s: capture: %d tensors, want %d", c.Runtime(), len(outs), len(want))
	}
	for i, t := range outs {
		if p := c.src[asked[i]].Perm; len(p) > 0 {
			// Back from the source's layout to the imported model's.
			if t, err = t.Transpose(layout.Inverse(p)); err != nil {
				return nil, fmt.Errorf("runtime %s: capture: %q: %w", c.Runtime(), want[i], err)
			}
		}
		res[asked[i]] = t
	}
	return res, nil
}
