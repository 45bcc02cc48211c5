package tfops

import (
	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// sparseOps are the sparse-tensor ops; opTable merges them in.
func sparseOps() map[string]opFunc {
	return map[string]opFunc{
		"SparseSegmentSum":  (*converter).sparseSegment,
		"SparseSegmentMean": (*converter).sparseSegment,
		"SparseReshape":     (*converter).sparseReshape,
	}
}

// sparseSegment sums (or averages) the rows data[indices[j]] by
// segment_ids[j] into max(segment_ids)+1 rows: ScatterND with reduction
// add into zeros; empty segments are 0.
func (c *converter) sparseSegment(n *Node) error {
	d, dn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	idx, _, err := c.int64In(n, 1, "indices")
	if err != nil {
		return err
	}
	seg, _, err := c.int64In(n, 2, "segment_ids")
	if err != nil {
		return err
	}
	rows := c.b.Op("Gather", n.Name+"_rows", []string{dn, idx}, canonical.IntAttr("axis", 0))
	count := c.b.Op("Add", n.Name+"_count", []string{c.reduceOp("ReduceMax", n.Name+"_max", seg, []int64{0}, true), c.b.Ints("one", 1)})
	rest := c.b.Op("Slice", n.Name+"_rest", []string{c.b.Op("Shape", n.Name+"_dshape", []string{dn}), c.b.Ints("one", 1), c.b.Ints("end", i64max)})
	shape := c.b.Op("Concat", n.Name+"_shape", []string{count, rest}, canonical.IntAttr("axis", 0))
	ids := c.b.Op("Unsqueeze", n.Name+"_ids", []string{seg, c.b.Ints("last", -1)})
	sum := c.b.Op("ScatterND", n.Name+"_sum", []string{c.zerosOf(n.Name+"_zeros", shape, dn), ids, rows}, canonical.StringAttr("reduction", "add"))
	if n.Op == "SparseSegmentSum" {
		c.setNHWC(n, 0, c.b.Op("Identity", n.Name, []string{sum}), d.rank, d.dt)
		return nil
	}
	ones := c.b.Op("Expand", n.Name+"_ones", []string{c.like(1, dn), c.b.Op("Shape", n.Name+"_sshape", []string{seg})})
	cnt := c.b.Op("ScatterND", n.Name+"_n", []string{c.zerosOf(n.Name+"_nzeros", count, dn), ids, ones}, canonical.StringAttr("reduction", "add"))
	cnt = c.b.Op("Max", n.Name+"_n1", []string{cnt, c.like(1, dn)})
	axes := make([]int64, 0, 4)
	if d.rank > 1 {
		for i := 1; i < d.rank; i++ {
			axes = append(axes, int64(i))
		}
		cnt = c.b.Op("Unsqueeze", n.Name+"_nu", []string{cnt, c.b.Ints("axes", axes...)})
	}
	c.setNHWC(n, 0, c.b.Op("Div", n.Name, []string{sum, cnt}), d.rank, d.dt)
	return nil
}

// sparseReshape maps SparseReshape(indices [N, R], shape [R], new_shape
// [R']): each index flattened with the old shape's strides and unravelled
// with the new shape's (its −1 resolved from the element count).
func (c *converter) sparseReshape(n *Node) error {
	idx, _, err := c.int64In(n, 0, "input_indices")
	if err != nil {
		return err
	}
	shape, _, err := c.int64In(n, 1, "input_shape")
	if err != nil {
		return err
	}
	ns, _, err := c.int64In(n, 2, "new_shape")
	if err != nil {
		return err
	}
	// strides(s)[i] = prod(s[i+1:]), exact (revExclusiveProd).
	strides := func(s, what string) string {
		return c.revExclusiveProd(n.Name+"_"+what, s)
	}
	total := c.reduceOp("ReduceProd", n.Name+"_total", shape, []int64{0}, true)
	// Resolve −1 in new_shape: total / prod(new_shape without the −1).
	neg := c.b.Op("Less", n.Name+"_neg", []string{ns, c.b.I64("zero", nil, []int64{0})})
	known := c.b.Op("Where", n.Name+"_known", []string{neg, c.b.I64("one", nil, []int64{1}), ns})
	rest := c.reduceOp("ReduceProd", n.Name+"_rest", known, []int64{0}, true)
	resolved := c.b.Op("Where", n.Name+"_shape", []string{neg, c.b.Op("Div", n.Name+"_missing", []string{total, rest}), ns})
	flat := c.reduceOp("ReduceSum", n.Name+"_flat", c.b.Op("Mul", n.Name+"_scaled", []string{idx, strides(shape, "old")}), []int64{1}, true)
	newIdx := c.b.Op("Mod", n.Name+"_new", []string{c.b.Op("Div", n.Name+"_q", []string{flat, strides(resolved, "new")}), resolved})
	c.setNHWC(n, 0, c.b.Op("Identity", n.Name, []string{newIdx}), 2, canonical.Int64)
	c.setNHWC(n, 1, c.b.Op("Identity", n.Name+"_output_shape", []string{resolved}), 1, canonical.Int64)
	return nil
}

// revExclusiveProd is out[i] = prod(s[i+1:]) of a 1-D int64 s, exact:
// a Loop over the dims from the last, carrying the running product.
func (c *converter) revExclusiveProd(name, s string) string {
	r := c.b.Op("Size", name+"_rank", []string{s})
	sb := c.b.Sub()
	iter, cond, acc := sb.Fresh(name+"_i"), sb.Fresh(name+"_cond"), sb.Fresh(name+"_acc")
	// position r-1-i holds acc; then acc *= s[r-1-i]
	pos := sb.Op("Sub", name+"_pos", []string{sb.Op("Sub", name+"_rm1", []string{r, sb.I64("one", nil, []int64{1})}), iter})
	dim := sb.Op("Gather", name+"_dim", []string{s, pos}, canonical.IntAttr("axis", 0))
	next := sb.Op("Mul", name+"_next", []string{acc, dim})
	condOut := sb.Op("Identity", name+"_cond_out", []string{cond})
	scan := sb.Op("Identity", name+"_scan", []string{acc})
	body := sb.Graph(name+"_body", []build.Info{
		build.TensorInfo(iter, canonical.Int64, nil, false), build.TensorInfo(cond, canonical.Bool, nil, false), build.TensorInfo(acc, canonical.Int64, nil, false),
	}, []build.Info{
		build.TensorInfo(condOut, canonical.Bool, nil, false), build.TensorInfo(next, canonical.Int64, nil, false), build.TensorInfo(scan, canonical.Int64, nil, false),
	})
	final, scanned := c.b.Fresh(name+"_final"), c.b.Fresh(name+"_rev")
	c.b.Node("Loop", []string{r, "", c.b.I64("one", nil, []int64{1})}, []string{final, scanned}, canonical.GraphAttr("body", body))
	// scanned[i] = prod of the i last dims; out[j] = scanned[r-1-j].
	return c.b.Op("Slice", name, []string{scanned, c.b.Ints("start", -1), c.b.Ints("end", i64min), c.b.Ints("axis", 0), c.b.Ints("back", -1)})
}
