// Package reduce shrinks a model on which two sides disagree (the
// built-in executor and ONNX Runtime, say), or that one side fails to load
// or run, to a small subgraph that still does, and writes it as a bundle
// that a bug report can carry: the model, its inputs, both sides' outputs,
// the command, the versions and the hashes, with a README that says how to
// replay it.
//
// The search is delta debugging (ddmin) over the nodes of the main graph.
// A candidate keeps some nodes: a value a kept node reads from a dropped
// node becomes a graph input, fed with the value the reference side
// computed on the whole model, and nodes whose outputs nothing kept needs
// are dropped. When the two sides diverge, bisection (verify's
// Options.Bisect) names the first diverging node first, and the search
// starts from that node alone and adds back only what it needs of the
// nodes it depends on.
package reduce

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/verify"
)

// Sides makes the two sides of a comparison for the model m, saved at
// path: A, the reference, and B, the candidate (a side whose Runner is nil
// runs on the built-in executor). done closes what they opened.
type Sides func(path string, m *canonical.Model) (a, b *verify.Side, done func() error, err error)

// Options tune Reduce.
type Options struct {
	// Sides makes the sides of every candidate. Required.
	Sides Sides
	// Path is the file m was read from, given to Sides for the whole
	// model ("": a copy is saved in Dir).
	Path string
	// Input is the sample the sides run, in the order of the model's
	// graph inputs (verify.GraphInputs).
	Input []*canonical.Tensor
	// Verify holds the tolerances (Profile, RTol, ATol, MinRTol) and the
	// executor's Backend and Threads; Reduce sets Inputs and Bisect.
	Verify verify.Options
	// MaxTests bounds the candidates tried (0: DefaultMaxTests); the
	// smallest found so far is kept when the bound is reached.
	MaxTests int
	// Dir holds the candidate files while they run ("": a temporary
	// folder, removed at the end).
	Dir string
	// Logf, when set, is told each step.
	Logf func(format string, args ...any)
}

// DefaultMaxTests bounds the candidates tried unless Options say.
const DefaultMaxTests = 300

// What the reduced model still does.
const (
	// Diverges: the two sides compute outputs beyond tolerance apart.
	Diverges = "diverges"
	// Fails: one side fails to load or run it; the other runs it.
	Fails = "fails"
)

// ErrAgree is returned when the two sides agree on the whole model: there
// is nothing to reduce.
var ErrAgree = errors.New("the two sides agree on these inputs: nothing to reduce (give inputs on which they differ)")

// Node is a node of the reduced model, as it was in the whole model.
type Node struct {
	Index  int    `json:"index"` // position in the whole model's topological order
	Name   string `json:"name"`
	OpType string `json:"op_type"`
}

// Result is the reduced model and what it does on both sides.
type Result struct {
	Mode string
	// Failing is the side that fails (0: A, 1: B) in mode Fails.
	Failing int
	// Error is the failing side's error on the reduced model (Fails).
	Error string
	// Model is the reduced model; Close releases it.
	Model *canonical.Model
	Nodes []Node
	// NodesBefore is the number of nodes of the whole model's main graph.
	NodesBefore int
	// Inputs feed Model (named after its graph inputs, in their order).
	Inputs []*canonical.Tensor
	// Outputs are each side's outputs of Model (nil for a failing side).
	Outputs [2][]*canonical.Tensor
	// Report compares the sides on Model (Diverges).
	Report *verify.Report
	// Full compares the sides on the whole model, with its bisection
	// (Diverges).
	Full *verify.Report
	// Tests is the number of candidate models run.
	Tests int
	// Stopped says MaxTests ended the search before it was done.
	Stopped bool
}

// Close releases the reduced model.
func (r *Result) Close() error {
	if r == nil || r.Model == nil {
		return nil
	}
	return r.Model.Close()
}

type reducer struct {
	m       *canonical.Model
	o       Options
	dir     string
	order   []*canonical.Node
	pos     map[*canonical.Node]int
	ref     map[string]*canonical.Tensor // values of the reference on the whole model
	inputs  map[string]*canonical.Tensor // the sample, by graph input name
	res     *Result
	tried   map[string]bool
	stopped bool
}

// Reduce shrinks m to a subgraph on which the sides still diverge, or on
// which the side that fails on m still fails while the other runs it.
func Reduce(ctx context.Context, m *canonical.Model, o Options) (*Result, error) {
	if o.Sides == nil {
		return nil, errors.New("reduce: no sides")
	}
	if o.MaxTests <= 0 {
		o.MaxTests = DefaultMaxTests
	}
	ins := verify.GraphInputs(m)
	if len(o.Input) != len(ins) {
		return nil, fmt.Errorf("reduce: %d input tensors for %d graph inputs", len(o.Input), len(ins))
	}
	order, err := m.Graph.TopoSort()
	if err != nil {
		return nil, fmt.Errorf("reduce: %w", err)
	}
	r := &reducer{m: m, o: o, order: order, pos: map[*canonical.Node]int{}, inputs: map[string]*canonical.Tensor{},
		res: &Result{NodesBefore: len(order)}, tried: map[string]bool{}}
	for i, n := range order {
		r.pos[n] = i
	}
	for i, v := range ins {
		r.inputs[v.Name] = o.Input[i]
	}
	r.dir = o.Dir
	if r.dir == "" {
		if r.dir, err = os.MkdirTemp("", "onnxconv-reduce-*"); err != nil {
			return nil, fmt.Errorf("reduce: %w", err)
		}
		defer os.RemoveAll(r.dir)
	}
	if err := r.whole(ctx); err != nil {
		return nil, fmt.Errorf("reduce: %w", err)
	}
	keep, outs, err := r.search(ctx)
	if err != nil {
		return nil, fmt.Errorf("reduce: %w", err)
	}
	if err := r.finish(ctx, keep, outs); err != nil {
		return nil, fmt.Errorf("reduce: %w", err)
	}
	return r.res, nil
}

func (r *reducer) logf(format string, args ...any) {
	if r.o.Logf != nil {
		r.o.Logf(format, args...)
	}
}

// whole runs the whole model on both sides, decides the mode, and keeps
// the reference's values of every node output.
func (r *reducer) whole(ctx context.Context) error {
	path := r.o.Path
	if path == "" {
		path = filepath.Join(r.dir, "model.onnx")
		if err := canonical.Save(path, r.m, canonical.SaveOptions{}); err != nil {
			return fmt.Errorf("saving the model: %w", err)
		}
	}
	a, b, done, err := r.o.Sides(path, r.m)
	if err != nil {
		return err
	}
	defer done()
	_, errA := runSide(ctx, a, r.o.Input, &r.o.Verify)
	_, errB := runSide(ctx, b, r.o.Input, &r.o.Verify)
	if err := ctx.Err(); err != nil {
		return err
	}
	ref := a
	switch {
	case errA != nil && errB != nil:
		return fmt.Errorf("both sides fail on the whole model, so neither computes the values to cut at: A: %v; B: %w", errA, errB)
	case errA != nil:
		r.res.Mode, r.res.Failing, ref = Fails, 0, b
		r.logf("A fails on the whole model: %v", errA)
	case errB != nil:
		r.res.Mode, r.res.Failing = Fails, 1
		r.logf("B fails on the whole model: %v", errB)
	default:
		vo := r.o.Verify
		vo.Inputs, vo.Bisect, vo.Samples = [][]*canonical.Tensor{r.o.Input}, true, 0
		rep, err := verify.Compare(ctx, a, b, vo)
		if err != nil {
			return fmt.Errorf("comparing the whole model: %w", err)
		}
		if rep.Equivalent {
			return ErrAgree
		}
		r.res.Mode, r.res.Full = Diverges, rep
		if rep.Bisect != nil && rep.Bisect.First != nil {
			r.logf("the whole model diverges; first diverging node: %s (%s)", rep.Bisect.First.Node, rep.Bisect.First.OpType)
		}
	}
	var names []string
	for _, n := range r.order {
		for _, v := range n.Outputs {
			if isTensor(v) {
				names = append(names, v.Name)
			}
		}
	}
	if r.ref, err = capture(ctx, ref, r.o.Input, names, &r.o.Verify); err != nil {
		return fmt.Errorf("computing the values to cut at: %w", err)
	}
	return nil
}

// isTensor tells whether v is a node output that may be cut at or
// output: named and a tensor (or of unknown type).
func isTensor(v *canonical.Value) bool {
	if v == nil || v.Name == "" {
		return false
	}
	if v.Type == nil {
		return true
	}
	_, _, _, ok := canonical.TensorTypeOf(v.Type)
	return ok
}

// search returns the nodes to keep and the outputs (nil: every value the
// kept nodes leave unread).
func (r *reducer) search(ctx context.Context) ([]*canonical.Node, []*canonical.Value, error) {
	if f := r.first(); f != nil {
		var outs []*canonical.Value
		for _, v := range f.Outputs {
			if isTensor(v) && r.ref[v.Name] != nil {
				outs = append(outs, v)
			}
		}
		cone := r.ancestors(f)
		test := func(ctx context.Context, sub []*canonical.Node) (bool, error) {
			return r.try(ctx, append(slices.Clone(sub), f), outs)
		}
		ok, err := test(ctx, nil)
		if err != nil || ok {
			return []*canonical.Node{f}, outs, err
		}
		ok, err = test(ctx, cone)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			min, err := r.ddmin(ctx, cone, test)
			return append(min, f), outs, err
		}
		r.logf("node %s with all it depends on does not diverge alone: searching the whole graph", f.Name)
	}
	test := func(ctx context.Context, sub []*canonical.Node) (bool, error) { return r.try(ctx, sub, nil) }
	min, err := r.ddmin(ctx, r.order, test)
	return min, nil, err
}

// first is the first diverging node bisection found, nil when none.
func (r *reducer) first() *canonical.Node {
	f := r.res.Full
	if f == nil || f.Bisect == nil || f.Bisect.First == nil {
		return nil
	}
	if i := f.Bisect.First.Index; i >= 0 && i < len(r.order) {
		return r.order[i]
	}
	return nil
}

// ancestors lists the nodes n depends on, in topological order.
func (r *reducer) ancestors(n *canonical.Node) []*canonical.Node {
	in := map[*canonical.Node]bool{}
	work := consumed(n)
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		p, _ := v.Producer()
		if p = topLevel(p, r.m.Graph); p == nil || in[p] {
			continue
		}
		in[p] = true
		work = append(work, consumed(p)...)
	}
	var out []*canonical.Node
	for _, m := range r.order {
		if in[m] {
			out = append(out, m)
		}
	}
	return out
}

// ddmin is Zeller's delta debugging: it returns a subset of items on
// which test holds and from which no chunk (down to one node) can be
// removed with test still holding. test must hold on items.
func (r *reducer) ddmin(ctx context.Context, items []*canonical.Node, test func(context.Context, []*canonical.Node) (bool, error)) ([]*canonical.Node, error) {
	n := 2
	for len(items) >= 2 && !r.stopped {
		chunks := split(items, n)
		reduced := false
		for _, c := range chunks {
			ok, err := test(ctx, c)
			if err != nil {
				return items, err
			}
			if ok {
				items, n, reduced = c, 2, true
				break
			}
		}
		if !reduced && n > 2 {
			for i := range chunks {
				var comp []*canonical.Node
				for j, c := range chunks {
					if j != i {
						comp = append(comp, c...)
					}
				}
				ok, err := test(ctx, comp)
				if err != nil {
					return items, err
				}
				if ok {
					items, n, reduced = comp, max(n-1, 2), true
					break
				}
			}
		}
		if !reduced {
			if n >= len(items) {
				break
			}
			n = min(2*n, len(items))
		}
	}
	return items, nil
}

// split cuts items into n chunks of nearly equal length, in order.
func split(items []*canonical.Node, n int) [][]*canonical.Node {
	var out [][]*canonical.Node
	start := 0
	for i := range n {
		end := start + (len(items)-start)/(n-i)
		if end > start {
			out = append(out, items[start:end])
		}
		start = end
	}
	return out
}

// try runs the candidate that keeps the nodes keep (with outputs outs,
// nil for every value the kept nodes leave unread) and tells whether it
// still diverges (or still fails on the failing side while the other runs
// it). A candidate that cannot be made or that errs otherwise does not.
func (r *reducer) try(ctx context.Context, keep []*canonical.Node, outs []*canonical.Value) (bool, error) {
	set := map[*canonical.Node]bool{}
	for _, n := range keep {
		set[n] = true
	}
	c := plan(r.m.Graph, set, outs)
	key := r.key(c.nodes)
	if len(c.nodes) == 0 || len(c.outputs) == 0 {
		return false, nil
	}
	if holds, ok := r.tried[key]; ok {
		return holds, nil
	}
	if r.res.Tests >= r.o.MaxTests {
		r.stopped = true
		return false, nil
	}
	r.res.Tests++
	t, err := r.run(ctx, c, filepath.Join(r.dir, "candidate-"+strconv.Itoa(r.res.Tests)+".onnx"), false)
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		r.tried[key] = false
		r.logf("candidate %d (%d nodes): %v", r.res.Tests, len(c.nodes), err)
		return false, nil
	}
	defer t.sub.Close()
	r.tried[key] = t.holds
	r.logf("candidate %d (%d nodes): %s", r.res.Tests, len(c.nodes), map[bool]string{true: "still " + r.res.Mode, false: "does not reproduce"}[t.holds])
	return t.holds, nil
}

func (r *reducer) key(nodes []*canonical.Node) string {
	var b strings.Builder
	for _, n := range nodes {
		b.WriteString(strconv.Itoa(r.pos[n]))
		b.WriteByte(',')
	}
	return b.String()
}

// trial is a candidate run on both sides.
type trial struct {
	sub     *canonical.Model
	feed    []*canonical.Tensor
	holds   bool
	outs    [2][]*canonical.Tensor
	errs    [2]error
	report  *verify.Report
	compErr error
}

// run makes the candidate c, saves it at path and runs it on both sides;
// the caller closes t.sub. The error is for a candidate that could not be
// made or loaded into sides.
func (r *reducer) run(ctx context.Context, c cut, path string, keepOutputs bool) (*trial, error) {
	sub, err := extract(r.m, c, r.ref)
	if err != nil {
		return nil, err
	}
	t := &trial{sub: sub}
	for _, v := range verify.GraphInputs(sub) {
		x := r.inputs[v.Name]
		if x == nil {
			x = r.ref[v.Name]
		}
		if x == nil {
			sub.Close()
			return nil, fmt.Errorf("no value for input %q", v.Name)
		}
		named := *x
		named.Name = v.Name
		t.feed = append(t.feed, &named)
	}
	if err := canonical.Save(path, sub, canonical.SaveOptions{}); err != nil {
		sub.Close()
		return nil, fmt.Errorf("saving the candidate: %w", err)
	}
	if !keepOutputs {
		defer os.Remove(path)
	}
	a, b, done, err := r.o.Sides(path, sub)
	if err != nil {
		sub.Close()
		return nil, err
	}
	defer done()
	sides := [2]*verify.Side{a, b}
	if r.res.Mode == Fails {
		ok := r.res.Failing ^ 1
		t.outs[ok], t.errs[ok] = runSide(ctx, sides[ok], t.feed, &r.o.Verify)
		t.outs[r.res.Failing], t.errs[r.res.Failing] = runSide(ctx, sides[r.res.Failing], t.feed, &r.o.Verify)
		t.holds = t.errs[ok] == nil && t.errs[r.res.Failing] != nil
		return t, nil
	}
	if keepOutputs {
		for i, s := range sides {
			t.outs[i], t.errs[i] = runSide(ctx, s, t.feed, &r.o.Verify)
		}
	}
	vo := r.o.Verify
	vo.Inputs, vo.Bisect, vo.Samples = [][]*canonical.Tensor{t.feed}, false, 0
	t.report, t.compErr = verify.Compare(ctx, a, b, vo)
	t.holds = t.compErr == nil && !t.report.Equivalent
	return t, nil
}

// finish makes the reduced model and runs it once more on both sides.
func (r *reducer) finish(ctx context.Context, keep []*canonical.Node, outs []*canonical.Value) error {
	set := map[*canonical.Node]bool{}
	for _, n := range keep {
		set[n] = true
	}
	c := plan(r.m.Graph, set, outs)
	path := filepath.Join(r.dir, ModelFile)
	if r.o.Path == "" {
		path = filepath.Join(r.dir, "reduced", ModelFile) // the whole model's copy is dir/model.onnx
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
	}
	t, err := r.run(ctx, c, path, true)
	if err != nil {
		return fmt.Errorf("the reduced model (%d nodes): %w", len(c.nodes), err)
	}
	if !t.holds {
		t.sub.Close()
		if t.compErr != nil {
			return fmt.Errorf("the reduced model (%d nodes) does not reproduce on the last run: %w", len(c.nodes), t.compErr)
		}
		return fmt.Errorf("the reduced model (%d nodes) does not reproduce on the last run (a side that is not deterministic?)", len(c.nodes))
	}
	res := r.res
	res.Model, res.Inputs, res.Outputs, res.Report, res.Stopped = t.sub, t.feed, t.outs, t.report, r.stopped
	if res.Mode == Fails {
		// Said of the bundle's file, not of the temporary one.
		res.Error = strings.ReplaceAll(t.errs[res.Failing].Error(), path, ModelFile)
	}
	for _, n := range c.nodes {
		res.Nodes = append(res.Nodes, Node{Index: r.pos[n], Name: n.Name, OpType: n.OpType})
	}
	return nil
}

// runSide runs s on one sample: its Runner, or the built-in executor.
func runSide(ctx context.Context, s *verify.Side, in []*canonical.Tensor, o *verify.Options) ([]*canonical.Tensor, error) {
	if s.Runner != nil {
		return s.Runner.Run(ctx, in)
	}
	ex, err := executor.New(s.Model, executor.Options{Backend: o.Backend, Threads: o.Threads})
	if err != nil {
		return nil, err
	}
	defer ex.Close()
	return ex.Run(ctx, in)
}

// capture computes the values named on s for one sample.
func capture(ctx context.Context, s *verify.Side, in []*canonical.Tensor, names []string, o *verify.Options) (map[string]*canonical.Tensor, error) {
	if s.Runner != nil {
		c, ok := s.Runner.(verify.CaptureRunner)
		if !ok {
			return nil, fmt.Errorf("%s cannot hand out intermediate values, which reduce feeds the cut graph with: reduce against a runtime that loads ONNX files (onnxruntime) or the executor", s.Name)
		}
		return c.RunCapture(ctx, in, names)
	}
	ex, err := executor.New(s.Model, executor.Options{Backend: o.Backend, Threads: o.Threads})
	if err != nil {
		return nil, err
	}
	defer ex.Close()
	return ex.RunCapture(ctx, in, names)
}
