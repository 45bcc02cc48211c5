package adapt

import (
	"fmt"
	"math"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	"github.com/onnxconv/onnxconv/canonical/infer"
	"github.com/onnxconv/onnxconv/exporters/profiles"
	"github.com/onnxconv/onnxconv/opset/convert"
	"github.com/onnxconv/onnxconv/passes"
)

// msDomain is ONNX Runtime's contrib operator domain.
const msDomain = "com.microsoft"

// ContribOpset is the ai.onnx opset whose operators Adapt rewrites into
// ONNX Runtime's contrib operators for p (23), or 0 when p does not run
// them.
func ContribOpset(p *profiles.Profile) int {
	if runsContrib(p) {
		return 23
	}
	return 0
}

// runsContrib reports whether p is an ONNX Runtime profile that runs the
// com.microsoft operators and ai.onnx opset 23 (where the standard ops the
// contrib ops stand for exist).
func runsContrib(p *profiles.Profile) bool {
	ok, _ := p.Supports(msDomain, "MultiHeadAttention", 1)
	return ok && p.MaxOpset >= 23
}

// toContrib rewrites, for an ONNX Runtime target, the standard opset-23
// operators of LLM graphs into the contrib operators ONNX Runtime's CPU
// provider runs with its fused kernels, each only where the contrib form
// computes exactly the same:
//
//   - Add + RMSNormalization over the last axis (a residual: the sum is
//     used again) → com.microsoft SkipSimplifiedLayerNormalization, its sum
//     output the Add's; Add + LayerNormalization → com.microsoft
//     SkipLayerNormalization (a lone RMSNormalization stays: ONNX Runtime
//     runs RMSNormalization-23, and its SimplifiedLayerNormalization sits
//     in the ai.onnx domain, where the ONNX checker refuses it);
//   - RotaryEmbedding → com.microsoft RotaryEmbedding (caches gathered per
//     token, [B, S, D/2], become [B·S, D/2] caches read at positions
//     0 … B·S-1);
//   - 4-D Attention without a cache input, causal flag, softcap or QK
//     output, as many key as query heads → com.microsoft
//     MultiHeadAttention (query [B, S, N·H], key and value [B, N, T, H],
//     the mask as attention_bias);
//   - MatMul of a blockwise DequantizeLinear (opset 21: 4 or 8 bits along
//     K) of constants → com.microsoft MatMulNBits, at any opset (the
//     others need 23).
//
// Every rewritten node is listed in the report.
func toContrib(r *Report, m *canonical.Model, names *canonical.Namer) error {
	at23 := m.Opset("") >= 23
	if !at23 && !slices.ContainsFunc(m.Graph.Nodes, func(n *canonical.Node) bool { return n.OpType == "DequantizeLinear" }) {
		return nil
	}
	_, _ = infer.Infer(m, infer.Options{NoValueInfo: true})
	g := m.Graph
	rewrote := false
	for _, n := range append([]*canonical.Node(nil), g.Nodes...) {
		if n.Graph != g || (n.Domain != "" && n.Domain != "ai.onnx") {
			continue
		}
		var what string
		var err error
		switch {
		case n.OpType == "MatMul":
			what, err = contribMatMulNBits(g, n, names)
		case !at23:
		case n.OpType == "RMSNormalization", n.OpType == "LayerNormalization":
			what, err = contribNorm(g, n, names)
		case n.OpType == "RotaryEmbedding":
			what, err = contribRotary(g, n, names)
		case n.OpType == "Attention":
			what, err = contribAttention(g, n, names)
		}
		if err != nil {
			r.Notes = append(r.Notes, fmt.Sprintf("%s %q: kept as it is: %v", n.OpType, n.Name, err))
			continue
		}
		if what != "" {
			rewrote = true
			r.Actions = append(r.Actions, Action{Graph: "main", Node: n.Name, OpType: n.OpType, What: what})
		}
	}
	if !rewrote {
		return nil
	}
	if m.Opset(msDomain) == 0 {
		m.SetOpset(msDomain, 1)
	}
	// GroupQueryAttention gives the present that nodes before it read
	// (the cache's length): order the graph again.
	sorted, err := g.TopoSort()
	if err != nil {
		return fmt.Errorf("ordering the graph after the contrib rewrites: %w", err)
	}
	g.Nodes = sorted
	// What computed the replaced nodes' shapes (repeat_kv's) is dead.
	before := len(g.Nodes)
	if err := passes.EliminateDead(m); err != nil {
		return fmt.Errorf("removing the nodes the contrib rewrites left unused: %w", err)
	}
	if d := before - len(g.Nodes); d > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d node(s) left unused by the contrib rewrites removed", d))
	}
	return nil
}

// msNode adds a com.microsoft node whose outputs are those marked in
// outs (the others absent), named after e's base.
func msNode(e *build.Editor, op string, outs []bool, in []*canonical.Value, attrs ...*canonical.Attribute) ([]*canonical.Value, error) {
	if err := e.Err(); err != nil {
		return nil, err
	}
	name := e.Names.Fresh(e.Base + "_" + op)
	names := make([]string, len(outs))
	for i, present := range outs {
		if present {
			names[i] = e.Names.Fresh(fmt.Sprintf("%s_out%d", name, i))
		}
	}
	n, err := e.G.AddNode(name, msDomain, op, in, names, attrs...)
	if err != nil {
		return nil, fmt.Errorf("adding %s node %q: %w", op, name, err)
	}
	e.Added = append(e.Added, n)
	return n.Outputs, nil
}

// splice puts the nodes e added right before at, makes every use of each
// old value use its new one (a graph output keeps its name) and removes
// the replaced nodes.
func splice(g *canonical.Graph, e *build.Editor, at *canonical.Node, old, nw []*canonical.Value, drop ...*canonical.Node) error {
	g.MoveNodes(e.Added, at)
	for i, o := range old {
		g.ReplaceAllUsesWith(o, nw[i])
	}
	for _, d := range drop {
		g.RemoveNode(d)
	}
	for i, o := range old {
		if !isListed(g.Outputs, nw[i]) {
			continue
		}
		if err := g.RenameValue(nw[i], o.Name); err != nil {
			return fmt.Errorf("keeping the output name %q: %w", o.Name, err)
		}
		if nw[i].Type == nil {
			nw[i].Type = o.Type
		}
	}
	return nil
}

// lastAxis reports whether the normalization of n is over the last axis
// only of its input.
func lastAxis(n *canonical.Node) bool {
	ax := n.AttrInt("axis", -1)
	if ax == -1 {
		return true
	}
	_, d, ok, _ := canonical.TensorTypeOf(n.Input(0).Type)
	return ok && int(ax) == len(d)-1
}

// contribNorm rewrites an RMSNormalization or LayerNormalization over the
// last axis with a 1-D scale.
func contribNorm(g *canonical.Graph, n *canonical.Node, names *canonical.Namer) (string, error) {
	rms := n.OpType == "RMSNormalization"
	if !lastAxis(n) || len(n.Outputs) > 1 && n.Output(1) != nil || len(n.Outputs) > 2 && n.Output(2) != nil {
		return "", nil
	}
	if st := n.AttrInt("stash_type", 1); st != 1 {
		return "", nil
	}
	x := n.Input(0)
	_, xd, okx, _ := canonical.TensorTypeOf(x.Type)
	_, sd, oks, _ := canonical.TensorTypeOf(n.Input(1).Type)
	if !okx || !oks || len(sd) != 1 || len(xd) < 2 || len(xd) > 3 || !xd[len(xd)-1].Known || !sd[0].Known || sd[0].Value != xd[len(xd)-1].Value {
		return "", nil
	}
	eps := canonical.FloatAttr("epsilon", n.AttrFloat("epsilon", 1e-5))
	e := build.On(g, names, n.Name)
	if add, _ := x.Producer(); add != nil && add.OpType == "Add" && (add.Domain == "" || add.Domain == "ai.onnx") &&
		add.Graph == g && len(xd) == 3 && sameShapeValues(add.Input(0), add.Input(1)) {
		ins := []*canonical.Value{add.Input(0), add.Input(1), n.Input(1)}
		op, what := "SkipSimplifiedLayerNormalization", "with the Add %q before it, became com.microsoft SkipSimplifiedLayerNormalization (ONNX Runtime's fused residual kernel)"
		if !rms {
			op, what = "SkipLayerNormalization", "with the Add %q before it, became com.microsoft SkipLayerNormalization (ONNX Runtime's fused residual kernel)"
			if b := n.Input(2); b != nil {
				ins = append(ins, b)
			}
		}
		// Only y and the sum are read: mean and inv_std_var stay absent.
		outs, err := msNode(e, op, []bool{true, false, false, true}, ins, eps)
		if err != nil {
			return "", err
		}
		outs[0].Type, outs[3].Type = n.Output(0).Type, add.Output(0).Type
		if err := splice(g, e, add, []*canonical.Value{n.Output(0), add.Output(0)}, []*canonical.Value{outs[0], outs[3]}, n, add); err != nil {
			return "", err
		}
		return fmt.Sprintf(what, add.Name), nil
	}
	// ONNX Runtime runs LayerNormalization and RMSNormalization-23 with
	// kernels of their own; its SimplifiedLayerNormalization sits in the
	// ai.onnx domain, where the ONNX checker refuses it.
	return "", nil
}

// sameShapeValues reports whether a and b are declared with the same
// dims (each the same known size or the same named dim).
func sameShapeValues(a, b *canonical.Value) bool {
	_, ad, aok, _ := canonical.TensorTypeOf(a.Type)
	_, bd, bok, _ := canonical.TensorTypeOf(b.Type)
	if !aok || !bok || len(ad) != len(bd) {
		return false
	}
	for i := range ad {
		if !ad[i].Same(bd[i]) {
			return false
		}
	}
	return true
}

// contribRotary rewrites RotaryEmbedding (x, cos, sin[, position_ids]).
func contribRotary(g *canonical.Graph, n *canonical.Node, names *canonical.Namer) (string, error) {
	x, cos, sin := n.Input(0), n.Input(1), n.Input(2)
	_, xd, okx, _ := canonical.TensorTypeOf(x.Type)
	_, cd, okc, _ := canonical.TensorTypeOf(cos.Type)
	if !okx || !okc || (len(xd) != 3 && len(xd) != 4) {
		return "", nil
	}
	if len(xd) == 3 && n.AttrInt("num_heads", 0) == 0 {
		return "", nil
	}
	attrs := []*canonical.Attribute{canonical.IntAttr("interleaved", n.AttrInt("interleaved", 0))}
	for _, a := range []string{"num_heads", "rotary_embedding_dim"} {
		if v := n.AttrInt(a, 0); v != 0 {
			attrs = append(attrs, canonical.IntAttr(a, v))
		}
	}
	e := build.On(g, names, n.Name)
	pos := n.Input(3)
	how := "became com.microsoft RotaryEmbedding"
	if pos == nil {
		// Caches [B, S, D/2] gathered for each token: read as
		// [B·S, D/2] at positions 0 … B·S-1.
		if len(cd) != 3 || !cd[2].Known {
			return "", nil
		}
		half := cd[2].Value
		bs := e.Op("Shape", []*canonical.Value{cos}, canonical.IntAttr("end", 2))
		count := e.Op("ReduceProd", []*canonical.Value{bs}, canonical.IntAttr("keepdims", 0))
		pos = e.Op("Reshape", []*canonical.Value{e.Op("Range", []*canonical.Value{e.Int64s(nil, 0), count, e.Int64s(nil, 1)}), bs})
		flat := e.Int64s([]int64{2}, -1, half)
		cos = e.Op("Reshape", []*canonical.Value{cos, flat})
		sin = e.Op("Reshape", []*canonical.Value{sin, flat})
		how += " (the per-token caches read as [batch·sequence, D/2] at positions 0 … batch·sequence-1)"
	} else if len(cd) != 2 {
		return "", nil
	}
	y, err := msNode(e, "RotaryEmbedding", []bool{true}, []*canonical.Value{x, pos, cos, sin}, attrs...)
	if err != nil {
		return "", err
	}
	y[0].Type = n.Output(0).Type
	if err := splice(g, e, n, []*canonical.Value{n.Output(0)}, y, n); err != nil {
		return "", err
	}
	return how, nil
}

// contribAttention rewrites a 4-D Attention (Q [B, N, S, H], K and V
// [B, N, T, H]) with as many key as query heads, no cache, no causal flag,
// softcap or QK output, and a float mask (if any) of the keys' length into
// MultiHeadAttention: Q goes to [B, S, N·H], the output comes back to
// [B, N, S, H] (or straight to [B, S, N, H] when a Transpose did that).
func contribAttention(g *canonical.Graph, n *canonical.Node, names *canonical.Namer) (string, error) {
	if len(n.Inputs) > 4 || n.AttrInt("is_causal", 0) != 0 || n.AttrFloat("softcap", 0) != 0 || n.AttrInt("softmax_precision", 0) != 0 {
		return "", nil
	}
	for i := 1; i < len(n.Outputs); i++ {
		if n.Output(i) != nil {
			return "", nil
		}
	}
	if what, err := contribGQA(g, n, names); what != "" || err != nil {
		return what, err
	}
	q, k, v := n.Input(0), n.Input(1), n.Input(2)
	qt, qd, okq, _ := canonical.TensorTypeOf(q.Type)
	_, kd, okk, _ := canonical.TensorTypeOf(k.Type)
	_, vd, okv, _ := canonical.TensorTypeOf(v.Type)
	if !okq || !okk || !okv || qt != canonical.Float || len(qd) != 4 || len(kd) != 4 || len(vd) != 4 ||
		!qd[1].Known || !qd[3].Known || !qd[1].Same(kd[1]) || !qd[1].Same(vd[1]) || !qd[3].Same(kd[3]) || !vd[3].Known {
		return "", nil
	}
	heads, hv := qd[1].Value, vd[3].Value
	var mask *canonical.Value
	if len(n.Inputs) == 4 && n.Input(3) != nil {
		mask = n.Input(3)
		mt, md, ok, _ := canonical.TensorTypeOf(mask.Type)
		if !ok || mt != canonical.Float || len(md) > 4 || !keysLong(mask, md, kd[2], k) {
			return "", nil
		}
	}
	e := build.On(g, names, n.Name)
	q3 := e.Op("Reshape", []*canonical.Value{e.Op("Transpose", []*canonical.Value{q}, canonical.IntsAttr("perm", 0, 2, 1, 3)), e.Int64s([]int64{3}, 0, 0, -1)})
	ins := []*canonical.Value{q3, k, v}
	if mask != nil {
		_, md, _, _ := canonical.TensorTypeOf(mask.Type)
		if len(md) < 4 {
			axes := make([]int64, 4-len(md))
			for i := range axes {
				axes[i] = int64(i)
			}
			mask = e.Op("Unsqueeze", []*canonical.Value{mask, e.Int64s([]int64{int64(len(axes))}, axes...)})
		}
		ins = append(ins, nil, nil, mask)
	}
	attrs := []*canonical.Attribute{canonical.IntAttr("num_heads", heads)}
	if a := n.Attr("scale"); a != nil {
		attrs = append(attrs, canonical.FloatAttr("scale", a.F))
	}
	y3, err := msNode(e, "MultiHeadAttention", []bool{true}, ins, attrs...)
	if err != nil {
		return "", err
	}
	out, y, drop := headsBack(e, n, y3[0], heads, hv)
	if err := e.Err(); err != nil {
		return "", err
	}
	if err := splice(g, e, n, []*canonical.Value{out}, []*canonical.Value{y}, drop...); err != nil {
		return "", err
	}
	return fmt.Sprintf("became com.microsoft MultiHeadAttention (%d heads; query to [batch, sequence, heads·size], key and value as they are, the mask as attention_bias)", heads), nil
}

// headsBack brings y3, an attention output [B, S, N·H], back to what the
// 4-D Attention n gave, [B, N, S, H]; or, when n's output only feeds a
// Transpose to [B, S, N, H], to that Transpose's output. It returns the
// value to replace, its replacement (typed as it) and the nodes that go.
func headsBack(e *build.Editor, n *canonical.Node, y3 *canonical.Value, heads, size int64) (*canonical.Value, *canonical.Value, []*canonical.Node) {
	y := e.Op("Reshape", []*canonical.Value{y3, e.Int64s([]int64{4}, 0, 0, heads, size)})
	out, drop := n.Output(0), []*canonical.Node{n}
	if uses := out.Uses(); len(uses) == 1 && !isListed(n.Graph.Outputs, out) {
		if tr := uses[0].Node; tr.OpType == "Transpose" && (tr.Domain == "" || tr.Domain == "ai.onnx") && slices.Equal(tr.AttrInts("perm", nil), []int64{0, 2, 1, 3}) {
			out, drop = tr.Output(0), []*canonical.Node{tr, n}
		}
	}
	if len(drop) == 1 {
		y = e.Op("Transpose", []*canonical.Value{y}, canonical.IntsAttr("perm", 0, 2, 1, 3))
	}
	if y != nil {
		y.Type = out.Type
	}
	return out, y, drop
}

// keysLong reports whether a mask of dims md is as long as the keys (T,
// the keys k's dim 2) in its last dim: the same dim, or an Expand to a
// shape ending in the keys' length (what fuse-attention writes).
func keysLong(mask *canonical.Value, md []canonical.Dim, t canonical.Dim, k *canonical.Value) bool {
	if len(md) > 0 && md[len(md)-1].Same(t) {
		return true
	}
	ex, _ := mask.Producer()
	if ex == nil || ex.OpType != "Expand" {
		return false
	}
	cat, _ := ex.Input(1).Producer()
	if cat == nil || cat.OpType != "Concat" || len(cat.Inputs) == 0 {
		return false
	}
	sh, _ := cat.Inputs[len(cat.Inputs)-1].Producer()
	return sh != nil && sh.OpType == "Shape" && sh.Input(0) == k && sh.AttrInt("start", 0) == 2 && sh.AttrInt("end", 0) == 3
}

// fromContrib rewrites, for a target without ONNX Runtime's contrib ops,
// those that have an exact standard form into it: com.microsoft
// SkipSimplifiedLayerNormalization and SkipLayerNormalization into Add and
// RMSNormalization or LayerNormalization, SimplifiedLayerNormalization
// (ai.onnx domain, as ONNX Runtime registers it) into RMSNormalization,
// com.microsoft RotaryEmbedding into RotaryEmbedding with position_ids,
// MultiHeadAttention (separate query, key and value, no bias, padding
// mask or cache) into Attention. The standard ops are opset-23 ops: it
// runs before the opset conversion, which expands them for a lower target;
// a model below 23 is first moved to 23. Rounds of shape inference and
// rewriting go on while a round rewrites something (a rewrite gives the
// nodes after it known ranks). What has no exact standard form stays for
// check to report.
func fromContrib(r *Report, m *canonical.Model, p *profiles.Profile) error {
	g := m.Graph
	wanted := func(n *canonical.Node) bool {
		onnxDomain := n.Domain == "" || n.Domain == "ai.onnx"
		if onnxDomain {
			return n.OpType == "SimplifiedLayerNormalization"
		}
		if n.Domain != msDomain {
			return false
		}
		ok, _ := p.Supports(n.Domain, n.OpType, 1)
		return !ok
	}
	var todo []*canonical.Node
	for _, n := range g.Nodes {
		if wanted(n) {
			todo = append(todo, n)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	// The standard forms are opset-23 ops; those of the quantized weights
	// opset-21 ops, or float constants below 21 (need 0).
	need := 0
	for _, n := range todo {
		switch {
		case n.OpType != "MatMulNBits" && n.OpType != "GatherBlockQuantized":
			need = 23
		case r.ToOpset >= blockOpset:
			need = max(need, blockOpset)
		}
	}
	if from := int(m.Opset("")); from < need {
		if _, err := convert.Convert(m, convert.Options{To: need}); err != nil {
			return fmt.Errorf("moving the model to opset %d for the standard forms of its contrib ops: %w", need, err)
		}
		r.Notes = append(r.Notes, fmt.Sprintf("moved from opset %d to %d first: the standard forms of ONNX Runtime's contrib ops are opset-%d ops", from, need, need))
	}
	names := canonical.NewNamer(m)
	failed, done := map[*canonical.Node]error{}, map[*canonical.Node]bool{}
	for progress := true; progress; {
		progress = false
		_, _ = infer.Infer(m, infer.Options{NoValueInfo: true})
		for _, n := range todo {
			if done[n] {
				continue
			}
			e := build.On(g, names, n.Name)
			var outs []*canonical.Value
			var err error
			switch n.OpType {
			case "SimplifiedLayerNormalization", "SkipSimplifiedLayerNormalization", "SkipLayerNormalization":
				outs, err = standardNorm(e, n)
			case "RotaryEmbedding":
				outs, err = standardRotary(e, n)
			case "MultiHeadAttention":
				outs, err = standardAttention(e, n)
			case "GroupQueryAttention":
				outs, err = standardGQA(e, n)
			case "MatMulNBits", "GatherBlockQuantized":
				var note string
				if outs, note, err = standardQuant(e, n, r.ToOpset); note != "" && err == nil {
					r.Notes = append(r.Notes, note)
				}
				if a := n.Attr("accuracy_level"); err == nil && n.OpType == "MatMulNBits" && a != nil && a.I == 4 && r.Tolerance == "" {
					r.Tolerance = "int8"
					r.Notes = append(r.Notes, fmt.Sprintf("MatMulNBits %q and the others of accuracy_level 4 quantize their activations to int8 by blocks; their standard form computes them in float32, so the result is verified with the int8 profile (one quantization step)", n.Name))
				}
			default:
				err = fmt.Errorf("no standard form is known")
			}
			if err == nil {
				err = e.Err()
			}
			if err != nil {
				for i := len(e.Added) - 1; i >= 0; i-- {
					g.RemoveNode(e.Added[i])
				}
				failed[n] = err
				continue
			}
			delete(failed, n)
			var old, nw []*canonical.Value
			for i, o := range n.Outputs {
				if o != nil {
					old, nw = append(old, o), append(nw, outs[i])
					if outs[i].Type == nil {
						outs[i].Type = o.Type
					}
				}
			}
			var ops []string
			for _, a := range e.Added {
				ops = append(ops, a.OpType)
			}
			if err := splice(g, e, n, old, nw, n); err != nil {
				return fmt.Errorf("%s %q: %w", n.OpType, n.Name, err)
			}
			done[n] = true
			progress = true
			r.Actions = append(r.Actions, Action{Graph: "main", Node: n.Name, OpType: n.OpType,
				What: fmt.Sprintf("rewritten into %s (%s lacks ONNX Runtime's contrib ops)", opList(ops), p.Name)})
		}
	}
	if len(done) > 0 {
		// The contrib ops' packed weights are left unused.
		if err := passes.EliminateDead(m); err != nil {
			return fmt.Errorf("removing what the contrib ops' standard forms left unused: %w", err)
		}
		dropUnusedMS(m)
	}
	for _, n := range todo {
		if err := failed[n]; err != nil {
			r.Notes = append(r.Notes, fmt.Sprintf("%s %q: %s lacks it and it has no standard form here: %v", n.OpType, n.Name, p.Name, err))
		}
	}
	return nil
}

// dropUnusedMS removes the com.microsoft opset import when no node of the
// model (graphs or functions) is in that domain any more.
func dropUnusedMS(m *canonical.Model) {
	used := len(m.Functions) > 0 // functions keep their imports
	walk(m.Graph, "main", func(_ *canonical.Graph, _ string, _ int, n *canonical.Node) {
		used = used || n.Domain == msDomain
	})
	if !used {
		m.OpsetImports = slices.DeleteFunc(m.OpsetImports, func(o canonical.OpsetID) bool { return o.Domain == msDomain })
	}
}

// absentAfter reports an error when an output of n from i on is used.
func absentAfter(n *canonical.Node, i int, what string) error {
	for ; i < len(n.Outputs); i++ {
		if o := n.Output(i); o != nil && (len(o.Uses()) > 0 || isListed(n.Graph.Outputs, o)) {
			return fmt.Errorf("its output %d (%s) is used", i, what)
		}
	}
	return nil
}

// standardNorm writes the normalizations: outputs y (and the skip sum at
// 3), the statistics outputs refused when used.
func standardNorm(e *build.Editor, n *canonical.Node) ([]*canonical.Value, error) {
	eps := canonical.FloatAttr("epsilon", n.AttrFloat("epsilon", 1e-5))
	outs := make([]*canonical.Value, len(n.Outputs))
	if n.OpType == "SimplifiedLayerNormalization" {
		if err := absentAfter(n, 1, "inv_std_var"); err != nil {
			return nil, err
		}
		outs[0] = e.Op("RMSNormalization", []*canonical.Value{n.Input(0), n.Input(1)}, canonical.IntAttr("axis", n.AttrInt("axis", -1)), eps,
			canonical.IntAttr("stash_type", n.AttrInt("stash_type", 1)))
		return outs, nil
	}
	for i, what := range []string{1: "mean", 2: "inv_std_var"} {
		if o := n.Output(i); i > 0 && o != nil && (len(o.Uses()) > 0 || isListed(n.Graph.Outputs, o)) {
			return nil, fmt.Errorf("its output %d (%s) is used", i, what)
		}
	}
	simplified := n.OpType == "SkipSimplifiedLayerNormalization"
	bias := n.Input(3)
	if !simplified {
		bias = n.Input(4)
	}
	sum := e.Op("Add", []*canonical.Value{n.Input(0), n.Input(1)})
	if bias != nil {
		sum = e.Op("Add", []*canonical.Value{sum, bias})
	}
	if simplified {
		outs[0] = e.Op("RMSNormalization", []*canonical.Value{sum, n.Input(2)}, canonical.IntAttr("axis", -1), eps)
	} else {
		ins := []*canonical.Value{sum, n.Input(2)}
		if b := n.Input(3); b != nil {
			ins = append(ins, b)
		}
		outs[0] = e.Op("LayerNormalization", ins, canonical.IntAttr("axis", -1), eps)
	}
	if len(outs) > 3 {
		outs[3] = sum
		if p, _ := sum.Producer(); p == nil {
			outs[3] = e.Op("Identity", []*canonical.Value{sum})
		}
	}
	return outs, nil
}

// standardRotary writes com.microsoft RotaryEmbedding (input,
// position_ids, cos_cache, sin_cache) as RotaryEmbedding (input,
// cos_cache, sin_cache, position_ids); one start position becomes the
// positions start … start+S-1 of every batch.
func standardRotary(e *build.Editor, n *canonical.Node) ([]*canonical.Value, error) {
	if s := n.AttrFloat("scale", 1); s != 1 || n.AttrInt("is_packed_batching", 0) != 0 {
		return nil, fmt.Errorf("scale %g and is_packed_batching %d have no standard form", s, n.AttrInt("is_packed_batching", 0))
	}
	x, pos := n.Input(0), n.Input(1)
	_, xd, okx, _ := canonical.TensorTypeOf(x.Type)
	_, pd, okp, _ := canonical.TensorTypeOf(pos.Type)
	_, cd, okc, _ := canonical.TensorTypeOf(n.Input(2).Type)
	if !okx || !okp || !okc || (len(xd) != 3 && len(xd) != 4) || len(cd) != 2 {
		return nil, fmt.Errorf("the input's and caches' ranks are not known")
	}
	attrs := []*canonical.Attribute{canonical.IntAttr("interleaved", n.AttrInt("interleaved", 0))}
	if rd := n.AttrInt("rotary_embedding_dim", 0); rd != 0 {
		attrs = append(attrs, canonical.IntAttr("rotary_embedding_dim", rd))
	}
	if len(xd) == 3 {
		heads := n.AttrInt("num_heads", 0)
		if heads == 0 {
			// Heads as wide as the rotary dim (ONNX Runtime's rule).
			if !xd[2].Known || !cd[1].Known || cd[1].Value == 0 {
				return nil, fmt.Errorf("num_heads is not set and the hidden size or the caches' width is not known")
			}
			heads = xd[2].Value / (2 * cd[1].Value)
		}
		attrs = append(attrs, canonical.IntAttr("num_heads", heads))
	}
	if len(pd) != 2 {
		// One start: positions start + [0, S) for every batch.
		seq, batch := int64(1), int64(0)
		if len(xd) == 4 {
			seq = 2
		}
		b := e.Op("Shape", []*canonical.Value{x}, canonical.IntAttr("start", batch), canonical.IntAttr("end", batch+1))
		s := e.Op("Shape", []*canonical.Value{x}, canonical.IntAttr("start", seq), canonical.IntAttr("end", seq+1))
		start := e.Op("Reshape", []*canonical.Value{pos, e.Int64s([]int64{0})})
		limit := e.Op("Add", []*canonical.Value{start, e.Op("Squeeze", []*canonical.Value{s, e.Int64s([]int64{1}, 0)})})
		row := e.Op("Unsqueeze", []*canonical.Value{e.Op("Range", []*canonical.Value{start, limit, e.Int64s(nil, 1)}), e.Int64s([]int64{1}, 0)})
		pos = e.Op("Expand", []*canonical.Value{row, e.Op("Concat", []*canonical.Value{b, s}, canonical.IntAttr("axis", 0))})
	}
	return []*canonical.Value{e.Op("RotaryEmbedding", []*canonical.Value{x, n.Input(2), n.Input(3), pos}, attrs...)}, nil
}

// standardAttention writes MultiHeadAttention with separate query [B, S,
// N·H], key and value ([B, T, N·H], or [B, N, T, H]), an optional
// attention_bias and unidirectional only without a cache, as Attention.
func standardAttention(e *build.Editor, n *canonical.Node) ([]*canonical.Value, error) {
	for i, what := range map[int]string{3: "bias", 4: "key_padding_mask", 6: "past_key", 7: "past_value", 8: "past_sequence_length", 9: "cache_indirection"} {
		if n.Input(i) != nil {
			return nil, fmt.Errorf("input %d (%s) has no standard form here", i, what)
		}
	}
	if err := absentAfter(n, 1, "present_key, present_value, qk"); err != nil {
		return nil, err
	}
	heads := n.AttrInt("num_heads", 0)
	q, k, v := n.Input(0), n.Input(1), n.Input(2)
	if k == nil || v == nil || heads <= 0 {
		return nil, fmt.Errorf("packed query, key and value have no standard form here")
	}
	_, qd, okq, _ := canonical.TensorTypeOf(q.Type)
	_, kd, okk, _ := canonical.TensorTypeOf(k.Type)
	if !okq || !okk || len(qd) != 3 || (len(kd) != 3 && len(kd) != 4) {
		return nil, fmt.Errorf("the ranks of query and key are not 3 and 3 or 4")
	}
	var attrs []*canonical.Attribute
	if a := n.Attr("scale"); a != nil {
		attrs = append(attrs, canonical.FloatAttr("scale", a.F))
	}
	if n.AttrInt("unidirectional", 0) != 0 {
		// Without a cache ONNX Runtime's causal mask (key j > query i)
		// is Attention's is_causal.
		attrs = append(attrs, canonical.IntAttr("is_causal", 1))
	}
	ins := []*canonical.Value{q, k, v}
	if m := n.Input(5); m != nil {
		ins = append(ins, m)
	}
	if len(kd) == 3 {
		attrs = append(attrs, canonical.IntAttr("q_num_heads", heads), canonical.IntAttr("kv_num_heads", heads))
		return []*canonical.Value{e.Op("Attention", ins, attrs...)}, nil
	}
	// Key and value [B, N, T, H]: the query split into heads, the output
	// merged back.
	ins[0] = e.Op("Transpose", []*canonical.Value{e.Op("Reshape", []*canonical.Value{q, e.Int64s([]int64{4}, 0, 0, heads, -1)})}, canonical.IntsAttr("perm", 0, 2, 1, 3))
	y := e.Op("Attention", ins, attrs...)
	y = e.Op("Reshape", []*canonical.Value{e.Op("Transpose", []*canonical.Value{y}, canonical.IntsAttr("perm", 0, 2, 1, 3)), e.Int64s([]int64{3}, 0, 0, -1)})
	return []*canonical.Value{y}, nil
}

// cacheRepeat is a key or value input of Attention made from a KV cache:
// cat = Concat(past, cur) along the sequence (axis 2, a graph output: the
// present), as it is or repeated to the query heads by torch's repeat_kv
// (Reshape(Expand(Unsqueeze(cat, 2)))). own are the repeat's nodes.
type cacheRepeat struct {
	cat       *canonical.Node
	past, cur *canonical.Value
	own       []*canonical.Node
	// lens are Shape nodes reading the repeat's length (dim 2), which is
	// the present's.
	lens []*canonical.Node
}

// lengthReads returns the nodes using x, which must be Attention nodes and
// Shape nodes of its dim 2 (those are returned).
func lengthReads(x *canonical.Value) ([]*canonical.Node, bool) {
	var lens []*canonical.Node
	for _, u := range x.Uses() {
		if sh := u.Node; sh.OpType == "Shape" && sh.AttrInt("start", 0) == 2 && sh.AttrInt("end", 0) == 3 {
			lens = append(lens, sh)
		} else if sh.OpType != "Attention" {
			return nil, false
		}
	}
	return lens, true
}

// cacheConcat matches x = Concat(past, cur) along axis 2, past a graph
// input and x a graph output (a present).
func cacheConcat(x *canonical.Value) (*canonical.Node, bool) {
	cat, _ := x.Producer()
	if cat == nil || cat.OpType != "Concat" || cat.AttrInt("axis", 0) != 2 || len(cat.Inputs) != 2 || !isListed(cat.Graph.Outputs, x) {
		return nil, false
	}
	return cat, isListed(cat.Graph.Inputs, cat.Input(0))
}

// repeatOf matches a cacheRepeat ending at x, or the cache itself (no
// repeat: as many key/value heads as query heads).
func repeatOf(x *canonical.Value) (cacheRepeat, bool) {
	var r cacheRepeat
	if cat, ok := cacheConcat(x); ok {
		lens, ok := lengthReads(x)
		return cacheRepeat{cat: cat, past: cat.Input(0), cur: cat.Input(1), lens: lens}, ok
	}
	rs, _ := x.Producer()
	if rs == nil || rs.OpType != "Reshape" {
		return r, false
	}
	lens, ok := lengthReads(x)
	if !ok {
		return r, false
	}
	ex, _ := rs.Input(0).Producer()
	if ex == nil || ex.OpType != "Expand" || len(rs.Input(0).Uses()) != 1 {
		return r, false
	}
	un, _ := ex.Input(0).Producer()
	if un == nil || un.OpType != "Unsqueeze" || len(ex.Input(0).Uses()) != 1 || un.Input(1) == nil || un.Input(1).Const == nil {
		return r, false
	}
	if ax, err := un.Input(1).Const.Int64s(); err != nil || len(ax) != 1 || ax[0] != 2 {
		return r, false
	}
	cat, ok := cacheConcat(un.Input(0))
	if !ok {
		return r, false
	}
	return cacheRepeat{cat: cat, past: cat.Input(0), cur: cat.Input(1), own: []*canonical.Node{rs, ex, un}, lens: lens}, true
}

// contribGQA rewrites a 4-D Attention whose key and value are a KV cache
// (Concat of the past input and the new keys, a graph output), as it is
// or repeated to the query heads (repeat_kv), into com.microsoft
// GroupQueryAttention: it
// takes the new keys and values ([B, S, KVN·H]) and the past, gives the
// present as the Concat did, and attends causally over the cache as the
// new tokens' positions follow it (seqlens_k = total - 1 for every batch)
// with the mask as attention_bias.
func contribGQA(g *canonical.Graph, n *canonical.Node, names *canonical.Namer) (string, error) {
	if len(n.Inputs) < 4 || n.Input(3) == nil {
		return "", nil // without the mask the Attention is not causal
	}
	kr, okk := repeatOf(n.Input(1))
	vr, okv := repeatOf(n.Input(2))
	if !okk || !okv {
		return "", nil
	}
	q, mask := n.Input(0), n.Input(3)
	_, qd, okq, _ := canonical.TensorTypeOf(q.Type)
	_, cd, okc, _ := canonical.TensorTypeOf(kr.cur.Type)
	_, md, okm, _ := canonical.TensorTypeOf(mask.Type)
	if !okq || !okc || !okm || len(qd) != 4 || len(cd) != 4 || len(md) != 4 || !qd[1].Known || !cd[1].Known || !qd[3].Known ||
		!cd[3].Known || cd[3].Value != qd[3].Value || qd[1].Value%cd[1].Value != 0 {
		return "", nil
	}
	_, kd, _, _ := canonical.TensorTypeOf(n.Input(1).Type)
	if len(kd) != 4 || !keysLong(mask, md, kd[2], n.Input(1)) {
		return "", nil
	}
	heads, kvHeads, size := qd[1].Value, cd[1].Value, qd[3].Value
	if size%8 != 0 {
		// ONNX Runtime 1.30's kernel: "head_size must be a multiple
		// of 8" (measured on the GPT-2 fixture, head size 12).
		return "", nil
	}
	e := build.On(g, names, n.Name)
	to3 := func(x *canonical.Value) *canonical.Value {
		return e.Op("Reshape", []*canonical.Value{e.Op("Transpose", []*canonical.Value{x}, canonical.IntsAttr("perm", 0, 2, 1, 3)), e.Int64s([]int64{3}, 0, 0, -1)})
	}
	// total = past + new length; seqlens_k = total - 1 for each batch.
	pastLen := e.Op("Shape", []*canonical.Value{kr.past}, canonical.IntAttr("start", 2), canonical.IntAttr("end", 3))
	newLen := e.Op("Shape", []*canonical.Value{kr.cur}, canonical.IntAttr("start", 2), canonical.IntAttr("end", 3))
	total := e.Op("Add", []*canonical.Value{pastLen, newLen})
	batch := e.Op("Shape", []*canonical.Value{q}, canonical.IntAttr("end", 1))
	seqlens := e.Op("Cast", []*canonical.Value{e.Op("Expand", []*canonical.Value{e.Op("Sub", []*canonical.Value{total, e.Int64s([]int64{1}, 1)}), batch})},
		canonical.IntAttr("to", int64(canonical.Int32)))
	totalS := e.Op("Cast", []*canonical.Value{e.Op("Reshape", []*canonical.Value{total, e.Int64s([]int64{0})})}, canonical.IntAttr("to", int64(canonical.Int32)))
	attrs := []*canonical.Attribute{canonical.IntAttr("num_heads", heads), canonical.IntAttr("kv_num_heads", kvHeads)}
	if a := n.Attr("scale"); a != nil {
		attrs = append(attrs, canonical.FloatAttr("scale", a.F))
	}
	ins := []*canonical.Value{to3(q), to3(kr.cur), to3(vr.cur), kr.past, vr.past, seqlens, totalS, nil, nil, nil, mask}
	outs, err := msNode(e, "GroupQueryAttention", []bool{true, true, true}, ins, attrs...)
	if err != nil {
		return "", err
	}
	out, y, drop := headsBack(e, n, outs[0], heads, size)
	if err := e.Err(); err != nil {
		return "", err
	}
	outs[1].Type, outs[2].Type = kr.cat.Output(0).Type, vr.cat.Output(0).Type
	// The keys' length read from the repeat (the mask's width) is total.
	for _, sh := range append(kr.lens, vr.lens...) {
		g.ReplaceAllUsesWith(sh.Output(0), total)
		drop = append(drop, sh)
	}
	drop = append(drop, kr.own...)
	drop = append(drop, vr.own...)
	if err := splice(g, e, n, []*canonical.Value{out, kr.cat.Output(0), vr.cat.Output(0)}, []*canonical.Value{y, outs[1], outs[2]}, append(drop, kr.cat, vr.cat)...); err != nil {
		return "", err
	}
	return fmt.Sprintf("with its KV cache (the Concat with the past), became com.microsoft GroupQueryAttention (%d query heads over %d key/value heads; the mask as attention_bias)", heads, kvHeads), nil
}

// standardGQA writes GroupQueryAttention as Attention; other forms than
// the one toContrib writes go to standardGQAAny. The one toContrib writes: separate query, key and value ([B, S, N·H] and
// [B, S, KVN·H]), a past, seqlens_k total-1 for every batch (Cast(Expand(
// Sub(total, 1), batch)) with total the past's plus the new keys' length),
// no rotary, window, softcap, sinks or position_ids. The present is the
// past with the new keys (Concat), Attention runs over it, and
// GroupQueryAttention's causal mask over the cache (key j seen by new
// token s when j <= past + s) is written out and added to attention_bias.
func standardGQA(e *build.Editor, n *canonical.Node) ([]*canonical.Value, error) {
	if n.AttrInt("smooth_softmax", 0) != 0 {
		return nil, fmt.Errorf("smooth_softmax has no standard form (Attention has no sink score)")
	}
	if n.Input(11) != nil {
		return nil, fmt.Errorf("input 11 (head_sink) has no standard form (Attention has no sink score)")
	}
	if err := absentAfter(n, 3, "output_qk"); err != nil {
		return nil, err
	}
	q, k, v, pk, pv := n.Input(0), n.Input(1), n.Input(2), n.Input(3), n.Input(4)
	if k == nil || pk == nil || n.AttrInt("do_rotary", 0) != 0 || n.AttrInt("local_window_size", -1) > 0 || n.AttrFloat("softcap", 0) != 0 ||
		n.Input(9) != nil || !uniformSeqlens(n.Input(5), pk, k) {
		// Not the form toContrib writes: the general one.
		return standardGQAAny(e, n)
	}
	heads, kvHeads := n.AttrInt("num_heads", 0), n.AttrInt("kv_num_heads", 0)
	if heads <= 0 || kvHeads <= 0 {
		return nil, fmt.Errorf("num_heads %d, kv_num_heads %d", heads, kvHeads)
	}
	to4 := func(x *canonical.Value, h int64) *canonical.Value {
		return e.Op("Transpose", []*canonical.Value{e.Op("Reshape", []*canonical.Value{x, e.Int64s([]int64{4}, 0, 0, h, -1)})}, canonical.IntsAttr("perm", 0, 2, 1, 3))
	}
	// Causal over the cache: 0 where j <= past + s, -inf elsewhere,
	// [S, T].
	past := e.Op("Shape", []*canonical.Value{pk}, canonical.IntAttr("start", 2), canonical.IntAttr("end", 3))
	seq := e.Op("Shape", []*canonical.Value{q}, canonical.IntAttr("start", 1), canonical.IntAttr("end", 2))
	scalar := func(x *canonical.Value) *canonical.Value {
		return e.Op("Reshape", []*canonical.Value{x, e.Int64s([]int64{0})})
	}
	zero, one := e.Int64s(nil, 0), e.Int64s(nil, 1)
	total := e.Op("Add", []*canonical.Value{past, seq})
	rows := e.Op("Unsqueeze", []*canonical.Value{e.Op("Range", []*canonical.Value{scalar(past), scalar(total), one}), e.Int64s([]int64{1}, 1)})
	cols := e.Op("Range", []*canonical.Value{zero, scalar(total), one})
	causal := e.Op("Where", []*canonical.Value{e.Op("Greater", []*canonical.Value{cols, rows}), e.Number(canonical.Float, nil, math.Inf(-1)), e.Number(canonical.Float, nil, 0)})
	mask := causal
	if b := n.Input(10); b != nil {
		mask = e.Op("Add", []*canonical.Value{b, causal})
	}
	attrs := []*canonical.Attribute{}
	if a := n.Attr("scale"); a != nil && a.F != 0 {
		attrs = append(attrs, canonical.FloatAttr("scale", a.F))
	}
	// The present as GroupQueryAttention gives it, and Attention over it
	// without a cache input (which the converter expands below 23).
	presentK := e.Op("Concat", []*canonical.Value{pk, to4(k, kvHeads)}, canonical.IntAttr("axis", 2))
	presentV := e.Op("Concat", []*canonical.Value{pv, to4(v, kvHeads)}, canonical.IntAttr("axis", 2))
	out := e.Op("Attention", []*canonical.Value{to4(q, heads), presentK, presentV, mask}, attrs...)
	y := e.Op("Reshape", []*canonical.Value{e.Op("Transpose", []*canonical.Value{out}, canonical.IntsAttr("perm", 0, 2, 1, 3)), e.Int64s([]int64{3}, 0, 0, -1)})
	return []*canonical.Value{y, presentK, presentV}, nil
}

// uniformSeqlens reports whether seqlens is what contribGQA writes:
// Cast(Expand(Sub(Add(Shape(past)[2], Shape(new keys)[2 of 4-D, or 1]), 1), …)).
func uniformSeqlens(seqlens, past, key *canonical.Value) bool {
	op := func(v *canonical.Value, t string) *canonical.Node {
		if v == nil {
			return nil
		}
		p, _ := v.Producer()
		if p == nil || p.OpType != t {
			return nil
		}
		return p
	}
	cast := op(seqlens, "Cast")
	if cast == nil {
		return false
	}
	ex := op(cast.Input(0), "Expand")
	if ex == nil {
		return false
	}
	sub := op(ex.Input(0), "Sub")
	if sub == nil || sub.Input(1).Const == nil {
		return false
	}
	if one, err := sub.Input(1).Const.Int64s(); err != nil || len(one) != 1 || one[0] != 1 {
		return false
	}
	add := op(sub.Input(0), "Add")
	if add == nil {
		return false
	}
	pl, nl := op(add.Input(0), "Shape"), op(add.Input(1), "Shape")
	if pl == nil || nl == nil || pl.Input(0) != past || pl.AttrInt("start", 0) != 2 || pl.AttrInt("end", 0) != 3 {
		return false
	}
	// The new keys' length: the 4-D keys GroupQueryAttention's key was
	// reshaped from (dim 2).
	rs := op(key, "Reshape")
	if rs == nil {
		return false
	}
	tr := op(rs.Input(0), "Transpose")
	return tr != nil && tr.Input(0) == nl.Input(0) && nl.AttrInt("start", 0) == 2 && nl.AttrInt("end", 0) == 3
}
