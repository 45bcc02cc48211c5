// Package errmap builds the whole-graph error map of a conversion: every
// intermediate tensor of the result is compared with the matching tensor
// of the source, each side computed by its own runtime, and the nodes are
// ranked so that the node where the error starts comes first.
//
// A result tensor matches the source model's value of the same name; a
// source computed by another framework hands out the tensor its importer
// recorded for that value, laid out back as the imported model holds it
// (canonical.SourceTensors; runtimes). Integer tensors are compared in
// quantization steps. The map is computed on one input sample.
//
// The package knows no runtime: the sides are Runners that hand out
// values by name (the executor, ONNX Runtime through a copy of the model
// with more graph outputs), and the tolerance comes from the caller
// (package verify).
package errmap

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/onnxconv/onnxconv/canonical"
)

// Runner hands out the values named (graph inputs, initializers, node
// outputs of the main graph) for one sample.
type Runner interface {
	RunCapture(ctx context.Context, inputs []*canonical.Tensor, names []string) (map[string]*canonical.Tensor, error)
}

// Provider is a Runner that hands out only some of its model's values (a
// runtime that computes the source tensors the importer recorded, one
// that hands out only the graph outputs): the others are unmatched.
type Provider interface {
	Provides(name string) bool
}

// Side is one side of the map: a model, what computes it, and its inputs
// (one sample, in the order of its graph inputs).
type Side struct {
	Model  *canonical.Model
	Runner Runner
	Inputs []*canonical.Tensor
}

// Tol is the tolerance of one tensor: |b-a| <= max(ATol, ATolScale*scale)
// + RTol*|a| for floats (scale: the largest finite |a|), and at most
// IntSteps steps for integers.
type Tol struct {
	RTol, ATol, ATolScale float64
	IntSteps              int64
}

// Options configure Build.
type Options struct {
	// Tolerance returns the tolerance for a tensor whose sides have the
	// element types a (source) and b (result). Required.
	Tolerance func(a, b canonical.DataType) Tol
	// Batch is the number of values captured per run (default 64).
	Batch int
	// WalkSource walks the source's nodes, compared with the result's
	// values of the same names, instead of the result's (bisection walks
	// the reference); QuantizeLinear outputs are then matched by name
	// only.
	WalkSource bool
	// StopAtDivergence stops capturing after the first batch that holds
	// a node beyond tolerance (bisection: memory and runs bounded); the
	// nodes not reached are not_compared.
	StopAtDivergence bool
}

// Stats describe one tensor.
type Stats struct {
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
	Std   float64 `json:"std"`
	// NonFinite counts NaN and Inf elements.
	NonFinite int64 `json:"non_finite"`
}

// NodeError is the comparison of one node of the result with the source.
type NodeError struct {
	// Index is the node's position in the result's topological order.
	Index  int    `json:"index"`
	Node   string `json:"node"`
	OpType string `json:"op_type"`
	// Output is the compared output (the worst one when several), and
	// SourceTensor its counterpart in the source (the same name).
	Output       string `json:"output"`
	SourceTensor string `json:"source_tensor,omitempty"`
	// Status: "match", "diverged", "unmatched" (no counterpart in the
	// source), "not_compared" (shapes or element counts differ; Detail).
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
	// Integer is set when the tensors were compared in quantization
	// steps (MaxAbs, MeanAbs are steps then).
	Integer bool `json:"integer,omitempty"`
	// Quantized is set when the source tensor is a float that the
	// result quantizes (the output of a QuantizeLinear whose input has a
	// counterpart): the source's values were quantized with the node's
	// scale and zero point before the comparison in steps.
	Quantized bool `json:"quantized,omitempty"`
	// Steps counts the elements per difference in quantization steps
	// (integer tensors only): the per-tensor steps table.
	Steps   []StepBin `json:"steps,omitempty"`
	MaxAbs  float64   `json:"max_abs"`
	MeanAbs float64   `json:"mean_abs"`
	// Ratio is the worst element's error over its tolerance (> 1:
	// beyond tolerance).
	Ratio float64 `json:"ratio"`
	// InputRatio is the worst Ratio of the node's inputs (0 for graph
	// inputs; for an input not compared, the worst of the nearest compared
	// values it was computed from), and Growth Ratio/InputRatio (with InputRatio floored
	// at 1e-3): how much this node made the error grow.
	InputRatio float64 `json:"input_ratio"`
	Growth     float64 `json:"growth"`
	// Jump marks a node beyond tolerance whose inputs are all within it:
	// the error starts here.
	Jump bool `json:"jump"`
	// Weights lists initializers of the node that differ between the two
	// models (same name, different values).
	Weights []string `json:"weights,omitempty"`
	// From lists the indexes of the nodes whose outputs this node reads
	// (the edges of the picture).
	From []int `json:"from"`
	// Source and Result describe the two tensors compared.
	Source *Stats `json:"source,omitempty"`
	Result *Stats `json:"result,omitempty"`
}

// StepBin is one bin of a histogram of differences in quantization
// steps: Lo <= |B-A| <= Hi (Hi -1: no upper bound).
type StepBin struct {
	Label string `json:"label"`
	Lo    int64  `json:"lo"`
	Hi    int64  `json:"hi"`
	Count int64  `json:"count"`
}

// NewStepHistogram returns the empty step bins: 0, 1, 2, 3, 4-7, 8-15,
// 16-127, >= 128 steps.
func NewStepHistogram() []StepBin {
	return []StepBin{{"0", 0, 0, 0}, {"1", 1, 1, 0}, {"2", 2, 2, 0}, {"3", 3, 3, 0},
		{"4-7", 4, 7, 0}, {"8-15", 8, 15, 0}, {"16-127", 16, 127, 0}, {">=128", 128, -1, 0}}
}

// StepIndex is the bin of NewStepHistogram that a difference of d >= 0
// steps falls in.
func StepIndex(d int64) int {
	switch {
	case d <= 3:
		return int(d)
	case d <= 7:
		return 4
	case d <= 15:
		return 5
	case d <= 127:
		return 6
	}
	return 7
}

// Map is the whole-graph error map.
type Map struct {
	// Nodes are every node of the result in topological order.
	Nodes []NodeError `json:"nodes"`
	// Ranked lists node indexes, the most likely origin first: nodes
	// where the error jumps (by ratio), then the other nodes beyond
	// tolerance (by growth), then the rest (by ratio).
	Ranked []int `json:"ranked"`
	// First is the first node, in topological order, where the error
	// jumps (-1 when none).
	First int `json:"first"`
	// Path is the divergence path from First towards a graph output,
	// following the worst diverged consumer.
	Path []int `json:"path"`
	// Compared counts nodes compared, Diverged those beyond tolerance,
	// Unmatched those without a counterpart in the source.
	Compared  int `json:"compared"`
	Diverged  int `json:"diverged"`
	Unmatched int `json:"unmatched"`
	// Runs is the number of capture runs made on each side.
	Runs int `json:"runs"`
}

// Top returns the n first ranked nodes.
func (m *Map) Top(n int) []NodeError {
	var out []NodeError
	for _, i := range m.Ranked {
		if len(out) == n {
			break
		}
		out = append(out, m.Nodes[i])
	}
	return out
}

// target is one result output to compare.
type target struct {
	node   int
	out    string
	source string
	// q, when set, quantizes the source's float values first.
	q *quant
}

// quant is the quantization of a QuantizeLinear node: scale and zero
// point (one value, or one per slice along axis) and the output type.
type quant struct {
	scale, zero []float64
	axis        int
	dt          canonical.DataType
}

// Build compares every node output of result that has a counterpart in
// source and returns the map.
func Build(ctx context.Context, source, result Side, opts Options) (*Map, error) {
	if opts.Tolerance == nil {
		return nil, fmt.Errorf("errmap: no tolerance given")
	}
	if source.Model == nil || result.Model == nil || source.Runner == nil || result.Runner == nil {
		return nil, fmt.Errorf("errmap: both sides need a model and a runner that captures values")
	}
	walk, other := result.Model, source.Model
	if opts.WalkSource {
		walk, other = source.Model, result.Model
	}
	order, err := walk.Graph.TopoSort()
	if err != nil {
		return nil, fmt.Errorf("errmap: sorting the model: %w", err)
	}
	batch := opts.Batch
	if batch <= 0 {
		batch = 64
	}
	gs := other.Graph
	m := &Map{Nodes: make([]NodeError, len(order)), First: -1, Ranked: []int{}, Path: []int{}}
	index := map[*canonical.Node]int{}
	for i, n := range order {
		index[n] = i
	}
	var targets []target
	for i, n := range order {
		ne := &m.Nodes[i]
		*ne = NodeError{Index: i, Node: label(n, i), OpType: n.OpType, Status: "unmatched", From: []int{}}
		seen := map[int]bool{}
		for _, v := range n.Inputs {
			if v == nil {
				continue
			}
			if p, _ := v.Producer(); p != nil {
				if j, ok := index[p]; ok && !seen[j] {
					seen[j] = true
					ne.From = append(ne.From, j)
				}
			}
		}
		sort.Ints(ne.From)
		ne.Weights = changedWeights(n, gs, opts)
		// provides: the source hands out its value src and the result
		// its value out.
		provides := func(src, out string) bool {
			if sv := gs.Lookup(src); sv == nil || !tensorTyped(sv) {
				return false
			}
			if p, ok := source.Runner.(Provider); ok && !p.Provides(src) {
				return false
			}
			p, ok := result.Runner.(Provider)
			return !ok || p.Provides(out)
		}
		for _, o := range n.Outputs {
			if o == nil || o.Name == "" || !tensorTyped(o) {
				continue
			}
			if provides(o.Name, o.Name) {
				targets = append(targets, target{node: i, out: o.Name, source: o.Name})
			} else if q := quantOf(n); q != nil && !opts.WalkSource && n.Inputs[0] != nil {
				// A float of the source that the result quantizes:
				// compared in steps with the source quantized alike.
				src := n.Inputs[0].Name
				if !provides(src, o.Name) {
					src = dequantizedOutput(walk.Graph, o)
				}
				if src != "" && provides(src, o.Name) {
					targets = append(targets, target{node: i, out: o.Name, source: src, q: q})
				}
			}
		}
	}
	for start := 0; start < len(targets); start += batch {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("errmap: %w", err)
		}
		part := targets[start:min(start+batch, len(targets))]
		var wantS, wantR []string
		for _, t := range part {
			wantS = append(wantS, t.source)
			wantR = append(wantR, t.out)
		}
		ys, err := source.Runner.RunCapture(ctx, source.Inputs, dedupe(wantS))
		if err != nil {
			return nil, fmt.Errorf("errmap: capturing %d values of the source: %w", len(wantS), err)
		}
		yr, err := result.Runner.RunCapture(ctx, result.Inputs, dedupe(wantR))
		if err != nil {
			return nil, fmt.Errorf("errmap: capturing %d values of the result: %w", len(wantR), err)
		}
		m.Runs++
		for _, t := range part {
			a := ys[t.source]
			var qs *quantSource
			if t.q != nil && a != nil {
				if a, qs, err = t.q.apply(a); err != nil {
					return nil, fmt.Errorf("errmap: node %s, quantizing the source's %q: %w", m.Nodes[t.node].Node, t.source, err)
				}
			}
			c, err := compare(a, yr[t.out], opts, qs)
			if err != nil {
				return nil, fmt.Errorf("errmap: node %s, value %q: %w", m.Nodes[t.node].Node, t.out, err)
			}
			ne := &m.Nodes[t.node]
			if ne.Status != "unmatched" && !worse(c, ne) {
				continue
			}
			ne.Output, ne.SourceTensor = t.out, t.source
			ne.Status, ne.Detail, ne.Integer, ne.Steps, ne.Quantized = c.status, c.detail, c.integer, c.steps, t.q != nil
			ne.MaxAbs, ne.MeanAbs, ne.Ratio = c.maxAbs, c.meanAbs, c.ratio
			ne.Source, ne.Result = c.a, c.b
		}
		if opts.StopAtDivergence && slices.ContainsFunc(part, func(t target) bool { return m.Nodes[t.node].Status == "diverged" }) {
			for _, t := range targets[start+len(part):] {
				if ne := &m.Nodes[t.node]; ne.Status == "unmatched" {
					ne.Status, ne.Detail = "not_compared", "not reached: stopped at the first divergence"
				}
			}
			break
		}
	}
	m.finish(order, index)
	return m, nil
}

// finish sets the growth, jumps, ranking and path.
func (m *Map) finish(order []*canonical.Node, index map[*canonical.Node]int) {
	// reach is a node's ratio, or for a node not compared the worst
	// ratio of the nearest compared nodes it reads from: an input not
	// compared is as good as what it was computed from.
	reach := make([]float64, len(m.Nodes))
	for i := range m.Nodes {
		ne := &m.Nodes[i]
		for _, j := range ne.From {
			ne.InputRatio = max(ne.InputRatio, reach[j])
		}
		reach[i] = ne.InputRatio
		if ne.Status == "match" || ne.Status == "diverged" {
			reach[i] = ne.Ratio
		}
		switch ne.Status {
		case "unmatched":
			m.Unmatched++
			continue
		case "not_compared":
			continue
		}
		m.Compared++
		ne.Growth = min(ne.Ratio/math.Max(ne.InputRatio, 1e-3), math.MaxFloat64)
		if ne.Status == "diverged" {
			m.Diverged++
			ne.Jump = ne.InputRatio <= 1
			if ne.Jump && m.First < 0 {
				m.First = i
			}
		}
	}
	rank := make([]int, 0, len(m.Nodes))
	for i := range m.Nodes {
		if s := m.Nodes[i].Status; s == "match" || s == "diverged" {
			rank = append(rank, i)
		}
	}
	class := func(ne *NodeError) int {
		switch {
		case ne.Jump:
			return 0
		case ne.Status == "diverged":
			return 1
		}
		return 2
	}
	sort.SliceStable(rank, func(x, y int) bool {
		a, b := &m.Nodes[rank[x]], &m.Nodes[rank[y]]
		if ca, cb := class(a), class(b); ca != cb {
			return ca < cb
		}
		if class(a) == 1 {
			return a.Growth > b.Growth
		}
		return a.Ratio > b.Ratio
	})
	m.Ranked = rank
	if m.First < 0 {
		return
	}
	// The path: from First, the diverged consumer with the worst ratio.
	on := map[int]bool{}
	for cur := m.First; cur >= 0 && !on[cur]; {
		on[cur] = true
		m.Path = append(m.Path, cur)
		next, worst := -1, 0.0
		for _, o := range order[cur].Outputs {
			if o == nil {
				continue
			}
			for _, u := range o.Uses() {
				j, ok := index[u.Node]
				if !ok || m.Nodes[j].Status != "diverged" || on[j] {
					continue
				}
				if r := m.Nodes[j].Ratio; next < 0 || r > worst {
					next, worst = j, r
				}
			}
		}
		cur = next
	}
}

// comparison is the result of comparing one pair of tensors.
type comparison struct {
	status, detail  string
	integer         bool
	steps           []StepBin
	maxAbs, meanAbs float64
	ratio           float64
	a, b            *Stats
}

// worse says whether c is worse than the comparison recorded in ne.
func worse(c comparison, ne *NodeError) bool {
	if ne.Status == "not_compared" {
		return c.status != "not_compared"
	}
	return c.status != "not_compared" && c.ratio > ne.Ratio
}

// quantSource is a source tensor quantized alike (quant.apply): its
// float values, their element type and the step size of each element.
type quantSource struct {
	x, step []float64
	dt      canonical.DataType
}

// compare compares the source tensor a with the result's b. With qs, a is
// the source's float quantized alike: the tolerance of an element is the
// float tolerance of its float value in steps, plus one step of rounding,
// so that a quantized tensor is as close as the float it quantizes.
func compare(a, b *canonical.Tensor, opts Options, qs *quantSource) (comparison, error) {
	if a == nil || b == nil {
		return comparison{status: "not_compared", detail: "value not captured"}, nil
	}
	c := comparison{status: "match"}
	if a.DataType == canonical.String || b.DataType == canonical.String {
		return comparison{status: "not_compared", detail: "string tensor"}, nil
	}
	va, err := a.Float64s()
	if err != nil {
		return c, fmt.Errorf("source: %w", err)
	}
	vb, err := b.Float64s()
	if err != nil {
		return c, fmt.Errorf("result: %w", err)
	}
	c.a, c.b = stats(a.DataType, a.Dims, va), stats(b.DataType, b.Dims, vb)
	if len(va) != len(vb) {
		c.status, c.detail = "not_compared", fmt.Sprintf("element count differs: %d vs %d", len(va), len(vb))
		return c, nil
	}
	tol := opts.Tolerance(a.DataType, b.DataType)
	c.integer = !canonical.IsFloatType(a.DataType) && !canonical.IsFloatType(b.DataType)
	scale := 0.0
	for _, x := range va {
		if isFinite(x) {
			scale = max(scale, math.Abs(x))
		}
	}
	atol := math.Max(tol.ATol, tol.ATolScale*scale)
	if c.integer {
		c.steps = NewStepHistogram()
	}
	var ftol Tol
	if qs != nil {
		ftol = opts.Tolerance(qs.dt, qs.dt)
		fscale := 0.0
		for _, x := range qs.x {
			if isFinite(x) {
				fscale = max(fscale, math.Abs(x))
			}
		}
		atol = math.Max(ftol.ATol, ftol.ATolScale*fscale)
	}
	sum, n := 0.0, 0
	for i := range va {
		x, y := va[i], vb[i]
		if !isFinite(x) || !isFinite(y) {
			if !(math.IsNaN(x) && math.IsNaN(y)) && x != y {
				c.ratio = math.MaxFloat64
			}
			continue
		}
		d := math.Abs(y - x)
		c.maxAbs = max(c.maxAbs, d)
		if c.steps != nil {
			c.steps[StepIndex(int64(min(d, math.MaxInt32)))].Count++
		}
		sum += d
		n++
		var allowed float64
		switch {
		case qs != nil:
			allowed = (atol+ftol.RTol*math.Abs(qs.x[i]))/qs.step[i] + 1
		case c.integer:
			allowed = float64(max(tol.IntSteps, 0))
		default:
			allowed = atol + tol.RTol*math.Abs(x)
		}
		switch {
		case allowed > 0:
			c.ratio = max(c.ratio, d/allowed)
		case d > 0 && c.integer:
			// Exact integers: one step is ratio 1 + steps, beyond.
			c.ratio = max(c.ratio, 1+d)
		case d > 0:
			c.ratio = math.MaxFloat64
		}
	}
	if n > 0 {
		c.meanAbs = sum / float64(n)
	}
	if c.ratio > 1 {
		c.status = "diverged"
	}
	return c, nil
}

// changedWeights lists the initializers of n whose namesake in gs holds
// other values.
func changedWeights(n *canonical.Node, gs *canonical.Graph, opts Options) []string {
	var out []string
	for _, v := range n.Inputs {
		if v == nil || v.Const == nil {
			continue
		}
		sv := gs.Lookup(v.Name)
		if sv == nil || sv.Const == nil || sv.Const == v.Const {
			continue
		}
		c, err := compare(sv.Const, v.Const, opts, nil)
		if err != nil || c.status != "match" {
			out = append(out, v.Name)
		}
	}
	return out
}

func stats(dt canonical.DataType, dims []int64, v []float64) *Stats {
	s := &Stats{DType: canonical.ElemTypeName(dt), Shape: append([]int64{}, dims...)}
	n, sum, sq := 0, 0.0, 0.0
	for _, x := range v {
		if !isFinite(x) {
			s.NonFinite++
			continue
		}
		if n == 0 || x < s.Min {
			s.Min = x
		}
		if n == 0 || x > s.Max {
			s.Max = x
		}
		n++
		sum += x
		sq += x * x
	}
	if n > 0 {
		s.Mean = sum / float64(n)
		s.Std = math.Sqrt(math.Max(0, sq/float64(n)-s.Mean*s.Mean))
	}
	return s
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func tensorTyped(v *canonical.Value) bool {
	if v.Type == nil {
		return true
	}
	_, _, _, ok := canonical.TensorTypeOf(v.Type)
	return ok
}

func dedupe(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

func label(n *canonical.Node, i int) string {
	if n.Name != "" {
		return n.Name
	}
	return fmt.Sprintf("#%d %s", i, n.OpType)
}

// dequantizedOutput is the name of the graph output of g a
// DequantizeLinear computes from q, or "": a quantized graph output keeps
// its name on the DequantizeLinear (as ONNX Runtime's quantizer writes
// it), so the QuantizeLinear's float input, renamed, has that name in the
// source.
func dequantizedOutput(g *canonical.Graph, q *canonical.Value) string {
	for _, u := range q.Uses() {
		d := u.Node
		if d.OpType != "DequantizeLinear" || (d.Domain != "" && d.Domain != "ai.onnx") || u.Index != 0 || len(d.Outputs) == 0 || d.Outputs[0] == nil {
			continue
		}
		for _, o := range g.Outputs {
			if o == d.Outputs[0] {
				return o.Name
			}
		}
	}
	return ""
}

// quantOf returns the quantization of n when it is a QuantizeLinear with
// constant scale and zero point (nil otherwise: blocked quantization,
// computed scales).
func quantOf(n *canonical.Node) *quant {
	if n.OpType != "QuantizeLinear" || (n.Domain != "" && n.Domain != "ai.onnx") || len(n.Inputs) < 2 || n.Inputs[1] == nil || n.Inputs[1].Const == nil ||
		n.AttrInt("block_size", 0) != 0 || len(n.Outputs) == 0 || n.Outputs[0] == nil {
		return nil
	}
	q := &quant{axis: int(n.AttrInt("axis", 1)), dt: canonical.Uint8}
	var err error
	if q.scale, err = n.Inputs[1].Const.Float64s(); err != nil || len(q.scale) == 0 {
		return nil
	}
	q.zero = make([]float64, len(q.scale))
	if len(n.Inputs) > 2 && n.Inputs[2] != nil {
		z := n.Inputs[2].Const
		if z == nil {
			return nil
		}
		q.dt = z.DataType
		if q.zero, err = z.Float64s(); err != nil || len(q.zero) != len(q.scale) {
			return nil
		}
	} else if n.Outputs[0].Type != nil {
		if dt, _, _, ok := canonical.TensorTypeOf(n.Outputs[0].Type); ok {
			q.dt = dt
		}
	}
	if _, _, ok := canonical.QuantRange(q.dt); !ok {
		return nil
	}
	return q
}

// apply quantizes the float tensor t as QuantizeLinear does: round half
// to even of t/scale, plus the zero point, saturated to the output type.
func (q *quant) apply(t *canonical.Tensor) (*canonical.Tensor, *quantSource, error) {
	v, err := t.Float64s()
	if err != nil {
		return nil, nil, err
	}
	lo, hi, _ := canonical.QuantRange(q.dt)
	// stride: the elements per step along the axis (per-axis scales).
	stride, n := 1, 1
	if len(q.scale) > 1 {
		axis := q.axis
		if axis < 0 {
			axis += len(t.Dims)
		}
		if axis < 0 || axis >= len(t.Dims) || t.Dims[axis] != int64(len(q.scale)) {
			return nil, nil, fmt.Errorf("%d scales for axis %d of shape %v", len(q.scale), q.axis, t.Dims)
		}
		for _, d := range t.Dims[axis+1:] {
			stride *= int(d)
		}
		n = len(q.scale)
	}
	out := make([]int64, len(v))
	qs := &quantSource{x: v, step: make([]float64, len(v)), dt: t.DataType}
	for i, x := range v {
		k := (i / stride) % n
		qs.step[i] = math.Abs(q.scale[k])
		y := math.RoundToEven(x/q.scale[k]) + q.zero[k]
		if math.IsNaN(y) {
			y = q.zero[k]
		}
		out[i] = int64(math.Min(math.Max(y, lo), hi))
	}
	return canonical.Int64Tensor(t.Name, t.Dims, out), qs, nil
}
