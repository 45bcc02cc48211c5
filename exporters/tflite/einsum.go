package tflite

import (
	"slices"
	"strings"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/layout"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// Einsum in its common forms, static shapes, no ellipsis and no label
// repeated within an operand:
//
//   - one operand: a TRANSPOSE, after a SUM over the labels the output
//     drops ("ij->ji", "bij->b");
//   - two operands: batch labels (in both and the output), free labels of
//     each side, contracted labels (in both, not the output): each operand
//     transposed to [batch, free, contracted] (the second to [batch,
//     contracted, free]) and reshaped to 3-D, BATCH_MATMUL, reshaped and
//     transposed to the output's order ("bij,bjk->bik", "bhid,bhjd->bhij",
//     "ij,j->i").

func (c *converter) einsum(n *canonical.Node) error {
	eq := strings.ReplaceAll(n.AttrString("equation", ""), " ", "")
	lhs, out, ok := strings.Cut(eq, "->")
	if !ok || strings.Contains(eq, ".") {
		return unsupported(n, "equation %q: only explicit outputs without ellipsis are supported", eq)
	}
	ops := strings.Split(lhs, ",")
	if len(ops) != len(n.Inputs) || len(ops) > 2 {
		return unsupported(n, "equation %q: one or two operands are supported", eq)
	}
	dims := map[rune]int64{}
	var shapes [][]int64
	for k, o := range ops {
		sh, err := c.shape(n.Inputs[k])
		if err != nil {
			return err
		}
		if len(sh) != len(o) || slices.Contains(sh, -1) {
			return unsupported(n, "operand %d: labels %q for shape %v (static shapes only)", k, o, sh)
		}
		for i, l := range o {
			if strings.Count(o, string(l)) > 1 {
				return unsupported(n, "label %c repeated in operand %d (a diagonal)", l, k)
			}
			if d, seen := dims[l]; seen && d != sh[i] {
				return unsupported(n, "label %c has sizes %d and %d", l, d, sh[i])
			}
			dims[l] = sh[i]
		}
		shapes = append(shapes, sh)
	}
	for _, l := range out {
		if _, ok := dims[l]; !ok || strings.Count(out, string(l)) > 1 {
			return unsupported(n, "output label %c is not an operand label or is repeated", l)
		}
	}
	if len(ops) == 1 {
		return c.einsum1(n, ops[0], out, shapes[0])
	}
	a, b := ops[0], ops[1]
	var batch, free1, free2, contr []rune
	for _, l := range a {
		inB, inOut := strings.ContainsRune(b, l), strings.ContainsRune(out, l)
		switch {
		case inB && inOut:
			batch = append(batch, l)
		case inB:
			contr = append(contr, l)
		case inOut:
			free1 = append(free1, l)
		default:
			return unsupported(n, "label %c is summed within operand 0 alone", l)
		}
	}
	for _, l := range b {
		if !strings.ContainsRune(a, l) {
			if !strings.ContainsRune(out, l) {
				return unsupported(n, "label %c is summed within operand 1 alone", l)
			}
			free2 = append(free2, l)
		}
	}
	size := func(ls []rune) int64 {
		p := int64(1)
		for _, l := range ls {
			p *= dims[l]
		}
		return p
	}
	B, I, J, K := size(batch), size(free1), size(contr), size(free2)
	prep := func(k int, labels string, order []rune, shape3 []int32) (int32, error) {
		x, err := c.get(n.Inputs[k], nil)
		if err != nil {
			return 0, err
		}
		perm := make([]int, len(order))
		for i, l := range order {
			perm[i] = strings.IndexRune(labels, l)
		}
		if !isIdentity(perm) {
			t := c.tmp(n.Outputs[0].Name+";operand_t", fb.TensorTypeFLOAT32, layout.Apply(shapes[k], perm))
			c.transpose(x, perm, t)
			x = t
		}
		r := c.tmp(n.Outputs[0].Name+";operand_3d", fb.TensorTypeFLOAT32, []int64{int64(shape3[0]), int64(shape3[1]), int64(shape3[2])})
		c.reshape(x, r, shape3)
		return r, nil
	}
	x, err := prep(0, a, slices.Concat(batch, free1, contr), []int32{int32(B), int32(I), int32(J)})
	if err != nil {
		return err
	}
	y, err := prep(1, b, slices.Concat(batch, contr, free2), []int32{int32(B), int32(J), int32(K)})
	if err != nil {
		return err
	}
	mm := c.tmp(n.Outputs[0].Name+";matmul", fb.TensorTypeFLOAT32, []int64{B, I, K})
	c.t.addOp(fb.BuiltinOperatorBATCH_MATMUL, []int32{x, y}, []int32{mm}, fb.BuiltinOptionsBatchMatMulOptions, func(bd *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.BatchMatMulOptionsStart(bd)
		return fb.BatchMatMulOptionsEnd(bd)
	}, n.Name)
	order := slices.Concat(batch, free1, free2)
	return c.einsumOut(n, mm, order, out, dims)
}

// einsumOut reshapes t (labels order, flattened) to the labels' dims and
// transposes it to the output's order.
func (c *converter) einsumOut(n *canonical.Node, t int32, order []rune, out string, dims map[rune]int64) error {
	sh := make([]int64, len(order))
	s32 := make([]int32, len(order))
	for i, l := range order {
		sh[i], s32[i] = dims[l], int32(dims[l])
	}
	perm := make([]int, len(out))
	for i, l := range out {
		perm[i] = slices.Index(order, l)
	}
	o, err := c.newOut(n.Outputs[0], nil)
	if err != nil {
		return err
	}
	if isIdentity(perm) {
		c.reshape(t, o, s32)
		return nil
	}
	r := c.tmp(n.Outputs[0].Name+";unflattened", fb.TensorTypeFLOAT32, sh)
	c.reshape(t, r, s32)
	c.transpose(r, perm, o)
	return nil
}

// einsum1 is the one-operand form: SUM over the dropped labels, then the
// output's order.
func (c *converter) einsum1(n *canonical.Node, in, out string, sh []int64) error {
	x, err := c.get(n.Inputs[0], nil)
	if err != nil {
		return err
	}
	var drop []int32
	var kept []rune
	dims := map[rune]int64{}
	for i, l := range in {
		dims[l] = sh[i]
		if strings.ContainsRune(out, l) {
			kept = append(kept, l)
		} else {
			drop = append(drop, int32(i))
		}
	}
	if len(drop) > 0 {
		var rsh []int64
		for _, l := range kept {
			rsh = append(rsh, dims[l])
		}
		s := c.tmp(n.Outputs[0].Name+";sum", fb.TensorTypeFLOAT32, rsh)
		at := c.constI32("axes", drop, []int64{int64(len(drop))})
		c.t.addOp(fb.BuiltinOperatorSUM, []int32{x, at}, []int32{s}, fb.BuiltinOptionsReducerOptions, reducerOpts(false), n.Name)
		x = s
	}
	return c.einsumOut(n, x, kept, out, dims)
}
