// Package executor runs canonical ONNX graphs with GoMLX.
//
// Each ONNX node is lowered, in topological order, to GoMLX graph
// operations; consecutive lowered nodes form one compiled "segment". Values
// that a lowering needs at build time (a Reshape shape, Slice bounds, TopK
// k, ...) are read from host-known tensors: initializers, Constant outputs
// and small tensors folded on the host (Shape, Gather, Concat, Cast,
// arithmetic on constants). When such a value is only known after running
// part of the graph, the current segment is compiled and run, its live
// values are materialized on the host, and building continues with them as
// known tensors. Ops GoMLX cannot express (strings, sequences, NonZero,
// Unique, tree ensembles, ...) run as host kernels on materialized tensors;
// If, Loop and Scan are host-driven and run their bodies with the same
// machinery.
//
// The sequence of segments and host steps is a plan, cached per input
// signature (types and shapes of the inputs and, for the values read at
// build time that were not constants, their contents). Replaying a plan
// checks those values (guards) and rebuilds when one differs.
//
// Backends: the pure-Go GoMLX backend ("go", package simplego) is the
// default. Options.Backend or the environment variable ONNXCONV_BACKEND
// selects another registered GoMLX backend (XLA needs a build with the
// "xla" tag and a PJRT plugin already installed): the executor sets
// GOMLX_NO_AUTO_INSTALL=1 in the process before creating a backend, so
// nothing is ever downloaded at run time.
//
// An Executor is safe for concurrent use: plans are shared behind a mutex
// and each compiled segment serializes its own executions.
package executor

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor/kernels"
)

// BackendEnv names the environment variable that selects the GoMLX backend
// when Options.Backend is empty.
const BackendEnv = "ONNXCONV_BACKEND"

// Options configure an Executor.
type Options struct {
	// Backend is the GoMLX backend configuration ("go" by default; e.g.
	// "xla:cpu" in builds with the xla tag).
	Backend string
	// Threads is the number of threads the executor's own kernels
	// (MatMul, Gemm, Conv, pools, norms, elementwise) split their work
	// over: the calling goroutine and Threads−1 helper goroutines kept
	// until Close; 0 means all cores. Results do not depend on it.
	Threads int
	// DisableKernels runs MatMul, Gemm and Conv through their GoMLX
	// lowerings instead of executor/kernels (also ONNXCONV_KERNELS=0).
	DisableKernels bool
	// DisableFusion keeps every elementwise step that follows a MatMul,
	// Gemm or Conv kernel a step of its own on replay (fuse.go); the
	// results are the same bit for bit.
	DisableFusion bool
	// Float16AsORT computes a float16 graph as ONNX Runtime's CPU
	// provider does: in float32 from its inputs to its outputs, rounding
	// only float16 graph outputs (fp16_ort.go), instead of rounding every
	// float16 result. Graphs with subgraphs run as without it.
	Float16AsORT bool
	// KernelProfile, when not nil, records the kernels' parallel calls
	// (while it is started; see kernels.ParallelProfile).
	KernelProfile *kernels.ParallelProfile
	// StepTimes, when not nil, records the wall time of each step of the
	// main graph's plan on replay (while it is started; see StepTimes).
	StepTimes *StepTimes
}

// Executor runs one model. Create it with New.
type Executor struct {
	model   *canonical.Model
	backend backends.Backend
	reg     registry
	kern    *kernels.Context // nil: no host kernels (other backends, or disabled)
	fuse    bool             // fuse elementwise epilogues into kernel steps (fuse.go)
	opsets  map[string]int
	inputs  []*canonical.Value // graph inputs that are not initializers
	infos   map[*canonical.Graph]*graphInfo

	mu    sync.Mutex
	plans map[string]*plan

	// Initializers converted to host tensors once (they are read-only),
	// and weights packed for the kernels once per node (kernel_ops.go).
	cacheMu sync.Mutex
	inits   map[*canonical.Value]initEntry
	packs   map[packKey]packEntry
	// packOnly lists the initializers of the main graph whose every use
	// is a weight input the kernels pack (Conv, MatMul, Gemm input 1),
	// with those uses; read-only after New. They are bound as data-less
	// stand-ins (htensor.released): the kernels pack them straight from
	// the model's bytes (lctx.packed) and keep only the packed form. A
	// use that reads the data itself (another path the builder takes, a
	// kernel declining to pack) converts it after all and pins it: then it
	// is a host tensor like any other initializer.
	packOnly map[*canonical.Value][]packKey
	pinned   map[*canonical.Value]bool
	// poisonReuse: reused output buffers a kernel takes unzeroed are
	// filled with NaN first (tests, reuse.go).
	poisonReuse bool

	// slow: the nodes that took a per-element path where a kernel was
	// expected (integer ops outside the integer GEMM's cases), with why;
	// SlowPaths lists them.
	slowMu sync.Mutex
	slow   map[string]string

	// times: Options.StepTimes.
	times *StepTimes
	// kprof: Options.KernelProfile (replay feeds its step breakdown).
	kprof *kernels.ParallelProfile
	// reuseInRun: a replay frees the buffers of the values it drops
	// after each step, for the next steps (reuse.go, releaseDead); off
	// only to measure the difference.
	reuseInRun bool
}

// SlowPaths lists the nodes run so far that took a per-element path
// instead of a kernel, each with the reason ("ConvInteger \"conv1\": 3-D
// convolution"), sorted; bench prints them beside its figures.
func (e *Executor) SlowPaths() []string {
	e.slowMu.Lock()
	defer e.slowMu.Unlock()
	out := make([]string, 0, len(e.slow))
	for n, why := range e.slow {
		out = append(out, n+": "+why)
	}
	sort.Strings(out)
	return out
}

type initEntry struct {
	t *canonical.Tensor
	h *htensor
}

// initializer returns v's initializer as a host tensor, converted on first
// use (a packOnly one as a data-less stand-in); a Const replaced since (a
// new tensor) is converted again.
func (e *Executor) initializer(v *canonical.Value) (*htensor, error) {
	e.cacheMu.Lock()
	defer e.cacheMu.Unlock()
	if ent, ok := e.inits[v]; ok && ent.t == v.Const {
		return ent.h, nil
	}
	var h *htensor
	var err error
	if _, ok := e.packOnly[v]; ok && !e.pinned[v] {
		h, err = releasedOf(v.Const)
	} else {
		h, err = fromCanonical(v.Const)
	}
	if err != nil {
		return nil, err
	}
	if e.inits == nil {
		e.inits = map[*canonical.Value]initEntry{}
	}
	e.inits[v] = initEntry{t: v.Const, h: h}
	return h, nil
}

// restoreInitializer converts v's initializer when it was bound as a
// released stand-in, and pins it: some use reads the data itself.
func (e *Executor) restoreInitializer(v *canonical.Value) (*htensor, error) {
	e.cacheMu.Lock()
	defer e.cacheMu.Unlock()
	e.pinLocked(v)
	if ent, ok := e.inits[v]; ok && ent.t == v.Const && !ent.h.released {
		return ent.h, nil
	}
	h, err := fromCanonical(v.Const)
	if err != nil {
		return nil, err
	}
	if e.inits == nil {
		e.inits = map[*canonical.Value]initEntry{}
	}
	e.inits[v] = initEntry{t: v.Const, h: h}
	return h, nil
}

// pinLocked marks v as read by something other than a packing kernel:
// its host data is never released. e.cacheMu is held.
func (e *Executor) pinLocked(v *canonical.Value) {
	if _, ok := e.packOnly[v]; !ok {
		return
	}
	if e.pinned == nil {
		e.pinned = map[*canonical.Value]bool{}
	}
	e.pinned[v] = true
}

// findPackOnly fills e.packOnly (see Executor).
func (e *Executor) findPackOnly(g *canonical.Graph) {
	uses := map[*canonical.Value][]packKey{}
	other := map[*canonical.Value]bool{}
	for _, n := range g.Nodes {
		packs := (n.Domain == "" || n.Domain == "ai.onnx") && (n.OpType == "Conv" || n.OpType == "MatMul" || n.OpType == "Gemm")
		for i, v := range n.Inputs {
			if v == nil {
				continue
			}
			if packs && i == 1 {
				uses[v] = append(uses[v], packKey{n, i})
			} else {
				other[v] = true
			}
		}
		for _, v := range n.OuterValues() {
			other[v] = true
		}
	}
	for _, v := range g.Outputs {
		other[v] = true
	}
	for _, v := range g.Initializers {
		if v.Const != nil && v.Const.DataType == canonical.Float && !other[v] && len(uses[v]) > 0 {
			if e.packOnly == nil {
				e.packOnly = map[*canonical.Value][]packKey{}
			}
			e.packOnly[v] = uses[v]
		}
	}
}

// graphInfo is what New precomputes for a graph (main or subgraph).
type graphInfo struct {
	g       *canonical.Graph
	order   []*canonical.Node
	lastUse map[*canonical.Value]int
	free    []*canonical.Value // values used in g (at any depth) defined outside it
	id      int
	// defs holds the outputs of g's nodes: the values a run of g may drop
	// from its env after their last use.
	defs map[*canonical.Value]bool
}

const outputUse = 1 << 30

// New prepares m for running. It checks that every op has an
// implementation for the opset version the model imports.
func New(m *canonical.Model, opts Options) (*Executor, error) {
	if m == nil || m.Graph == nil {
		return nil, fmt.Errorf("executor: model has no graph")
	}
	if opts.Float16AsORT {
		var err error
		if m, _, err = ortFloat16(m); err != nil {
			return nil, fmt.Errorf("executor: %w", err)
		}
	}
	be, err := newBackend(opts.Backend)
	if err != nil {
		return nil, err
	}
	e := &Executor{
		model: m, backend: be, reg: newRegistry(), opsets: map[string]int{},
		infos: map[*canonical.Graph]*graphInfo{}, plans: map[string]*plan{},
		times: opts.StepTimes, reuseInRun: os.Getenv("ONNXCONV_REUSE_IN_RUN") != "0",
	}
	if _, isGo := be.(*simplego.Backend); isGo && !kernelsDisabled(opts) {
		e.kern = kernels.NewContext(opts.Threads)
		if opts.KernelProfile != nil {
			e.kern.SetProfile(opts.KernelProfile)
			e.kprof = opts.KernelProfile
		}
		e.fuse = !opts.DisableFusion
		e.findPackOnly(m.Graph)
	}
	for _, o := range m.OpsetImports {
		d := o.Domain
		if d == "ai.onnx" {
			d = ""
		}
		e.opsets[d] = int(o.Version)
	}
	if _, ok := e.opsets[""]; !ok {
		e.opsets[""] = 1
	}
	init := map[*canonical.Value]bool{}
	for _, v := range m.Graph.Initializers {
		init[v] = true
	}
	for _, v := range m.Graph.Inputs {
		if !init[v] {
			e.inputs = append(e.inputs, v)
		}
	}
	for _, f := range m.Functions {
		if f.Body != nil {
			if err := e.analyze(f.Body); err != nil {
				be.Finalize()
				return nil, fmt.Errorf("function %s: %w", f.Name, err)
			}
		}
	}
	if err := e.analyze(m.Graph); err != nil {
		be.Finalize()
		return nil, err
	}
	return e, nil
}

func newBackend(name string) (backends.Backend, error) {
	if name == "" {
		name = os.Getenv(BackendEnv)
	}
	// Never let a backend download plugins at run time.
	if err := os.Setenv("GOMLX_NO_AUTO_INSTALL", "1"); err != nil {
		return nil, fmt.Errorf("executor: setting GOMLX_NO_AUTO_INSTALL: %w", err)
	}
	if name == "" {
		// simplego runs each op in its own goroutine by default; for the
		// op sizes of typical models the goroutine stacks cost more than
		// the overlap gains (docs/speed.md): run ops in order, and keep
		// both cores for the large DotGenerals that simplego splits itself.
		name = simplego.BackendName + ":ops_sequential"
	}
	if name == simplego.BackendName || strings.HasPrefix(name, simplego.BackendName+":") {
		cfg := strings.TrimPrefix(strings.TrimPrefix(name, simplego.BackendName), ":")
		be, err := simplego.New(cfg)
		if err != nil {
			return nil, fmt.Errorf("executor: creating the pure-Go backend: %w", err)
		}
		return be, nil
	}
	var be backends.Backend
	err := catch(func() {
		var e error
		be, e = backends.NewWithConfig(name)
		if e != nil {
			panic(e)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("executor: creating GoMLX backend %q (registered: %v): %w", name, backends.List(), err)
	}
	return be, nil
}

// Close releases the backend and stops the kernels' helper goroutines.
func (e *Executor) Close() error {
	e.kern.Close()
	e.backend.Finalize()
	return nil
}

// Inputs returns the graph inputs Run expects, in order.
func (e *Executor) Inputs() []*canonical.Value { return append([]*canonical.Value{}, e.inputs...) }

func (e *Executor) analyze(g *canonical.Graph) error {
	order, err := g.TopoSort()
	if err != nil {
		return fmt.Errorf("executor: %w", err)
	}
	gi := &graphInfo{g: g, order: order, lastUse: map[*canonical.Value]int{}, id: len(e.infos), defs: map[*canonical.Value]bool{}}
	e.infos[g] = gi
	defined := map[*canonical.Value]bool{}
	for _, v := range g.Inputs {
		defined[v] = true
	}
	for _, v := range g.Initializers {
		defined[v] = true
	}
	freeSet := map[*canonical.Value]bool{}
	use := func(v *canonical.Value, i int) {
		if v == nil {
			return
		}
		if gi.lastUse[v] < i {
			gi.lastUse[v] = i
		}
		if !defined[v] && !freeSet[v] {
			freeSet[v] = true
			gi.free = append(gi.free, v)
		}
	}
	for i, n := range order {
		for _, in := range n.Inputs {
			use(in, i)
		}
		for _, v := range n.OuterValues() {
			use(v, i)
		}
		for _, o := range n.Outputs {
			if o != nil {
				defined[o] = true
				gi.defs[o] = true
			}
		}
		for _, sg := range n.Subgraphs() {
			if err := e.analyze(sg); err != nil {
				return err
			}
		}
		if _, err := e.lookupImpl(n); err != nil {
			return err
		}
	}
	for _, v := range g.Outputs {
		use(v, outputUse)
	}
	// Values of subgraph bodies defined in g itself are not free: keep
	// only those defined in no node/input of g.
	out := gi.free[:0]
	for _, v := range gi.free {
		if !defined[v] {
			out = append(out, v)
		}
	}
	gi.free = out
	return nil
}

// Run runs the model on inputs (one per graph input that is not an
// initializer, in order) and returns the graph outputs in order, named
// after them.
func (e *Executor) Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error) {
	vals := make([]*Value, len(inputs))
	for i, t := range inputs {
		vals[i] = TensorValue(t)
	}
	outs, err := e.RunValues(ctx, vals)
	if err != nil {
		return nil, err
	}
	res := make([]*canonical.Tensor, len(outs))
	for i, o := range outs {
		if o.Tensor == nil {
			return nil, fmt.Errorf("executor: output %d (%s) is not a tensor", i, e.model.Graph.Outputs[i].Name)
		}
		res[i] = o.Tensor
	}
	return res, nil
}

// RunValues is Run for models whose inputs or outputs are sequences or
// optionals.
func (e *Executor) RunValues(ctx context.Context, inputs []*Value) ([]*Value, error) {
	env, err := e.bindInputs(inputs)
	if err != nil {
		return nil, err
	}
	g := e.model.Graph
	defer e.kern.Hold()()
	if err := e.runGraph(ctx, g, env, nil); err != nil {
		return nil, err
	}
	outs := make([]*Value, len(g.Outputs))
	for i, v := range g.Outputs {
		s := env.get(v)
		if s == nil {
			return nil, fmt.Errorf("executor: output %q was not computed", v.Name)
		}
		o, err := s.toValue(v.Name)
		if err != nil {
			return nil, fmt.Errorf("executor: output %q: %w", v.Name, err)
		}
		outs[i] = o
	}
	return outs, nil
}

// RunCapture runs the model and returns the values named in names (any
// value of the main graph: inputs, initializers, node outputs), for
// finding where two models diverge. Only the named values are kept beyond
// their last use.
func (e *Executor) RunCapture(ctx context.Context, inputs []*canonical.Tensor, names []string) (map[string]*canonical.Tensor, error) {
	vals := make([]*Value, len(inputs))
	for i, t := range inputs {
		vals[i] = TensorValue(t)
	}
	g := e.model.Graph
	keep := map[*canonical.Value]bool{}
	for _, n := range names {
		v := g.Lookup(n)
		if v == nil {
			return nil, fmt.Errorf("executor: RunCapture: no value named %q in the main graph", n)
		}
		keep[v] = true
		if _, ok := e.packOnly[v]; ok {
			// Returned as a tensor: its host data is needed.
			if _, err := e.restoreInitializer(v); err != nil {
				return nil, fmt.Errorf("executor: initializer %q: %w", v.Name, err)
			}
		}
	}
	env, err := e.bindInputs(vals)
	if err != nil {
		return nil, err
	}
	defer e.kern.Hold()()
	if err := e.runGraph(ctx, g, env, keep); err != nil {
		return nil, err
	}
	res := map[string]*canonical.Tensor{}
	for v := range keep {
		s := env.get(v)
		if s == nil {
			return nil, fmt.Errorf("executor: value %q was not computed", v.Name)
		}
		o, err := s.toValue(v.Name)
		if err != nil {
			return nil, fmt.Errorf("executor: value %q: %w", v.Name, err)
		}
		if o.Tensor == nil {
			return nil, fmt.Errorf("executor: value %q is not a tensor", v.Name)
		}
		res[v.Name] = o.Tensor
	}
	return res, nil
}

func (e *Executor) bindInputs(inputs []*Value) (*env, error) {
	g := e.model.Graph
	if len(inputs) != len(e.inputs) {
		names := make([]string, len(e.inputs))
		for i, v := range e.inputs {
			names[i] = v.Name
		}
		return nil, fmt.Errorf("executor: model takes %d inputs (%s), got %d", len(e.inputs), strings.Join(names, ", "), len(inputs))
	}
	en := newEnv(nil)
	// The initializers' slots in one array and the map sized for them
	// and the inputs: two allocations a run instead of one a weight
	// (and the map's growth).
	en.vals = make(map[*canonical.Value]*slot, len(g.Initializers)+len(inputs))
	slots := make([]slot, len(g.Initializers))
	for i, v := range g.Initializers {
		h, err := e.initializer(v)
		if err != nil {
			return nil, fmt.Errorf("executor: initializer %q: %w", v.Name, err)
		}
		slots[i] = slot{h: h, dt: h.dt, valStatic: true, shapeStatic: true}
		en.set(v, &slots[i])
	}
	for i, v := range e.inputs {
		s, err := slotFromValue(inputs[i])
		if err != nil {
			return nil, fmt.Errorf("executor: input %d (%q): %w", i, v.Name, err)
		}
		s.shapeStatic = true
		if err := checkInputType(v, s); err != nil {
			return nil, fmt.Errorf("executor: input %d (%q): %w", i, v.Name, err)
		}
		en.set(v, s)
	}
	return en, nil
}

func checkInputType(v *canonical.Value, s *slot) error {
	if v.Type == nil || s.kind != kindTensor {
		return nil
	}
	dt, dims, hasShape, ok := canonical.TensorTypeOf(v.Type)
	if !ok {
		return nil
	}
	if dt != canonical.Undefined && dt != s.dt {
		return fmt.Errorf("has type %v, the model declares %v", s.dt, dt)
	}
	if hasShape {
		if len(dims) != len(s.h.shape) {
			return fmt.Errorf("has shape %v, the model declares rank %d", s.h.shape, len(dims))
		}
		for i, d := range dims {
			if d.Known && int(d.Value) != s.h.shape[i] {
				return fmt.Errorf("has shape %v, the model declares dim %d = %d", s.h.shape, i, d.Value)
			}
		}
	}
	return nil
}

// signature describes the types and shapes of the inputs and free values
// of a graph run.
func signature(gi *graphInfo, en *env, keep map[*canonical.Value]bool) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "g%d|", gi.id)
	add := func(v *canonical.Value) {
		s := en.get(v)
		if s == nil {
			sb.WriteString("nil;")
			return
		}
		s.sig(&sb)
		sb.WriteByte(';')
	}
	for _, v := range gi.g.Inputs {
		add(v)
	}
	sb.WriteByte('|')
	for _, v := range gi.free {
		add(v)
	}
	if len(keep) > 0 {
		var names []string
		for v := range keep {
			names = append(names, v.Name)
		}
		sort.Strings(names)
		sb.WriteString("|keep:" + strings.Join(names, ","))
	}
	return sb.String()
}

// runGraph computes every node of g into en, using (and filling) the
// plan cache.
func (e *Executor) runGraph(ctx context.Context, g *canonical.Graph, en *env, keep map[*canonical.Value]bool) error {
	gi := e.infos[g]
	if gi == nil {
		return fmt.Errorf("executor: graph %q was not prepared", g.Name)
	}
	key := signature(gi, en, keep)
	e.mu.Lock()
	p := e.plans[key]
	e.mu.Unlock()
	if p != nil {
		if en.parent == nil && en.bufs == nil {
			rb := p.bufs.get()
			rb.kern, rb.poison = e.kern, e.poisonReuse
			en.bufs = rb
			defer func() {
				rb.recycle(en)
				en.bufs = nil
				p.bufs.put(rb)
			}()
		}
		ok, err := p.replay(ctx, e, en)
		if err != nil || ok {
			return err
		}
		// A guard failed: build afresh (the steps run so far are redone).
	}
	np, err := e.build(ctx, gi, en, keep)
	if err != nil {
		return err
	}
	e.mu.Lock()
	if _, ok := e.plans[key]; !ok && len(e.plans) >= maxPlans {
		// Bound the cache: drop one plan (a model run with ever new shapes
		// must not grow without limit).
		for k := range e.plans {
			delete(e.plans, k)
			break
		}
	}
	e.plans[key] = np
	e.mu.Unlock()
	return nil
}

// maxPlans bounds the number of cached plans per Executor (all graphs and
// signatures together).
const maxPlans = 256
