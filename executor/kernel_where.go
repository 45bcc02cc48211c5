package executor

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
)

// Where on the host for float32 values (an attention mask: Where(mask,
// −inf, scores)), with numpy broadcasting. Without it, a Where whose
// inputs are host tensors took its GoMLX lowering, a segment of its own.

// okWhere: host inputs, a bool condition, float32 values.
func okWhere(c *lctx) bool {
	return okAllHost(c) && c.NIn() == 3 && c.Has(1) && c.Has(2) &&
		c.DT(0) == canonical.Bool && c.DT(1) == canonical.Float && c.DT(2) == canonical.Float
}

func kernelWhere(c *lctx) error {
	var hs [3]*htensor
	for i := range hs {
		h, err := c.H(i)
		if err != nil {
			return err
		}
		hs[i] = h
	}
	out, err := bcastShape(hs[0].shape, hs[1].shape, hs[2].shape)
	if err != nil {
		return fmt.Errorf("Where: %w", err)
	}
	cond, ok := hs[0].data.([]bool)
	if !ok {
		return fmt.Errorf("Where: condition is %T", hs[0].data)
	}
	x, _ := f32(hs[1])
	y, _ := f32(hs[2])
	z := c.newH(canonical.Float, out)
	zd, _ := f32(z)
	if numel(hs[0].shape) == len(zd) && len(x) == len(zd) && len(y) == len(zd) {
		for i, b := range cond {
			if b {
				zd[i] = x[i]
			} else {
				zd[i] = y[i]
			}
		}
		c.OutH(0, z)
		return nil
	}
	ci, xi, yi := bcastIndex(hs[0].shape, out), bcastIndex(hs[1].shape, out), bcastIndex(hs[2].shape, out)
	for i := range zd {
		if cond[ci[i]] {
			zd[i] = x[xi[i]]
		} else {
			zd[i] = y[yi[i]]
		}
	}
	c.OutH(0, z)
	return nil
}
