package tflite

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, REVERSE_SEQUENCE, SPARSE_TO_DENSE,
// DYNAMIC_UPDATE_SLICE, DILATE and STABLEHLO_PAD: the TFLite layout kept
// (native), static shapes where the op's geometry needs them.

// maxIndexGrid bounds the constant index grids (elements) the importer
// writes for DYNAMIC_UPDATE_SLICE.
const maxIndexGrid = 1 << 22

// staticShape returns the static shape of tensor idx, or an error naming
// it.
func (c *converter) staticDims(idx int32) ([]int64, error) {
	t := c.tensor(idx)
	if !staticShape(t.shape) {
		return nil, fmt.Errorf("tensor %q has no static shape (%v)", t.name, t.shape)
	}
	return append([]int64(nil), t.shape...), nil
}

// staticInputs checks that o has its first n inputs and returns their
// static shapes.
func (c *converter) staticInputs(o *operator, n int) ([][]int64, error) {
	if err := needInputs(o, n); err != nil {
		return nil, err
	}
	dims := make([][]int64, n)
	for i := range dims {
		d, err := c.staticDims(o.inputs[i])
		if err != nil {
			return nil, err
		}
		dims[i] = d
	}
	return dims, nil
}

// spaceBatch is SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND over the M
// spatial dims after the batch: Pad, Reshape, Transpose, Reshape (and the
// reverse with a crop).
func (c *converter) spaceBatch(o *operator) error {
	if err := needInputs(o, 3); err != nil {
		return err
	}
	toBatch := o.code == fb.BuiltinOperatorSPACE_TO_BATCH_ND
	shape, err := c.staticDims(o.inputs[0])
	if err != nil {
		return err
	}
	block, err := c.constInts(o.inputs[1])
	if err != nil {
		return err
	}
	pads, err := c.constInts(o.inputs[2])
	if err != nil {
		return err
	}
	m := len(block)
	if m < 1 || len(shape) < m+1 || len(pads) != 2*m {
		return fmt.Errorf("block shape %v and paddings %v do not fit the input shape %v", block, pads, shape)
	}
	prod := int64(1)
	for _, b := range block {
		if b < 1 {
			return fmt.Errorf("block shape %v has a value below 1", block)
		}
		prod *= b
	}
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	r := len(shape)
	rest := shape[m+1:]
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		if toBatch {
			p := make([]int64, 2*r)
			sp := make([]int64, m)
			for i := 0; i < m; i++ {
				p[1+i], p[r+1+i] = pads[2*i], pads[2*i+1]
				sp[i] = shape[1+i] + pads[2*i] + pads[2*i+1]
				if sp[i]%block[i] != 0 {
					return fmt.Errorf("padded dim %d (%d) is not a multiple of the block %d", 1+i, sp[i], block[i])
				}
			}
			padded := c.b.Op("Pad", y+"_padded", []string{x, c.constI64(y+"_pads", p)})
			split := []int64{shape[0]}
			for i := 0; i < m; i++ {
				split = append(split, sp[i]/block[i], block[i])
			}
			split = append(split, rest...)
			perm := []int64{}
			for i := 0; i < m; i++ {
				perm = append(perm, int64(2+2*i))
			}
			perm = append(perm, 0)
			for i := 0; i < m; i++ {
				perm = append(perm, int64(1+2*i))
			}
			for i := range rest {
				perm = append(perm, int64(2*m+1+i))
			}
			out := []int64{shape[0] * prod}
			for i := 0; i < m; i++ {
				out = append(out, sp[i]/block[i])
			}
			out = append(out, rest...)
			s := c.b.Op("Reshape", y+"_split", []string{padded, c.constI64(y+"_split_shape", split)})
			t := c.b.Op("Transpose", y+"_moved", []string{s}, canonical.IntsAttr("perm", perm...))
			c.node("Reshape", []string{t, c.constI64(y+"_shape", out)}, []string{y})
			return nil
		}
		if shape[0]%prod != 0 {
			return fmt.Errorf("batch %d is not a multiple of the block size %d", shape[0], prod)
		}
		n := shape[0] / prod
		split := append(append(append([]int64{}, block...), n), shape[1:]...)
		perm := []int64{int64(m)}
		for i := 0; i < m; i++ {
			perm = append(perm, int64(m+1+i), int64(i))
		}
		for i := range rest {
			perm = append(perm, int64(2*m+1+i))
		}
		full := []int64{n}
		starts, ends, axes := []int64{}, []int64{}, []int64{}
		for i := 0; i < m; i++ {
			d := shape[1+i] * block[i]
			full = append(full, d)
			starts, ends, axes = append(starts, pads[2*i]), append(ends, d-pads[2*i+1]), append(axes, int64(1+i))
		}
		full = append(full, rest...)
		s := c.b.Op("Reshape", y+"_split", []string{x, c.constI64(y+"_split_shape", split)})
		t := c.b.Op("Transpose", y+"_moved", []string{s}, canonical.IntsAttr("perm", perm...))
		f := c.b.Op("Reshape", y+"_full", []string{t, c.constI64(y+"_full_shape", full)})
		c.node("Slice", []string{f, c.constI64(y+"_starts", starts), c.constI64(y+"_ends", ends), c.constI64(y+"_axes", axes)}, []string{y})
		return nil
	})
}

// reverseSequence is REVERSE_SEQUENCE: ReverseSequence with the batch and
// sequence dims moved to 0 and 1 when they are elsewhere.
func (c *converter) reverseSequence(o *operator) error {
	opt, err := options[fb.ReverseSequenceOptions](o, fb.BuiltinOptionsReverseSequenceOptions)
	if err != nil {
		return err
	}
	if err := needInputs(o, 2); err != nil {
		return err
	}
	r := len(c.tensor(o.inputs[0]).shape)
	seq, batch := int(opt.SeqDim()), int(opt.BatchDim())
	if seq < 0 || batch < 0 || seq >= r || batch >= r || seq == batch {
		return fmt.Errorf("seq_dim %d and batch_dim %d do not fit rank %d", seq, batch, r)
	}
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	lens, err := c.int64Of(o.inputs[1])
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		if seq <= 1 && batch <= 1 {
			c.node("ReverseSequence", []string{x, lens}, []string{y}, canonical.IntAttr("batch_axis", int64(batch)), canonical.IntAttr("time_axis", int64(seq)))
			return nil
		}
		perm := []int64{int64(batch), int64(seq)}
		for i := 0; i < r; i++ {
			if i != seq && i != batch {
				perm = append(perm, int64(i))
			}
		}
		inv := make([]int64, r)
		for i, p := range perm {
			inv[p] = int64(i)
		}
		t := c.b.Op("Transpose", y+"_moved", []string{x}, canonical.IntsAttr("perm", perm...))
		rv := c.b.Op("ReverseSequence", y+"_reversed", []string{t, lens}, canonical.IntAttr("batch_axis", 0), canonical.IntAttr("time_axis", 1))
		c.node("Transpose", []string{rv}, []string{y}, canonical.IntsAttr("perm", inv...))
		return nil
	})
}

// sparseToDense is SPARSE_TO_DENSE: ScatterND of the values into the
// default value expanded to the output shape.
func (c *converter) sparseToDense(o *operator) error {
	if err := needInputs(o, 4); err != nil {
		return err
	}
	idx, err := c.int64Of(o.inputs[0])
	if err != nil {
		return err
	}
	shape, err := c.int64Of(o.inputs[1])
	if err != nil {
		return err
	}
	vals, err := c.floatValue(o.inputs[2], native)
	if err != nil {
		return err
	}
	def, err := c.floatValue(o.inputs[3], native)
	if err != nil {
		return err
	}
	ir := len(c.tensor(o.inputs[0]).shape)
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		switch ir {
		case 0:
			idx = c.b.Op("Reshape", y+"_indices", []string{idx, c.constI64(y+"_one_index", []int64{1, 1})})
		case 1:
			idx = c.b.Op("Unsqueeze", y+"_indices", []string{idx, c.constI64(y+"_axis", []int64{-1})})
		case 2:
		default:
			return fmt.Errorf("indices of rank %d (0 to 2)", ir)
		}
		n := c.b.Op("Slice", y+"_count", []string{c.b.Op("Shape", y+"_indices_shape", []string{idx}), c.constI64(y+"_zero", []int64{0}), c.constI64(y+"_one", []int64{1})})
		v := c.b.Op("Expand", y+"_values", []string{vals, n})
		base := c.b.Op("Expand", y+"_default", []string{def, shape})
		c.node("ScatterND", []string{base, idx, v}, []string{y})
		return nil
	})
}

// dynamicUpdateSlice is DYNAMIC_UPDATE_SLICE: the update scattered into
// the operand at the start indices, each clamped so that the update fits
// (the grid of the update's indices is a constant).
func (c *converter) dynamicUpdateSlice(o *operator) error {
	if err := needInputs(o, 3); err != nil {
		return err
	}
	ud, err := c.staticDims(o.inputs[1])
	if err != nil {
		return err
	}
	r := len(ud)
	if len(c.tensor(o.inputs[0]).shape) != r {
		return fmt.Errorf("update of rank %d for an operand of rank %d", r, len(c.tensor(o.inputs[0]).shape))
	}
	grid, err := indexGrid(ud)
	if err != nil {
		return err
	}
	start, err := c.int64Of(o.inputs[2])
	if err != nil {
		return err
	}
	return c.nativeOp(o, 2, func(in []string, y string) error {
		if r == 0 {
			c.node("Identity", []string{in[1]}, []string{y})
			return nil
		}
		room := c.b.Op("Sub", y+"_room", []string{c.b.Op("Shape", y+"_shape", []string{in[0]}), c.constI64(y+"_update_dims", ud)})
		s := c.b.Op("Max", y+"_start", []string{c.b.Op("Min", y+"_start_hi", []string{start, room}), c.constI64(y+"_zeros", make([]int64, r))})
		g := c.constI64Dims(c.unique(y+"_grid"), append(append([]int64{}, ud...), int64(r)), grid)
		idx := c.b.Op("Add", y+"_indices", []string{g, s})
		c.node("ScatterND", []string{in[0], idx, in[1]}, []string{y})
		return nil
	})
}

// interleave spreads x (static shape) along each axis i with gaps[i]
// values of pad between neighbours (DILATE's dilations - 1, StableHLO's
// interior padding): Unsqueeze, Pad, Reshape, Slice per axis.
func (c *converter) interleave(x string, shape, gaps []int64, pad, base string) (string, []int64) {
	shape = append([]int64(nil), shape...)
	for i, g := range gaps {
		if g <= 0 || shape[i] == 0 {
			continue
		}
		r := len(shape)
		u := c.b.Op("Unsqueeze", base+"_col", []string{x, c.constI64(base+"_axis", []int64{int64(i + 1)})})
		p := make([]int64, 2*(r+1))
		p[r+1+i+1] = g
		padded := c.b.Op("Pad", base+"_gapped", []string{u, c.constI64(base+"_pads", p), pad})
		merged := append(append(append([]int64{}, shape[:i]...), shape[i]*(g+1)), shape[i+1:]...)
		m := c.b.Op("Reshape", base+"_merged", []string{padded, c.constI64(base+"_merged_shape", merged)})
		shape[i] = (shape[i]-1)*(g+1) + 1
		x = c.b.Op("Slice", base+"_spread", []string{m, c.constI64(base+"_start", []int64{0}), c.constI64(base+"_end", []int64{shape[i]}), c.constI64(base+"_slice_axis", []int64{int64(i)})})
	}
	return x, shape
}

// dilate is DILATE: the input spread by its dilations, gaps filled with
// the padding value.
func (c *converter) dilate(o *operator) error {
	if err := needInputs(o, 3); err != nil {
		return err
	}
	shape, err := c.staticDims(o.inputs[0])
	if err != nil {
		return err
	}
	d, err := c.constInts(o.inputs[1])
	if err != nil {
		return err
	}
	if len(d) != len(shape) {
		return fmt.Errorf("%d dilations for rank %d", len(d), len(shape))
	}
	gaps := make([]int64, len(d))
	for i, v := range d {
		if v < 1 {
			return fmt.Errorf("dilation %d below 1", v)
		}
		gaps[i] = v - 1
	}
	pad, err := c.floatValue(o.inputs[2], native)
	if err != nil {
		return err
	}
	return c.nativeOp(o, 1, func(in []string, y string) error {
		v, _ := c.interleave(in[0], shape, gaps, pad, y)
		c.node("Identity", []string{v}, []string{y})
		return nil
	})
}

// stablehloPad is STABLEHLO_PAD: interior padding (interleave), then the
// edges: Pad where positive, Slice where negative.
func (c *converter) stablehloPad(o *operator) error {
	opt, err := options2[fb.StablehloPadOptions](o, fb.BuiltinOptions2StablehloPadOptions)
	if err != nil {
		return err
	}
	dims, err := c.staticInputs(o, 2)
	if err != nil {
		return err
	}
	shape := dims[0]
	r := len(shape)
	if opt.EdgePaddingLowLength() != r || opt.EdgePaddingHighLength() != r || opt.InteriorPaddingLength() != r {
		return fmt.Errorf("padding lengths %d, %d, %d for rank %d", opt.EdgePaddingLowLength(), opt.EdgePaddingHighLength(), opt.InteriorPaddingLength(), r)
	}
	gaps := make([]int64, r)
	for i := range gaps {
		if gaps[i] = opt.InteriorPadding(i); gaps[i] < 0 {
			return fmt.Errorf("negative interior padding %d", gaps[i])
		}
	}
	return c.nativeOp(o, 2, func(in []string, y string) error {
		v, s := c.interleave(in[0], shape, gaps, in[1], y)
		p := make([]int64, 2*r)
		starts, ends := make([]int64, r), make([]int64, r)
		for i := 0; i < r; i++ {
			lo, hi := opt.EdgePaddingLow(i), opt.EdgePaddingHigh(i)
			p[i], p[r+i] = max(lo, 0), max(hi, 0)
			d := s[i] + p[i] + p[r+i]
			starts[i], ends[i] = max(-lo, 0), d-max(-hi, 0)
			if ends[i] < starts[i] {
				return fmt.Errorf("negative padding removes more than dim %d holds", i)
			}
		}
		padded := c.b.Op("Pad", y+"_edges", []string{v, c.constI64(y+"_pads", p), in[1]})
		c.node("Slice", []string{padded, c.constI64(y+"_starts", starts), c.constI64(y+"_ends", ends)}, []string{y})
		return nil
	})
}

// stablehloGather is STABLEHLO_GATHER (without batching dims): for each
// batch position the start (indices mapped to operand dims, clamped so the
// slice fits) plus a constant grid of the slice's offsets, one GatherND,
// the collapsed dims dropped and the offset dims moved to their places.
func (c *converter) stablehloGather(o *operator) error {
	opt, err := options2[fb.StablehloGatherOptions](o, fb.BuiltinOptions2StablehloGatherOptions)
	if err != nil {
		return err
	}
	dims, err := c.staticInputs(o, 2)
	if err != nil {
		return err
	}
	od, id := dims[0], dims[1]
	offsetDims := optInts(opt.OffsetDimsLength(), opt.OffsetDims)
	collapsed := optInts(opt.CollapsedSliceDimsLength(), opt.CollapsedSliceDims)
	startMap := optInts(opt.StartIndexMapLength(), opt.StartIndexMap)
	sizes := optInts(opt.SliceSizesLength(), opt.SliceSizes)
	ivd := int(opt.IndexVectorDim())
	r := len(od)
	if len(sizes) != r || ivd < 0 || ivd > len(id) {
		return fmt.Errorf("slice sizes %v or index_vector_dim %d do not fit operand %v and indices %v", sizes, ivd, od, id)
	}
	k := int64(1)
	if ivd < len(id) {
		k = id[ivd]
	}
	if int64(len(startMap)) != k {
		return fmt.Errorf("start_index_map %v for index vectors of %d", startMap, k)
	}
	isCollapsed := make([]bool, r)
	for _, d := range collapsed {
		if d < 0 || int(d) >= r || sizes[d] != 1 {
			return fmt.Errorf("collapsed dim %d is not a dim of size-1 slices (%v)", d, sizes)
		}
		isCollapsed[d] = true
	}
	// pick[d]: the index vector's position feeding operand dim d, or k
	// (a zero column) when none does.
	pick := make([]int64, r)
	for d := range pick {
		pick[d] = k
	}
	for j, d := range startMap {
		if d < 0 || int(d) >= r {
			return fmt.Errorf("start_index_map %v out of range", startMap)
		}
		pick[d] = int64(j)
	}
	grid, err := indexGrid(sizes)
	if err != nil {
		return err
	}
	var batch []int64
	for i, d := range id {
		if i != ivd {
			batch = append(batch, d)
		}
	}
	var kept []int64
	room := make([]int64, r)
	for d := range sizes {
		if room[d] = od[d] - sizes[d]; room[d] < 0 {
			return fmt.Errorf("slice sizes %v exceed the operand %v", sizes, od)
		}
		if !isCollapsed[d] {
			kept = append(kept, sizes[d])
		}
	}
	if len(offsetDims) != len(kept) {
		return fmt.Errorf("offset_dims %v for %d uncollapsed slice dims", offsetDims, len(kept))
	}
	idx, err := c.int64Of(o.inputs[1])
	if err != nil {
		return err
	}
	return c.nativeOp(o, 1, func(in []string, y string) error {
		full := c.hloIndices(idx, id, ivd, batch, pick, room, sizes, grid, y)
		g := c.b.Op("GatherND", y+"_slices", []string{in[0], full})
		g = c.b.Op("Reshape", y+"_kept", []string{g, c.constI64(y+"_kept_shape", append(append([]int64{}, batch...), kept...))})
		rank := len(batch) + len(kept)
		perm := make([]int64, rank)
		isOff := map[int64]int{}
		for j, p := range offsetDims {
			isOff[p] = j
		}
		b := 0
		for p := 0; p < rank; p++ {
			if j, ok := isOff[int64(p)]; ok {
				perm[p] = int64(len(batch) + j)
			} else {
				perm[p] = int64(b)
				b++
			}
		}
		c.node("Transpose", []string{g}, []string{y}, canonical.IntsAttr("perm", perm...))
		return nil
	})
}

// stablehloScatter is STABLEHLO_SCATTER (one operand, without batching
// dims) whose update computation is one elementwise StableHLO op (or
// returns the update: replace): every update element's operand index (its
// scatter start plus its window offset, inserted dims of size 1) built as
// in stablehloGather, one ScatterND with the body's reduction. Updates out
// of bounds, which StableHLO skips, are an error of ScatterND.
func (c *converter) stablehloScatter(o *operator) error {
	opt, err := options2[fb.StablehloScatterOptions](o, fb.BuiltinOptions2StablehloScatterOptions)
	if err != nil {
		return err
	}
	if len(o.inputs) != 3 || len(o.outputs) != 1 {
		return fmt.Errorf("%d inputs and %d outputs: only one operand is supported", len(o.inputs), len(o.outputs))
	}
	red, err := c.scatterReduction(int(opt.UpdateComputationSubgraphIndex()))
	if err != nil {
		return err
	}
	dims, err := c.staticInputs(o, 3)
	if err != nil {
		return err
	}
	od, id, ud := dims[0], dims[1], dims[2]
	windowDims := optInts(opt.UpdateWindowDimsLength(), opt.UpdateWindowDims)
	inserted := optInts(opt.InsertedWindowDimsLength(), opt.InsertedWindowDims)
	toOperand := optInts(opt.ScatterDimsToOperandDimsLength(), opt.ScatterDimsToOperandDims)
	ivd := int(opt.IndexVectorDim())
	r := len(od)
	if ivd < 0 || ivd > len(id) || len(windowDims)+len(inserted) != r {
		return fmt.Errorf("index_vector_dim %d, update window dims %v and inserted dims %v do not fit operand %v and indices %v", ivd, windowDims, inserted, od, id)
	}
	k := int64(1)
	if ivd < len(id) {
		k = id[ivd]
	}
	if int64(len(toOperand)) != k {
		return fmt.Errorf("scatter_dims_to_operand_dims %v for index vectors of %d", toOperand, k)
	}
	isWindow := map[int64]bool{}
	for _, d := range windowDims {
		if d < 0 || int(d) >= len(ud) {
			return fmt.Errorf("update window dim %d out of range", d)
		}
		isWindow[d] = true
	}
	isInserted := make([]bool, r)
	for _, d := range inserted {
		if d < 0 || int(d) >= r {
			return fmt.Errorf("inserted dim %d out of range", d)
		}
		isInserted[d] = true
	}
	// The window's size along each operand dim: 1 where inserted, else the
	// next update window dim's size.
	sizes := make([]int64, r)
	w := 0
	for d := range sizes {
		sizes[d] = 1
		if !isInserted[d] {
			sizes[d] = ud[windowDims[w]]
			w++
		}
	}
	pick := make([]int64, r)
	for d := range pick {
		pick[d] = k
	}
	for j, d := range toOperand {
		if d < 0 || int(d) >= r {
			return fmt.Errorf("scatter_dims_to_operand_dims %v out of range", toOperand)
		}
		pick[d] = int64(j)
	}
	var batch, perm []int64
	for i, d := range ud {
		if !isWindow[int64(i)] {
			batch, perm = append(batch, d), append(perm, int64(i))
		}
	}
	perm = append(perm, windowDims...)
	grid, err := indexGrid(sizes)
	if err != nil {
		return err
	}
	idx, err := c.int64Of(o.inputs[1])
	if err != nil {
		return err
	}
	return c.nativeOp(o, 3, func(in []string, y string) error {
		full := c.hloIndices(idx, id, ivd, batch, pick, nil, sizes, grid, y)
		upd := c.b.Op("Transpose", y+"_updates_moved", []string{in[2]}, canonical.IntsAttr("perm", perm...))
		upd = c.b.Op("Reshape", y+"_updates", []string{upd, c.constI64(y+"_updates_shape", append(append([]int64{}, batch...), sizes...))})
		c.node("ScatterND", []string{in[0], full, upd}, []string{y}, canonical.StringAttr("reduction", red))
		return nil
	})
}

// scatterReduction is the ScatterND reduction of a StableHLO scatter's
// update computation: one elementwise op of its two inputs, or none (the
// update replaces the value).
func (c *converter) scatterReduction(body int) (string, error) {
	if body <= 0 || body >= len(c.m.subgraphs) {
		return "", fmt.Errorf("update computation subgraph %d out of range", body)
	}
	g := c.m.subgraphs[body]
	if len(g.inputs) != 2 || len(g.outputs) != 1 {
		return "", fmt.Errorf("update computation subgraph %d has %d inputs and %d outputs, want 2 and 1", body, len(g.inputs), len(g.outputs))
	}
	if len(g.ops) == 0 && g.outputs[0] == g.inputs[1] {
		return "none", nil
	}
	if len(g.ops) == 1 {
		switch g.ops[0].code {
		case fb.BuiltinOperatorSTABLEHLO_ADD:
			return "add", nil
		case fb.BuiltinOperatorSTABLEHLO_MULTIPLY:
			return "mul", nil
		case fb.BuiltinOperatorSTABLEHLO_MAXIMUM:
			return "max", nil
		case fb.BuiltinOperatorSTABLEHLO_MINIMUM:
			return "min", nil
		}
	}
	return "", fmt.Errorf("update computation subgraph %d is not one add, multiply, maximum or minimum, nor a replacement", body)
}

// indexGrid is every index of a box of the given sizes, in row-major
// order, each as len(sizes) values (bounded by maxIndexGrid).
func indexGrid(sizes []int64) ([]int64, error) {
	r := len(sizes)
	n := numel(sizes)
	if n*int64(max(r, 1)) > maxIndexGrid {
		return nil, fmt.Errorf("a box of %v elements is too large (index grid limit %d)", sizes, maxIndexGrid)
	}
	grid := make([]int64, 0, n*int64(r))
	at := make([]int64, r)
	for i := int64(0); i < n; i++ {
		grid = append(grid, at...)
		for d := r - 1; d >= 0; d-- {
			if at[d]++; at[d] < sizes[d] {
				break
			}
			at[d] = 0
		}
	}
	return grid, nil
}

// hloIndices is the operand index of every element of the boxes a
// StableHLO gather or scatter reads or writes: idx (indices of shape id,
// the index vector along ivd) mapped to operand dims by pick (k: none),
// clamped to room when given, plus the box grid of sizes; the result is
// [batch..., sizes..., rank].
func (c *converter) hloIndices(idx string, id []int64, ivd int, batch, pick, room, sizes, grid []int64, y string) string {
	r := len(sizes)
	if ivd == len(id) {
		idx = c.b.Op("Unsqueeze", y+"_index_vector", []string{idx, c.constI64(y+"_last", []int64{int64(ivd)})})
	} else if ivd != len(id)-1 {
		perm := []int64{}
		for i := range id {
			if i != ivd {
				perm = append(perm, int64(i))
			}
		}
		idx = c.b.Op("Transpose", y+"_index_last", []string{idx}, canonical.IntsAttr("perm", append(perm, int64(ivd))...))
	}
	zshape := append(append([]int64{}, batch...), 1)
	zeros := c.constI64Dims(c.unique(y+"_zero_col"), zshape, make([]int64, numel(zshape)))
	ext := c.b.Op("Concat", y+"_index_ext", []string{idx, zeros}, canonical.IntAttr("axis", -1))
	st := c.b.Op("Gather", y+"_starts", []string{ext, c.constI64(y+"_pick", pick)}, canonical.IntAttr("axis", -1))
	if room != nil {
		st = c.b.Op("Max", y+"_starts_clamped", []string{c.b.Op("Min", y+"_starts_hi", []string{st, c.constI64(y+"_room", room)}), c.constI64(y+"_zeros", make([]int64, r))})
	}
	bshape := append([]int64{}, batch...)
	for range r {
		bshape = append(bshape, 1)
	}
	st = c.b.Op("Reshape", y+"_starts_b", []string{st, c.constI64(y+"_starts_shape", append(bshape, int64(r)))})
	return c.b.Op("Add", y+"_indices", []string{st, c.constI64Dims(c.unique(y+"_grid"), append(append([]int64{}, sizes...), int64(r)), grid)})
}

// optInts reads an int64 vector of an options table.
func optInts(n int, at func(int) int64) []int64 {
	v := make([]int64, n)
	for i := range v {
		v[i] = at(i)
	}
	return v
}
