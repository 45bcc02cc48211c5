package passes

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/errmap"
)

// DefaultFP16Block lists the ops Float16 keeps in float32 by default:
// reductions and normalizations whose sums overflow half precision (65504)
// or lose it, ops whose float inputs are coordinates or sizes (Range,
// Resize and Upsample scales, RoiAlign boxes), sampling and control flow.
var DefaultFP16Block = []string{
	"ReduceSum", "ReduceMean", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
	"ReduceLogSumExp", "ReduceSumSquare", "CumSum",
	"LayerNormalization", "InstanceNormalization", "GroupNormalization", "LpNormalization",
	"MeanVarianceNormalization", "RMSNormalization",
	"Range", "Resize", "Upsample", "RoiAlign", "NonMaxSuppression", "TopK",
	"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial", "Bernoulli",
	"ConstantOfShape", "EyeLike", "If", "Loop", "Scan",
}

// FP16Options configure Float16.
type FP16Options struct {
	// KeepIOTypes keeps float32 graph inputs and outputs (with Casts at the
	// edges); otherwise they become float16 (bfloat16).
	KeepIOTypes bool
	// Block lists op types kept in float32 (nil: DefaultFP16Block).
	Block []string
	// BF16 converts to bfloat16 instead of float16.
	BF16 bool
	// Check enables the automatic fallback: the converted model is
	// compared with m (profile fp16 or bf16 unless Check sets one); while
	// it diverges, nodes are kept in float32 and the model converted
	// again: every node whose own error (the node run alone in the low
	// type on the float32 model's values of its inputs, on the first
	// sample) exceeds the tolerance at its output's scale, and at least
	// 1, 2, 4, ... of the worst in round 1, 2, 3, ...; bisection's first
	// diverging node when that measurement cannot be made. nil converts
	// once, unchecked.
	Check *Check
	// MaxRounds bounds the fallback iterations (default 32).
	MaxRounds int
	// Runs, when set, says whether the target runtime's kernel of op
	// (version since of domain, "" for ai.onnx) runs type variable param
	// in dt; a node whose kernel does not stays in float32 with Casts
	// around it, as one whose schema does not admit dt (nil: every
	// kernel runs what its schema admits).
	Runs func(domain, op string, since int, param string, dt canonical.DataType) bool
}

// KeptNode is a node kept in float32 by the fallback.
type KeptNode struct {
	Node   string `json:"node"`
	OpType string `json:"op_type"`
	Reason string `json:"reason"`
}

// FP16Report is what Float16 did.
type FP16Report struct {
	Type      string `json:"type"` // float16 or bfloat16
	Before    Stats  `json:"before"`
	After     Stats  `json:"after"`
	Converted int    `json:"converted_nodes"`
	// Blocked counts nodes kept in float32 by the block list (and those
	// that would gain nothing: constants read only by float32 nodes);
	// Kept lists those the fallback kept.
	Blocked int `json:"blocked_nodes"`
	// Unsupported counts nodes kept in float32 because their schema at
	// the model's opset, or the target's kernel (FP16Options.Runs), has
	// no such low type.
	Unsupported int        `json:"unsupported_nodes"`
	Kept        []KeptNode `json:"kept"`
	Rounds      int        `json:"rounds"`
	// Equivalent: the last check passed (true when unchecked).
	Equivalent bool    `json:"equivalent"`
	MaxAbs     float64 `json:"max_abs"`
	MaxRel     float64 `json:"max_rel"`
	// Final is the last comparison with m (nil when unchecked).
	Final *verify.Report `json:"-"`
	// Map is the error map of the result against the input on the first
	// sample, every intermediate tensor compared (pipeline's
	// TransformOptions.Map); nil unless asked for.
	Map *errmap.Map `json:"map,omitempty"`
}

// Float16 converts m's float32 weights and compute to float16 (or
// bfloat16), keeping blocked ops in float32 with Casts between, and returns
// the converted model (a new model; m is not changed).
func Float16(ctx context.Context, m *canonical.Model, opts FP16Options) (*canonical.Model, *FP16Report, error) {
	if m == nil || m.Graph == nil {
		return nil, nil, fmt.Errorf("fp16: the model has no graph")
	}
	block := map[string]bool{}
	list := opts.Block
	if list == nil {
		list = DefaultFP16Block
	}
	for _, op := range list {
		block[op] = true
	}
	dt := canonical.Float16
	rep := &FP16Report{Type: "float16", Before: StatsOf(m), Equivalent: true, MaxAbs: -1, MaxRel: -1}
	if opts.BF16 {
		dt, rep.Type = canonical.BFloat16, "bfloat16"
	}
	if err := castAdmits(m, dt); err != nil {
		return nil, nil, fmt.Errorf("fp16: %w", err)
	}
	// Nodes are identified by their index in m's topological order.
	order, err := m.Graph.TopoSort()
	if err != nil {
		return nil, nil, fmt.Errorf("fp16: %w", err)
	}
	index := map[string]int{}
	for i, n := range order {
		if n.Name != "" {
			index[n.Name] = i
		}
	}
	keep := map[int]bool{}
	var typed *canonical.Model
	var typedOrder []*canonical.Node
	var ck *Check
	var rtol, atol float64
	var inputs [][]*canonical.Tensor
	if opts.Check != nil {
		c := *opts.Check
		if c.Profile == "" && c.RTol == nil && c.ATol == nil {
			c.Profile = map[bool]string{false: "fp16", true: "bf16"}[opts.BF16]
		}
		ck = &c
		rtol, atol = c.tolerance(c.Profile)
		inputs = c.Inputs
		if inputs == nil {
			k := max(c.Samples, 1)
			for s := range k {
				in, err := verify.GenerateInputs(m, c.Gen, s)
				if err != nil {
					return nil, nil, fmt.Errorf("fp16: generating verification inputs: %w", err)
				}
				inputs = append(inputs, in)
			}
		}
	}
	rounds := opts.MaxRounds
	if rounds <= 0 {
		rounds = 32
	}
	for {
		rep.Rounds++
		out, counts, err := convertFloat(m, dt, block, keep, opts.KeepIOTypes, opts.Runs)
		if err != nil {
			return nil, nil, fmt.Errorf("fp16: %w", err)
		}
		rep.Converted, rep.Blocked, rep.Unsupported = counts.converted, counts.blocked, counts.unsupported
		if ck == nil {
			rep.After = StatsOf(out)
			return out, rep, nil
		}
		vo := verify.Options{Inputs: inputs, Profile: ck.Profile, RTol: ck.RTol, ATol: ck.ATol, Backend: ck.Backend}
		cmp, err := verify.Compare(ctx, verify.ModelSide("float32", m), verify.ModelSide(rep.Type, out), vo)
		if err != nil {
			_ = out.Close()
			return nil, nil, fmt.Errorf("fp16: checking the converted model: %w", err)
		}
		rep.Final, rep.Equivalent = cmp, cmp.Equivalent
		rep.MaxAbs, rep.MaxRel = errorOf(cmp)
		if cmp.Equivalent || rep.Rounds >= rounds {
			rep.After = StatsOf(out)
			return out, rep, nil
		}
		// The nodes of this round: those whose own low-precision error
		// is worst (localErrors), at least batch of them, the batch
		// doubling every round; bisection's first diverging node when
		// that measurement fails.
		batch := 1 << min(rep.Rounds-1, 30)
		if typed == nil {
			// A clone with inferred types: which nodes convertFloat
			// converts depends on them (its clone is typed the same way,
			// and sorted to the same order).
			if typed, err = m.Clone(); err != nil {
				_ = out.Close()
				return nil, nil, fmt.Errorf("fp16: %w", err)
			}
			defer func() { _ = typed.Close() }()
			inferTypes(typed)
			if typedOrder, err = typed.Graph.TopoSort(); err != nil || len(typedOrder) != len(order) {
				typedOrder = nil
			}
		}
		// (typedOrder nil: no candidates, bisection below.)
		if errs, lerr := localErrors(ctx, typed, typedOrder, dt, block, keep, opts.Runs, inputs[0], ck.Backend, rtol, atol); lerr == nil && len(errs) > 0 {
			for _, e := range pickLocal(errs, batch) {
				keep[e.Index] = true
				n := typedOrder[e.Index]
				reason := fmt.Sprintf("run alone in %s on float32 inputs, its %s output differs by max abs %.3g (%.3g x the tolerance at its scale)",
					rep.Type, e.Output, e.MaxAbs, e.Ratio)
				if math.IsInf(e.Ratio, 1) {
					reason = fmt.Sprintf("run alone in %s on float32 inputs, its %s output is NaN or Inf where float32's is finite (overflow)", rep.Type, e.Output)
				}
				if e.Ratio <= 1 {
					reason += "; among the worst while an output diverges (" + cmp.Summary + ")"
				}
				rep.Kept = append(rep.Kept, KeptNode{Node: canonical.NodeLabel(n, e.Index), OpType: n.OpType, Reason: reason})
			}
			_ = out.Close()
			continue
		} else if lerr != nil && ctx.Err() != nil {
			_ = out.Close()
			return nil, nil, fmt.Errorf("fp16: %w", ctx.Err())
		}
		vo.Inputs, vo.Bisect = inputs[:1], true
		bis, err := verify.Compare(ctx, verify.ModelSide("float32", m), verify.ModelSide(rep.Type, out), vo)
		_ = out.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("fp16: bisecting: %w", err)
		}
		idx := -1
		reason := "an output diverges beyond tolerance: " + cmp.Summary
		if bis.Bisect != nil && bis.Bisect.First != nil {
			f := bis.Bisect.First
			idx = f.Index
			for _, o := range f.Outputs {
				if o.Float != nil {
					reason = fmt.Sprintf("its %s output diverges in %s (max abs %.3g, %d NaN/%d Inf mismatches)", o.Name, rep.Type,
						o.Float.MaxAbs, o.Float.NaNMismatch, o.Float.InfMismatch)
					break
				}
			}
		}
		if idx < 0 || idx >= len(order) || keep[idx] {
			// Bisection found no new node: keep the last converted
			// producer of a failing output.
			idx = lastConverted(order, keep, block)
			if idx < 0 {
				rep.After = rep.Before
				return nil, nil, fmt.Errorf("fp16: the model diverges with every node in float32: %s", cmp.Summary)
			}
			reason = "an output still diverges (" + cmp.Summary + "); kept from the end"
		}
		keep[idx] = true
		n := order[idx]
		rep.Kept = append(rep.Kept, KeptNode{Node: canonical.NodeLabel(n, idx), OpType: n.OpType, Reason: reason})
	}
}

// lastConverted returns the index of the last node that would be converted.
func lastConverted(order []*canonical.Node, keep map[int]bool, block map[string]bool) int {
	for i := len(order) - 1; i >= 0; i-- {
		if !keep[i] && !block[order[i].OpType] {
			return i
		}
	}
	return -1
}

// convertFloat returns a converted clone of m: nodes with a float32 input
// that are neither blocked nor kept, and whose schema at m's opset admits
// dt (schemaAllowsLow), compute in dt.
func convertFloat(m *canonical.Model, dt canonical.DataType, block map[string]bool, keep map[int]bool, keepIO bool,
	runs func(domain, op string, since int, param string, dt canonical.DataType) bool) (*canonical.Model, convertCounts, error) {
	var counts convertCounts
	c, err := m.Clone()
	if err != nil {
		return nil, counts, err
	}
	fail := func(err error) (*canonical.Model, convertCounts, error) {
		_ = c.Close()
		return nil, counts, err
	}
	inferTypes(c)
	g := c.Graph
	order, err := g.TopoSort()
	if err != nil {
		return fail(err)
	}
	nm := canonical.NewNamer(c)
	low := map[*canonical.Value]bool{}                // values in dt
	toLow := map[*canonical.Value]*canonical.Value{}  // float32 value -> dt version
	toHigh := map[*canonical.Value]*canonical.Value{} // dt value -> float32 version
	setType := func(v *canonical.Value, t canonical.DataType) {
		if v.Type != nil && v.Type.GetTensorType() != nil {
			// A copy: inference may share one TypeProto between values
			// (Identity's output and its input), and the input, kept in
			// float32 for a blocked node, must keep its type.
			v.Type = proto.Clone(v.Type).(*onnxpb.TypeProto)
			e := int32(t)
			v.Type.GetTensorType().ElemType = &e
		}
	}
	cast := func(v *canonical.Value, to canonical.DataType) (*canonical.Value, error) {
		e := build.On(g, nm, v.Name)
		w := e.Op("Cast", []*canonical.Value{v}, canonical.IntAttr("to", int64(to)))
		return w, e.Err()
	}
	lowOf := func(v *canonical.Value) (*canonical.Value, error) {
		if low[v] {
			return v, nil
		}
		if w := toLow[v]; w != nil {
			return w, nil
		}
		var w *canonical.Value
		if t := constOf(v); t != nil {
			lt, err := lowConst(t, dt)
			if err != nil {
				return nil, fmt.Errorf("initializer %q: %w", v.Name, err)
			}
			e := build.On(g, nm, v.Name)
			w = e.Const(canonical.ElemTypeName(dt), lt)
			if err := e.Err(); err != nil {
				return nil, err
			}
		} else {
			var err error
			if w, err = cast(v, dt); err != nil {
				return nil, err
			}
		}
		toLow[v] = w
		return w, nil
	}
	highOf := func(v *canonical.Value) (*canonical.Value, error) {
		if w := toHigh[v]; w != nil {
			return w, nil
		}
		w, err := cast(v, canonical.Float)
		if err != nil {
			return nil, err
		}
		toHigh[v] = w
		return w, nil
	}
	if !keepIO {
		for _, v := range verify.GraphInputs(c) {
			if elemType(v) == canonical.Float {
				setType(v, dt)
				low[v] = true
			}
		}
	}
	idle := idleNodes(c, order, dt, block, keep, low, runs)
	for i, n := range order {
		hasFloat := false
		for _, in := range n.Inputs {
			if elemType(in) == canonical.Float && !low[in] || low[in] {
				hasFloat = true
			}
		}
		if !hasFloat {
			continue
		}
		retyped := func(v *canonical.Value) bool { return low[v] || elemType(v) == canonical.Float }
		other := keep[i] || block[n.OpType] || (n.Domain != "" && n.Domain != "ai.onnx") || len(n.Subgraphs()) > 0 || idle[n]
		if other || !schemaAllowsLow(c, n, dt, retyped, runs) {
			switch {
			case !other:
				counts.unsupported++
			case !keep[i]:
				counts.blocked++
			}
			for k, in := range n.Inputs {
				if in != nil && low[in] {
					w, err := highOf(in)
					if err != nil {
						return fail(err)
					}
					n.SetInput(k, w)
				}
			}
			continue
		}
		counts.converted++
		for k, in := range n.Inputs {
			if in != nil && elemType(in) == canonical.Float && !low[in] {
				w, err := lowOf(in)
				if err != nil {
					return fail(err)
				}
				n.SetInput(k, w)
			}
		}
		if n.OpType == "Cast" && canonical.DataType(n.AttrInt("to", 0)) == canonical.Float {
			n.SetAttr(canonical.IntAttr("to", int64(dt)))
		}
		for _, o := range n.Outputs {
			if o != nil && elemType(o) == canonical.Float {
				setType(o, dt)
				low[o] = true
			}
		}
	}
	// Graph outputs.
	for i, o := range g.Outputs {
		if !low[o] || producer(o) == nil {
			continue
		}
		if !keepIO {
			continue
		}
		name := o.Name
		if err := g.RenameValue(o, nm.Fresh(name+"_"+canonical.ElemTypeName(dt))); err != nil {
			return fail(err)
		}
		w, err := cast(o, canonical.Float)
		if err != nil {
			return fail(err)
		}
		if err := g.RenameValue(w, name); err != nil {
			return fail(err)
		}
		w.Type = canonical.TensorType(canonical.Float, nil)
		if d, _, ok := tensorDims(o); ok {
			w.Type = canonical.TensorType(canonical.Float, d)
		}
		g.Outputs[i] = w
	}
	// Float32 initializers nothing uses any more.
	_, _ = eliminateDead(c, Options{})
	order, err = g.TopoSort()
	if err != nil {
		return fail(err)
	}
	g.Nodes = order
	// value_info keeps its entries: the converted values' types were
	// changed in place (setType); entries of values no longer in the
	// graph go.
	pruneValueInfo(c)
	return c, counts, nil
}

// convertCounts counts convertFloat's nodes: computed in the low type,
// kept in float32 by the block list (or domain, or subgraphs), and kept
// because their schema or kernel has no low type.
type convertCounts struct {
	converted, blocked, unsupported int
}

// lowConst returns t in dt (Float16 or BFloat16), its values clamped to
// dt's largest finite magnitude. A float32 tensor is converted from its
// bytes (a mapped external weight read in place) into the dt bytes alone:
// through float64 a 2 GiB weight took 4 GiB more.
func lowConst(t *canonical.Tensor, dt canonical.DataType) (*canonical.Tensor, error) {
	lim := 65504.0
	conv := canonical.Float32ToFloat16
	if dt == canonical.BFloat16 {
		lim, conv = 3.38e38, canonical.Float32ToBFloat16
	}
	if t.DataType == canonical.Float {
		raw, err := t.Bytes()
		if err != nil {
			return nil, err
		}
		out := make([]byte, len(raw)/2)
		for i := 0; i+4 <= len(raw); i += 4 {
			x := float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[i:])))
			binary.LittleEndian.PutUint16(out[i/2:], conv(float32(max(-lim, min(lim, x)))))
		}
		return canonical.NewTensor("", dt, slices.Clone(t.Dims), out), nil
	}
	f, ok := floats(t)
	if !ok {
		return nil, fmt.Errorf("cannot read")
	}
	for i, x := range f {
		f[i] = max(-lim, min(lim, x))
	}
	return canonical.NumberTensor("", dt, slices.Clone(t.Dims), f), nil
}
