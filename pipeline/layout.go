package pipeline

import (
	"context"
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/layout"
	"github.com/onnxconv/onnxconv/exporters"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/verify"
)

// permuting runs something whose inputs and outputs are laid out
// differently from a model's (an exported file in its runtime; a source
// framework that computes channels-last what the importer made
// channels-first): model-layout inputs in, each transposed by its
// layout's Perm; the runner's outputs matched to the model's (by name,
// else by position) and transposed back by the inverse Perm; in the
// model's output order. The one layout fix-up of the pipeline.
type permuting struct {
	inner verify.Runner // nil: model on the executor
	model *canonical.Model
	ins   []exporters.IOLayout
	outs  []exporters.IOLayout
	vals  []*canonical.Value // the model's outputs
}

// newPermuting returns inner (or model on the executor) with the layouts;
// inner itself when there is nothing to permute.
func newPermuting(inner verify.Runner, model *canonical.Model, ins, outs []exporters.IOLayout, vals []*canonical.Value) verify.Runner {
	return permuting{inner: inner, model: model, ins: ins, outs: outs, vals: vals}
}

// sourceRunner returns the runner of imported's source, permuted by the
// layout the importer recorded (importers.SourceLayout); inner itself when
// the source's layout is the model's.
func sourceRunner(inner verify.Runner, imported *canonical.Model) verify.Runner {
	ins, outs := importers.SourceLayout(imported)
	if len(ins) == 0 && len(outs) == 0 {
		return inner
	}
	var li, lo []exporters.IOLayout
	for _, v := range verify.GraphInputs(imported) {
		li = append(li, exporters.IOLayout{Name: v.Name, Perm: ins[v.Name]})
	}
	for _, v := range imported.Graph.Outputs {
		lo = append(lo, exporters.IOLayout{Name: v.Name, Perm: outs[v.Name]})
	}
	pr := permuting{inner: inner, ins: li, outs: lo, vals: imported.Graph.Outputs}
	if c, ok := inner.(verify.CaptureRunner); ok {
		// The error map asks the source for the values of the imported
		// model, each laid out back by the runner (runtimes): only the
		// inputs need the source's layout.
		return permutingCapture{permuting: pr, capture: c}
	}
	return pr
}

// permutingCapture is a permuting source runner that also captures
// intermediate values (verify.CaptureRunner).
type permutingCapture struct {
	permuting
	capture verify.CaptureRunner
}

func (p permutingCapture) RunCapture(ctx context.Context, inputs []*canonical.Tensor, names []string) (map[string]*canonical.Tensor, error) {
	in, err := p.inputs(inputs)
	if err != nil {
		return nil, err
	}
	return p.capture.RunCapture(ctx, in, names)
}

// Provides is the inner runner's (errmap.Provider), true without one.
func (p permutingCapture) Provides(name string) bool {
	if pr, ok := p.capture.(interface{ Provides(string) bool }); ok {
		return pr.Provides(name)
	}
	return true
}

func (p permuting) Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error) {
	in, err := p.inputs(inputs)
	if err != nil {
		return nil, err
	}
	return p.runInner(ctx, in)
}

// inputs are the model-layout inputs in the runner's layout.
func (p permuting) inputs(inputs []*canonical.Tensor) ([]*canonical.Tensor, error) {
	in := make([]*canonical.Tensor, len(inputs))
	for i, t := range inputs {
		in[i] = t
		if i < len(p.ins) && p.ins[i].Perm != nil && t != nil {
			x, err := t.Transpose(p.ins[i].Perm)
			if err != nil {
				return nil, fmt.Errorf("input %d to the runner's layout: %w", i, err)
			}
			in[i] = x
		}
	}
	return in, nil
}

func (p permuting) runInner(ctx context.Context, in []*canonical.Tensor) ([]*canonical.Tensor, error) {
	run := p.inner
	if run == nil {
		ex, err := executorFor(p.model)
		if err != nil {
			return nil, err
		}
		defer ex.Close()
		run = ex
	}
	got, err := run.Run(ctx, in)
	if err != nil {
		return nil, err
	}
	byName := map[string]int{}
	for i, o := range p.outs {
		byName[o.Name] = i
	}
	gotByName := map[string]*canonical.Tensor{}
	for _, t := range got {
		if t != nil && t.Name != "" {
			gotByName[t.Name] = t
		}
	}
	out := make([]*canonical.Tensor, len(p.vals))
	for i, v := range p.vals {
		j := i
		if k, ok := byName[v.Name]; ok {
			j = k
		}
		t := gotByName[v.Name]
		if t == nil && j < len(got) {
			t = got[j]
		}
		if t == nil {
			return nil, fmt.Errorf("the runner gave no output %q", v.Name)
		}
		if j < len(p.outs) && p.outs[j].Perm != nil {
			x, err := t.Transpose(layout.Inverse(p.outs[j].Perm))
			if err != nil {
				return nil, fmt.Errorf("output %q to the model's layout: %w", v.Name, err)
			}
			t = x
		}
		t.Name = v.Name
		out[i] = t
	}
	return out, nil
}
