package tflite

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// STABLEHLO_COMPOSITE (its decomposition subgraph inlined) and
// STABLEHLO_CASE (nested If on the branch index).

func (c *converter) composite(o *operator) error {
	opt, err := options2[fb.StableHLOCompositeOptions](o, fb.BuiltinOptions2StableHLOCompositeOptions)
	if err != nil {
		return err
	}
	vals, err := c.args(o.inputs)
	if err != nil {
		return err
	}
	return c.inlineOutputs(o, opt.DecompositionSubgraphIndex(), fmt.Sprintf("decomposition of %q", opt.Name()), vals)
}

// inlineOutputs converts subgraph gi (what names it) into this graph with
// its inputs bound to vals, its outputs becoming the outputs of o.
func (c *converter) inlineOutputs(o *operator, gi int32, what string, vals []string) error {
	k, err := c.child(gi, what)
	if err != nil {
		return err
	}
	outs, err := k.inline(vals)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if len(outs) != len(o.outputs) {
		return fmt.Errorf("%s (subgraph %d) has %d outputs, the operator %d", what, gi, len(outs), len(o.outputs))
	}
	c.b.Splice(k.b)
	return c.identityOutputs(o, outs)
}

// caseOp is STABLEHLO_CASE: branch i of the index (the last branch for an
// index out of range), the op's other inputs passed to the branch.
func (c *converter) caseOp(o *operator) error {
	opt, err := options2[fb.StablehloCaseOptions](o, fb.BuiltinOptions2StablehloCaseOptions)
	if err != nil {
		return err
	}
	if err := needInputs(o, 1); err != nil {
		return err
	}
	n := opt.BranchSubgraphIndicesLength()
	if n == 0 {
		return fmt.Errorf("no branches")
	}
	idx, err := c.int64Of(o.inputs[0])
	if err != nil {
		return err
	}
	vals, err := c.args(o.inputs[1:])
	if err != nil {
		return err
	}
	outNames := c.outputNames(o)
	base := c.unique(outNames[0] + "_case")
	sel := c.b.Op("Reshape", base+"_index", []string{idx, c.constI64(base+"_scalar", nil)})
	out := c.b.Op("Or", base+"_out_of_range", []string{
		c.b.Op("Less", base+"_below", []string{sel, c.i64(base+"_zero", 0)}),
		c.b.Op("GreaterOrEqual", base+"_above", []string{sel, c.i64(base+"_n", int64(n))}),
	})
	sel = c.b.Op("Where", base+"_branch", []string{out, c.i64(base+"_last", int64(n-1)), sel})
	// branch converts branch i into a graph whose outputs are named after
	// the op's outputs.
	branch := func(i int) (*canonical.Graph, error) {
		gi := opt.BranchSubgraphIndices(i)
		k, err := c.child(gi, fmt.Sprintf("branch %d", i))
		if err != nil {
			return nil, err
		}
		k.inBody = true
		outs, err := k.inline(vals)
		if err != nil {
			return nil, fmt.Errorf("branch %d: %w", i, err)
		}
		if len(outs) != len(o.outputs) {
			return nil, fmt.Errorf("branch %d (subgraph %d) has %d outputs, the case %d", i, gi, len(outs), len(o.outputs))
		}
		return c.branchGraph(k.b, outs, o, fmt.Sprintf("_branch%d", i))
	}
	if n == 1 {
		return c.inlineOutputs(o, opt.BranchSubgraphIndices(0), "branch 0", vals)
	}
	// level i: If(sel == i, branch i, level i+1); the last level's else
	// is the last branch.
	var level func(i int, b *build.Builder, names []string) error
	level = func(i int, b *build.Builder, names []string) error {
		cond := c.b.Op("Equal", base+"_is", []string{sel, c.i64(base+"_i", int64(i))})
		then, err := branch(i)
		if err != nil {
			return err
		}
		var els *canonical.Graph
		if i == n-2 {
			if els, err = branch(n - 1); err != nil {
				return err
			}
		} else {
			eb := c.b.Sub()
			inner := make([]string, len(names))
			for j := range inner {
				inner[j] = c.unique(outNames[j] + fmt.Sprintf("_level%d", i+1))
			}
			if err := level(i+1, eb, inner); err != nil {
				return err
			}
			if els, err = c.branchGraph(eb, inner, o, fmt.Sprintf("_else%d", i)); err != nil {
				return err
			}
		}
		b.Node("If", []string{cond}, names, canonical.GraphAttr("then_branch", then), canonical.GraphAttr("else_branch", els))
		return nil
	}
	if err := level(0, c.b, outNames); err != nil {
		return err
	}
	return c.finishOutputs(o, outNames)
}

// branchGraph makes the graph of builder b whose outputs are vals, renamed
// after the outputs of o with suffix.
func (c *converter) branchGraph(b *build.Builder, vals []string, o *operator, suffix string) (*canonical.Graph, error) {
	var gout []build.Info
	for i, v := range vals {
		y := c.unique(c.base[o.outputs[i]] + suffix)
		b.Node("Identity", []string{v}, []string{y})
		vi, err := typeInfo(y, c.tensor(o.outputs[i]))
		if err != nil {
			return nil, err
		}
		gout = append(gout, vi)
	}
	return b.Graph(c.unique(c.base[o.outputs[0]]+suffix+"_graph"), nil, gout), nil
}
