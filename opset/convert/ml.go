package convert

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/onnxspec"
)

func itoa(i int) string { return strconv.Itoa(i) }

// mlAdapters adds the hand-written version steps of ai.onnx.ml operators.
func mlAdapters(t map[adapterKey]adapter) {
	up := func(op string, since int, a adapter) { t[adapterKey{onnxspec.DomainML, op, since, true}] = a }
	down := func(op string, since int, a adapter) { t[adapterKey{onnxspec.DomainML, op, since, false}] = a }
	up("TreeEnsembleRegressor", 5, treeRegressorUp5)
	up("TreeEnsembleClassifier", 5, treeClassifierUp5)
	down("TreeEnsembleRegressor", 3, func(sc *stepCtx) error { return asTensorDown3(sc, "target") })
	down("TreeEnsembleClassifier", 3, func(sc *stepCtx) error { return asTensorDown3(sc, "class") })
	up("LabelEncoder", 2, labelEncoderUp2)
	down("LabelEncoder", 2, labelEncoderDown2)
	down("LabelEncoder", 4, labelEncoderDown4)
}

// expandML rewrites an ai.onnx.ml op that does not exist below sc.new's
// version into ops valid at ml opset to.
func expandML(sc *stepCtx, to int) error {
	if sc.n.OpType == "TreeEnsemble" {
		return treeEnsembleDown(sc, to)
	}
	return noExpansion("keep ai.onnx.ml opset >= "+itoa(sc.new.SinceVersion), "%s does not exist before ai.onnx.ml opset %d and onnxconv has no expansion for it", sc.n.OpType, sc.new.SinceVersion)
}

// aiOpset is the ai.onnx opset the ai.onnx nodes an ML adapter emits must
// be valid at. A model importing no ai.onnx opset gets one.
func aiOpset(sc *stepCtx) int {
	if sc.c.to != 0 {
		return sc.c.to
	}
	if sc.c.from != 0 {
		return sc.c.from
	}
	const def = 17
	sc.c.m.SetOpset("", def)
	sc.c.from, sc.c.to = def, def
	return def
}

// mlOp emits one ai.onnx.ml node with n outputs through the builder.
func mlOp(b *builder, opType string, inputs []*canonical.Value, n int, attrs ...*canonical.Attribute) []*canonical.Value {
	return b.OpIn(onnxspec.DomainML, opType, n, inputs, attrs...)
}

// ---- forests ----

// Node modes, numbered as TreeEnsemble-5 does.
const (
	modeLEQ = iota
	modeLT
	modeGTE
	modeGT
	modeEQ
	modeNEQ
	modeMember
)

var modeNames = []string{"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ", "BRANCH_MEMBER"}

var postNames = []string{"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"}

var aggNames = []string{"AVERAGE", "SUM", "MIN", "MAX"}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

type vote struct {
	target int64
	w      float64
}

// fref points at an interior node (leaf false) or a leaf.
type fref struct {
	i    int
	leaf bool
}

type fnode struct {
	feat     int64
	mode     int
	split    float64
	members  []float64
	missTrue bool
	t, f     fref
}

// forest is a tree ensemble in a form both encodings convert to and from.
type forest struct {
	nodes  []fnode
	leaves [][]vote
	roots  []fref
	// double: thresholds or weights need double precision.
	double bool
}

// floatsOrTensor reads attribute name (floats) or name+"_as_tensor".
func floatsOrTensor(n *canonical.Node, name string) ([]float64, bool, error) {
	if a := n.Attr(name + "_as_tensor"); a != nil && a.T != nil {
		v, err := tensorFloats(a.T)
		if err != nil {
			return nil, false, fmt.Errorf("attribute %s_as_tensor: %w", name, err)
		}
		return v, true, nil
	}
	return toF64(n.AttrFloats(name, nil)), false, nil
}

// oldForest reads the nodes_* and prefix_* attributes of
// TreeEnsembleRegressor / TreeEnsembleClassifier (versions 1 and 3).
func oldForest(n *canonical.Node, prefix string) (*forest, error) {
	treeIDs, nodeIDs := n.AttrInts("nodes_treeids", nil), n.AttrInts("nodes_nodeids", nil)
	feats := n.AttrInts("nodes_featureids", nil)
	modes := n.AttrStrings("nodes_modes", nil)
	tIDs, fIDs := n.AttrInts("nodes_truenodeids", nil), n.AttrInts("nodes_falsenodeids", nil)
	missing := n.AttrInts("nodes_missing_value_tracks_true", nil)
	values, dv, err := floatsOrTensor(n, "nodes_values")
	if err != nil {
		return nil, err
	}
	nn := len(treeIDs)
	if len(values) == 0 {
		values = make([]float64, nn)
	}
	for _, l := range []int{len(nodeIDs), len(feats), len(modes), len(values), len(tIDs), len(fIDs)} {
		if l != nn {
			return nil, blocked("fix the model", "the nodes_* attributes have different lengths (%d and %d)", nn, l)
		}
	}
	if missing != nil && len(missing) != nn {
		return nil, blocked("fix the model", "nodes_missing_value_tracks_true has %d entries for %d nodes", len(missing), nn)
	}
	type key struct{ t, n int64 }
	pos := map[key]fref{}
	f := &forest{double: dv}
	var order []int64
	seen := map[int64]bool{}
	for i := 0; i < nn; i++ {
		k := key{treeIDs[i], nodeIDs[i]}
		if _, dup := pos[k]; dup {
			return nil, blocked("fix the model", "node (tree %d, id %d) is defined twice", k.t, k.n)
		}
		if modes[i] == "LEAF" {
			pos[k] = fref{i: len(f.leaves), leaf: true}
			f.leaves = append(f.leaves, nil)
		} else {
			pos[k] = fref{i: len(f.nodes)}
			f.nodes = append(f.nodes, fnode{})
		}
		if !seen[treeIDs[i]] {
			seen[treeIDs[i]] = true
			order = append(order, treeIDs[i])
		}
	}
	// The root of a tree is its node with the lowest id.
	rootID := map[int64]int64{}
	for i := 0; i < nn; i++ {
		if r, ok := rootID[treeIDs[i]]; !ok || nodeIDs[i] < r {
			rootID[treeIDs[i]] = nodeIDs[i]
		}
	}
	for _, t := range order {
		f.roots = append(f.roots, pos[key{t, rootID[t]}])
	}
	for i := 0; i < nn; i++ {
		p := pos[key{treeIDs[i], nodeIDs[i]}]
		if p.leaf {
			continue
		}
		m := indexOf(modeNames[:modeMember], string(modes[i]))
		if m < 0 {
			return nil, blocked("fix the model", "node %d has unknown mode %q", i, modes[i])
		}
		nd := fnode{feat: feats[i], mode: m, split: values[i]}
		if missing != nil {
			nd.missTrue = missing[i] != 0
		}
		var ok bool
		if nd.t, ok = pos[key{treeIDs[i], tIDs[i]}]; !ok {
			return nil, blocked("fix the model", "tree %d has no node %d", treeIDs[i], tIDs[i])
		}
		if nd.f, ok = pos[key{treeIDs[i], fIDs[i]}]; !ok {
			return nil, blocked("fix the model", "tree %d has no node %d", treeIDs[i], fIDs[i])
		}
		f.nodes[p.i] = nd
	}
	cT, cN, cID := n.AttrInts(prefix+"_treeids", nil), n.AttrInts(prefix+"_nodeids", nil), n.AttrInts(prefix+"_ids", nil)
	cW, dw, err := floatsOrTensor(n, prefix+"_weights")
	if err != nil {
		return nil, err
	}
	f.double = f.double || dw
	if len(cN) != len(cT) || len(cID) != len(cT) || len(cW) != len(cT) {
		return nil, blocked("fix the model", "the %s_* attributes have different lengths", prefix)
	}
	for i := range cT {
		p, ok := pos[key{cT[i], cN[i]}]
		if !ok || !p.leaf {
			return nil, blocked("fix the model", "%s entry %d refers to (tree %d, node %d), which is not a leaf", prefix, i, cT[i], cN[i])
		}
		f.leaves[p.i] = append(f.leaves[p.i], vote{target: cID[i], w: cW[i]})
	}
	return f, nil
}

// walk visits the refs reachable from r (each interior node once).
func (f *forest) walk(r fref, visit func(fref)) error {
	stack := []fref{r}
	seen := map[int]bool{}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		visit(x)
		if x.leaf {
			continue
		}
		if x.i < 0 || x.i >= len(f.nodes) {
			return blocked("fix the model", "node index %d out of range", x.i)
		}
		if seen[x.i] {
			return blocked("fix the model", "a tree reaches node %d twice (cycle or shared subtree)", x.i)
		}
		seen[x.i] = true
		stack = append(stack, f.nodes[x.i].f, f.nodes[x.i].t)
	}
	return nil
}

// singleVotes returns a forest whose leaves hold one vote each: a tree
// whose leaves vote more than once becomes one copy per vote position,
// which only SUM (and AVERAGE, rescaled by the caller) tolerate.
func (f *forest) singleVotes(agg string) (*forest, bool, error) {
	maxVotes := 0
	for _, l := range f.leaves {
		maxVotes = max(maxVotes, len(l))
	}
	split := false
	for _, l := range f.leaves {
		if len(l) != 1 {
			split = true
		}
	}
	if !split {
		return f, false, nil
	}
	if agg != "SUM" && agg != "AVERAGE" {
		return nil, false, blocked("", "leaves with no vote or several votes (up to %d) cannot be expressed in TreeEnsemble, which holds one vote per leaf, when aggregate_function is %s", maxVotes, agg)
	}
	out := &forest{nodes: append([]fnode(nil), f.nodes...), double: f.double}
	// Interior nodes no tree reaches keep no stale leaf references.
	for i := range out.nodes {
		out.nodes[i].t, out.nodes[i].f = fref{leaf: true}, fref{leaf: true}
	}
	leafOf := map[[2]int]int{}
	out.leaves = [][]vote{{{}}} // leaf 0: the placeholder, weight 0
	for j := 0; j < max(maxVotes, 1); j++ {
		for _, r := range f.roots {
			// Copy j of the tree shares its interior nodes' tests but its
			// leaves hold vote j (or nothing: weight 0 to target 0).
			cp, err := out.copyTree(f, r, j, leafOf)
			if err != nil {
				return nil, false, err
			}
			out.roots = append(out.roots, cp)
		}
	}
	return out, true, nil
}

// copyTree copies the tree at r of src into out with leaves carrying vote
// j; copy 0 keeps the interior nodes at their indices.
func (out *forest) copyTree(src *forest, r fref, j int, leafOf map[[2]int]int) (fref, error) {
	var rec func(x fref, depth int) (fref, error)
	rec = func(x fref, depth int) (fref, error) {
		if depth > len(src.nodes)+1 {
			return fref{}, blocked("fix the model", "a tree has a cycle")
		}
		if x.leaf {
			if x.i < 0 || x.i >= len(src.leaves) {
				return fref{}, blocked("fix the model", "leaf %d out of range", x.i)
			}
			k := [2]int{x.i, j}
			if l, ok := leafOf[k]; ok {
				return fref{i: l, leaf: true}, nil
			}
			v := vote{}
			if j < len(src.leaves[x.i]) {
				v = src.leaves[x.i][j]
			}
			out.leaves = append(out.leaves, []vote{v})
			leafOf[k] = len(out.leaves) - 1
			return fref{i: len(out.leaves) - 1, leaf: true}, nil
		}
		if x.i < 0 || x.i >= len(src.nodes) {
			return fref{}, blocked("fix the model", "node index %d out of range", x.i)
		}
		nd := src.nodes[x.i]
		t, err := rec(nd.t, depth+1)
		if err != nil {
			return fref{}, err
		}
		fl, err := rec(nd.f, depth+1)
		if err != nil {
			return fref{}, err
		}
		nd.t, nd.f = t, fl
		if j == 0 {
			out.nodes[x.i] = nd
			return x, nil
		}
		out.nodes = append(out.nodes, nd)
		return fref{i: len(out.nodes) - 1}, nil
	}
	return rec(r, 0)
}

// valueTensor builds a 1-D float or double tensor.
func valueTensor(double bool, vals []float64) *canonical.Tensor {
	dt := canonical.Float
	if double {
		dt = canonical.Double
	}
	return canonical.NumberTensor("", dt, []int64{int64(len(vals))}, vals)
}

// newAttrs encodes f (one vote per leaf) as TreeEnsemble-5 attributes.
func (f *forest) newAttrs(dt canonical.DataType) []*canonical.Attribute {
	var feat, tIDs, fIDs, tLeaf, fLeaf, miss, roots, targets []int64
	var modes []byte
	var splits, members, weights []float64
	hasMember := false
	for _, r := range f.roots {
		if r.leaf {
			// A tree that is a leaf: one node whose branches both reach it.
			roots = append(roots, int64(len(feat)))
			feat, modes, splits = append(feat, 0), append(modes, modeLEQ), append(splits, 0)
			tIDs, fIDs = append(tIDs, int64(r.i)), append(fIDs, int64(r.i))
			tLeaf, fLeaf, miss = append(tLeaf, 1), append(fLeaf, 1), append(miss, 0)
			continue
		}
		roots = append(roots, -1-int64(r.i)) // fixed below
	}
	base := len(feat)
	b2i := func(b bool) int64 {
		if b {
			return 1
		}
		return 0
	}
	for _, nd := range f.nodes {
		feat, modes, splits = append(feat, nd.feat), append(modes, byte(nd.mode)), append(splits, nd.split)
		ti, fi := int64(nd.t.i), int64(nd.f.i)
		if !nd.t.leaf {
			ti += int64(base)
		}
		if !nd.f.leaf {
			fi += int64(base)
		}
		tIDs, fIDs = append(tIDs, ti), append(fIDs, fi)
		tLeaf, fLeaf, miss = append(tLeaf, b2i(nd.t.leaf)), append(fLeaf, b2i(nd.f.leaf)), append(miss, b2i(nd.missTrue))
		if nd.mode == modeMember {
			hasMember = true
			members = append(members, nd.members...)
			members = append(members, math.NaN())
		}
	}
	for i, r := range roots {
		if r < 0 {
			roots[i] = -1 - r + int64(base)
		}
	}
	for _, l := range f.leaves {
		v := vote{}
		if len(l) > 0 {
			v = l[0]
		}
		targets, weights = append(targets, v.target), append(weights, v.w)
	}
	double := dt == canonical.Double
	attrs := []*canonical.Attribute{
		canonical.IntsAttr("tree_roots", roots...),
		canonical.IntsAttr("nodes_featureids", feat...),
		canonical.TensorAttr("nodes_modes", canonical.NewTensor("", canonical.Uint8, []int64{int64(len(modes))}, modes)),
		canonical.TensorAttr("nodes_splits", valueTensor(double, splits)),
		canonical.IntsAttr("nodes_truenodeids", tIDs...),
		canonical.IntsAttr("nodes_falsenodeids", fIDs...),
		canonical.IntsAttr("nodes_trueleafs", tLeaf...),
		canonical.IntsAttr("nodes_falseleafs", fLeaf...),
		canonical.IntsAttr("nodes_missing_value_tracks_true", miss...),
		canonical.IntsAttr("leaf_targetids", targets...),
		canonical.TensorAttr("leaf_weights", valueTensor(double, weights)),
	}
	if hasMember {
		attrs = append(attrs, canonical.TensorAttr("membership_values", valueTensor(double, members)))
	}
	return attrs
}

// newForest reads the attributes of TreeEnsemble-5.
func newForest(n *canonical.Node) (*forest, error) {
	feats := n.AttrInts("nodes_featureids", nil)
	tIDs, fIDs := n.AttrInts("nodes_truenodeids", nil), n.AttrInts("nodes_falsenodeids", nil)
	tLeaf, fLeaf := n.AttrInts("nodes_trueleafs", nil), n.AttrInts("nodes_falseleafs", nil)
	miss := n.AttrInts("nodes_missing_value_tracks_true", nil)
	f := &forest{}
	tensorAttr := func(name string) (*canonical.Tensor, error) {
		a := n.Attr(name)
		if a == nil || a.T == nil {
			return nil, nil
		}
		return a.T, nil
	}
	mt, _ := tensorAttr("nodes_modes")
	st, _ := tensorAttr("nodes_splits")
	wt, _ := tensorAttr("leaf_weights")
	memt, _ := tensorAttr("membership_values")
	if mt == nil || wt == nil {
		return nil, blocked("fix the model", "TreeEnsemble needs nodes_modes and leaf_weights")
	}
	raw, err := mt.Bytes()
	if err != nil {
		return nil, fmt.Errorf("reading nodes_modes: %w", err)
	}
	var modes []int
	switch mt.DataType {
	case canonical.Uint8:
		for _, b := range raw {
			modes = append(modes, int(b))
		}
	case canonical.Int64, canonical.Int32:
		ints, err := tensorInts(mt)
		if err != nil {
			return nil, fmt.Errorf("reading nodes_modes: %w", err)
		}
		for _, v := range ints {
			modes = append(modes, int(v))
		}
	default:
		return nil, blocked("fix the model", "nodes_modes is %v, not uint8", mt.DataType)
	}
	nn := len(feats)
	splits := make([]float64, nn)
	if st != nil {
		if splits, err = tensorFloats(st); err != nil {
			return nil, fmt.Errorf("reading nodes_splits: %w", err)
		}
		f.double = st.DataType == canonical.Double
	}
	weights, err := tensorFloats(wt)
	if err != nil {
		return nil, fmt.Errorf("reading leaf_weights: %w", err)
	}
	f.double = f.double || wt.DataType == canonical.Double
	targets := n.AttrInts("leaf_targetids", nil)
	for _, l := range []int{len(modes), len(splits), len(tIDs), len(fIDs), len(tLeaf), len(fLeaf)} {
		if l != nn {
			return nil, blocked("fix the model", "the nodes_* attributes have different lengths (%d and %d)", nn, l)
		}
	}
	if miss != nil && len(miss) != nn {
		return nil, blocked("fix the model", "nodes_missing_value_tracks_true has %d entries for %d nodes", len(miss), nn)
	}
	if len(targets) != len(weights) {
		return nil, blocked("fix the model", "leaf_targetids has %d entries, leaf_weights %d", len(targets), len(weights))
	}
	var sets [][]float64
	if memt != nil {
		ms, err := tensorFloats(memt)
		if err != nil {
			return nil, fmt.Errorf("reading membership_values: %w", err)
		}
		var cur []float64
		for _, v := range ms {
			if math.IsNaN(v) {
				sets, cur = append(sets, cur), nil
				continue
			}
			cur = append(cur, v)
		}
		if len(cur) > 0 {
			sets = append(sets, cur)
		}
	}
	ref := func(id, leaf int64) (fref, error) {
		if leaf != 0 {
			if id < 0 || id >= int64(len(weights)) {
				return fref{}, blocked("fix the model", "leaf index %d out of range", id)
			}
			return fref{i: int(id), leaf: true}, nil
		}
		if id < 0 || id >= int64(nn) {
			return fref{}, blocked("fix the model", "node index %d out of range", id)
		}
		return fref{i: int(id)}, nil
	}
	nset := 0
	for i := 0; i < nn; i++ {
		nd := fnode{feat: feats[i], mode: modes[i], split: splits[i]}
		if nd.mode < modeLEQ || nd.mode > modeMember {
			return nil, blocked("fix the model", "node %d has unknown mode %d", i, modes[i])
		}
		if nd.mode == modeMember {
			if nset >= len(sets) {
				return nil, blocked("fix the model", "membership_values has fewer sets than BRANCH_MEMBER nodes")
			}
			nd.members = sets[nset]
			nset++
		}
		if miss != nil {
			nd.missTrue = miss[i] != 0
		}
		if nd.t, err = ref(tIDs[i], tLeaf[i]); err != nil {
			return nil, err
		}
		if nd.f, err = ref(fIDs[i], fLeaf[i]); err != nil {
			return nil, err
		}
		f.nodes = append(f.nodes, nd)
	}
	for i := range weights {
		f.leaves = append(f.leaves, []vote{{target: targets[i], w: weights[i]}})
	}
	for _, r := range n.AttrInts("tree_roots", nil) {
		if r < 0 || r >= int64(nn) {
			return nil, blocked("fix the model", "tree root %d out of range", r)
		}
		f.roots = append(f.roots, fref{i: int(r)})
	}
	return f, nil
}

// oldAttrs encodes f as TreeEnsembleRegressor attributes (nodes_* and
// target_*), node ids restarting at 0 in each tree, set-membership tests
// split into chains of BRANCH_EQ. asTensor allows the *_as_tensor forms
// (ml opset 3) for double thresholds and weights.
func (f *forest) oldAttrs(asTensor bool) ([]*canonical.Attribute, error) {
	var treeIDs, nodeIDs, feats, tIDs, fIDs, miss, tTree, tNode, tID []int64
	var modes []string
	var values, weights []float64
	for ti, r := range f.roots {
		next := int64(0)
		var emit func(x fref, depth int) (int64, error)
		emit = func(x fref, depth int) (int64, error) {
			if depth > len(f.nodes)+1 {
				return 0, blocked("fix the model", "tree %d has a cycle", ti)
			}
			id := next
			next++
			pos := len(treeIDs)
			treeIDs, nodeIDs = append(treeIDs, int64(ti)), append(nodeIDs, id)
			if x.leaf {
				if x.i < 0 || x.i >= len(f.leaves) {
					return 0, blocked("fix the model", "leaf %d out of range", x.i)
				}
				feats, modes, values = append(feats, 0), append(modes, "LEAF"), append(values, 0)
				tIDs, fIDs, miss = append(tIDs, 0), append(fIDs, 0), append(miss, 0)
				for _, v := range f.leaves[x.i] {
					tTree, tNode, tID, weights = append(tTree, int64(ti)), append(tNode, id), append(tID, v.target), append(weights, v.w)
				}
				return id, nil
			}
			if x.i < 0 || x.i >= len(f.nodes) {
				return 0, blocked("fix the model", "node index %d out of range", x.i)
			}
			nd := f.nodes[x.i]
			mt := int64(0)
			if nd.missTrue {
				mt = 1
			}
			if nd.mode != modeMember {
				feats, modes, values = append(feats, nd.feat), append(modes, modeNames[nd.mode]), append(values, nd.split)
				tIDs, fIDs, miss = append(tIDs, 0), append(fIDs, 0), append(miss, mt)
				t, err := emit(nd.t, depth+1)
				if err != nil {
					return 0, err
				}
				fl, err := emit(nd.f, depth+1)
				if err != nil {
					return 0, err
				}
				tIDs[pos], fIDs[pos] = t, fl
				return id, nil
			}
			// x in {m1..mk} becomes x==m1 ? T : (x==m2 ? T : ... F). The
			// true subtree is emitted once, after the chain; NaN goes where
			// the first test sends it. An empty set tests x==NaN (never).
			ms := nd.members
			if len(ms) == 0 {
				ms = []float64{math.NaN()}
			}
			chain := []int{pos}
			feats, modes, values = append(feats, nd.feat), append(modes, "BRANCH_EQ"), append(values, ms[0])
			tIDs, fIDs, miss = append(tIDs, 0), append(fIDs, 0), append(miss, mt)
			for _, m := range ms[1:] {
				cid := next
				next++
				chain = append(chain, len(treeIDs))
				fIDs[len(fIDs)-1] = cid
				treeIDs, nodeIDs = append(treeIDs, int64(ti)), append(nodeIDs, cid)
				feats, modes, values = append(feats, nd.feat), append(modes, "BRANCH_EQ"), append(values, m)
				tIDs, fIDs, miss = append(tIDs, 0), append(fIDs, 0), append(miss, 0)
			}
			t, err := emit(nd.t, depth+1)
			if err != nil {
				return 0, err
			}
			fl, err := emit(nd.f, depth+1)
			if err != nil {
				return 0, err
			}
			for _, c := range chain {
				tIDs[c] = t
			}
			fIDs[chain[len(chain)-1]] = fl
			return id, nil
		}
		if _, err := emit(r, 0); err != nil {
			return nil, err
		}
	}
	attrs := []*canonical.Attribute{
		canonical.IntsAttr("nodes_treeids", treeIDs...),
		canonical.IntsAttr("nodes_nodeids", nodeIDs...),
		canonical.IntsAttr("nodes_featureids", feats...),
		canonical.StringsAttr("nodes_modes", modes...),
		canonical.IntsAttr("nodes_truenodeids", tIDs...),
		canonical.IntsAttr("nodes_falsenodeids", fIDs...),
		canonical.IntsAttr("nodes_missing_value_tracks_true", miss...),
		canonical.IntsAttr("target_treeids", tTree...),
		canonical.IntsAttr("target_nodeids", tNode...),
		canonical.IntsAttr("target_ids", tID...),
	}
	for _, p := range []struct {
		name string
		v    []float64
	}{{"nodes_values", values}, {"target_weights", weights}} {
		if f32, ok := exactFloat32(p.v); ok {
			attrs = append(attrs, canonical.FloatsAttr(p.name, f32...))
			continue
		}
		if !asTensor {
			return nil, blocked("target ai.onnx.ml opset >= 3", "%s need double precision, which only the *_as_tensor attributes of ml opset 3 hold", p.name)
		}
		attrs = append(attrs, canonical.TensorAttr(p.name+"_as_tensor", valueTensor(true, p.v)))
	}
	return attrs, nil
}

// exactFloat32 converts vals to float32 when no value loses precision.
func exactFloat32(vals []float64) ([]float32, bool) {
	out := make([]float32, len(vals))
	for i, v := range vals {
		out[i] = float32(v)
		if float64(out[i]) != v && !math.IsNaN(v) {
			return nil, false
		}
	}
	return out, true
}

// ---- TreeEnsembleRegressor / TreeEnsembleClassifier 3 -> 5 ----

// ensembleInput returns the input TreeEnsemble reads (cast to float when
// integer) and the element type of its output.
func ensembleInput(b *builder, x *canonical.Value) (*canonical.Value, canonical.DataType) {
	switch dt := elemType(x); dt {
	case canonical.Double:
		return x, canonical.Double
	case canonical.Float, canonical.Undefined:
		return x, canonical.Float
	default:
		return b.op("Cast", []*canonical.Value{x}, canonical.IntAttr("to", int64(canonical.Float))), canonical.Float
	}
}

// ensembleUp emits the TreeEnsemble for an old-style node; it returns the
// scores [N, k] with base values added but no post transform (unless
// keepPost, when the ensemble applies it and post is returned as "NONE").
func ensembleUp(b *builder, f *forest, k int, agg string, base []float64, post string, keepPost bool) (*canonical.Value, canonical.DataType, string, error) {
	sf, split, err := f.singleVotes(agg)
	if err != nil {
		return nil, 0, "", err
	}
	x, dt := ensembleInput(b, b.sc.n.Input(0))
	b.dt = dt
	nonzeroBase := false
	for _, v := range base {
		if v != 0 {
			nonzeroBase = true
		}
	}
	scale := split && agg == "AVERAGE"
	ensAgg := agg
	if scale {
		ensAgg = "SUM"
	}
	ensPost := "NONE"
	if keepPost && !nonzeroBase && !scale {
		ensPost, post = post, "NONE"
	}
	pi := indexOf(postNames, ensPost)
	ai := indexOf(aggNames, ensAgg)
	if pi < 0 || ai < 0 {
		return nil, 0, "", blocked("fix the model", "unknown post_transform %q or aggregate_function %q", ensPost, ensAgg)
	}
	attrs := append(sf.newAttrs(dt), canonical.IntAttr("n_targets", int64(k)),
		canonical.IntAttr("aggregate_function", int64(ai)), canonical.IntAttr("post_transform", int64(pi)))
	outs := mlOp(b, "TreeEnsemble", []*canonical.Value{x}, 1, attrs...)
	if outs == nil {
		return nil, 0, "", b.Err()
	}
	y := outs[0]
	if scale && len(f.roots) > 0 {
		y = b.op("Mul", []*canonical.Value{y, b.scalar(1 / float64(len(f.roots)))})
	}
	if nonzeroBase {
		bv := make([]float64, k)
		copy(bv, base)
		y = b.op("Add", []*canonical.Value{y, b.constF([]int64{int64(k)}, bv...)})
	}
	return y, dt, post, nil
}

// postOps applies a post transform with ai.onnx ops.
func postOps(b *builder, y *canonical.Value, post string) (*canonical.Value, error) {
	switch post {
	case "NONE", "":
		return y, nil
	case "LOGISTIC":
		return b.op("Sigmoid", []*canonical.Value{y}), nil
	case "SOFTMAX":
		return b.op("Softmax", []*canonical.Value{y}, canonical.IntAttr("axis", 1)), nil
	}
	return nil, blocked("", "post_transform %s after base_values or a rescaled average has no ai.onnx equivalent here (PROBIT needs an inverse erf, SOFTMAX_ZERO a masked softmax)", post)
}

func treeRegressorUp5(sc *stepCtx) error {
	n := sc.n
	f, err := oldForest(n, "target")
	if err != nil {
		return err
	}
	k := int(n.AttrInt("n_targets", 1))
	base, _, err := floatsOrTensor(n, "base_values")
	if err != nil {
		return err
	}
	if len(base) > k {
		return blocked("fix the model", "base_values has %d entries for %d targets", len(base), k)
	}
	b := newBuilder(sc, aiOpset(sc))
	y, dt, post, err := ensembleUp(b, f, k, n.AttrString("aggregate_function", "SUM"), base, n.AttrString("post_transform", "NONE"), true)
	if err != nil {
		return err
	}
	if y, err = postOps(b, y, post); err != nil {
		return err
	}
	if dt != canonical.Float {
		y = b.op("Cast", []*canonical.Value{y}, canonical.IntAttr("to", int64(canonical.Float)))
	}
	return b.finish(y)
}

// classVotes tells, for class j, whether some tree votes for it at every
// leaf (so every row scores it) and whether any leaf votes for it.
func (f *forest) classVotes(j int64) (always, ever bool, err error) {
	for _, l := range f.leaves {
		for _, v := range l {
			if v.target == j {
				ever = true
			}
		}
	}
	for _, r := range f.roots {
		all := true
		if err := f.walk(r, func(x fref) {
			if !x.leaf || x.i < 0 || x.i >= len(f.leaves) {
				return
			}
			hit := false
			for _, v := range f.leaves[x.i] {
				hit = hit || v.target == j
			}
			all = all && hit
		}); err != nil {
			return false, false, err
		}
		if all {
			return true, ever, nil
		}
	}
	return false, ever, nil
}

func treeClassifierUp5(sc *stepCtx) error {
	n := sc.n
	f, err := oldForest(n, "class")
	if err != nil {
		return err
	}
	var labels *canonical.Tensor
	var k int
	if a := n.Attr("classlabels_strings"); a != nil {
		k = len(a.Strings)
		labels = canonical.NewStringTensor("", []int64{int64(k)}, a.Strings)
	} else {
		ints := n.AttrInts("classlabels_int64s", nil)
		k = len(ints)
		labels = canonical.Int64Tensor("", []int64{int64(k)}, ints)
	}
	if k == 0 {
		return blocked("fix the model", "TreeEnsembleClassifier has no class labels")
	}
	for _, l := range f.leaves {
		for _, v := range l {
			if v.target < 0 || v.target >= int64(k) {
				return blocked("fix the model", "class id %d out of range for %d classes", v.target, k)
			}
		}
	}
	base, _, err := floatsOrTensor(n, "base_values")
	if err != nil {
		return err
	}
	post := n.AttrString("post_transform", "NONE")
	if post == "PROBIT" || post == "SOFTMAX_ZERO" {
		return blocked("keep ai.onnx.ml opset < 5", "post_transform %s of TreeEnsembleClassifier has no ai.onnx equivalent (PROBIT needs an inverse erf, SOFTMAX_ZERO a masked softmax)", post)
	}
	always := make([]bool, k)
	ever := make([]bool, k)
	for j := range always {
		if always[j], ever[j], err = f.classVotes(int64(j)); err != nil {
			return err
		}
	}
	b := newBuilder(sc, aiOpset(sc))
	lv, err := sc.constant("classlabels", labels)
	if err != nil {
		return err
	}
	if k != 2 {
		for j := 0; j < k; j++ {
			if !always[j] && j >= len(base) {
				return blocked("", "class %d is not scored for every input (no tree votes for it at every leaf), and TreeEnsembleClassifier then leaves it out of the arg max, which TreeEnsemble cannot tell", j)
			}
		}
		s, dt, _, err := ensembleUp(b, f, k, "SUM", base, "NONE", false)
		if err != nil {
			return err
		}
		idx := b.op("ArgMax", []*canonical.Value{s}, canonical.IntAttr("axis", 1), canonical.IntAttr("keepdims", 0))
		label := b.op("Gather", []*canonical.Value{lv, idx}, canonical.IntAttr("axis", 0))
		p, err := postOps(b, s, post)
		if err != nil {
			return err
		}
		if dt != canonical.Float {
			p = b.op("Cast", []*canonical.Value{p}, canonical.IntAttr("to", int64(canonical.Float)))
		}
		return b.finish(label, p)
	}
	return binaryClassifierUp(sc, b, f, lv, base, post, always, ever)
}

// binaryClassifierUp follows the two-class rules of TreeEnsembleClassifier
// (as ONNX Runtime and onnxconv's executor apply them) with ai.onnx ops.
func binaryClassifierUp(sc *stepCtx, b *builder, f *forest, lv *canonical.Value, base []float64, post string, always, ever []bool) error {
	for j := 0; j < 2; j++ {
		if always[j] == ever[j] {
			continue
		}
		return blocked("", "class %d is scored for some inputs only, and the two-class rules of TreeEnsembleClassifier then differ per row, which TreeEnsemble with standard ops cannot tell", j)
	}
	ids := map[int64]bool{}
	allPos := true
	for _, l := range f.leaves {
		for _, v := range l {
			ids[v.target] = true
			allPos = allPos && v.w >= 0
		}
	}
	binary := len(ids) == 1
	h0, h1 := always[0], always[1]
	s, dt, _, err := ensembleUp(b, f, 2, "SUM", nil, "NONE", false)
	if err != nil {
		return err
	}
	col := func(j int64) *canonical.Value {
		return b.op("Gather", []*canonical.Value{s, b.constI([]int64{1}, j)}, canonical.IntAttr("axis", 1))
	}
	add := func(v *canonical.Value, c float64) *canonical.Value {
		if c == 0 {
			return v
		}
		return b.op("Add", []*canonical.Value{v, b.scalar(c)})
	}
	neg := func(v *canonical.Value) *canonical.Value { return b.op("Neg", []*canonical.Value{v}) }
	p0, p1 := col(0), col(1)
	second, two := -1, true
	switch len(base) {
	case 2:
		if h1 {
			p1 = add(p0, base[1])
			p0 = neg(p1)
		} else {
			p1, p0 = add(p1, base[1]), add(p0, base[0])
		}
	case 1:
		p0 = add(p0, base[0])
		two = h1
	case 0:
		second, two = 3, h1
	default:
		return blocked("fix the model", "base_values has %d entries for 2 classes", len(base))
	}
	var pos *canonical.Value
	switch {
	case two && h1:
		pos = p1
	case h0:
		pos = p0
	default:
		return blocked("", "no class gets a vote, so the label is constant; onnxconv does not convert that")
	}
	thr := 0.0
	switch {
	case binary && allPos:
		thr, second = 0.5, 1
	case binary:
		second = 3
	}
	idx := b.op("Cast", []*canonical.Value{b.op("Greater", []*canonical.Value{pos, b.scalar(thr)})}, canonical.IntAttr("to", int64(canonical.Int64)))
	idx = b.op("Reshape", []*canonical.Value{idx, b.constI([]int64{1}, -1)})
	label := b.op("Gather", []*canonical.Value{lv, idx}, canonical.IntAttr("axis", 0))
	cat := func(a, c *canonical.Value) *canonical.Value {
		return b.op("Concat", []*canonical.Value{a, c}, canonical.IntAttr("axis", 1))
	}
	var probs *canonical.Value
	switch {
	case two:
		if probs, err = postOps(b, cat(p0, p1), post); err != nil {
			return err
		}
	case second == 0 || second == 1:
		probs = cat(b.op("Sub", []*canonical.Value{b.scalar(1), p0}), p0)
	case second >= 2 && post == "LOGISTIC":
		probs = b.op("Sigmoid", []*canonical.Value{cat(neg(p0), p0)})
	case second >= 2:
		probs = cat(neg(p0), p0)
	default:
		probs = cat(p0, b.op("Mul", []*canonical.Value{p0, b.scalar(0)}))
	}
	if dt != canonical.Float {
		probs = b.op("Cast", []*canonical.Value{probs}, canonical.IntAttr("to", int64(canonical.Float)))
	}
	return b.finish(label, probs)
}

// asTensorDown3 moves the *_as_tensor attributes of version 3 back to float
// lists when no value loses precision.
func asTensorDown3(sc *stepCtx, prefix string) error {
	for _, name := range []string{"nodes_values", "nodes_hitrates", prefix + "_weights", "base_values"} {
		a := sc.n.Attr(name + "_as_tensor")
		if a == nil {
			continue
		}
		if a.T == nil {
			return blocked("fix the model", "attribute %s_as_tensor holds no tensor", name)
		}
		vals, err := tensorFloats(a.T)
		if err != nil {
			return blocked("fix the model", "attribute %s_as_tensor: %v", name, err)
		}
		f32, ok := exactFloat32(vals)
		if !ok {
			return blocked("keep ai.onnx.ml opset >= 3", "%s_as_tensor holds doubles that float %s would round", name, name)
		}
		sc.n.DeleteAttr(name + "_as_tensor")
		sc.n.SetAttr(canonical.FloatsAttr(name, f32...))
	}
	return genericStep(sc, false)
}

// ---- TreeEnsemble 5 -> TreeEnsembleRegressor ----

func treeEnsembleDown(sc *stepCtx, to int) error {
	n := sc.n
	f, err := newForest(n)
	if err != nil {
		return err
	}
	attrs, err := f.oldAttrs(to >= 3)
	if err != nil {
		return err
	}
	pi, ai := int(n.AttrInt("post_transform", 0)), int(n.AttrInt("aggregate_function", 1))
	if pi < 0 || pi >= len(postNames) || ai < 0 || ai >= len(aggNames) {
		return blocked("fix the model", "post_transform %d or aggregate_function %d is unknown", pi, ai)
	}
	k := n.AttrInt("n_targets", 0)
	if k <= 0 {
		for _, l := range f.leaves {
			for _, v := range l {
				k = max(k, v.target+1)
			}
		}
	}
	attrs = append(attrs, canonical.IntAttr("n_targets", k), canonical.StringAttr("post_transform", postNames[pi]),
		canonical.StringAttr("aggregate_function", aggNames[ai]))
	x := n.Input(0)
	dt := elemType(x)
	aiTo := sc.c.to
	if dt != canonical.Float && dt != canonical.Undefined {
		aiTo = aiOpset(sc) // Cast nodes need an ai.onnx import
	}
	b := newBuilder(sc, aiTo)
	switch dt {
	case canonical.Float, canonical.Double, canonical.Undefined:
	case canonical.Float16:
		x = b.op("Cast", []*canonical.Value{x}, canonical.IntAttr("to", int64(canonical.Float)))
	default:
		return blocked("fix the model", "TreeEnsemble input %q is %v", x.Name, dt)
	}
	outs := mlOp(b, "TreeEnsembleRegressor", []*canonical.Value{x}, 1, attrs...)
	if outs == nil {
		return fmt.Errorf("building TreeEnsembleRegressor: %w", b.Err())
	}
	y := outs[0]
	if dt != canonical.Float && dt != canonical.Undefined {
		// TreeEnsembleRegressor computes in float: TreeEnsemble's double
		// output is that value, widened.
		y = b.op("Cast", []*canonical.Value{y}, canonical.IntAttr("to", int64(dt)))
	}
	return b.finish(y)
}

// ---- LabelEncoder ----

// labelEncoderUp2: version 1 maps strings to their index in
// classes_strings (default_int64) or indices to strings (default_string).
func labelEncoderUp2(sc *stepCtx) error {
	n := sc.n
	classes := n.AttrStrings("classes_strings", nil)
	dInt, dStr := n.Attr("default_int64"), n.Attr("default_string")
	toInt := dInt != nil
	switch {
	case dInt != nil && dStr != nil:
		return blocked("fix the model", "LabelEncoder-1 sets both default_int64 and default_string")
	case dInt == nil && dStr == nil:
		switch elemType(n.Input(0)) {
		case canonical.String:
			toInt = true
		case canonical.Int64:
		default:
			return needShapes("the input type is known", "LabelEncoder-1 sets no default_*, so only its input type tells the direction, and it is unknown")
		}
	}
	// The last occurrence of a repeated string gives its index (as ONNX
	// Runtime and onnxconv's executor read version 1).
	last := map[string]int{}
	for i, s := range classes {
		last[string(s)] = i
	}
	var keys []string
	var idx []int64
	for i, s := range classes {
		if last[string(s)] == i {
			keys, idx = append(keys, string(s)), append(idx, int64(i))
		}
	}
	n.DeleteAttr("classes_strings")
	if toInt {
		n.SetAttr(canonical.StringsAttr("keys_strings", keys...))
		n.SetAttr(canonical.IntsAttr("values_int64s", idx...))
		return nil
	}
	all := make([]int64, len(classes))
	for i := range all {
		all[i] = int64(i)
	}
	n.SetAttr(canonical.IntsAttr("keys_int64s", all...))
	n.SetAttr(canonical.StringsAttr("values_strings", classes...))
	return nil
}

// labelEncoderDown2 goes back to classes_strings when the mapping is
// string -> its position or position -> string.
func labelEncoderDown2(sc *stepCtx) error {
	n := sc.n
	ks, vi := n.Attr("keys_strings"), n.Attr("values_int64s")
	ki, vs := n.Attr("keys_int64s"), n.Attr("values_strings")
	for _, a := range []string{"keys_floats", "values_floats", "default_float"} {
		if n.Attr(a) != nil {
			return blocked("keep ai.onnx.ml opset >= 2", "LabelEncoder-1 maps only strings and int64 (attribute %s is set)", a)
		}
	}
	var classes []string
	var def *canonical.Attribute
	switch {
	case ks != nil && vi != nil:
		pos := map[int64]string{}
		for i, s := range ks.Strings {
			if i >= len(vi.Ints) {
				break
			}
			if _, dup := pos[vi.Ints[i]]; dup {
				return blocked("keep ai.onnx.ml opset >= 2", "two keys map to %d: LabelEncoder-1 maps each string to its own position", vi.Ints[i])
			}
			pos[vi.Ints[i]] = string(s)
		}
		if len(ks.Strings) != len(vi.Ints) {
			return blocked("fix the model", "keys_strings has %d entries, values_int64s %d", len(ks.Strings), len(vi.Ints))
		}
		top := int64(-1)
		for p := range pos {
			if p < 0 || p > 1<<20 {
				return blocked("keep ai.onnx.ml opset >= 2", "value %d is not a position: LabelEncoder-1 maps a string to its position in classes_strings", p)
			}
			top = max(top, p)
		}
		// A gap takes the string of the last position: a repeated string
		// maps to its last position, so the gap is never the answer.
		for i := int64(0); i <= top; i++ {
			s, ok := pos[i]
			if !ok {
				s = pos[top]
			}
			classes = append(classes, s)
		}
		def = canonical.IntAttr("default_int64", n.AttrInt("default_int64", -1))
	case ki != nil && vs != nil:
		if len(ki.Ints) != len(vs.Strings) {
			return blocked("fix the model", "keys_int64s has %d entries, values_strings %d", len(ki.Ints), len(vs.Strings))
		}
		order := make([]int, len(ki.Ints))
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, c int) bool { return ki.Ints[order[a]] < ki.Ints[order[c]] })
		for i, o := range order {
			if ki.Ints[o] != int64(i) {
				return blocked("keep ai.onnx.ml opset >= 2", "keys_int64s are not the positions 0..%d: LabelEncoder-1 maps an integer to classes_strings[i]", len(order)-1)
			}
			classes = append(classes, string(vs.Strings[o]))
		}
		def = canonical.StringAttr("default_string", n.AttrString("default_string", "_Unused"))
	default:
		return blocked("keep ai.onnx.ml opset >= 2", "LabelEncoder-1 maps only strings to int64 or int64 to strings")
	}
	for _, a := range []string{"keys_strings", "values_int64s", "keys_int64s", "values_strings", "default_int64", "default_string"} {
		n.DeleteAttr(a)
	}
	n.SetAttr(canonical.StringsAttr("classes_strings", classes...))
	n.SetAttr(def)
	return nil
}

// labelEncoderDown4 moves keys_tensor / values_tensor / default_tensor of
// version 4 to the list attributes of version 2.
func labelEncoderDown4(sc *stepCtx) error {
	n := sc.n
	conv := func(tname, kind string) error {
		a := n.Attr(tname)
		if a == nil {
			return nil
		}
		t := a.T
		if t == nil {
			return blocked("fix the model", "attribute %s holds no tensor", tname)
		}
		prefix := kind + "_"
		switch t.DataType {
		case canonical.String:
			ss, err := t.Strings()
			if err != nil {
				return fmt.Errorf("reading %s: %w", tname, err)
			}
			if kind == "default" {
				if len(ss) != 1 {
					return blocked("fix the model", "%s holds %d values, not 1", tname, len(ss))
				}
				n.SetAttr(canonical.StringAttr("default_string", string(ss[0])))
			} else {
				n.SetAttr(&canonical.Attribute{Name: prefix + "strings", Type: canonical.AttrStrings, Strings: ss})
			}
		case canonical.Int64:
			v, err := tensorInts(t)
			if err != nil {
				return fmt.Errorf("reading %s: %w", tname, err)
			}
			if kind == "default" {
				if len(v) != 1 {
					return blocked("fix the model", "%s holds %d values, not 1", tname, len(v))
				}
				n.SetAttr(canonical.IntAttr("default_int64", v[0]))
			} else {
				n.SetAttr(canonical.IntsAttr(prefix+"int64s", v...))
			}
		case canonical.Float:
			v, err := tensorFloats(t)
			if err != nil {
				return fmt.Errorf("reading %s: %w", tname, err)
			}
			f32, _ := exactFloat32(v)
			if kind == "default" {
				if len(f32) != 1 {
					return blocked("fix the model", "%s holds %d values, not 1", tname, len(f32))
				}
				n.SetAttr(canonical.FloatAttr("default_float", f32[0]))
			} else {
				n.SetAttr(canonical.FloatsAttr(prefix+"floats", f32...))
			}
		default:
			return blocked("keep ai.onnx.ml opset >= 4", "%s is %v; LabelEncoder-2 maps only string, int64 and float", tname, t.DataType)
		}
		n.DeleteAttr(tname)
		return nil
	}
	if err := conv("keys_tensor", "keys"); err != nil {
		return err
	}
	if err := conv("values_tensor", "values"); err != nil {
		return err
	}
	if err := conv("default_tensor", "default"); err != nil {
		return err
	}
	// Version 4 lets a repeated key's last entry win; version 2 does not
	// say, so keep only the last one.
	dedupLastKey(n)
	return genericStep(sc, false)
}

// dedupLastKey drops all but the last entry of a repeated key.
func dedupLastKey(n *canonical.Node) {
	var keyAttr, valAttr *canonical.Attribute
	for _, a := range n.Attributes {
		switch a.Name {
		case "keys_strings", "keys_int64s", "keys_floats":
			keyAttr = a
		case "values_strings", "values_int64s", "values_floats":
			valAttr = a
		}
	}
	if keyAttr == nil || valAttr == nil {
		return
	}
	key := func(i int) string {
		switch keyAttr.Type {
		case canonical.AttrStrings:
			return "s" + string(keyAttr.Strings[i])
		case canonical.AttrInts:
			return "i" + strconv.FormatInt(keyAttr.Ints[i], 10)
		}
		f := keyAttr.Floats[i]
		if math.IsNaN(float64(f)) {
			return "nan"
		}
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(f))
		return "f" + string(b[:])
	}
	nk := len(keyAttr.Strings) + len(keyAttr.Ints) + len(keyAttr.Floats)
	nv := len(valAttr.Strings) + len(valAttr.Ints) + len(valAttr.Floats)
	if nk != nv {
		return
	}
	last := map[string]int{}
	for i := 0; i < nk; i++ {
		last[key(i)] = i
	}
	if len(last) == nk {
		return
	}
	keep := func(a *canonical.Attribute) {
		var s [][]byte
		var ints []int64
		var fs []float32
		for i := 0; i < nk; i++ {
			if last[key(i)] != i {
				continue
			}
			switch a.Type {
			case canonical.AttrStrings:
				s = append(s, a.Strings[i])
			case canonical.AttrInts:
				ints = append(ints, a.Ints[i])
			default:
				fs = append(fs, a.Floats[i])
			}
		}
		a.Strings, a.Ints, a.Floats = s, ints, fs
	}
	keep(valAttr) // values first: keep reads the keys
	keep(keyAttr)
}
