package executor

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
)

// Sequences and optionals, on the host.

func registerSequence(r registry) {
	r.host(func(c *lctx) error {
		var seq []*htensor
		dt := canonical.Undefined
		for i := 0; i < c.NIn(); i++ {
			h, err := c.H(i)
			if err != nil {
				return err
			}
			seq = append(seq, h)
			dt = h.dt
		}
		c.OutSeq(0, seq, dt)
		return nil
	}, "SequenceConstruct")
	r.host(func(c *lctx) error {
		c.OutSeq(0, []*htensor{}, canonical.DataType(c.AInt("dtype", int64(canonical.Float))))
		return nil
	}, "SequenceEmpty")
	r.host(func(c *lctx) error {
		seq, err := c.Seq(0)
		if err != nil {
			return err
		}
		c.OutH(0, scalarI64(int64(len(seq))))
		return nil
	}, "SequenceLength")
	r.host(func(c *lctx) error {
		seq, err := c.Seq(0)
		if err != nil {
			return err
		}
		pos, err := seqPos(c, 1, len(seq), false)
		if err != nil {
			return err
		}
		c.OutH(0, seq[pos])
		return nil
	}, "SequenceAt")
	r.host(func(c *lctx) error {
		seq, err := c.Seq(0)
		if err != nil {
			return err
		}
		h, err := c.H(1)
		if err != nil {
			return err
		}
		pos := len(seq)
		if c.Has(2) {
			if pos, err = seqPos(c, 2, len(seq), true); err != nil {
				return err
			}
		}
		out := append(append(append([]*htensor{}, seq[:pos]...), h), seq[pos:]...)
		c.OutSeq(0, out, h.dt)
		return nil
	}, "SequenceInsert")
	r.host(func(c *lctx) error {
		seq, err := c.Seq(0)
		if err != nil {
			return err
		}
		pos := len(seq) - 1
		if c.Has(1) {
			if pos, err = seqPos(c, 1, len(seq), false); err != nil {
				return err
			}
		}
		out := append(append([]*htensor{}, seq[:pos]...), seq[pos+1:]...)
		c.OutSeq(0, out, c.ins[0].dt)
		return nil
	}, "SequenceErase")
	r.host(hostConcatFromSequence, "ConcatFromSequence")
	r.host(hostSplitToSequence, "SplitToSequence")
	r.host(hostSequenceMap, "SequenceMap")
	r.impl("", "SequenceMap").control = true
	r.host(func(c *lctx) error {
		if !c.Has(0) {
			dt := canonical.Undefined
			if a := c.n.Attr("type"); a != nil && a.TP != nil {
				if tt := a.TP.GetTensorType(); tt != nil {
					dt = canonical.DataType(tt.GetElemType())
				} else if st := a.TP.GetSequenceType(); st != nil {
					dt = canonical.DataType(st.GetElemType().GetTensorType().GetElemType())
				}
			}
			c.OutNone(0, dt)
			return nil
		}
		c.OutSlot(0, c.ins[0])
		return nil
	}, "Optional")
	r.host(func(c *lctx) error {
		has := c.Has(0) && c.ins[0].kind != kindNone
		c.OutH(0, boolScalar(has))
		return nil
	}, "OptionalHasElement")
	r.host(func(c *lctx) error {
		if !c.Has(0) || c.ins[0].kind == kindNone {
			return fmt.Errorf("optional has no element")
		}
		c.OutSlot(0, c.ins[0])
		return nil
	}, "OptionalGetElement")
	for _, op := range []string{"Optional", "OptionalHasElement", "OptionalGetElement"} {
		r.impl("", op).preferHost = true
	}
}

func seqPos(c *lctx, i, n int, insert bool) (int, error) {
	v, err := c.Ints(i)
	if err != nil {
		return 0, err
	}
	p := v[0]
	if p < 0 {
		p += int64(n)
	}
	hi := int64(n - 1)
	if insert {
		hi = int64(n)
	}
	if p < 0 || p > hi {
		return 0, fmt.Errorf("sequence position %d out of range (length %d)", v[0], n)
	}
	return int(p), nil
}

func hostConcatFromSequence(c *lctx) error {
	seq, err := c.Seq(0)
	if err != nil {
		return err
	}
	if len(seq) == 0 {
		return fmt.Errorf("ConcatFromSequence of an empty sequence")
	}
	newAxis := c.AInt("new_axis", 0) == 1
	r := len(seq[0].shape)
	if newAxis {
		r++
	}
	ax, err := normAxis(c.AInt("axis", 0), r)
	if err != nil {
		return err
	}
	parts := seq
	if newAxis {
		parts = make([]*htensor, len(seq))
		for i, h := range seq {
			sh := append(append(append([]int{}, h.shape[:ax]...), 1), h.shape[ax:]...)
			parts[i] = &htensor{dt: h.dt, shape: sh, data: h.data}
		}
	}
	return concatInto(c, parts, ax)
}

// concatInto concatenates host tensors along ax into output 0.
func concatInto(c *lctx, hs []*htensor, ax int) error {
	out := append([]int{}, hs[0].shape...)
	out[ax] = 0
	for _, h := range hs {
		out[ax] += h.shape[ax]
	}
	outer := numel(out[:ax])
	var idx []int
	parts := make([]any, len(hs))
	offs := make([]int, len(hs))
	o := 0
	for k, h := range hs {
		offs[k], parts[k] = o, h.data
		o += h.size()
	}
	for i := 0; i < outer; i++ {
		for k, h := range hs {
			chunk := numel(h.shape[ax:])
			for j := 0; j < chunk; j++ {
				idx = append(idx, offs[k]+i*chunk+j)
			}
		}
	}
	all := &htensor{dt: hs[0].dt, data: concatAny(parts)}
	c.OutH(0, hTake(all, out, idx))
	return nil
}

func hostSplitToSequence(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	ax, err := normAxis(c.AInt("axis", 0), len(h.shape))
	if err != nil {
		return err
	}
	keep := c.AInt("keepdims", 1) == 1
	d := h.shape[ax]
	var sizes []int
	if c.Has(1) {
		sp, err := c.H(1)
		if err != nil {
			return err
		}
		v := sp.i64()
		if len(sp.shape) == 0 {
			n := int(v[0])
			if n <= 0 {
				return fmt.Errorf("split %d is not positive", n)
			}
			for s := 0; s < d; s += n {
				sz := n
				if s+sz > d {
					sz = d - s
				}
				sizes = append(sizes, sz)
			}
		} else {
			sum := int64(0)
			for _, x := range v {
				if x < 0 {
					return fmt.Errorf("split %v has a negative size", v)
				}
				sum += x
				sizes = append(sizes, int(x))
			}
			if sum != int64(d) {
				return fmt.Errorf("split %v sums to %d, the axis holds %d", v, sum, d)
			}
		}
		keep = true
	} else {
		for i := 0; i < d; i++ {
			sizes = append(sizes, 1)
		}
	}
	var seq []*htensor
	start := 0
	for _, s := range sizes {
		p := sliceH(h, ax, start, start+s)
		if !keep {
			sh := append(append([]int{}, h.shape[:ax]...), h.shape[ax+1:]...)
			p = &htensor{dt: p.dt, shape: sh, data: p.data}
		}
		seq = append(seq, p)
		start += s
	}
	c.OutSeq(0, seq, h.dt)
	return nil
}

func hostSequenceMap(c *lctx) error {
	body := c.n.Attr("body")
	if body == nil || body.G == nil {
		return fmt.Errorf("SequenceMap has no body")
	}
	seq, err := c.Seq(0)
	if err != nil {
		return err
	}
	nOut := c.NOut()
	outs := make([][]*htensor, nOut)
	outDT := make([]canonical.DataType, nOut)
	for k := range seq {
		var ins []*slot
		for i := 0; i < c.NIn(); i++ {
			s := c.ins[i]
			if s.kind == kindSeq {
				if k >= len(s.seq) {
					return fmt.Errorf("SequenceMap: sequences of different lengths")
				}
				ins = append(ins, &slot{h: s.seq[k], dt: s.seq[k].dt})
			} else {
				ins = append(ins, s)
			}
		}
		res, err := c.runSub(body.G, ins)
		if err != nil {
			return err
		}
		for j := 0; j < nOut; j++ {
			if res[j].h == nil {
				return fmt.Errorf("SequenceMap body output %d is not a tensor", j)
			}
			outs[j] = append(outs[j], res[j].h)
			outDT[j] = res[j].h.dt
		}
	}
	for j := 0; j < nOut; j++ {
		c.OutSeq(j, outs[j], outDT[j])
	}
	return nil
}
