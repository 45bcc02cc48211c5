package executor

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor/kernels"
)

// lctx is what a lowering or host kernel sees of one node.
type lctx struct {
	ctx         context.Context
	e           *Executor
	b           *builder // nil when a host step is replayed
	en          *env
	n           *canonical.Node
	impl        *opImpl
	ver         int // since-version of the operator schema in force
	ins         []*slot
	outs        []*slot
	lowering    bool
	readDynamic bool
	packedIn    uint64 // inputs the kernel read only packed (lctx.packed)
	// inPlace is 1 + the index of an input an elementwise kernel may
	// overwrite with its output (a fused step's intermediate value that
	// nothing else reads); 0: none.
	inPlace int
	// arena: a head kernel's output buffer (lctx.newOut, fuse_concat.go).
	arena *outArena
	// epilogue, when set, gives the epilogue a head kernel must run on
	// its float32 output y (fuse_epilogue.go).
	epilogue func(y []float32) kernels.Epilogue
	// act is the activation a head Conv applies before its epilogue
	// (fuse_epilogue.go).
	act kernels.Act
	// clip, when set, is the [lo, hi] of a Clip a head Conv applies
	// before its epilogue (fuse_epilogue.go; kernels.Conv2DPackedClip).
	clip []float32
	// conv is the step's memo of a Conv's geometry (nil: none;
	// convParams).
	conv *atomic.Pointer[convMemo]
	// deferConv: a head Conv may leave its work to the depthwise
	// convolution after it (env.pend; fuse_expanddw.go).
	deferConv bool
	// nhwc: the plan keeps this step's output channels last (a Conv, a
	// Slice, a channel shuffle: hostStep.nhwc; nhwc.go).
	nhwc bool
	// shareIn: hostStep.shareIn.
	shareIn bool
	// scale: the Mul by channel a 1×1 Conv took (hostStep.scale,
	// fuse_scale.go); nil: none.
	scale *scaleIn
	// sliceView: a Slice whose NHWC output may be a view of its input's
	// channels (hostStep.view; markSliceViews).
	sliceView bool
	// slotBuf holds ins and outs of a replayed step with at most
	// len(slotBuf) of them together (newHostCtx): one allocation a step
	// instead of three.
	slotBuf [6]*slot
}

func (b *builder) newCtx(n *canonical.Node, impl *opImpl, ver int, ins []*slot) *lctx {
	return &lctx{ctx: b.ctx, e: b.e, b: b, en: b.en, n: n, impl: impl, ver: ver, ins: ins, outs: make([]*slot, len(n.Outputs))}
}

func newHostCtx(ctx context.Context, e *Executor, en *env, n *canonical.Node, impl *opImpl, ver int) (*lctx, error) {
	c := &lctx{ctx: ctx, e: e, en: en, n: n, impl: impl, ver: ver}
	ni, no := len(n.Inputs), len(n.Outputs)
	if ni+no <= len(c.slotBuf) {
		// Capacities cut: an append to either makes a new array.
		c.ins, c.outs = c.slotBuf[:ni:ni], c.slotBuf[ni:ni+no:ni+no]
	} else {
		c.ins, c.outs = make([]*slot, ni), make([]*slot, no)
	}
	ins := c.ins
	for i, v := range n.Inputs {
		if v == nil {
			continue
		}
		s := en.get(v)
		if s == nil {
			return nil, fmt.Errorf("executor: node %s: input %q was not computed", n, v.Name)
		}
		ins[i] = s
	}
	return c, nil
}

// NIn is the number of inputs listed (omitted optional ones included).
func (c *lctx) NIn() int { return len(c.ins) }

// NOut is the number of outputs listed.
func (c *lctx) NOut() int { return len(c.outs) }

// Has reports whether input i is given.
func (c *lctx) Has(i int) bool { return i < len(c.ins) && c.ins[i] != nil }

// HasOut reports whether output i is wanted.
func (c *lctx) HasOut(i int) bool { return i < len(c.n.Outputs) && c.n.Outputs[i] != nil }

func (c *lctx) in(i int) *slot {
	if !c.Has(i) {
		panic(fmt.Errorf("input %d is missing", i))
	}
	return c.ins[i]
}

// DT is the element type of input i.
func (c *lctx) DT(i int) canonical.DataType { return c.in(i).dt }

// Shape is the shape of input i.
func (c *lctx) Shape(i int) []int { return c.in(i).shape() }

// Rank is the rank of input i.
func (c *lctx) Rank(i int) int { return len(c.Shape(i)) }

// H returns input i as a host tensor. During lowering an input that is a
// node of the open segment yields errNeedHost (the builder then runs the
// segment and retries); a host value that is not a constant is recorded as
// a guard of the plan.
func (c *lctx) H(i int) (*htensor, error) {
	s := c.in(i)
	if s.kind != kindTensor {
		return nil, fmt.Errorf("input %d is not a tensor", i)
	}
	if s.h == nil {
		return nil, errNeedHost
	}
	if c.lowering && !s.valStatic && c.b != nil {
		c.readDynamic = true
		c.b.steps = append(c.b.steps, &guardStep{v: c.n.Inputs[i], h: cloneH(s.h)})
	}
	if s.h.nhwc {
		// Stored channels last by an NHWC Conv (nhwc.go): this kernel
		// reads NCHW.
		return c.toNCHW(s.h), nil
	}
	return s.h, nil
}

// Hs returns the inputs at idx as host tensors, as H does.
func (c *lctx) Hs(idx ...int) ([]*htensor, error) {
	hs := make([]*htensor, len(idx))
	for k, i := range idx {
		h, err := c.H(i)
		if err != nil {
			return nil, err
		}
		hs[k] = h
	}
	return hs, nil
}

// Ints returns input i as int64 values on the host.
func (c *lctx) Ints(i int) ([]int64, error) {
	h, err := c.H(i)
	if err != nil {
		return nil, err
	}
	return h.i64(), nil
}

// Seq returns input i as a sequence.
func (c *lctx) Seq(i int) ([]*htensor, error) {
	s := c.in(i)
	if s.kind != kindSeq {
		return nil, fmt.Errorf("input %d is not a sequence", i)
	}
	return s.seq, nil
}

// G is the GoMLX graph of the open segment.
func (c *lctx) G() *graph.Graph { return c.b.segGraph().g }

// X returns input i as a GoMLX node.
func (c *lctx) X(i int) *graph.Node {
	s := c.in(i)
	if s.node != nil {
		return s.node
	}
	if s.h == nil {
		panic(fmt.Errorf("input %d is not a tensor", i))
	}
	if s.valStatic {
		return c.Const(s.h)
	}
	seg := c.b.segGraph()
	v := c.n.Inputs[i]
	if p := seg.pnode[v]; p != nil {
		return p
	}
	gdt, ok := gomlxDType(s.h.dt)
	if !ok {
		panic(fmt.Errorf("input %d: type %v cannot be computed with GoMLX", i, s.h.dt))
	}
	p := graph.Parameter(seg.g, fmt.Sprintf("p%d", len(seg.params)), shapes.Make(gdt, s.h.shape...))
	seg.pnode[v] = p
	seg.params = append(seg.params, v)
	return p
}

// Const makes a host tensor a constant of the open segment.
func (c *lctx) Const(h *htensor) *graph.Node {
	seg := c.b.segGraph()
	if n := seg.consts[h]; n != nil {
		return n
	}
	t, err := h.toGomlx()
	if err != nil {
		panic(err)
	}
	n := graph.ConstTensor(seg.g, t)
	seg.consts[h] = n
	return n
}

// Out sets output i to a GoMLX node holding logical type dt.
func (c *lctx) Out(i int, x *graph.Node, dt canonical.DataType) {
	if i < len(c.outs) {
		c.outs[i] = &slot{node: x, dt: dt}
	}
}

// OutH sets output i to a host tensor.
func (c *lctx) OutH(i int, h *htensor) {
	if i >= len(c.outs) {
		return
	}
	if c.lowering {
		c.Out(i, c.Const(h), h.dt)
		return
	}
	c.outs[i] = &slot{h: h, dt: h.dt}
}

// OutSeq sets output i to a sequence of element type dt.
func (c *lctx) OutSeq(i int, seq []*htensor, dt canonical.DataType) {
	if i < len(c.outs) {
		c.outs[i] = &slot{kind: kindSeq, seq: seq, dt: dt}
	}
}

// OutNone sets output i to an empty optional.
func (c *lctx) OutNone(i int, dt canonical.DataType) {
	if i < len(c.outs) {
		c.outs[i] = &slot{kind: kindNone, dt: dt}
	}
}

// OutSlot sets output i to a copy of a slot (Identity-like ops).
func (c *lctx) OutSlot(i int, s *slot) {
	if i < len(c.outs) {
		cp := *s
		cp.valStatic, cp.shapeStatic = false, false
		c.outs[i] = &cp
	}
}

func (c *lctx) storeOutputs(valStatic, shapeStatic bool) error {
	for i, v := range c.n.Outputs {
		if v == nil {
			continue
		}
		s := c.outs[i]
		if s == nil {
			return fmt.Errorf("output %d (%q) was not produced", i, v.Name)
		}
		if s.node != nil {
			if c.b == nil {
				return fmt.Errorf("output %d: host kernel produced a graph node", i)
			}
			s.seg = c.b.seg
			s.h = nil
			s.shapeStatic = shapeStatic
			c.b.seg.vals = append(c.b.seg.vals, v)
		} else {
			s.valStatic = valStatic
			s.shapeStatic = valStatic || shapeStatic
			if valStatic && c.b != nil {
				c.b.steps = append(c.b.steps, &staticStep{v: v, s: s})
			}
		}
		c.en.set(v, s)
	}
	return nil
}

// Attribute helpers.
func (c *lctx) AInt(name string, def int64) int64            { return c.n.AttrInt(name, def) }
func (c *lctx) AFloat(name string, def float32) float32      { return c.n.AttrFloat(name, def) }
func (c *lctx) AInts(name string, def []int64) []int64       { return c.n.AttrInts(name, def) }
func (c *lctx) AStr(name, def string) string                 { return c.n.AttrString(name, def) }
func (c *lctx) AFloats(name string, def []float32) []float32 { return c.n.AttrFloats(name, def) }
func (c *lctx) HasAttr(name string) bool                     { return c.n.Attr(name) != nil }

// runSub runs subgraph g with its inputs bound to ins, in an env chained
// to the current one, and returns its outputs.
func (c *lctx) runSub(g *canonical.Graph, ins []*slot) ([]*slot, error) {
	child := newEnv(c.en)
	if len(ins) > len(g.Inputs) {
		return nil, fmt.Errorf("subgraph %q takes %d inputs, got %d", g.Name, len(g.Inputs), len(ins))
	}
	for i, s := range ins {
		cp := *s
		cp.valStatic, cp.shapeStatic = false, true
		child.set(g.Inputs[i], &cp)
	}
	for _, v := range g.Initializers {
		h, err := fromCanonical(v.Const)
		if err != nil {
			return nil, fmt.Errorf("subgraph %q: initializer %q: %w", g.Name, v.Name, err)
		}
		child.set(v, &slot{h: h, dt: h.dt, valStatic: true, shapeStatic: true})
	}
	if err := c.e.runGraph(c.ctx, g, child, nil); err != nil {
		return nil, fmt.Errorf("subgraph %q: %w", g.Name, err)
	}
	outs := make([]*slot, len(g.Outputs))
	for i, v := range g.Outputs {
		s := child.get(v)
		if s == nil {
			return nil, fmt.Errorf("subgraph %q: output %q was not computed", g.Name, v.Name)
		}
		outs[i] = s
	}
	return outs, nil
}

// restoreReleased replaces the released initializers among c's inputs
// (htensor.released) by their converted host tensors.
func (c *lctx) restoreReleased() error {
	for i, s := range c.ins {
		if s == nil || s.h == nil || !s.h.released {
			continue
		}
		v := c.n.Inputs[i]
		h, err := c.e.restoreInitializer(v)
		if err != nil {
			return fmt.Errorf("executor: node %s: initializer %q: %w", c.n, v.Name, err)
		}
		ns := *s
		ns.h = h
		c.ins[i] = &ns
	}
	return nil
}
