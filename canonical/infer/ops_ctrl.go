package infer

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

func registerCtrl(reg func(handler, ...string)) {
	reg(ifOp, "If")
	reg(loop, "Loop")
	reg(scan, "Scan")
	reg(sequenceEmpty, "SequenceEmpty")
	reg(sequenceConstruct, "SequenceConstruct")
	reg(sequenceInsert, "SequenceInsert")
	reg(sequenceAt, "SequenceAt")
	reg(sequenceErase, "SequenceErase")
	reg(sequenceLength, "SequenceLength")
	reg(splitToSequence, "SplitToSequence")
	reg(concatFromSequence, "ConcatFromSequence")
	reg(sequenceMap, "SequenceMap")
	reg(optional, "Optional")
	reg(func(c *nctx) { c.set(0, canonical.Bool, ranked([]dim{})) }, "OptionalHasElement")
	reg(optionalGet, "OptionalGetElement")
}

// unify generalises two types into one that covers both: dims that differ
// become unknown, ranks that differ make the shape unknown.
func unify(a, b *onnxpb.TypeProto) *onnxpb.TypeProto {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	if a.GetTensorType() != nil && b.GetTensorType() != nil {
		adt, as, _ := tensorOf(a)
		bdt, bs, _ := tensorOf(b)
		dt := adt
		if dt == 0 {
			dt = bdt
		}
		if !as.ranked || !bs.ranked || as.rank() != bs.rank() {
			return tensorTP(dt, unranked)
		}
		out := make([]dim, as.rank())
		for i := range out {
			x, y := as.dims[i], bs.dims[i]
			if x.Known == y.Known && x.Value == y.Value && x.Param == y.Param {
				out[i] = x
			}
		}
		return tensorTP(dt, ranked(out))
	}
	if sa, sb := a.GetSequenceType(), b.GetSequenceType(); sa != nil && sb != nil {
		return seqTP(unify(sa.ElemType, sb.ElemType))
	}
	if oa, ob := a.GetOptionalType(), b.GetOptionalType(); oa != nil && ob != nil {
		return optTP(unify(oa.ElemType, ob.ElemType))
	}
	return a
}

func (c *nctx) subgraph(name string) *canonical.Graph {
	if a := c.n.Attr(name); a != nil {
		return a.G
	}
	return nil
}

func (c *nctx) inferBody(g *canonical.Graph, name string) bool {
	if g == nil {
		return false
	}
	p := fmt.Sprintf("%s/%s.%s", c.path, c.n.OpType, name)
	if c.n.Name != "" {
		p = fmt.Sprintf("%s/%q.%s", c.path, c.n.Name, name)
	}
	if err := c.inf.graph(g, p, c.opsetOf); err != nil {
		c.err = err
		return false
	}
	return true
}

// setBodyInput types a subgraph input (merging with a declared type).
func (c *nctx) setBodyInput(v *canonical.Value, t *onnxpb.TypeProto) {
	if v == nil || t == nil {
		return
	}
	if v.Type == nil {
		v.Type = t
		return
	}
	if m, conflict := mergeType(v.Type, t); conflict == "" {
		v.Type = m
	}
}

func ifOp(c *nctx) {
	th, el := c.subgraph("then_branch"), c.subgraph("else_branch")
	if !c.inferBody(th, "then_branch") || !c.inferBody(el, "else_branch") {
		return
	}
	// A constant condition selects one branch.
	if v := c.cv(0); v != nil {
		if k, ok := v.allKnown(); ok && len(k) == 1 {
			g := el
			if k[0] != 0 {
				g = th
			}
			for i, o := range g.Outputs {
				if o != nil {
					c.setType(i, o.Type)
					c.setConst(i, c.inf.consts[o])
				}
			}
			return
		}
	}
	for i := range c.out {
		var a, b *onnxpb.TypeProto
		if i < len(th.Outputs) && th.Outputs[i] != nil {
			a = th.Outputs[i].Type
		}
		if i < len(el.Outputs) && el.Outputs[i] != nil {
			b = el.Outputs[i].Type
		}
		if a == nil || b == nil {
			continue
		}
		c.setType(i, unify(a, b))
	}
}

func loop(c *nctx) {
	body := c.subgraph("body")
	if body == nil {
		return
	}
	nCarried := len(c.n.Inputs) - 2
	if nCarried < 0 {
		nCarried = 0
	}
	if len(body.Inputs) > 0 {
		c.setBodyInput(body.Inputs[0], tensorTP(canonical.Int64, ranked([]dim{})))
	}
	if len(body.Inputs) > 1 {
		c.setBodyInput(body.Inputs[1], tensorTP(canonical.Bool, ranked([]dim{})))
	}
	saved := saveTypes(body)
	for i := 0; i < nCarried && 2+i < len(body.Inputs); i++ {
		// The first iteration sees the initial values.
		c.setBodyInput(body.Inputs[2+i], c.inType(2+i))
	}
	if !c.inferBody(body, "body") {
		return
	}
	// A loop-carried value whose type changes between iterations (a
	// growing tensor): infer the body again from the generalised types,
	// so that its values do not claim the first iteration's shapes.
	var general []*onnxpb.TypeProto
	changed := false
	for i := 0; i < nCarried && 2+i < len(body.Inputs) && 1+i < len(body.Outputs); i++ {
		it, bt := c.inType(2+i), body.Outputs[1+i].Type
		g := it
		if it != nil && bt != nil && sameKind(it, bt) {
			g = unify(it, bt)
		}
		if typeString(g) != typeString(it) {
			changed = true
		}
		general = append(general, g)
	}
	if changed {
		restoreTypes(saved)
		for k := range c.inf.consts {
			if v := k.Graph(); v != nil && within(v, body) {
				delete(c.inf.consts, k)
			}
		}
		for i, g := range general {
			c.setBodyInput(body.Inputs[2+i], g)
		}
		if !c.inferBody(body, "body") {
			return
		}
	}
	for i := range c.out {
		bi := 1 + i
		if bi >= len(body.Outputs) || body.Outputs[bi] == nil {
			continue
		}
		bt := body.Outputs[bi].Type
		if i < nCarried {
			it := c.inType(2 + i)
			if sameKind(it, bt) {
				c.setType(i, unify(it, bt))
			} else {
				c.setType(i, bt)
			}
			continue
		}
		// Scan outputs: body output stacked along a new first axis.
		if dt, s, ok := tensorOf(bt); ok {
			if s.ranked {
				trip := dim{}
				if m := c.cv(0); m != nil && c.loopRunsFull(body) {
					if k, ok := m.allKnown(); ok && len(k) == 1 {
						trip = kd(k[0])
					}
				}
				c.set(i, dt, ranked(append([]dim{trip}, s.dims...)))
			} else {
				c.set(i, dt, unranked)
			}
		} else if bt != nil {
			c.setType(i, bt)
		}
	}
}

func scan(c *nctx) {
	body := c.subgraph("body")
	if body == nil {
		return
	}
	nScanIn := int(c.attrI("num_scan_inputs", 0))
	first := 0
	batch := false
	if c.ver < 9 {
		first, batch = 1, true
	}
	ins := c.n.Inputs[first:]
	nState := len(ins) - nScanIn
	if nScanIn < 0 || nState < 0 {
		c.fail("num_scan_inputs %d exceeds the inputs", nScanIn)
		return
	}
	inAxes := c.attrInts("scan_input_axes")
	outAxes := c.attrInts("scan_output_axes")
	seqLen := dim{}
	for i, v := range ins {
		if i >= len(body.Inputs) || v == nil {
			continue
		}
		dt, s, ok := tensorOf(v.Type)
		if !ok {
			continue
		}
		if !s.ranked {
			c.setBodyInput(body.Inputs[i], tensorTP(dt, unranked))
			continue
		}
		d := copyDims(s.dims)
		if batch && len(d) > 0 {
			d = d[1:]
		}
		if i >= nState {
			ax := 0
			if k := i - nState; k < len(inAxes) {
				ax = normAxis(inAxes[k], len(d))
			}
			if validAxis(ax, len(d)) {
				if !seqLen.Known {
					seqLen = d[ax]
				}
				d = append(d[:ax], d[ax+1:]...)
			}
		}
		c.setBodyInput(body.Inputs[i], tensorTP(dt, ranked(d)))
	}
	saved := saveTypes(body)
	if !c.inferBody(body, "body") {
		return
	}
	// States whose shape changes between iterations: infer again from
	// the generalised types.
	changed := false
	general := make([]*onnxpb.TypeProto, nState)
	for i := 0; i < nState && i < len(body.Inputs) && i < len(body.Outputs); i++ {
		it, bt := body.Inputs[i].Type, body.Outputs[i].Type
		general[i] = it
		if it != nil && bt != nil && sameKind(it, bt) {
			general[i] = unify(it, bt)
		}
		if typeString(general[i]) != typeString(it) {
			changed = true
		}
	}
	if changed {
		restoreTypes(saved)
		for i, g := range general {
			if g != nil {
				body.Inputs[i].Type = g
			}
		}
		if !c.inferBody(body, "body") {
			return
		}
	}
	var bdim dim
	if batch && len(ins) > 0 {
		if s := c.shp(first); s.ranked && s.rank() > 0 {
			bdim = s.dims[0]
		}
	}
	for i := range c.out {
		if i >= len(body.Outputs) || body.Outputs[i] == nil {
			continue
		}
		dt, s, ok := tensorOf(body.Outputs[i].Type)
		if !ok {
			continue
		}
		if !s.ranked {
			c.set(i, dt, unranked)
			continue
		}
		d := copyDims(s.dims)
		if i >= nState {
			ax := 0
			if k := i - nState; k < len(outAxes) {
				ax = normAxis(outAxes[k], len(d)+1)
			}
			if !validAxis(ax, len(d)+1) {
				continue
			}
			d = append(d[:ax], append([]dim{seqLen}, d[ax:]...)...)
		}
		if batch {
			d = append([]dim{bdim}, d...)
		}
		c.set(i, dt, ranked(d))
	}
}

func sequenceEmpty(c *nctx) {
	dt := canonical.DataType(c.attrI("dtype", int64(canonical.Float)))
	c.setType(0, seqTP(tensorTP(dt, unranked)))
	c.setSeqElems(0, nil)
}

func sequenceConstruct(c *nctx) {
	var e *onnxpb.TypeProto
	var elems []*onnxpb.TypeProto
	for i := range c.n.Inputs {
		e = unify(e, c.inType(i))
		elems = append(elems, c.inType(i))
	}
	if e != nil {
		c.setType(0, seqTP(e))
		c.setSeqElems(0, elems)
	}
}

// seqPos reads a constant position input, normalised for a sequence of n
// elements (n+1 positions when inserting).
func (c *nctx) seqPos(i, n int) (int, bool) {
	if !c.has(i) {
		return n, true
	}
	k, ok := c.ints(i)
	if !ok || len(k) != 1 {
		return 0, false
	}
	p := int(k[0])
	if p < 0 {
		p += n
	}
	return p, p >= 0 && p <= n
}

func sequenceErase(c *nctx) {
	c.setType(0, c.inType(0))
	if elems, ok := c.seqElems(0); ok && len(elems) > 0 {
		p, ok := c.seqPos(1, len(elems)-1)
		if c.has(1) {
			p, ok = c.seqPos(1, len(elems))
		}
		if ok && p < len(elems) {
			out := append(append([]*onnxpb.TypeProto{}, elems[:p]...), elems[p+1:]...)
			c.setSeqElems(0, out)
		}
	}
}

func sequenceInsert(c *nctx) {
	st := c.inType(0).GetSequenceType()
	if st == nil {
		return
	}
	e := st.ElemType
	if dt, _, ok := tensorOf(e); ok && dt == 0 || e == nil {
		e = c.inType(1)
	} else {
		e = unify(e, c.inType(1))
	}
	c.setType(0, seqTP(e))
	if elems, ok := c.seqElems(0); ok {
		if p, ok := c.seqPos(2, len(elems)); ok {
			out := append([]*onnxpb.TypeProto{}, elems[:p]...)
			out = append(out, c.inType(1))
			c.setSeqElems(0, append(out, elems[p:]...))
		}
	}
}

func sequenceAt(c *nctx) {
	if elems, ok := c.seqElems(0); ok {
		if p, ok := c.seqPos(1, len(elems)); ok && p < len(elems) && elems[p] != nil {
			c.setType(0, elems[p])
			return
		}
	}
	if st := c.inType(0).GetSequenceType(); st != nil && st.ElemType != nil {
		c.setType(0, st.ElemType)
	}
}

func sequenceLength(c *nctx) {
	c.set(0, canonical.Int64, ranked([]dim{}))
	if elems, ok := c.seqElems(0); ok {
		c.setConst(0, intCval(canonical.Int64, []int64{}, []dim{kd(int64(len(elems)))}))
	}
}

func splitToSequence(c *nctx) {
	dt, s := c.t(0)
	if !s.ranked {
		c.setType(0, seqTP(tensorTP(dt, unranked)))
		return
	}
	ax := normAxis(c.attrI("axis", 0), s.rank())
	if !validAxis(ax, s.rank()) {
		c.fail("axis out of range")
		return
	}
	d := copyDims(s.dims)
	if !c.has(1) {
		if c.attrI("keepdims", 1) != 0 {
			d[ax] = kd(1)
		} else {
			d = append(d[:ax], d[ax+1:]...)
		}
		c.setType(0, seqTP(tensorTP(dt, ranked(d))))
		return
	}
	v := c.cv(1)
	k, ok := v.allKnown()
	switch {
	case ok && len(v.shape) == 0 && len(k) == 1 && s.dims[ax].Known && s.dims[ax].Value%k[0] == 0:
		d[ax] = kd(k[0])
	case ok && len(v.shape) == 1 && allEqual(k):
		d[ax] = kd(k[0])
	default:
		d[ax] = dim{}
	}
	c.setType(0, seqTP(tensorTP(dt, ranked(d))))
}

func allEqual(k []int64) bool {
	if len(k) == 0 {
		return false
	}
	for _, x := range k {
		if x != k[0] {
			return false
		}
	}
	return true
}

func concatFromSequence(c *nctx) {
	st := c.inType(0).GetSequenceType()
	if st == nil {
		return
	}
	dt, s, ok := tensorOf(st.ElemType)
	if !ok {
		return
	}
	if !s.ranked {
		c.set(0, dt, unranked)
		return
	}
	newAxis := c.attrI("new_axis", 0) != 0
	r := s.rank()
	if newAxis {
		r++
	}
	ax := normAxis(c.attrI("axis", 0), r)
	if !validAxis(ax, r) {
		c.fail("axis out of range")
		return
	}
	d := copyDims(s.dims)
	cnt := dim{}
	sum := kd(0)
	if elems, ok := c.seqElems(0); ok {
		cnt = kd(int64(len(elems)))
		for _, e := range elems {
			_, es, ok := tensorOf(e)
			if !ok || !es.ranked || es.rank() != s.rank() || newAxis {
				sum = dim{}
				break
			}
			sum = dimAdd(sum, es.dims[ax])
		}
	} else {
		sum = dim{}
	}
	if newAxis {
		d = append(d[:ax], append([]dim{cnt}, d[ax:]...)...)
	} else {
		d[ax] = sum
	}
	c.set(0, dt, ranked(d))
}

func sequenceMap(c *nctx) {
	body := c.subgraph("body")
	if body == nil {
		return
	}
	for i := range c.n.Inputs {
		if i >= len(body.Inputs) {
			break
		}
		t := c.inType(i)
		if st := t.GetSequenceType(); st != nil {
			t = st.ElemType
		}
		c.setBodyInput(body.Inputs[i], t)
	}
	if !c.inferBody(body, "body") {
		return
	}
	for i, o := range body.Outputs {
		if o != nil && o.Type != nil {
			c.setType(i, seqTP(o.Type))
		}
	}
}

func optional(c *nctx) {
	if t := c.inType(0); t != nil {
		c.setType(0, optTP(t))
		return
	}
	if a := c.n.Attr("type"); a != nil && a.TP != nil {
		c.setType(0, optTP(a.TP))
	}
}

func optionalGet(c *nctx) {
	t := c.inType(0)
	if ot := t.GetOptionalType(); ot != nil {
		c.setType(0, ot.ElemType)
		return
	}
	if t != nil {
		c.setType(0, t)
	}
}

func sameKind(a, b *onnxpb.TypeProto) bool {
	if a == nil || b == nil {
		return true
	}
	switch a.GetValue().(type) {
	case *onnxpb.TypeProto_TensorType:
		return b.GetTensorType() != nil
	case *onnxpb.TypeProto_SequenceType:
		return b.GetSequenceType() != nil
	case *onnxpb.TypeProto_OptionalType:
		return b.GetOptionalType() != nil
	case *onnxpb.TypeProto_MapType:
		return b.GetMapType() != nil
	}
	return false
}

// loopRunsFull reports whether a Loop runs exactly its trip count: its
// condition starts true (absent or a constant true) and the body passes
// its condition input through unchanged (or returns a constant true).
func (c *nctx) loopRunsFull(body *canonical.Graph) bool {
	if c.has(1) {
		k, ok := c.cv(1).allKnown()
		if !ok || len(k) != 1 || k[0] == 0 {
			return false
		}
	}
	if len(body.Outputs) == 0 || len(body.Inputs) < 2 {
		return false
	}
	v := body.Outputs[0]
	for v != nil {
		if v == body.Inputs[1] {
			return true
		}
		if cv := c.inf.consts[v]; cv != nil {
			k, ok := cv.allKnown()
			return ok && len(k) == 1 && k[0] != 0
		}
		p, _ := v.Producer()
		if p == nil || p.OpType != "Identity" {
			return false
		}
		v = p.Input(0)
	}
	return false
}

type savedType struct {
	v *canonical.Value
	t *onnxpb.TypeProto
}

// saveTypes records the types of every value defined in g and below.
func saveTypes(g *canonical.Graph) []savedType {
	var out []savedType
	var walk func(g *canonical.Graph)
	walk = func(g *canonical.Graph) {
		for _, v := range g.Inputs {
			out = append(out, savedType{v, v.Type})
		}
		for _, n := range g.Nodes {
			for _, o := range n.Outputs {
				if o != nil {
					out = append(out, savedType{o, o.Type})
				}
			}
			for _, sg := range n.Subgraphs() {
				walk(sg)
			}
		}
	}
	walk(g)
	return out
}

func restoreTypes(s []savedType) {
	for _, x := range s {
		x.v.Type = x.t
	}
}

// within reports whether g is sg or nested below it.
func within(g, sg *canonical.Graph) bool {
	for ; g != nil; g = g.Parent {
		if g == sg {
			return true
		}
	}
	return false
}
