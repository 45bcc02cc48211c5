package verify

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/verify/errmap"
)

// buildMap builds the error map of B against A on one sample (in, A's
// inputs) into rep, or says in the notes why it cannot.
func buildMap(ctx context.Context, rep *Report, a, b *Side, ra, rb Runner, in []*canonical.Tensor, mapB []int, opts *Options) error {
	if b.Expected != nil || b.ExpectedValues != nil {
		rep.Notes = append(rep.Notes, "the error map needs two models; B is stored outputs")
		return nil
	}
	ca, okA := ra.(CaptureRunner)
	cb, okB := rb.(CaptureRunner)
	if !okA || !okB {
		// A runtime that hands out no intermediate value (libtorch, a
		// plugin runtime): the map compares what it can, the graph
		// outputs, and says so.
		var which []string
		if !okA {
			ca, which = outputsOnly{ra, a.Model}, append(which, "A ("+a.Name+")")
		}
		if !okB {
			cb, which = outputsOnly{rb, b.Model}, append(which, "B ("+b.Name+")")
		}
		rep.Notes = append(rep.Notes, "the error map compares only the graph outputs: "+strings.Join(which, " and ")+
			" is computed by a runtime that hands out no intermediate values, so the error may start anywhere upstream of a diverged output")
	}
	inB, err := inputsForB(in, mapB, GraphInputs(b.Model))
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	m, err := errmap.Build(ctx, errmap.Side{Model: a.Model, Runner: ca, Inputs: in}, errmap.Side{Model: b.Model, Runner: cb, Inputs: inB},
		errmap.Options{Tolerance: opts.mapTolerance, Batch: opts.BisectBatch})
	if err != nil {
		// The map is a diagnosis: a side that cannot hand out a value
		// (ErrNoCapture) or fails to compute one leaves it out, said, and
		// the verdict stands.
		rep.Notes = append(rep.Notes, "no error map: "+err.Error())
		return nil
	}
	rep.Map = m
	return nil
}

// outputsOnly is a Runner that cannot capture, as the error map takes it:
// it hands out the graph outputs (one run), graph inputs and initializers
// of its model (errmap.Provider), nothing computed inside.
type outputsOnly struct {
	Runner
	model *canonical.Model
}

// Provides tells whether the value named is a graph output, a graph input
// or an initializer.
func (o outputsOnly) Provides(name string) bool {
	v := o.model.Graph.Lookup(name)
	if v == nil {
		return false
	}
	if p, _ := v.Producer(); p == nil {
		return true
	}
	return slices.Contains(o.model.Graph.Outputs, v)
}

// RunCapture runs the model once and hands out the values named.
func (o outputsOnly) RunCapture(ctx context.Context, inputs []*canonical.Tensor, names []string) (map[string]*canonical.Tensor, error) {
	res := map[string]*canonical.Tensor{}
	for i, v := range GraphInputs(o.model) {
		if i < len(inputs) {
			res[v.Name] = inputs[i]
		}
	}
	run := false
	for _, n := range names {
		v := o.model.Graph.Lookup(n)
		switch {
		case v == nil || !o.Provides(n):
			return nil, fmt.Errorf("value %q is not a graph output: %w", n, ErrNoCapture)
		case v.Const != nil:
			res[n] = v.Const
		case res[n] == nil:
			run = true
		}
	}
	if run {
		outs, err := o.Run(ctx, inputs)
		if err != nil {
			return nil, err
		}
		for i, v := range o.model.Graph.Outputs {
			if i < len(outs) {
				res[v.Name] = outs[i]
			}
		}
	}
	return res, nil
}

// mapTolerance is toleranceFor as the error map takes it.
func (o *Options) mapTolerance(da, db canonical.DataType) errmap.Tol {
	t := o.toleranceFor(da, db)
	return errmap.Tol{RTol: t.RTol, ATol: t.ATol, ATolScale: t.ATolScale, IntSteps: t.IntATol}
}

// mapTop is the number of ranked nodes the reports list.
const mapTop = 15

func writeMapText(b *strings.Builder, m *errmap.Map) {
	if m == nil {
		return
	}
	b.WriteString(m.Text(5))
}

func writeHTMLMap(b *strings.Builder, m *errmap.Map) {
	if m == nil {
		return
	}
	b.WriteString("<h2>Error map</h2>\n<p>" + esc(m.Summary()) + "</p>\n")
	if svg := errmap.SVG(m); svg != "" {
		b.WriteString(`<figure class="errmap">` + svg + "<figcaption>Every node of B, layered from the inputs; colour by worst error over tolerance (green: within a tenth, yellow: within, orange: beyond, purple: beyond with its inputs within, where the error starts; grey: no counterpart in A); red outline: the divergence path. Click a node for both tensors' statistics.</figcaption></figure>\n")
	} else {
		fmt.Fprintf(b, "<p class=\"muted\">%d nodes: too many to draw (at most %d); the ranking follows.</p>\n", len(m.Nodes), errmap.MaxDrawn)
	}
	b.WriteString("<table><tr><th>rank</th><th class=\"l\">node</th><th class=\"l\">op</th><th class=\"l\">status</th><th>max abs</th><th>mean abs</th><th>ratio</th><th>input ratio</th><th>growth</th></tr>\n")
	for k, ne := range m.Top(mapTop) {
		st := esc(ne.Status)
		if ne.Jump {
			st = `<span class="fail">starts here</span>`
		}
		fmt.Fprintf(b, "<tr><td>%d</td><td class=\"l\"><code>%s</code></td><td class=\"l\">%s</td><td class=\"l\">%s</td><td>%.3g</td><td>%.3g</td><td>%.3g</td><td>%.3g</td><td>%.3g</td></tr>\n",
			k+1, esc(ne.Node), esc(ne.OpType), st, ne.MaxAbs, ne.MeanAbs, ne.Ratio, ne.InputRatio, ne.Growth)
	}
	b.WriteString("</table>\n")
	if rows := m.StepsTable(); len(rows) > 0 {
		b.WriteString("<h3>Steps per integer tensor</h3>\n<p class=\"muted\">Elements per difference in quantization steps; quantized: the source's float quantized with the node's scale and zero point.</p>\n")
		b.WriteString("<table><tr><th class=\"l\">node</th><th class=\"l\">op</th><th class=\"l\">source tensor</th>")
		for _, bin := range errmap.NewStepHistogram() {
			b.WriteString("<th>" + esc(bin.Label) + "</th>")
		}
		b.WriteString("</tr>\n")
		for _, ne := range rows {
			src := esc(ne.SourceTensor)
			if ne.Quantized {
				src += " (quantized)"
			}
			fmt.Fprintf(b, "<tr><td class=\"l\"><code>%s</code></td><td class=\"l\">%s</td><td class=\"l\"><code>%s</code></td>", esc(ne.Node), esc(ne.OpType), src)
			for _, bin := range ne.Steps {
				fmt.Fprintf(b, "<td>%d</td>", bin.Count)
			}
			b.WriteString("</tr>\n")
		}
		b.WriteString("</table>\n")
	}
}
