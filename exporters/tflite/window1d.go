package tflite

import (
	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/layout"
)

// windowIn returns the NHWC tensor a conv or pool reads x from: x in
// NHWC for a 4-D x; for a 3-D x ([N,C,W]), x in NWC (layout.ToLast(3))
// reshaped to [N,1,W,C], the NHWC view that CONV_2D, DEPTHWISE_CONV_2D and
// the 2-D pools take (no data movement).
func (c *converter) windowIn(x *canonical.Value) (int32, error) {
	if c.rank(x) != 3 {
		return c.get(x, layout.ToLast(4))
	}
	t, err := c.get(x, layout.ToLast(3))
	if err != nil {
		return 0, err
	}
	sh := c.t.tensors[t].shape
	s4 := []int64{sh[0], 1, sh[1], sh[2]}
	out := c.tmp(c.t.tensors[t].name+";nhwc", c.t.tensors[t].typ, s4)
	c.reshape(t, out, reshapeDims(s4))
	return out, nil
}

// windowOut makes the NHWC tensor a conv or pool writes v to, and done,
// which the caller calls after emitting the op: for a 3-D v it emits the
// RESHAPE of the [N,1,W,C] result to v held in NWC.
func (c *converter) windowOut(v *canonical.Value) (int32, func(), error) {
	if c.rank(v) != 3 {
		t, err := c.newOut(v, layout.ToLast(4))
		return t, func() {}, err
	}
	t, err := c.newOut(v, layout.ToLast(3))
	if err != nil {
		return 0, nil, err
	}
	sh := c.t.tensors[t].shape
	out := c.tmp(c.t.tensors[t].name+";nhwc", c.t.tensors[t].typ, []int64{sh[0], 1, sh[1], sh[2]})
	return out, func() { c.reshape(out, t, reshapeDims(sh)) }, nil
}

// reshapeDims is the RESHAPE new_shape of a static shape with at most one
// dynamic (-1) dim.
func reshapeDims(sh []int64) []int32 {
	out := make([]int32, len(sh))
	for i, d := range sh {
		out[i] = int32(d)
	}
	return out
}

// wantsNWC reports whether node n reads a rank-3 input in NWC (a 1-D
// convolution or pool).
func wantsNWC(n *canonical.Node) bool {
	switch n.OpType {
	case "Conv", "MaxPool", "AveragePool":
		return true
	}
	return false
}
