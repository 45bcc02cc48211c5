package tflite

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
)

// MATRIX_DIAG, MATRIX_SET_DIAG and BROADCAST_ARGS: the TFLite layout kept
// (native), static matrix sizes.

// eye is a constant boolean [m, n] matrix, true on the diagonal (at most
// maxIndexGrid elements).
func (c *converter) eye(base string, m, n int64) (string, error) {
	if m*n > maxIndexGrid {
		return "", fmt.Errorf("a [%d, %d] diagonal matrix is too large (limit %d elements)", m, n, maxIndexGrid)
	}
	v := make([]float64, m*n)
	for i := int64(0); i < min(m, n); i++ {
		v[i*n+i] = 1
	}
	return c.b.Number(base, canonical.Bool, []int64{m, n}, v...), nil
}

// lastDims returns the static sizes of the last k dims of tensor idx.
func (c *converter) lastDims(idx int32, k int) ([]int64, error) {
	s := c.tensor(idx).shape
	if len(s) < k {
		return nil, fmt.Errorf("tensor %q of rank %d, want at least %d", c.tensor(idx).name, len(s), k)
	}
	d := s[len(s)-k:]
	for _, v := range d {
		if v < 0 {
			return nil, fmt.Errorf("tensor %q: its last %d dims %v must be static", c.tensor(idx).name, k, d)
		}
	}
	return d, nil
}

// matrixDiag is MATRIX_DIAG: [..., n] to [..., n, n] with the values on
// the diagonal.
func (c *converter) matrixDiag(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	d, err := c.lastDims(o.inputs[0], 1)
	if err != nil {
		return err
	}
	dt, err := c.elemType(o.inputs[0])
	if err != nil {
		return err
	}
	return c.nativeOp(o, 1, func(in []string, y string) error {
		eye, err := c.eye(y+"_eye", d[0], d[0])
		if err != nil {
			return err
		}
		col := c.b.Op("Unsqueeze", y+"_col", []string{in[0], c.constI64(y+"_axis", []int64{-1})})
		c.node("Where", []string{eye, col, c.b.Number(y+"_zero", dt, nil, 0)}, []string{y})
		return nil
	})
}

// matrixSetDiag is MATRIX_SET_DIAG: the input with its main diagonal
// replaced by the diagonal input.
func (c *converter) matrixSetDiag(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	d, err := c.lastDims(o.inputs[0], 2)
	if err != nil {
		return err
	}
	r := len(c.tensor(o.inputs[1]).shape)
	if r == 0 {
		return fmt.Errorf("the diagonal input is a scalar")
	}
	m, n := d[0], d[1]
	return c.nativeOp(o, 2, func(in []string, y string) error {
		diag := in[1]
		if k := min(m, n); k < m {
			pads := make([]int64, 2*r)
			pads[2*r-1] = m - k
			diag = c.b.Op("Pad", y+"_diag_padded", []string{diag, c.constI64(y+"_pads", pads)})
		}
		eye, err := c.eye(y+"_eye", m, n)
		if err != nil {
			return err
		}
		col := c.b.Op("Unsqueeze", y+"_col", []string{diag, c.constI64(y+"_axis", []int64{-1})})
		c.node("Where", []string{eye, col, in[0]}, []string{y})
		return nil
	})
}

// broadcastArgs is BROADCAST_ARGS: the broadcast shape of two shapes, each
// left-padded with ones to the longer length, then a dim of 1 gives way
// to the other.
func (c *converter) broadcastArgs(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	var vals []string
	var lens []int64
	for _, i := range o.inputs[:2] {
		t := c.tensor(i)
		if len(t.shape) != 1 || t.shape[0] < 0 || t.shape[0] > maxRank {
			return fmt.Errorf("shape input %q is not a vector of static length up to %d", t.name, maxRank)
		}
		v, err := c.int64Of(i)
		if err != nil {
			return err
		}
		vals, lens = append(vals, v), append(lens, t.shape[0])
	}
	y := c.unique(c.base[o.outputs[0]] + "_i64")
	n := max(lens[0], lens[1])
	for i := range vals {
		if lens[i] < n {
			ones := make([]int64, n-lens[i])
			for j := range ones {
				ones[j] = 1
			}
			vals[i] = c.b.Op("Concat", y+"_padded", []string{c.constI64(y+"_ones", ones), vals[i]}, canonical.IntAttr("axis", 0))
		}
	}
	one := c.b.Op("Equal", y+"_a_is_one", []string{vals[0], c.i64(y+"_one", 1)})
	c.node("Where", []string{one, vals[1], vals[0]}, []string{y})
	return c.castOut(o.outputs[0], y)
}
