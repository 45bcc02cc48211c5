package tflite

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/layout"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// ONNX ops TFLite has no builtin for, decomposed: Erf (Abramowitz and
// Stegun 7.1.26, absolute error below 1.5e-7) and the reductions ReduceL1,
// ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp.

// elementwise emits op on ins into a new float32 tensor of shape sh.
func (c *converter) ew(n *canonical.Node, op fb.BuiltinOperator, sh []int64, tag string, ins ...int32) int32 {
	out := c.tmp(n.Outputs[0].Name+";"+tag, fb.TensorTypeFLOAT32, sh)
	c.ewInto(n, op, out, ins...)
	return out
}

func (c *converter) ewInto(n *canonical.Node, op fb.BuiltinOperator, out int32, ins ...int32) {
	var ot fb.BuiltinOptions
	var opts optFn
	switch op {
	case fb.BuiltinOperatorADD:
		ot, opts = fb.BuiltinOptionsAddOptions, emptyOpts(fb.AddOptionsStart, fb.AddOptionsEnd)
	case fb.BuiltinOperatorSUB:
		ot, opts = fb.BuiltinOptionsSubOptions, emptyOpts(fb.SubOptionsStart, fb.SubOptionsEnd)
	case fb.BuiltinOperatorMUL:
		ot, opts = fb.BuiltinOptionsMulOptions, emptyOpts(fb.MulOptionsStart, fb.MulOptionsEnd)
	case fb.BuiltinOperatorDIV:
		ot, opts = fb.BuiltinOptionsDivOptions, emptyOpts(fb.DivOptionsStart, fb.DivOptionsEnd)
	}
	c.t.addOp(op, ins, []int32{out}, ot, opts, n.Name)
}

// erf is Erf as sign(x) * (1 - poly(t) * exp(-x*x)), t = 1 / (1 + p|x|).
func (c *converter) erf(n *canonical.Node) error {
	if dt, err := c.elemType(n.Inputs[0]); err != nil || dt != fb.TensorTypeFLOAT32 {
		return unsupported(n, "Erf of a non-float input")
	}
	r, err := c.native(n.Inputs[0])
	if err != nil {
		return err
	}
	sh := c.t.tensors[r.t].shape
	k := func(name string, v float32) int32 { return c.constF32(name, []float32{v}, []int64{}, false) }
	ax := c.ew(n, fb.BuiltinOperatorABS, sh, "abs", r.t)
	px := c.ew(n, fb.BuiltinOperatorMUL, sh, "px", ax, k("erf_p", 0.3275911))
	den := c.ew(n, fb.BuiltinOperatorADD, sh, "den", px, k("one", 1))
	t := c.ew(n, fb.BuiltinOperatorDIV, sh, "t", k("one", 1), den)
	// Horner: ((((a5 t + a4) t + a3) t + a2) t + a1) t.
	coef := []float32{1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592}
	acc := c.ew(n, fb.BuiltinOperatorMUL, sh, "h", t, k("erf_a5", coef[0]))
	for i, a := range coef[1:] {
		s := c.ew(n, fb.BuiltinOperatorADD, sh, "h", acc, k(fmt.Sprintf("erf_a%d", 4-i), a))
		acc = c.ew(n, fb.BuiltinOperatorMUL, sh, "h", s, t)
	}
	x2 := c.ew(n, fb.BuiltinOperatorMUL, sh, "x2", r.t, r.t)
	nx2 := c.ew(n, fb.BuiltinOperatorNEG, sh, "negx2", x2)
	e := c.ew(n, fb.BuiltinOperatorEXP, sh, "exp", nx2)
	pe := c.ew(n, fb.BuiltinOperatorMUL, sh, "pe", acc, e)
	y := c.ew(n, fb.BuiltinOperatorSUB, sh, "erf_abs", k("one", 1), pe)
	sg := c.ew(n, fb.BuiltinOperatorSIGN, sh, "sign", r.t)
	out, err := c.newOut(n.Outputs[0], r.perm)
	if err != nil {
		return err
	}
	c.ewInto(n, fb.BuiltinOperatorMUL, out, y, sg)
	c.rep.Notes = append(c.rep.Notes, fmt.Sprintf("Erf %q decomposed (Abramowitz-Stegun 7.1.26, |error| < 1.5e-7)", n.Name))
	return nil
}

// reduceMore is ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum and
// ReduceLogSumExp as SUM of a prepared input and a final op.
func (c *converter) reduceMore(n *canonical.Node) error {
	rank := c.rank(n.Inputs[0])
	axes, err := c.reduceAxes(n)
	if err != nil {
		return err
	}
	if len(axes) == 0 {
		if n.AttrInt("noop_with_empty_axes", 0) != 0 {
			return unsupported(n, "noop_with_empty_axes")
		}
		for i := 0; i < rank; i++ {
			axes = append(axes, int64(i))
		}
	}
	keep := n.AttrInt("keepdims", 1) != 0
	var perm []int
	if keep {
		r, err := c.native(n.Inputs[0])
		if err != nil {
			return err
		}
		perm = r.perm
	}
	in, err := c.get(n.Inputs[0], perm)
	if err != nil {
		return err
	}
	sh := c.t.tensors[in].shape
	pre := in
	switch n.OpType {
	case "ReduceL1":
		pre = c.ew(n, fb.BuiltinOperatorABS, sh, "abs", in)
	case "ReduceL2", "ReduceSumSquare":
		pre = c.ew(n, fb.BuiltinOperatorMUL, sh, "sq", in, in)
	case "ReduceLogSumExp":
		pre = c.ew(n, fb.BuiltinOperatorEXP, sh, "exp", in)
	}
	ax := make([]int32, len(axes))
	for i, a := range axes {
		ax[i] = int32(layout.Axis(perm, normAxis(a, rank)))
	}
	at := c.constI32("axes", ax, []int64{int64(len(ax))})
	post := fb.BuiltinOperator(-1)
	switch n.OpType {
	case "ReduceL2":
		post = fb.BuiltinOperatorSQRT
	case "ReduceLogSum", "ReduceLogSumExp":
		post = fb.BuiltinOperatorLOG
	}
	out, err := c.newOut(n.Outputs[0], perm)
	if err != nil {
		return err
	}
	sum := out
	if post >= 0 {
		sum = c.tmp(n.Outputs[0].Name+";sum", fb.TensorTypeFLOAT32, c.t.tensors[out].shape)
	}
	c.t.addOp(fb.BuiltinOperatorSUM, []int32{pre, at}, []int32{sum}, fb.BuiltinOptionsReducerOptions, reducerOpts(keep), n.Name)
	if post >= 0 {
		c.t.addOp(post, []int32{sum}, []int32{out}, 0, nil, n.Name)
	}
	return nil
}
