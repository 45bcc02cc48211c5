package trees

import (
	"fmt"
	"strconv"

	"github.com/onnxconv/onnxconv/canonical"
)

// margin emits the nodes computing e's margin [N, NumTargets] into out:
// the lookups (when e has any) appended to the input, the tree op over
// the trees without linear leaves (and Base), and the linear leaves'
// outputs added to it.
func (g *graph) margin(e *Ensemble, name, out string, mlOpset, aiOpset int) error {
	if len(e.Lookups) > 0 {
		if mlOpset < 2 {
			return fmt.Errorf("%s: derived lookup features need ai.onnx.ml LabelEncoder (ml opset 2 or later); got ml opset %d", e.Format, mlOpset)
		}
		g.treeIn = g.lookups(e, name)
	}
	lin := e.linearTrees()
	opOut := out
	if len(lin) > 0 {
		if aiOpset < 11 {
			return fmt.Errorf("%s: linear leaves need GatherElements (ai.onnx opset 11 or later); got opset %d", e.Format, aiOpset)
		}
		opOut = out + "_constant_trees"
	}
	if mlOpset >= 5 {
		g.treeEnsemble(e, name, opOut)
	} else {
		g.treeEnsembleRegressor(e, name, opOut)
	}
	if len(lin) > 0 {
		return g.linearLeaves(e, lin, name, mlOpset, opOut, out)
	}
	return nil
}

func (g *graph) i64(name string, dims []int64, v ...int64) string {
	return g.init(canonical.Int64Tensor(name, dims, v))
}

// lookups emits e's lookups and returns the name of the input with the
// lookups' columns appended ([N, NumFeatures+len(Lookups)]).
func (g *graph) lookups(e *Ensemble, name string) string {
	p := name + "_lookup"
	mult := g.i64(p+"_hash_multiplier", nil, int64(HashMultiplier))
	column := func(f int) string {
		col := p + "_column_" + strconv.Itoa(f)
		if g.b.Used(col) {
			return col
		}
		idx := g.i64(col+"_index", []int64{1}, int64(f))
		g.add("Gather", "", col, []string{g.in(), idx}, []string{col}, canonical.IntAttr("axis", 1))
		return col
	}
	catKey := func(f int) string {
		k := p + "_key_" + strconv.Itoa(f)
		if g.b.Used(k) {
			return k
		}
		col := column(f)
		// The int32 hash, sign-extended to 64 bits (CatBoost's (ui64)(int)h).
		g.add("Cast", "", k+"_i64", []string{col}, []string{k + "_i64"}, canonical.IntAttr("to", int64(canonical.Int64)))
		g.add("Cast", "", k+"_i32", []string{k + "_i64"}, []string{k + "_i32"}, canonical.IntAttr("to", int64(canonical.Int32)))
		g.add("Cast", "", k, []string{k + "_i32"}, []string{k}, canonical.IntAttr("to", int64(canonical.Int64)))
		return k
	}
	cols := []string{g.in()}
	for li := range e.Lookups {
		l := &e.Lookups[li]
		q := p + strconv.Itoa(li)
		h := ""
		step := 0
		combine := func(x string) {
			s := q + "_h" + strconv.Itoa(step)
			step++
			g.add("Mul", "", s+"_mb", []string{x, mult}, []string{s + "_mb"})
			sum := s + "_mb"
			if h != "" {
				g.add("Add", "", s+"_sum", []string{h, s + "_mb"}, []string{s + "_sum"})
				sum = s + "_sum"
			}
			g.add("Mul", "", s, []string{sum, mult}, []string{s})
			h = s
		}
		for _, c := range l.Cats {
			combine(catKey(c))
		}
		for ti, t := range l.Tests {
			col := column(t.Feature)
			s := q + "_test" + strconv.Itoa(ti)
			thr := g.scalar(s+"_threshold", t.Threshold)
			op := map[Mode]string{LT: "Less", GT: "Greater", EQ: "Equal"}[t.Mode]
			g.add(op, "", s, []string{col, thr}, []string{s})
			cond := s
			if t.MissingTrue {
				g.add("IsNaN", "", s+"_nan", []string{col}, []string{s + "_nan"})
				g.add("Or", "", s+"_or_nan", []string{s + "_nan", s}, []string{s + "_or_nan"})
				cond = s + "_or_nan"
			}
			g.add("Cast", "", s+"_bit", []string{cond}, []string{s + "_bit"}, canonical.IntAttr("to", int64(canonical.Int64)))
			combine(s + "_bit")
		}
		keys := make([]int64, len(l.Keys))
		for i, k := range l.Keys {
			keys[i] = int64(k)
		}
		attrs := []*canonical.Attribute{canonical.IntsAttr("keys_int64s", keys...), canonical.FloatsAttr("values_floats", f32s(l.Values)...), canonical.FloatAttr("default_float", float32(l.Default))}
		g.add("LabelEncoder", mlDomain, q+"_float", []string{h}, []string{q + "_float"}, attrs...)
		v := q + "_float"
		if g.double {
			g.add("Cast", "", q, []string{v}, []string{q}, canonical.IntAttr("to", int64(canonical.Double)))
			v = q
		}
		cols = append(cols, v)
	}
	out := p + "_features"
	g.add("Concat", "", out, cols, []string{out}, canonical.IntAttr("axis", 1))
	return out
}

// linearLeaves emits the outputs of the trees lin (those with linear
// leaves) and adds them to trees (the tree op's margin) into out. A tree
// op with one target per tree gives each row's leaf (as its number in the
// tables of constants, coefficients and features); Gather and
// GatherElements fetch what the leaf uses; the terms are added in
// LightGBM's order, one Add per term; a NaN in a used feature gives the
// leaf's Value; the trees are added in order per target.
func (g *graph) linearLeaves(e *Ensemble, lin []int, name string, mlOpset int, trees, out string) error {
	p := name + "_linear"
	ids := &Ensemble{Format: e.Format, NumFeatures: e.NumFeatures, NumTargets: len(lin), Double: e.Double, Lookups: e.Lookups}
	var consts, values []float64
	var leaves []*Node
	K := 0
	for j, ti := range lin {
		t := Tree{Nodes: append([]Node(nil), e.Trees[ti].Nodes...), Target: j}
		for i := range t.Nodes {
			nd := &t.Nodes[i]
			if !nd.Leaf {
				continue
			}
			leaves = append(leaves, &e.Trees[ti].Nodes[i])
			nd.Value, nd.Linear = float64(len(leaves)-1), nil
			if l := e.Trees[ti].Nodes[i].Linear; l != nil {
				K = max(K, len(l.Features))
			}
		}
		ids.Trees = append(ids.Trees, t)
	}
	L := len(leaves)
	if L >= 1<<24 {
		return fmt.Errorf("%s: %d linear-tree leaves; at most %d", e.Format, L, 1<<24-1)
	}
	if L*K > MaxLinearTerms {
		return fmt.Errorf("%s: the linear leaves' table would have %d entries; at most %d", e.Format, L*K, MaxLinearTerms)
	}
	feats := make([]int64, L*K)
	coefs := make([]float64, L*K)
	valid := make([]float64, L*K)
	for i, nd := range leaves {
		values = append(values, nd.Value)
		if nd.Linear == nil {
			consts = append(consts, nd.Value)
			continue
		}
		consts = append(consts, nd.Linear.Const)
		for k, f := range nd.Linear.Features {
			feats[i*K+k], coefs[i*K+k], valid[i*K+k] = int64(f), nd.Linear.Coeffs[k], 1
		}
	}
	leafOut := p + "_leaf"
	if mlOpset >= 5 {
		g.treeEnsemble(ids, p+"_leaf_ids", leafOut)
	} else {
		g.treeEnsembleRegressor(ids, p+"_leaf_ids", leafOut)
	}
	i64 := int64(canonical.Int64)
	g.add("Cast", "", p+"_ids", []string{leafOut}, []string{p + "_ids"}, canonical.IntAttr("to", i64))
	constT := g.init(realTensor(p+"_const_table", []int64{int64(L)}, consts, g.double))
	valueT := g.init(realTensor(p+"_value_table", []int64{int64(L)}, values, g.double))
	g.add("Gather", "", p+"_const", []string{constT, p + "_ids"}, []string{p + "_const"})
	g.add("Gather", "", p+"_value", []string{valueT, p + "_ids"}, []string{p + "_value"})
	val := p + "_const"
	if K > 0 {
		T := int64(len(lin))
		featT := g.i64(p+"_feature_table", []int64{int64(L), int64(K)}, feats...)
		coefT := g.init(realTensor(p+"_coeff_table", []int64{int64(L), int64(K)}, coefs, g.double))
		validT := g.init(realTensor(p+"_used_table", []int64{int64(L), int64(K)}, valid, g.double))
		g.add("Cast", "", p+"_used_bool", []string{validT}, []string{p + "_used_bool"}, canonical.IntAttr("to", int64(canonical.Bool)))
		g.add("Gather", "", p+"_features", []string{featT, p + "_ids"}, []string{p + "_features"})
		flat := g.i64(p+"_flat_shape", []int64{2}, 0, -1)
		g.add("Reshape", "", p+"_features_flat", []string{p + "_features", flat}, []string{p + "_features_flat"})
		g.add("GatherElements", "", p+"_x_flat", []string{g.in(), p + "_features_flat"}, []string{p + "_x_flat"}, canonical.IntAttr("axis", 1))
		shape3 := g.i64(p+"_shape3", []int64{3}, 0, T, int64(K))
		g.add("Reshape", "", p+"_x", []string{p + "_x_flat", shape3}, []string{p + "_x"})
		g.add("Gather", "", p+"_coeffs", []string{coefT, p + "_ids"}, []string{p + "_coeffs"})
		g.add("Gather", "", p+"_used", []string{p + "_used_bool", p + "_ids"}, []string{p + "_used"})
		zero := g.scalar(p+"_zero", 0)
		g.add("Where", "", p+"_x_used", []string{p + "_used", p + "_x", zero}, []string{p + "_x_used"})
		g.add("IsNaN", "", p+"_x_nan", []string{p + "_x"}, []string{p + "_x_nan"})
		g.add("And", "", p+"_nan", []string{p + "_x_nan", p + "_used"}, []string{p + "_nan"})
		acc, any := p+"_const", ""
		for k := 0; k < K; k++ {
			s := p + "_term" + strconv.Itoa(k)
			kk := g.i64(s+"_index", nil, int64(k))
			g.add("Gather", "", s+"_c", []string{p + "_coeffs", kk}, []string{s + "_c"}, canonical.IntAttr("axis", 2))
			g.add("Gather", "", s+"_x", []string{p + "_x_used", kk}, []string{s + "_x"}, canonical.IntAttr("axis", 2))
			g.add("Mul", "", s, []string{s + "_c", s + "_x"}, []string{s})
			g.add("Add", "", s+"_sum", []string{acc, s}, []string{s + "_sum"})
			acc = s + "_sum"
			g.add("Gather", "", s+"_nan", []string{p + "_nan", kk}, []string{s + "_nan"}, canonical.IntAttr("axis", 2))
			if any == "" {
				any = s + "_nan"
			} else {
				g.add("Or", "", s+"_any_nan", []string{any, s + "_nan"}, []string{s + "_any_nan"})
				any = s + "_any_nan"
			}
		}
		g.add("Where", "", p+"_out", []string{any, p + "_value", acc}, []string{p + "_out"})
		val = p + "_out"
	}
	// Sum per target, trees in order.
	var cols []string
	for t := 0; t < e.NumTargets; t++ {
		s := ""
		for j, ti := range lin {
			if e.Trees[ti].Target != t {
				continue
			}
			c := p + "_tree" + strconv.Itoa(j)
			idx := g.i64(c+"_index", []int64{1}, int64(j))
			g.add("Gather", "", c, []string{val, idx}, []string{c}, canonical.IntAttr("axis", 1))
			if s == "" {
				s = c
				continue
			}
			g.add("Add", "", c+"_sum", []string{s, c}, []string{c + "_sum"})
			s = c + "_sum"
		}
		if s == "" { // no linear tree for this target: zeros [N, 1]
			z := p + "_target" + strconv.Itoa(t) + "_zero"
			idx := g.i64(z+"_index", []int64{1}, 0)
			g.add("Gather", "", z+"_col", []string{val, idx}, []string{z + "_col"}, canonical.IntAttr("axis", 1))
			zero := g.scalar(z+"_value", 0)
			g.add("Mul", "", z+"_mul", []string{z + "_col", zero}, []string{z + "_mul"})
			g.add("Where", "", z, []string{g.trueLike(z+"_mul", z), zero, zero}, []string{z})
			s = z
		}
		cols = append(cols, s)
	}
	sum := cols[0]
	if len(cols) > 1 {
		sum = p + "_sum"
		g.add("Concat", "", sum, cols, []string{sum}, canonical.IntAttr("axis", 1))
	}
	g.add("Add", "", p+"_add", []string{trees, sum}, []string{out})
	return nil
}

// trueLike returns a bool tensor shaped like x, all true.
func (g *graph) trueLike(x, name string) string {
	g.add("IsNaN", "", name+"_isnan", []string{x}, []string{name + "_isnan"})
	g.add("Not", "", name+"_notnan", []string{name + "_isnan"}, []string{name + "_notnan"})
	g.add("Or", "", name+"_true", []string{name + "_isnan", name + "_notnan"}, []string{name + "_true"})
	return name + "_true"
}
