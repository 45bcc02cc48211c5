package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/onnxspec"
)

// errNeedHost is returned by a lowering that needs the contents of an
// input that is still a node of the segment being built.
var errNeedHost = errors.New("executor: value needed on the host")

// plan is the recorded sequence of steps of one graph run. drops[k]
// lists the values no step after k reads (nor the caller: graph outputs
// and kept values are never dropped): replay removes them from the env
// after step k, so that their memory is garbage as soon as possible.
type plan struct {
	steps []step
	drops [][]*canonical.Value
	// bufs: output buffers kept for the next run (reuse.go).
	bufs bufPool
}

type step interface {
	// exec runs the step; ok is false when a guard failed.
	exec(ctx context.Context, e *Executor, en *env) (ok bool, err error)
}

func (p *plan) replay(ctx context.Context, e *Executor, en *env) (bool, error) {
	timed := e.times != nil && en.parent == nil && e.times.on.Load()
	stepped := en.parent == nil && e.kprof.StepsOn()
	for k, st := range p.steps {
		if err := ctx.Err(); err != nil {
			return false, fmt.Errorf("executor: %w", err)
		}
		var t0 time.Time
		if timed {
			t0 = time.Now()
		}
		if stepped {
			e.kprof.BeginStep(k, func() string { return stepLabel(st) })
		}
		ok, err := execStep(ctx, st, e, en)
		if stepped {
			e.kprof.EndStep()
		}
		if timed && err == nil && ok {
			e.times.record(st, time.Since(t0))
		}
		if err != nil {
			if h, isHost := st.(*hostStep); isHost {
				return false, fmt.Errorf("executor: node %s: %w", h.n, err)
			}
			return false, err
		}
		if !ok {
			return false, nil
		}
		if k < len(p.drops) && len(p.drops[k]) > 0 {
			release := false
			for _, v := range p.drops[k] {
				if s := en.vals[v]; s != nil && s.h != nil && !s.valStatic && s.h.data != nil && len(sliceBytes(s.h.data)) >= releaseMinBytes {
					release = true
				}
				en.del(v)
			}
			if release && en.parent == nil && en.bufs != nil && e.reuseInRun {
				// The dropped values' buffers, for the next steps (while
				// they are in cache).
				en.bufs.releaseDead(en)
			}
		}
	}
	return true, nil
}

// execStep runs one step of a plan; a panic outside the kernels (which
// callKernel already turns into errors) becomes an error naming the
// values the step reads.
func execStep(ctx context.Context, st step, e *Executor, en *env) (ok bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			reads, _ := stepIO(st)
			ins := make([]*slot, len(reads))
			names := make([]string, len(reads))
			for i, v := range reads {
				if v != nil {
					ins[i], names[i] = en.get(v), v.Name
				}
			}
			ok, err = false, fmt.Errorf("executor: a step reading %s failed on inputs %s: %v", strings.Join(names, ", "), slotShapes(ins), r)
		}
	}()
	return st.exec(ctx, e, en)
}

// valueUses is how the steps of a plan use each value (the fusion
// passes' view of it): readers counts the steps reading it, lastReader
// is the index of the last of them, producer that of the step writing
// it.
type valueUses struct {
	readers, lastReader, producer map[*canonical.Value]int
}

// usesOf returns the value uses of steps.
func usesOf(steps []step) valueUses {
	u := valueUses{readers: map[*canonical.Value]int{}, lastReader: map[*canonical.Value]int{}, producer: map[*canonical.Value]int{}}
	for k, st := range steps {
		reads, writes := stepIO(st)
		for _, v := range reads {
			if v != nil {
				u.readers[v]++
				u.lastReader[v] = k
			}
		}
		for _, v := range writes {
			if v != nil {
				u.producer[v] = k
			}
		}
	}
	return u
}

// stepIO lists the values a step reads and those it puts in the env.
func stepIO(st step) (reads, writes []*canonical.Value) {
	switch st := st.(type) {
	case *hostStep:
		reads = append(append([]*canonical.Value{}, st.n.Inputs...), st.n.OuterValues()...)
		if st.scale != nil {
			reads = append(reads, st.scale.by)
		}
		return reads, st.n.Outputs
	case *segStep:
		return st.params, st.outs
	case *fusedStep:
		for _, h := range st.steps {
			r, w := stepIO(h)
			reads, writes = append(reads, r...), append(writes, w...)
		}
		return reads, writes
	case *expandDwStep:
		for _, p := range []step{st.expand, st.dw} {
			r, w := stepIO(p)
			reads, writes = append(reads, r...), append(writes, w...)
		}
		return reads, writes
	case *concatStep:
		for _, p := range append(append([]step{}, st.parts...), st.concat) {
			r, w := stepIO(p)
			reads, writes = append(reads, r...), append(writes, w...)
		}
		return reads, writes
	case *guardStep:
		return []*canonical.Value{st.v}, nil
	case *emptyStep:
		return st.n.Inputs, st.outs
	case *staticStep:
		return nil, []*canonical.Value{st.v}
	}
	return nil, nil
}

// planDrops computes plan.drops: each value a step of this graph's nodes
// wrote is dropped after the last step that reads it (or after the step
// that wrote it, when none does), unless it is a graph output or kept.
func planDrops(gi *graphInfo, steps []step, keep map[*canonical.Value]bool) [][]*canonical.Value {
	last := map[*canonical.Value]int{}
	for k, st := range steps {
		reads, writes := stepIO(st)
		for _, v := range writes {
			if v != nil && gi.defs[v] && !keep[v] && gi.lastUse[v] != outputUse {
				if _, ok := last[v]; !ok {
					last[v] = k
				}
			}
		}
		for _, v := range reads {
			if _, ok := last[v]; ok {
				last[v] = k
			}
		}
	}
	if len(last) == 0 {
		return nil
	}
	drops := make([][]*canonical.Value, len(steps))
	for _, v := range orderedKeys(gi, last) {
		drops[last[v]] = append(drops[last[v]], v)
	}
	return drops
}

// orderedKeys returns the values of m in the order of gi's nodes (a
// deterministic plan).
func orderedKeys(gi *graphInfo, m map[*canonical.Value]int) []*canonical.Value {
	var out []*canonical.Value
	for _, n := range gi.order {
		for _, o := range n.Outputs {
			if _, ok := m[o]; ok && o != nil {
				out = append(out, o)
			}
		}
	}
	return out
}

// staticStep puts a value computed at build time into the env.
type staticStep struct {
	v *canonical.Value
	s *slot
}

func (st *staticStep) exec(_ context.Context, _ *Executor, en *env) (bool, error) {
	en.set(st.v, st.s)
	return true, nil
}

// guardStep checks that a value read at build time still has the contents
// the plan was built with.
type guardStep struct {
	v *canonical.Value
	h *htensor
}

func (st *guardStep) exec(_ context.Context, _ *Executor, en *env) (bool, error) {
	s := en.get(st.v)
	if s == nil || s.h == nil {
		return false, nil
	}
	return equalH(s.h, st.h), nil
}

// hostStep runs a host kernel; packs: one of executor/kernels' (which
// read released initializers packed, or restore them themselves).
type hostStep struct {
	n     *canonical.Node
	impl  *opImpl
	ver   int
	packs bool
	// nhwc: a Conv, Slice or channel shuffle whose output the plan keeps
	// channels last (markNHWC, nhwc.go); set once when the plan is built.
	nhwc bool
	// shuffle: a Concat → Reshape → Transpose (→ Reshape) step
	// (fuseConcatTranspose); nil for any other.
	shuffle *shuffleSpec
	// split: the kernel split its work over the kernel threads on its
	// last run (see wakeFor).
	split atomic.Bool
	// conv: a Conv's geometry for the input shapes of its last run
	// (convParams), so that a replay does not parse the attributes again.
	conv atomic.Pointer[convMemo]
	// scale: a 1×1 Conv that took the Mul by channel before it
	// (fuseScaleConv); nil for any other step.
	scale *scaleIn
	// shareIn: an NHWC Conv whose NCHW input, read by NHWC steps only,
	// it converts for all of them (markNHWC): it hands the converted
	// tensor to the later readers in place of the NCHW one. Set once when
	// the plan is built.
	shareIn bool
	// view: a Slice of channels kept channels last whose one reader
	// takes a view of its input (markSliceViews); set once when the plan
	// is built.
	view bool
}

// wakeFor wakes the kernel threads before a step whose kernels split
// their work last time, so that they wake while this goroutine prepares
// the step (allocates its output), and returns the kernel calls so far,
// for wakeDone. Steps that do not split (small ones) leave parked
// threads parked.
func wakeFor(e *Executor, split *atomic.Bool) (n0 uint64) {
	if split.Load() {
		e.kern.Wake()
	}
	return e.kern.Calls()
}

// wakeDone records whether the step split its work this time (kernel
// calls since wakeFor's n0). A deferred direct call: no closure on the
// heap for every step.
func wakeDone(e *Executor, split *atomic.Bool, n0 uint64) {
	split.Store(e.kern.Calls() != n0)
}

func (st *hostStep) exec(ctx context.Context, e *Executor, en *env) (bool, error) {
	if st.packs {
		defer wakeDone(e, &st.split, wakeFor(e, &st.split))
	}
	return st.execArena(ctx, e, en, nil)
}

// execArena is exec with the kernel's output taken from ar (lctx.newOut).
func (st *hostStep) execArena(ctx context.Context, e *Executor, en *env, ar *outArena) (bool, error) {
	c, err := newHostCtx(ctx, e, en, st.n, st.impl, st.ver)
	if err != nil {
		return false, err
	}
	c.arena, c.conv, c.deferConv, c.nhwc, c.shareIn, c.scale, c.sliceView = ar, &st.conv, en.deferConv, st.nhwc, st.shareIn, st.scale, st.view
	if !st.packs {
		if err := c.restoreReleased(); err != nil {
			return false, err
		}
	}
	if err := callKernel(c, st.impl.host); err != nil {
		return false, err
	}
	return true, c.storeOutputs(false, false)
}

// segStep runs a compiled GoMLX segment.
type segStep struct {
	g           *graph.Graph
	params      []*canonical.Value
	paramShapes []shapes.Shape
	outs        []*canonical.Value
	outDT       []canonical.DataType
	outShapeSt  []bool
	mu          sync.Mutex
}

func (st *segStep) exec(_ context.Context, e *Executor, en *env) (bool, error) {
	inputs := make([]any, len(st.params))
	ins := make([]*tensors.Tensor, 0, len(st.params))
	defer func() {
		for _, t := range ins {
			t.FinalizeAll()
		}
	}()
	for i, v := range st.params {
		s := en.get(v)
		if s == nil || s.h == nil {
			return false, fmt.Errorf("executor: segment input %q is not available", v.Name)
		}
		if !shapeEq(s.h.shape, st.paramShapes[i].Dimensions) {
			return false, nil
		}
		h := nchwOf(s.h)
		if h.released {
			var err error
			if h, err = e.restoreInitializer(v); err != nil {
				return false, fmt.Errorf("executor: segment input %q: %w", v.Name, err)
			}
		}
		t, err := h.toGomlx()
		if err != nil {
			return false, fmt.Errorf("executor: segment input %q: %w", v.Name, err)
		}
		ins = append(ins, t)
		// Hand GoMLX a device buffer: given a local tensor, Graph.Run
		// first asks for its device, which builds an error with a stack
		// trace (a quarter of a small transformer's run time).
		d, err := graph.DonateTensorBuffer(t, st.g.Backend(), 0)
		if err != nil {
			return false, fmt.Errorf("executor: segment input %q: %w", v.Name, err)
		}
		inputs[i] = d
	}
	var outs []*tensors.Tensor
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("executor: running segment: %v", r)
				if debugPanics() {
					err = fmt.Errorf("%w\n%s", err, debug.Stack())
				}
			}
		}()
		st.mu.Lock()
		defer st.mu.Unlock()
		outs = st.g.Run(inputs...)
		return nil
	}()
	if err != nil {
		return false, err
	}
	for i, t := range outs {
		if i >= len(st.outs) {
			// An unread parameter returned only to keep it in the
			// executable (see flush).
			t.FinalizeAll()
			continue
		}
		h, err := fromGomlx(t, st.outDT[i])
		t.FinalizeAll()
		if err != nil {
			return false, fmt.Errorf("executor: value %q: %w", st.outs[i].Name, err)
		}
		en.set(st.outs[i], &slot{h: h, dt: st.outDT[i], shapeStatic: st.outShapeSt[i]})
	}
	return true, nil
}

func shapeEq(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// segment is the GoMLX graph being built.
type segment struct {
	g      *graph.Graph
	params []*canonical.Value
	pnode  map[*canonical.Value]*graph.Node
	consts map[*htensor]*graph.Node
	vals   []*canonical.Value
	drop   []*canonical.Value // parameters read last: dropped after the run
}

type builder struct {
	e     *Executor
	gi    *graphInfo
	en    *env
	keep  map[*canonical.Value]bool
	ctx   context.Context
	steps []step
	seg   *segment
	idx   int
	nseg  int
}

func (e *Executor) build(ctx context.Context, gi *graphInfo, en *env, keep map[*canonical.Value]bool) (*plan, error) {
	b := &builder{e: e, gi: gi, en: en, keep: keep, ctx: ctx}
	for i, n := range gi.order {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("executor: %w", err)
		}
		b.idx = i
		var err error
		if perr := catch(func() { err = b.node(n) }); perr != nil {
			// A fault outside the kernel (callKernel catches those).
			ins, _ := b.inputs(n)
			err = fmt.Errorf("%w (on inputs %s)", perr, slotShapes(ins))
		}
		if err != nil {
			return nil, fmt.Errorf("executor: node %s: %w", n, err)
		}
		b.dropDead(n)
	}
	b.idx = outputUse
	if err := b.flush(); err != nil {
		return nil, fmt.Errorf("executor: graph %q outputs: %w", gi.g.Name, err)
	}
	steps := b.steps
	if e.fuse {
		steps = fuseTransposeDiv(gi, fuseTransposeMatMul(gi, fuseLayerNorm(gi, fuseSiLU(gi, fuseHardSwish(gi, steps, keep), keep), keep), keep), keep)
		steps = fuseConcatTranspose(gi, steps, keep)
		steps = fuseConcat(gi, fuseExpandDw(gi, fuseSteps(gi, steps, keep), keep), keep)
		if e.kern != nil {
			steps = fuseScaleConv(gi, steps, keep)
			markNHWC(gi, steps, keep)
			markSliceViews(gi, steps, keep)
		}
	}
	return &plan{steps: steps, drops: planDrops(gi, steps, keep)}, nil
}

func (b *builder) live(v *canonical.Value) bool {
	return b.gi.lastUse[v] >= b.idx || b.keep[v]
}

func (b *builder) segGraph() *segment {
	if b.seg == nil {
		b.nseg++
		b.seg = &segment{
			g:      graph.NewGraph(b.e.backend, fmt.Sprintf("%s_seg%d", b.gi.g.Name, b.nseg)),
			pnode:  map[*canonical.Value]*graph.Node{},
			consts: map[*htensor]*graph.Node{},
		}
	}
	return b.seg
}

// dropDead removes from the env the values n read last (as the plan's
// drops do on replay); those the open segment takes as parameters are
// dropped when it has run.
func (b *builder) dropDead(n *canonical.Node) {
	drop := func(v *canonical.Value) {
		if v == nil || !b.gi.defs[v] || b.keep[v] || b.gi.lastUse[v] != b.idx {
			return
		}
		if _, ok := b.en.vals[v]; !ok {
			return
		}
		if b.seg != nil && b.seg.pnode[v] != nil {
			b.seg.drop = append(b.seg.drop, v)
			return
		}
		b.en.del(v)
	}
	for _, v := range n.Inputs {
		drop(v)
	}
	for _, v := range n.OuterValues() {
		drop(v)
	}
}

// flush compiles and runs the open segment, materializing its live values.
func (b *builder) flush() error {
	seg := b.seg
	if seg == nil {
		return nil
	}
	b.seg = nil
	st := &segStep{g: seg.g, params: seg.params}
	var nodes []*graph.Node
	for _, v := range seg.vals {
		s := b.en.vals[v]
		if s == nil || s.node == nil || s.seg != seg || !b.live(v) {
			continue
		}
		st.outs = append(st.outs, v)
		st.outDT = append(st.outDT, s.dt)
		st.outShapeSt = append(st.outShapeSt, s.shapeStatic)
		nodes = append(nodes, s.node)
	}
	if len(nodes) == 0 {
		seg.g.Finalize()
		return nil
	}
	for _, v := range seg.params {
		st.paramShapes = append(st.paramShapes, seg.pnode[v].Shape())
	}
	nodes = append(nodes, unreadParams(seg, nodes)...)
	if err := catch(func() { seg.g.Compile(nodes...) }); err != nil {
		return fmt.Errorf("compiling segment: %w", err)
	}
	b.steps = append(b.steps, st)
	ok, err := st.exec(b.ctx, b.e, b.en)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("segment inputs changed shape while building")
	}
	for _, v := range seg.drop {
		b.en.del(v)
	}
	return nil
}

// unreadParams returns the parameters of seg that none of the nodes
// reads. A lowering that gives up after taking its inputs (errUseHost:
// Pad with a negative pad, Gather of zero indices before issue 40;
// errNeedHost) leaves its parameters in the segment; the GoMLX graph
// cannot drop them, and the simplego backend's executable only sizes its
// buffers up to its last output, so a parameter created after that
// output made every run of the segment panic (index out of range). flush
// makes them extra outputs, which segStep.exec discards.
func unreadParams(seg *segment, nodes []*graph.Node) []*graph.Node {
	read := map[*graph.Node]bool{}
	stack := append([]*graph.Node{}, nodes...)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if read[n] {
			continue
		}
		read[n] = true
		stack = append(stack, n.Inputs()...)
	}
	var out []*graph.Node
	for _, v := range seg.params {
		if p := seg.pnode[v]; !read[p] {
			out = append(out, p)
		}
	}
	return out
}

// catch runs f and turns a panic (GoMLX reports build errors by panicking)
// into an error.
func catch(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("%v", r)
			}
			if debugPanics() {
				err = fmt.Errorf("%w\n%s", err, debug.Stack())
			}
		}
	}()
	f()
	return nil
}

// debugPanics adds stacks to errors recovered from panics
// (ONNXCONV_DEBUG=1).
func debugPanics() bool { return os.Getenv("ONNXCONV_DEBUG") != "" }

func (e *Executor) lookupImpl(n *canonical.Node) (*implRef, error) {
	domain := n.Domain
	if domain == "ai.onnx" {
		domain = ""
	}
	ver, ok := e.opsets[domain]
	if !ok {
		if f := e.model.Function(n.Domain, n.OpType, n.Overload); f != nil {
			return &implRef{impl: functionImpl(f)}, nil
		}
		return nil, fmt.Errorf("executor: node %s: the model imports no opset for domain %q", n, n.Domain)
	}
	since := ver
	if s, ok := onnxspec.Lookup(domain, n.OpType, ver); ok {
		since = s.SinceVersion
	} else if f := e.model.Function(n.Domain, n.OpType, n.Overload); f != nil {
		return &implRef{impl: functionImpl(f)}, nil
	} else if impl := e.reg[opKey{domain, n.OpType}]; domain == "" && impl != nil && impl.ortDefault {
		return &implRef{impl: impl, ver: 1}, nil
	} else if domain == "" || domain == canonical.MLDomain {
		return nil, fmt.Errorf("executor: node %s: no operator %s in opset %d of domain %q", n, n.OpType, ver, n.Domain)
	}
	impl := e.reg[opKey{domain, n.OpType}]
	if impl == nil {
		return nil, fmt.Errorf("executor: node %s: operator %s (domain %q, opset %d) is not implemented", n, n.OpType, n.Domain, ver)
	}
	return &implRef{impl: impl, ver: since}, nil
}

type implRef struct {
	impl *opImpl
	ver  int
}

func (b *builder) inputs(n *canonical.Node) ([]*slot, error) {
	ins := make([]*slot, len(n.Inputs))
	for i, v := range n.Inputs {
		if v == nil {
			continue
		}
		s := b.en.get(v)
		if s == nil {
			return nil, fmt.Errorf("input %q was not computed", v.Name)
		}
		ins[i] = s
	}
	return ins, nil
}

func (b *builder) node(n *canonical.Node) error {
	ref, err := b.e.lookupImpl(n)
	if err != nil {
		return err
	}
	impl := ref.impl
	if impl.control {
		if err := b.flush(); err != nil {
			return err
		}
	}
	forceHost := false
	for attempt := 0; attempt < 4; attempt++ {
		ins, err := b.inputs(n)
		if err != nil {
			return err
		}
		allHost, allStatic, allShapeStatic := true, true, true
		// empty: an input computed at run time has no element (a
		// selection that kept nothing; not a constant such as Resize's
		// empty roi). GoMLX's simplego backend panics on some ops of
		// zero-size tensors (Where, broadcast Sub), so such nodes run on
		// the host when they can (else see emptyOuts).
		empty := false
		for _, s := range ins {
			if s == nil {
				continue
			}
			if s.kind == kindTensor && !s.valStatic && numel(s.shape()) == 0 {
				empty = true
			}
			if !s.isHost() {
				allHost = false
			}
			if !s.valStatic {
				allStatic = false
			}
			if !s.shapeStatic {
				allShapeStatic = false
			}
		}
		if impl.control {
			allStatic = false
		}
		if impl.kernel != nil && b.e.kern != nil && !forceHost {
			c := b.newCtx(n, impl, ref.ver, ins)
			if impl.kernelOK(c) {
				if !allHost {
					if err := b.flush(); err != nil {
						return err
					}
					continue
				}
				if err := callKernel(c, impl.kernel); err != nil {
					return err
				}
				b.pinUnpacked(n, c.packedIn)
				if allStatic {
					return c.storeOutputs(true, true)
				}
				b.steps = append(b.steps, &hostStep{n: n, impl: &opImpl{host: impl.kernel}, ver: ref.ver, packs: true})
				return c.storeOutputs(false, allShapeStatic && kernelShapeStatic(n, ins))
			}
		}
		// Every other path may read the inputs' data.
		restored, err := b.restoreInputs(n)
		if err != nil {
			return err
		}
		if restored {
			if ins, err = b.inputs(n); err != nil {
				return err
			}
		}
		switch {
		case impl.shapeOnly:
			c := b.newCtx(n, impl, ref.ver, ins)
			if err := callKernel(c, impl.host); err != nil {
				return err
			}
			if allShapeStatic {
				return c.storeOutputs(true, true)
			}
			// The shape is data dependent: guard it through a host step.
			if !allHost {
				if err := b.flush(); err != nil {
					return err
				}
				continue
			}
			b.steps = append(b.steps, &hostStep{n: n, impl: impl, ver: ref.ver})
			return c.storeOutputs(false, false)
		case impl.host != nil && allHost && (allStatic || impl.lower == nil || impl.preferHost || forceHost || empty):
			c := b.newCtx(n, impl, ref.ver, ins)
			if err := callKernel(c, impl.host); err != nil {
				return err
			}
			if allStatic && !impl.random {
				return c.storeOutputs(true, true)
			}
			b.steps = append(b.steps, &hostStep{n: n, impl: impl, ver: ref.ver})
			return c.storeOutputs(false, false)
		case impl.lower != nil && !forceHost && !(empty && impl.host != nil):
			c := b.newCtx(n, impl, ref.ver, ins)
			c.lowering = true
			err := callKernel(c, impl.lower)
			if errors.Is(err, errUseHost) && impl.host != nil {
				forceHost = true
				if err := b.flush(); err != nil {
					return err
				}
				continue
			}
			if errors.Is(err, errNeedHost) {
				if err := b.flush(); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return err
			}
			if emptyOuts(c) {
				// Nothing to compute: the outputs are empty tensors of the
				// shapes the lowering gave, set by an emptyStep (which
				// reads its inputs' shapes on the host).
				if !allHost {
					if err := b.flush(); err != nil {
						return err
					}
					continue
				}
				return b.emptyStep(n, c, ins)
			}
			return c.storeOutputs(false, allShapeStatic && !c.readDynamic)
		default:
			if err := b.flush(); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("could not obtain the input values on the host")
}

// emptyOuts reports whether every output a lowering produced is a
// zero-size tensor.
func emptyOuts(c *lctx) bool {
	some := false
	for i, v := range c.n.Outputs {
		if v == nil {
			continue
		}
		s := c.outs[i]
		if s == nil || s.node == nil || numel(s.node.Shape().Dimensions) != 0 {
			return false
		}
		some = true
	}
	return some
}

// emptyStep sets a node's outputs, all zero-size, to empty tensors of the
// shapes they had when the plan was built, while its tensor inputs have
// the shapes they had then (else the plan is rebuilt). A node whose
// outputs are empty needs no computation: GoMLX's simplego backend
// panics on some ops of zero-size tensors (issue 40), and a node of an
// empty selection with no host implementation (BatchNormalization,
// pooling) is set so rather than lowered.
type emptyStep struct {
	n        *canonical.Node
	inShapes [][]int // nil for an input that is not a tensor
	outs     []*canonical.Value
	outDT    []canonical.DataType
	outShape [][]int
}

func (b *builder) emptyStep(n *canonical.Node, c *lctx, ins []*slot) error {
	st := &emptyStep{n: n, inShapes: make([][]int, len(ins))}
	for i, s := range ins {
		if s != nil && s.kind == kindTensor {
			st.inShapes[i] = append([]int{}, s.shape()...)
		}
	}
	for i, v := range n.Outputs {
		if v == nil {
			continue
		}
		st.outs = append(st.outs, v)
		st.outDT = append(st.outDT, c.outs[i].dt)
		st.outShape = append(st.outShape, append([]int{}, c.outs[i].node.Shape().Dimensions...))
	}
	b.steps = append(b.steps, st)
	ok, err := st.exec(b.ctx, b.e, b.en)
	if err == nil && !ok {
		err = fmt.Errorf("inputs changed shape while building")
	}
	return err
}

func (st *emptyStep) exec(_ context.Context, _ *Executor, en *env) (bool, error) {
	for i, sh := range st.inShapes {
		if sh == nil {
			continue
		}
		s := en.get(st.n.Inputs[i])
		if s == nil || s.kind != kindTensor || !shapeEq(s.shape(), sh) {
			return false, nil
		}
	}
	for i, v := range st.outs {
		en.set(v, &slot{h: newH(st.outDT[i], st.outShape[i]), dt: st.outDT[i]})
	}
	return true, nil
}

// pinUnpacked pins the pack-only initializers among n's inputs that its
// kernel read other than packed (bit i of packed: input i only packed).
func (b *builder) pinUnpacked(n *canonical.Node, packed uint64) {
	e := b.e
	if len(e.packOnly) == 0 {
		return
	}
	e.cacheMu.Lock()
	defer e.cacheMu.Unlock()
	for i, v := range n.Inputs {
		if v != nil && (i >= 64 || packed&(1<<uint(i)) == 0) {
			e.pinLocked(v)
		}
	}
}

// restoreInputs pins the pack-only initializers among n's inputs and
// converts those bound as released stand-ins, binding the converted
// tensors in the env; it reports whether it bound any.
func (b *builder) restoreInputs(n *canonical.Node) (bool, error) {
	e := b.e
	if len(e.packOnly) == 0 {
		return false, nil
	}
	restored := false
	for _, v := range n.Inputs {
		if _, ok := e.packOnly[v]; !ok || v == nil {
			continue
		}
		s := b.en.get(v)
		if s == nil || s.h == nil || !s.h.released {
			e.cacheMu.Lock()
			e.pinLocked(v)
			e.cacheMu.Unlock()
			continue
		}
		h, err := e.restoreInitializer(v)
		if err != nil {
			return false, fmt.Errorf("initializer %q: %w", v.Name, err)
		}
		ns := *s
		ns.h = h
		b.en.set(v, &ns)
		restored = true
	}
	return restored, nil
}

func callKernel(c *lctx, f func(*lctx) error) error {
	if f == nil {
		return fmt.Errorf("no implementation for this case")
	}
	var kerr error
	err := catch(func() { kerr = f(c) })
	if kerr != nil {
		return kerr
	}
	if err != nil {
		return fmt.Errorf("%w (on inputs %s)", err, slotShapes(c.ins))
	}
	return nil
}

// slotShapes describes the types and shapes of a node's inputs for an
// error: "float[2 3], int64[4], none".
func slotShapes(ins []*slot) string {
	parts := make([]string, len(ins))
	for i, s := range ins {
		switch {
		case s == nil || s.kind == kindNone:
			parts[i] = "none"
		case s.kind == kindSeq:
			parts[i] = fmt.Sprintf("sequence of %d %s", len(s.seq), canonical.ElemTypeName(s.dt))
		default:
			parts[i] = fmt.Sprintf("%s%v", canonical.ElemTypeName(s.dt), s.shape())
		}
	}
	return strings.Join(parts, ", ")
}
