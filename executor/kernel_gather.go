package executor

import (
	"fmt"
	"sort"

	"github.com/onnxconv/onnxconv/canonical"
)

// Gather on the host for float32 and int64 data, and TopK on float32 (a
// detector head's TopK → Gather chain, embedding lookups). Gather copies
// the input's runs of inner elements in index order. Without it, a
// Gather whose inputs are host tensors took its GoMLX lowering, cutting
// the plan into a segment (a copy in, a dispatch, a copy out) around it.

// okGather: host inputs, float32 or int64 data, integer indices.
func okGather(c *lctx) bool {
	if !okAllHost(c) || c.NIn() != 2 || !c.Has(1) {
		return false
	}
	// Indices of a data-dependent count (NonMaxSuppression's selection)
	// stay on the GoMLX path, which plans for their changing shape.
	if !c.in(0).shapeStatic || !c.in(1).shapeStatic {
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
	y := c.newH(h.dt, out)
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

// okTopK: float32 data on the host.
func okTopK(c *lctx) bool { return okF32Host(c) && c.NOut() == 2 }

// kernelTopK is TopK on float32 data: per slice along the axis, the k
// largest (or smallest) values in order, ties in index order (a stable
// sort, as the reference host kernel); NaN counts as larger than every
// number. Small k select by k passes, larger k sort the indices.
func kernelTopK(c *lctx) error {
	h, k, ax, err := topKArgs(c)
	if err != nil {
		return err
	}
	n := h.shape[ax]
	largest := c.AInt("largest", 1) == 1
	out := append([]int{}, h.shape...)
	out[ax] = k
	x, _ := f32(h)
	yv := c.newH(h.dt, out)
	vals, _ := f32(yv)
	inds := make([]int64, numel(out))
	outer, inner := numel(h.shape[:ax]), numel(h.shape[ax+1:])
	// before reports whether a ranks before b (a's index is lower).
	before := func(a, b float32) bool {
		if largest {
			return a > b || a != a && b == b
		}
		return a < b || b != b && a == a
	}
	row := make([]float32, n)
	taken := make([]bool, n)
	order := make([]int, n)
	for o := 0; o < outer; o++ {
		for in := 0; in < inner; in++ {
			base := o*n*inner + in
			for i := range row {
				row[i] = x[base+i*inner]
			}
			obase := o*k*inner + in
			if k <= 8 {
				clear(taken)
				for j := 0; j < k; j++ {
					best := -1
					for i, v := range row {
						if !taken[i] && (best < 0 || before(v, row[best])) {
							best = i
						}
					}
					taken[best] = true
					vals[obase+j*inner], inds[obase+j*inner] = row[best], int64(best)
				}
				continue
			}
			for i := range order {
				order[i] = i
			}
			sort.SliceStable(order, func(a, b int) bool { return before(row[order[a]], row[order[b]]) })
			for j := 0; j < k; j++ {
				vals[obase+j*inner], inds[obase+j*inner] = row[order[j]], int64(order[j])
			}
		}
	}
	c.OutH(0, yv)
	c.OutH(1, fromI64(canonical.Int64, out, inds))
	return nil
}
