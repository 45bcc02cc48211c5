package executor

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
)

// Control flow: If, Loop, Scan run on the host and run their bodies with
// the same machinery (each body has its own cached plans).

func registerControl(r registry) {
	r.host(hostIf, "If")
	r.host(hostLoop, "Loop")
	r.host(hostScan, "Scan")
	for _, op := range []string{"If", "Loop", "Scan"} {
		r.impl("", op).control = true
	}
}

func hostIf(c *lctx) error {
	ch, err := c.H(0)
	if err != nil {
		return err
	}
	if ch.size() != 1 {
		return fmt.Errorf("If condition has %d elements", ch.size())
	}
	name := "else_branch"
	if ch.f64()[0] != 0 {
		name = "then_branch"
	}
	a := c.n.Attr(name)
	if a == nil || a.G == nil {
		return fmt.Errorf("If has no %s", name)
	}
	outs, err := c.runSub(a.G, nil)
	if err != nil {
		return err
	}
	for i, s := range outs {
		c.OutSlot(i, s)
	}
	return nil
}

// stackSlots stacks per-iteration tensors along a new axis.
func stackH(parts []*htensor, axis int, dt canonical.DataType, elemShape []int) (*htensor, error) {
	if len(parts) == 0 {
		sh := append([]int{0}, elemShape...)
		return newH(dt, sh), nil
	}
	es := parts[0].shape
	data := make([]any, len(parts))
	for i, p := range parts {
		if !shapeEq(p.shape, es) {
			return nil, fmt.Errorf("scan outputs change shape: %v then %v", es, p.shape)
		}
		data[i] = p.data
	}
	st := &htensor{dt: parts[0].dt, shape: append([]int{len(parts)}, es...), data: concatAny(data)}
	if axis == 0 {
		return st, nil
	}
	r := len(es) + 1
	perm := make([]int, 0, r)
	for i := 1; i <= axis; i++ {
		perm = append(perm, i)
	}
	perm = append(perm, 0)
	for i := axis + 1; i < r; i++ {
		perm = append(perm, i)
	}
	out, idx := transposeIdx(st.shape, perm)
	return hTake(st, out, idx), nil
}

func hostLoop(c *lctx) error {
	body := c.n.Attr("body")
	if body == nil || body.G == nil {
		return fmt.Errorf("Loop has no body")
	}
	g := body.G
	maxTrip := int64(-1)
	if c.Has(0) {
		m, err := c.Ints(0)
		if err != nil {
			return err
		}
		maxTrip = m[0]
	}
	cond := true
	if c.Has(1) {
		ch, err := c.H(1)
		if err != nil {
			return err
		}
		cond = ch.f64()[0] != 0
	}
	nCarried := c.NIn() - 2
	carried := make([]*slot, nCarried)
	for i := range carried {
		carried[i] = c.ins[i+2]
	}
	nScan := len(g.Outputs) - 1 - nCarried
	scans := make([][]*htensor, nScan)
	scanDT := make([]canonical.DataType, nScan)
	scanShape := make([][]int, nScan)
	for i := 0; i < nScan; i++ {
		if v := g.Outputs[1+nCarried+i]; v.Type != nil {
			if dt, dims, _, ok := canonical.TensorTypeOf(v.Type); ok {
				scanDT[i], scanShape[i] = dt, emptyScanShape(dims)
			}
		}
	}
	for it := int64(0); (maxTrip < 0 || it < maxTrip) && cond; it++ {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		ins := []*slot{{h: scalarI64(it), dt: canonical.Int64}, {h: boolScalar(cond), dt: canonical.Bool}}
		ins = append(ins, carried...)
		outs, err := c.runSub(g, ins)
		if err != nil {
			return fmt.Errorf("iteration %d: %w", it, err)
		}
		if outs[0].h == nil {
			return fmt.Errorf("loop condition is not a tensor")
		}
		cond = outs[0].h.f64()[0] != 0
		copy(carried, outs[1:1+nCarried])
		for i := 0; i < nScan; i++ {
			s := outs[1+nCarried+i]
			if s.h == nil {
				return fmt.Errorf("scan output %d is not a tensor", i)
			}
			scans[i] = append(scans[i], s.h)
			scanDT[i] = s.h.dt
		}
	}
	for i, s := range carried {
		c.OutSlot(i, s)
	}
	for i := 0; i < nScan; i++ {
		st, err := stackH(scans[i], 0, scanDT[i], scanShape[i])
		if err != nil {
			return err
		}
		c.OutH(nCarried+i, st)
	}
	return nil
}

// emptyScanShape is the item shape of a scan output after no iteration,
// as ONNX Runtime makes it: the body output's declared shape, 0 for a
// dim without a value (no shape: the output is [0]).
func emptyScanShape(dims []canonical.Dim) []int {
	sh := make([]int, len(dims))
	for k, d := range dims {
		if d.Known && d.Value > 0 {
			sh[k] = int(d.Value)
		}
	}
	return sh
}

func boolScalar(b bool) *htensor {
	h := newH(canonical.Bool, nil)
	h.data.([]bool)[0] = b
	return h
}

func hostScan(c *lctx) error {
	body := c.n.Attr("body")
	if body == nil || body.G == nil {
		return fmt.Errorf("Scan has no body")
	}
	g := body.G
	nScanIn := int(c.AInt("num_scan_inputs", 0))
	if c.ver < 9 {
		return scan8(c, g, nScanIn)
	}
	nState := c.NIn() - nScanIn
	nScanOut := len(g.Outputs) - nState
	inAxes := c.AInts("scan_input_axes", nil)
	inDirs := c.AInts("scan_input_directions", nil)
	outAxes := c.AInts("scan_output_axes", nil)
	outDirs := c.AInts("scan_output_directions", nil)
	state := make([]*slot, nState)
	copy(state, c.ins[:nState])
	xs := make([]*htensor, nScanIn)
	axes := make([]int, nScanIn)
	T := -1
	for i := 0; i < nScanIn; i++ {
		h, err := c.H(nState + i)
		if err != nil {
			return err
		}
		ax := int64(0)
		if inAxes != nil {
			ax = inAxes[i]
		}
		a, err := normAxis(ax, len(h.shape))
		if err != nil {
			return err
		}
		xs[i], axes[i] = h, a
		if T >= 0 && h.shape[a] != T {
			return fmt.Errorf("scan inputs have different lengths")
		}
		T = h.shape[a]
	}
	if T < 0 {
		T = 0
	}
	outs := make([][]*htensor, nScanOut)
	for t := 0; t < T; t++ {
		ins := append([]*slot{}, state...)
		for i, h := range xs {
			k := t
			if inDirs != nil && inDirs[i] == 1 {
				k = T - 1 - t
			}
			sl := sliceH(h, axes[i], k, k+1)
			sh := append(append([]int{}, h.shape[:axes[i]]...), h.shape[axes[i]+1:]...)
			ins = append(ins, &slot{h: &htensor{dt: sl.dt, shape: sh, data: sl.data}, dt: sl.dt})
		}
		res, err := c.runSub(g, ins)
		if err != nil {
			return fmt.Errorf("iteration %d: %w", t, err)
		}
		copy(state, res[:nState])
		for i := 0; i < nScanOut; i++ {
			if res[nState+i].h == nil {
				return fmt.Errorf("scan output %d is not a tensor", i)
			}
			outs[i] = append(outs[i], res[nState+i].h)
		}
	}
	for i, s := range state {
		c.OutSlot(i, s)
	}
	for i := 0; i < nScanOut; i++ {
		parts := outs[i]
		if outDirs != nil && outDirs[i] == 1 {
			rev := make([]*htensor, len(parts))
			for j := range parts {
				rev[j] = parts[len(parts)-1-j]
			}
			parts = rev
		}
		ax := 0
		if outAxes != nil && len(parts) > 0 {
			a, err := normAxis(outAxes[i], len(parts[0].shape)+1)
			if err != nil {
				return err
			}
			ax = a
		}
		st, err := stackH(parts, ax, canonical.Float, nil)
		if err != nil {
			return err
		}
		c.OutH(nState+i, st)
	}
	return nil
}

// scan8 is Scan-8: inputs carry a batch axis and an optional
// sequence_lens first input.
func scan8(c *lctx, g *canonical.Graph, nScanIn int) error {
	if c.Has(0) {
		return fmt.Errorf("Scan-8 with sequence_lens is not supported")
	}
	nState := c.NIn() - 1 - nScanIn
	nScanOut := len(g.Outputs) - nState
	dirs := c.AInts("directions", nil)
	var B int
	for i := 1; i < c.NIn(); i++ {
		B = c.Shape(i)[0]
		break
	}
	stateOut := make([][]*htensor, nState)
	scanOut := make([][]*htensor, nScanOut)
	for b := 0; b < B; b++ {
		state := make([]*slot, nState)
		for i := 0; i < nState; i++ {
			h, err := c.H(1 + i)
			if err != nil {
				return err
			}
			sl := sliceH(h, 0, b, b+1)
			state[i] = &slot{h: &htensor{dt: sl.dt, shape: h.shape[1:], data: sl.data}, dt: sl.dt}
		}
		var xs []*htensor
		for i := 0; i < nScanIn; i++ {
			h, err := c.H(1 + nState + i)
			if err != nil {
				return err
			}
			sl := sliceH(h, 0, b, b+1)
			xs = append(xs, &htensor{dt: sl.dt, shape: h.shape[1:], data: sl.data})
		}
		T := 0
		if len(xs) > 0 {
			T = xs[0].shape[0]
		}
		var outs [][]*htensor = make([][]*htensor, nScanOut)
		for t := 0; t < T; t++ {
			ins := append([]*slot{}, state...)
			for i, h := range xs {
				k := t
				if dirs != nil && dirs[i] == 1 {
					k = T - 1 - t
				}
				sl := sliceH(h, 0, k, k+1)
				ins = append(ins, &slot{h: &htensor{dt: sl.dt, shape: h.shape[1:], data: sl.data}, dt: sl.dt})
			}
			res, err := c.runSub(g, ins)
			if err != nil {
				return err
			}
			copy(state, res[:nState])
			for i := 0; i < nScanOut; i++ {
				outs[i] = append(outs[i], res[nState+i].h)
			}
		}
		for i := range state {
			stateOut[i] = append(stateOut[i], state[i].h)
		}
		for i := range outs {
			st, err := stackH(outs[i], 0, canonical.Float, nil)
			if err != nil {
				return err
			}
			scanOut[i] = append(scanOut[i], st)
		}
	}
	for i := range stateOut {
		st, err := stackH(stateOut[i], 0, canonical.Float, nil)
		if err != nil {
			return err
		}
		c.OutH(i, st)
	}
	for i := range scanOut {
		st, err := stackH(scanOut[i], 0, canonical.Float, nil)
		if err != nil {
			return err
		}
		c.OutH(nState+i, st)
	}
	return nil
}

// runFunction runs a model-local function: its body is run as a subgraph
// whose inputs are the node's inputs. Attribute references inside the
// body are not resolved.
func runFunction(c *lctx, f *canonical.Function) error {
	ins := make([]*slot, len(f.Body.Inputs))
	for i := range ins {
		if c.Has(i) {
			ins[i] = c.ins[i]
		} else {
			ins[i] = &slot{kind: kindNone}
		}
	}
	outs, err := c.runSub(f.Body, ins)
	if err != nil {
		return fmt.Errorf("function %s: %w", f.Name, err)
	}
	for i, s := range outs {
		c.OutSlot(i, s)
	}
	return nil
}
