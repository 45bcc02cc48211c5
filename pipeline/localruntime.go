package pipeline

import (
	"context"
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/plugins/sdk"
	"github.com/onnxconv/onnxconv/runtimes/tfjs"
	"github.com/onnxconv/onnxconv/runtimes/tflite"
)

// localRuntime returns a reference runtime that needs no plugin process of
// its own: the Node-based ones (TFLite, TF.js) run their interpreter in a
// Node child process anyway. A Go program calling Convert without the
// onnxconv binary's plugin host reaches them this way. ok is false for
// other names; err says what is missing (Node, the npm packages).
func localRuntime(name string) (rt sdk.Runtime, ok bool, err error) {
	switch name {
	case tflite.RuntimeName:
		if _, err := tflite.Find(tflite.FindOptions{}); err != nil {
			return rt, true, err
		}
		return tflite.Runtime(tflite.FindOptions{}), true, nil
	case tfjs.RuntimeName:
		if _, err := tfjs.Find(tfjs.FindOptions{}); err != nil {
			return rt, true, err
		}
		return tfjs.Runtime(tfjs.FindOptions{}), true, nil
	}
	return rt, false, nil
}

// localRunner runs the model file at path on rt, with the graph inputs of
// m (by name) and its outputs in m's order.
type localRunner struct {
	rt   sdk.Runtime
	path string
	m    *canonical.Model
}

func (r localRunner) Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error) {
	in := make([]*onnxpb.TensorProto, len(inputs))
	for i, t := range inputs {
		p, err := canonical.TensorToProto(t)
		if err != nil {
			return nil, fmt.Errorf("run %s on %s: input %d: %w", r.path, r.rt.Name, i, err)
		}
		in[i] = p
	}
	outs, err := r.rt.Run(ctx, r.path, in)
	if err != nil {
		return nil, fmt.Errorf("run %s on %s: %w", r.path, r.rt.Name, err)
	}
	byName := map[string]*onnxpb.TensorProto{}
	for _, o := range outs {
		byName[o.GetName()] = o
	}
	res := make([]*canonical.Tensor, len(r.m.Graph.Outputs))
	for i, v := range r.m.Graph.Outputs {
		p := byName[v.Name]
		if p == nil && i < len(outs) {
			p = outs[i]
		}
		if p == nil {
			return nil, fmt.Errorf("run %s on %s: no output %q", r.path, r.rt.Name, v.Name)
		}
		t, err := canonical.TensorFromProto(p)
		if err != nil {
			return nil, fmt.Errorf("run %s on %s: output %q: %w", r.path, r.rt.Name, v.Name, err)
		}
		t.Name = v.Name
		res[i] = t
	}
	return res, nil
}
