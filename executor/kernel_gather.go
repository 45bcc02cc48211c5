package executor

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
)

// Gather on the host for float32 and int64 data (a detector head's
// TopK → Gather chain, embedding lookups): the output is the input's
// runs of inner elements copied in index order. Without it, a Gather
// whose inputs are host tensors took its GoMLX lowering, cutting the
// plan into a segment (a copy in, a dispatch, a copy out) around it.

// okGather: host inputs, float32 or int64 data, integer indices.
func okGather(c *lctx) bool {
	if !okAllHost(c) || c.NIn() != 2 || !c.Has(1) {
		return false
	}
	switch c.DT(1) {
	case canonical.Int64, canonical.Int32:
	default:
		return false
	}
	return c.DT(0) == canonical.Float || c.DT(0) == canonical.Int64
}

func kernelGather(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	ih, err := c.H(1)
	if err != nil {
		return err
	}
	ax, err := normAxis(c.AInt("axis", 0), len(h.shape))
	if err != nil {
		return fmt.Errorf("Gather: %w", err)
	}
	ind := ih.i64()
	d := h.shape[ax]
	for k, i := range ind {
		if i < -int64(d) || i >= int64(d) {
			return fmt.Errorf("Gather: index %d out of range [%d, %d)", i, -d, d)
		}
		if i < 0 {
			ind[k] = i + int64(d)
		}
	}
	out := append(append(append([]int{}, h.shape[:ax]...), ih.shape...), h.shape[ax+1:]...)
	y := newH(h.dt, out)
	outer, inner := numel(h.shape[:ax]), numel(h.shape[ax+1:])
	switch src := h.data.(type) {
	case []float32:
		gatherRuns(src, y.data.([]float32), ind, outer, d, inner)
	case []int64:
		gatherRuns(src, y.data.([]int64), ind, outer, d, inner)
	default:
		return fmt.Errorf("Gather: %T data", h.data)
	}
	c.OutH(0, y)
	return nil
}

// gatherRuns sets dst[o][j][:] = src[o][ind[j]][:] for o < outer, the
// runs inner elements long, src's middle axis d long.
func gatherRuns[T any](src, dst []T, ind []int64, outer, d, inner int) {
	k := 0
	for o := 0; o < outer; o++ {
		base := o * d * inner
		for _, i := range ind {
			copy(dst[k:k+inner], src[base+int(i)*inner:])
			k += inner
		}
	}
}
