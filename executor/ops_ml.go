package executor

import (
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
)

// Operators of the ai.onnx.ml domain, all as host kernels (float64
// arithmetic; outputs rounded to their declared type).
//
// Maps: the executor has no map values. ZipMap returns its sequence of
// maps as a sequence of 1-D float tensors, one per row, holding the values
// in the order of the classlabels_* attribute (the keys). DictVectorizer
// takes a map as a sequence of two 1-D tensors, [keys, values].

func registerML(r registry) {
	ml := func(f func(*lctx) error, ops ...string) {
		for _, op := range ops {
			im := r.impl(canonical.MLDomain, op)
			im.host = f
			im.preferHost = true
		}
	}
	ml(mlTreeEnsemble, "TreeEnsemble")
	ml(mlTreeEnsembleRegressor, "TreeEnsembleRegressor")
	ml(mlTreeEnsembleClassifier, "TreeEnsembleClassifier")
	ml(mlArrayFeatureExtractor, "ArrayFeatureExtractor")
	ml(mlBinarizer, "Binarizer")
	ml(mlLabelEncoder, "LabelEncoder")
	ml(mlCategoryMapper, "CategoryMapper")
	ml(mlOneHotEncoder, "OneHotEncoder")
	ml(mlImputer, "Imputer")
	ml(mlScaler, "Scaler")
	ml(mlNormalizer, "Normalizer")
	ml(mlFeatureVectorizer, "FeatureVectorizer")
	ml(mlLinearRegressor, "LinearRegressor")
	ml(mlLinearClassifier, "LinearClassifier")
	ml(mlSVMRegressor, "SVMRegressor")
	ml(mlSVMClassifier, "SVMClassifier")
	ml(mlZipMap, "ZipMap")
	ml(mlDictVectorizer, "DictVectorizer")
}

// mlRows views X ([N,C] or [C]) as N rows of C float64 values.
func mlRows(c *lctx, i int) (*htensor, []float64, int, int, error) {
	x, err := c.H(i)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	if x.dt == canonical.String {
		return nil, nil, 0, 0, fmt.Errorf("input %d: numeric tensor expected, got string", i)
	}
	var n, f int
	switch len(x.shape) {
	case 0:
		n, f = 1, 1
	case 1:
		n, f = 1, x.shape[0]
	case 2:
		n, f = x.shape[0], x.shape[1]
	default:
		n = x.shape[0]
		f = numel(x.shape[1:])
	}
	return x, x.f64(), n, f, nil
}

// mlAttrTensor returns a TENSOR attribute as a host tensor, or nil.
func mlAttrTensor(c *lctx, name string) (*htensor, error) {
	a := c.n.Attr(name)
	if a == nil || a.T == nil {
		return nil, nil
	}
	h, err := fromCanonical(a.T)
	if err != nil {
		return nil, fmt.Errorf("attribute %s: %w", name, err)
	}
	return h, nil
}

// mlFloatsOrTensor reads attribute name (floats) or name_as_tensor.
func mlFloatsOrTensor(c *lctx, name string) ([]float64, bool, error) {
	t, err := mlAttrTensor(c, name+"_as_tensor")
	if err != nil {
		return nil, false, err
	}
	if t != nil {
		return t.f64(), true, nil
	}
	if !c.HasAttr(name) {
		return nil, false, nil
	}
	fs := c.AFloats(name, nil)
	out := make([]float64, len(fs))
	for i, v := range fs {
		out[i] = float64(v)
	}
	return out, true, nil
}

// Post transforms.
const (
	mlPostNone = iota
	mlPostSoftmax
	mlPostLogistic
	mlPostSoftmaxZero
	mlPostProbit
)

func mlPostFromString(s string) (int, error) {
	switch s {
	case "", "NONE":
		return mlPostNone, nil
	case "SOFTMAX":
		return mlPostSoftmax, nil
	case "LOGISTIC":
		return mlPostLogistic, nil
	case "SOFTMAX_ZERO":
		return mlPostSoftmaxZero, nil
	case "PROBIT":
		return mlPostProbit, nil
	}
	return 0, fmt.Errorf("unknown post_transform %q", s)
}

func mlLogistic(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func mlProbit(x float64) float64 { return math.Sqrt2 * math.Erfinv(2*x-1) }

// mlPostRow applies a post transform to one row of scores in place.
func mlPostRow(row []float64, mode int) {
	switch mode {
	case mlPostSoftmax:
		softmaxRow(row)
	case mlPostSoftmaxZero:
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, v)
		}
		s := 0.0
		for i, v := range row {
			if v != 0 {
				row[i] = math.Exp(v - m)
				s += row[i]
			}
		}
		if s != 0 {
			for i := range row {
				row[i] /= s
			}
		}
	case mlPostLogistic:
		for i, v := range row {
			row[i] = mlLogistic(v)
		}
	case mlPostProbit:
		for i, v := range row {
			row[i] = mlProbit(v)
		}
	}
}

func mlPost(scores []float64, k, mode int) {
	if k == 0 {
		return
	}
	for i := 0; i+k <= len(scores); i += k {
		mlPostRow(scores[i:i+k], mode)
	}
}

// ---- tree ensembles ----

const (
	mlBranchLEQ = iota
	mlBranchLT
	mlBranchGTE
	mlBranchGT
	mlBranchEQ
	mlBranchNEQ
	mlBranchMember
	mlLeaf
)

type mlContrib struct {
	target int
	w      float64
}

// mlTreeNode is an interior node; a child reference >= 0 is a node index,
// < 0 is leaf ^ref.
type mlTreeNode struct {
	feat        int
	mode        int
	th          float64
	set         map[float64]bool
	tNext       int
	fNext       int
	missingTrue bool
}

type mlForest struct {
	nodes  []mlTreeNode
	leaves [][]mlContrib
	roots  []int // node index, or ^leaf
	// f32 sums the leaf weights in float32, tree by tree, as ONNX Runtime
	// does for float inputs (its scores are of the threshold type) and as
	// XGBoost and LightGBM's float predictors do.
	f32 bool
}

func (f *mlForest) leafOf(root int, x []float64) (int, error) {
	cur := root
	for steps := 0; cur >= 0; steps++ {
		if steps > len(f.nodes) {
			return 0, fmt.Errorf("tree has a cycle")
		}
		nd := &f.nodes[cur]
		if nd.feat < 0 || nd.feat >= len(x) {
			return 0, fmt.Errorf("feature id %d out of range for %d features", nd.feat, len(x))
		}
		v := x[nd.feat]
		var cond bool
		if math.IsNaN(v) && nd.missingTrue {
			cond = true
		} else {
			switch nd.mode {
			case mlBranchLEQ:
				cond = v <= nd.th
			case mlBranchLT:
				cond = v < nd.th
			case mlBranchGTE:
				cond = v >= nd.th
			case mlBranchGT:
				cond = v > nd.th
			case mlBranchEQ:
				cond = v == nd.th
			case mlBranchNEQ:
				cond = v != nd.th
			case mlBranchMember:
				cond = nd.set[v]
			}
		}
		if cond {
			cur = nd.tNext
		} else {
			cur = nd.fNext
		}
	}
	return ^cur, nil
}

// mlAgg aggregation functions.
const (
	mlAggAverage = iota
	mlAggSum
	mlAggMin
	mlAggMax
)

func mlAggFromString(s string) (int, error) {
	switch s {
	case "", "SUM":
		return mlAggSum, nil
	case "AVERAGE":
		return mlAggAverage, nil
	case "MIN":
		return mlAggMin, nil
	case "MAX":
		return mlAggMax, nil
	}
	return 0, fmt.Errorf("unknown aggregate_function %q", s)
}

// run returns scores [n, k] and per-score "has a contribution" flags.
func (f *mlForest) run(x []float64, n, nf, k, agg int) ([]float64, []bool, error) {
	scores := make([]float64, n*k)
	has := make([]bool, n*k)
	for r := 0; r < n; r++ {
		row := x[r*nf : (r+1)*nf]
		sc, hs := scores[r*k:(r+1)*k], has[r*k:(r+1)*k]
		for _, root := range f.roots {
			leaf, err := f.leafOf(root, row)
			if err != nil {
				return nil, nil, err
			}
			if leaf < 0 || leaf >= len(f.leaves) {
				return nil, nil, fmt.Errorf("leaf %d out of range", leaf)
			}
			for _, ct := range f.leaves[leaf] {
				if ct.target < 0 || ct.target >= k {
					return nil, nil, fmt.Errorf("target id %d out of range for %d targets", ct.target, k)
				}
				t := ct.target
				switch {
				case !hs[t]:
					sc[t] = ct.w
				case agg == mlAggMin:
					sc[t] = math.Min(sc[t], ct.w)
				case agg == mlAggMax:
					sc[t] = math.Max(sc[t], ct.w)
				case f.f32:
					sc[t] = float64(float32(sc[t]) + float32(ct.w))
				default:
					sc[t] += ct.w
				}
				hs[t] = true
			}
		}
		if agg == mlAggAverage && len(f.roots) > 0 {
			for t := range sc {
				sc[t] /= float64(len(f.roots))
			}
		}
	}
	return scores, has, nil
}

func mlCheckLens(names []string, lens ...int) error {
	for i := 1; i < len(lens); i++ {
		if lens[i] != lens[0] {
			return fmt.Errorf("attribute %s has %d entries, %s has %d", names[i], lens[i], names[0], lens[0])
		}
	}
	return nil
}

// mlTreeEnsemble is ai.onnx.ml TreeEnsemble (ml 5).
func mlTreeEnsemble(c *lctx) error {
	x, xv, n, nf, err := mlRows(c, 0)
	if err != nil {
		return err
	}
	feats := c.AInts("nodes_featureids", nil)
	tIDs, fIDs := c.AInts("nodes_truenodeids", nil), c.AInts("nodes_falsenodeids", nil)
	tLeaf, fLeaf := c.AInts("nodes_trueleafs", nil), c.AInts("nodes_falseleafs", nil)
	missing := c.AInts("nodes_missing_value_tracks_true", nil)
	modesT, err := mlAttrTensor(c, "nodes_modes")
	if err != nil {
		return err
	}
	splitsT, err := mlAttrTensor(c, "nodes_splits")
	if err != nil {
		return err
	}
	weightsT, err := mlAttrTensor(c, "leaf_weights")
	if err != nil {
		return err
	}
	membT, err := mlAttrTensor(c, "membership_values")
	if err != nil {
		return err
	}
	if modesT == nil || weightsT == nil {
		return fmt.Errorf("TreeEnsemble needs nodes_modes and leaf_weights")
	}
	modes := modesT.i64()
	var splits []float64
	if splitsT != nil {
		splits = splitsT.f64()
	} else {
		splits = make([]float64, len(modes))
	}
	nn := len(feats)
	if err := mlCheckLens([]string{"nodes_featureids", "nodes_modes", "nodes_splits", "nodes_truenodeids", "nodes_falsenodeids", "nodes_trueleafs", "nodes_falseleafs"},
		nn, len(modes), len(splits), len(tIDs), len(fIDs), len(tLeaf), len(fLeaf)); err != nil {
		return err
	}
	if missing != nil && len(missing) != nn {
		return fmt.Errorf("nodes_missing_value_tracks_true has %d entries, expected %d", len(missing), nn)
	}
	targets := c.AInts("leaf_targetids", nil)
	weights := weightsT.f64()
	if len(targets) != len(weights) {
		return fmt.Errorf("leaf_targetids has %d entries, leaf_weights %d", len(targets), len(weights))
	}
	var sets []map[float64]bool
	if membT != nil {
		cur := map[float64]bool{}
		for _, v := range membT.f64() {
			if math.IsNaN(v) {
				sets = append(sets, cur)
				cur = map[float64]bool{}
				continue
			}
			cur[v] = true
		}
		if len(cur) > 0 {
			sets = append(sets, cur)
		}
	}
	f := &mlForest{nodes: make([]mlTreeNode, nn), leaves: make([][]mlContrib, len(weights))}
	for i := range weights {
		f.leaves[i] = []mlContrib{{target: int(targets[i]), w: weights[i]}}
	}
	ref := func(id, leaf int64) (int, error) {
		if leaf != 0 {
			if id < 0 || id >= int64(len(weights)) {
				return 0, fmt.Errorf("leaf index %d out of range", id)
			}
			return ^int(id), nil
		}
		if id < 0 || id >= int64(nn) {
			return 0, fmt.Errorf("node index %d out of range", id)
		}
		return int(id), nil
	}
	nset := 0
	for i := 0; i < nn; i++ {
		nd := mlTreeNode{feat: int(feats[i]), mode: int(modes[i]), th: splits[i]}
		if nd.mode < mlBranchLEQ || nd.mode > mlBranchMember {
			return fmt.Errorf("node %d: unknown mode %d", i, modes[i])
		}
		if nd.mode == mlBranchMember {
			if nset >= len(sets) {
				return fmt.Errorf("membership_values has fewer sets than BRANCH_MEMBER nodes")
			}
			nd.set = sets[nset]
			nset++
		}
		if missing != nil {
			nd.missingTrue = missing[i] != 0
		}
		if nd.tNext, err = ref(tIDs[i], tLeaf[i]); err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
		if nd.fNext, err = ref(fIDs[i], fLeaf[i]); err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
		f.nodes[i] = nd
	}
	for _, r := range c.AInts("tree_roots", nil) {
		if r < 0 || r >= int64(nn) {
			return fmt.Errorf("tree root %d out of range", r)
		}
		f.roots = append(f.roots, int(r))
	}
	k := int(c.AInt("n_targets", 0))
	if k <= 0 {
		for _, t := range targets {
			k = max(k, int(t)+1)
		}
	}
	agg := int(c.AInt("aggregate_function", mlAggSum))
	if agg < mlAggAverage || agg > mlAggMax {
		return fmt.Errorf("unknown aggregate_function %d", agg)
	}
	post := int(c.AInt("post_transform", mlPostNone))
	if post < mlPostNone || post > mlPostProbit {
		return fmt.Errorf("unknown post_transform %d", post)
	}
	f.f32 = x.dt == canonical.Float
	scores, _, err := f.run(xv, n, nf, k, agg)
	if err != nil {
		return err
	}
	mlPost(scores, k, post)
	c.OutH(0, fromF64(x.dt, []int{n, k}, scores))
	return nil
}

// mlOldForest builds a forest from the TreeEnsembleRegressor/Classifier
// attributes; prefix is "target" or "class".
func mlOldForest(c *lctx, prefix string) (*mlForest, error) {
	treeIDs, nodeIDs := c.AInts("nodes_treeids", nil), c.AInts("nodes_nodeids", nil)
	feats := c.AInts("nodes_featureids", nil)
	modeS := c.n.AttrStrings("nodes_modes", nil)
	tIDs, fIDs := c.AInts("nodes_truenodeids", nil), c.AInts("nodes_falsenodeids", nil)
	missing := c.AInts("nodes_missing_value_tracks_true", nil)
	values, ok, err := mlFloatsOrTensor(c, "nodes_values")
	if err != nil {
		return nil, err
	}
	nn := len(treeIDs)
	if !ok {
		values = make([]float64, nn)
	}
	if err := mlCheckLens([]string{"nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes", "nodes_values", "nodes_truenodeids", "nodes_falsenodeids"},
		nn, len(nodeIDs), len(feats), len(modeS), len(values), len(tIDs), len(fIDs)); err != nil {
		return nil, err
	}
	if missing != nil && len(missing) != nn {
		return nil, fmt.Errorf("nodes_missing_value_tracks_true has %d entries, expected %d", len(missing), nn)
	}
	type key struct{ t, n int64 }
	index := map[key]int{}
	leafIdx := map[key]int{}
	f := &mlForest{}
	// node position -> forest node or leaf
	pos := make([]int, nn)
	for i := 0; i < nn; i++ {
		k := key{treeIDs[i], nodeIDs[i]}
		if _, dup := index[k]; dup {
			return nil, fmt.Errorf("node (tree %d, id %d) is defined twice", k.t, k.n)
		}
		index[k] = i
		if modeS[i] == "LEAF" {
			leafIdx[k] = len(f.leaves)
			pos[i] = ^len(f.leaves)
			f.leaves = append(f.leaves, nil)
		} else {
			pos[i] = len(f.nodes)
			f.nodes = append(f.nodes, mlTreeNode{})
		}
	}
	modeOf := map[string]int{"BRANCH_LEQ": mlBranchLEQ, "BRANCH_LT": mlBranchLT, "BRANCH_GTE": mlBranchGTE,
		"BRANCH_GT": mlBranchGT, "BRANCH_EQ": mlBranchEQ, "BRANCH_NEQ": mlBranchNEQ}
	child := func(t, id int64) (int, error) {
		i, ok := index[key{t, id}]
		if !ok {
			return 0, fmt.Errorf("tree %d has no node %d", t, id)
		}
		return pos[i], nil
	}
	seen := map[int64]bool{}
	for i := 0; i < nn; i++ {
		if !seen[treeIDs[i]] {
			seen[treeIDs[i]] = true
			f.roots = append(f.roots, pos[i])
		}
		if pos[i] < 0 {
			continue
		}
		m, ok := modeOf[modeS[i]]
		if !ok {
			return nil, fmt.Errorf("node %d: unknown mode %q", i, modeS[i])
		}
		nd := mlTreeNode{feat: int(feats[i]), mode: m, th: values[i]}
		if missing != nil {
			nd.missingTrue = missing[i] != 0
		}
		if nd.tNext, err = child(treeIDs[i], tIDs[i]); err != nil {
			return nil, err
		}
		if nd.fNext, err = child(treeIDs[i], fIDs[i]); err != nil {
			return nil, err
		}
		f.nodes[pos[i]] = nd
	}
	cTrees, cNodes, cIDs := c.AInts(prefix+"_treeids", nil), c.AInts(prefix+"_nodeids", nil), c.AInts(prefix+"_ids", nil)
	cW, _, err := mlFloatsOrTensor(c, prefix+"_weights")
	if err != nil {
		return nil, err
	}
	if err := mlCheckLens([]string{prefix + "_treeids", prefix + "_nodeids", prefix + "_ids", prefix + "_weights"},
		len(cTrees), len(cNodes), len(cIDs), len(cW)); err != nil {
		return nil, err
	}
	for i := range cTrees {
		l, ok := leafIdx[key{cTrees[i], cNodes[i]}]
		if !ok {
			return nil, fmt.Errorf("%s entry %d refers to (tree %d, node %d), which is not a leaf", prefix, i, cTrees[i], cNodes[i])
		}
		f.leaves[l] = append(f.leaves[l], mlContrib{target: int(cIDs[i]), w: cW[i]})
	}
	return f, nil
}

func mlTreeEnsembleRegressor(c *lctx) error {
	xt, xv, n, nf, err := mlRows(c, 0)
	if err != nil {
		return err
	}
	f, err := mlOldForest(c, "target")
	if err != nil {
		return err
	}
	k := int(c.AInt("n_targets", 1))
	agg, err := mlAggFromString(c.AStr("aggregate_function", "SUM"))
	if err != nil {
		return err
	}
	post, err := mlPostFromString(c.AStr("post_transform", "NONE"))
	if err != nil {
		return err
	}
	base, _, err := mlFloatsOrTensor(c, "base_values")
	if err != nil {
		return err
	}
	if len(base) != 0 && len(base) != k {
		return fmt.Errorf("base_values has %d entries for %d targets", len(base), k)
	}
	f.f32 = xt.dt == canonical.Float
	scores, has, err := f.run(xv, n, nf, k, agg)
	if err != nil {
		return err
	}
	for i := range scores {
		if !has[i] {
			scores[i] = 0
		}
		if len(base) > 0 {
			scores[i] += base[i%k]
		}
	}
	mlPost(scores, k, post)
	c.OutH(0, fromF64(canonical.Float, []int{n, k}, scores))
	return nil
}

// mlLabels returns the class labels (ints or strings) and how many.
type mlLabels struct {
	ints    []int64
	strs    []string
	isStr   bool
	defined bool
}

func mlClassLabels(c *lctx, intName, strName string) mlLabels {
	if c.HasAttr(strName) {
		return mlLabels{strs: c.n.AttrStrings(strName, nil), isStr: true, defined: true}
	}
	return mlLabels{ints: c.AInts(intName, nil), defined: c.HasAttr(intName)}
}

func (l mlLabels) n() int {
	if l.isStr {
		return len(l.strs)
	}
	return len(l.ints)
}

// out builds the label output from class indices (-1: positive/negative
// fallbacks are resolved by the caller).
func (l mlLabels) out(idx []int) *htensor {
	if l.isStr {
		h := newH(canonical.String, []int{len(idx)})
		s := h.data.([]string)
		for i, j := range idx {
			s[i] = l.strs[j]
		}
		return h
	}
	h := newH(canonical.Int64, []int{len(idx)})
	s := h.data.([]int64)
	for i, j := range idx {
		s[i] = l.ints[j]
	}
	return h
}

func argmaxRow(row []float64) int {
	best := 0
	for i, v := range row {
		if v > row[best] {
			best = i
		}
	}
	return best
}

func mlTreeEnsembleClassifier(c *lctx) error {
	xt, xv, n, nf, err := mlRows(c, 0)
	if err != nil {
		return err
	}
	f, err := mlOldForest(c, "class")
	if err != nil {
		return err
	}
	labels := mlClassLabels(c, "classlabels_int64s", "classlabels_strings")
	k := labels.n()
	if k == 0 {
		return fmt.Errorf("TreeEnsembleClassifier has no class labels")
	}
	post, err := mlPostFromString(c.AStr("post_transform", "NONE"))
	if err != nil {
		return err
	}
	base, _, err := mlFloatsOrTensor(c, "base_values")
	if err != nil {
		return err
	}
	classIDs := map[int64]bool{}
	allPos := true
	cw, _, _ := mlFloatsOrTensor(c, "class_weights")
	for _, id := range c.AInts("class_ids", nil) {
		classIDs[id] = true
	}
	for _, w := range cw {
		if w < 0 {
			allPos = false
		}
	}
	binary := k == 2 && len(classIDs) == 1
	f.f32 = xt.dt == canonical.Float
	scores, has, err := f.run(xv, n, nf, k, mlAggSum)
	if err != nil {
		return err
	}
	out := make([]float64, n*k)
	idx := make([]int, n)
	for r := 0; r < n; r++ {
		sc, hs := scores[r*k:(r+1)*k], has[r*k:(r+1)*k]
		o := out[r*k : (r+1)*k]
		if k != 2 {
			idx[r] = mlClassifyMulti(sc, hs, base, o, post)
			continue
		}
		idx[r] = mlClassifyBinary(sc[0], sc[1], hs[0], hs[1], base, binary, allPos, o, post)
	}
	c.OutH(0, labels.out(idx))
	c.OutH(1, fromF64(canonical.Float, []int{n, k}, out))
	return nil
}

// mlClassifyMulti adds the base values, picks the best scored class and
// writes the transformed scores to o (ONNX Runtime's rules).
func mlClassifyMulti(sc []float64, hs []bool, base []float64, o []float64, post int) int {
	for j := range sc {
		if j < len(base) {
			sc[j] += base[j]
			hs[j] = true
		}
	}
	best := -1
	for j, v := range sc {
		if hs[j] && (best < 0 || v > sc[best]) {
			best = j
		}
	}
	copy(o, sc)
	mlPostRow(o, post)
	return max(best, 0)
}

// mlClassifyBinary follows ONNX Runtime's rules for two classes: with a
// single scored class the second score is derived from the first.
func mlClassifyBinary(p0, p1 float64, h0, h1 bool, base []float64, binary, allPos bool, o []float64, post int) int {
	second := -1
	two := true
	switch len(base) {
	case 2:
		if h1 {
			p1 = base[1] + p0
			p0 = -p1
		} else {
			p1 += base[1]
			p0 += base[0]
		}
	case 1:
		p0 += base[0]
		two = h1
	case 0:
		second = 3
		two = h1
	}
	pos := 0.0
	switch {
	case two && h1:
		pos = p1
	case h0:
		pos = p0
	}
	idx := 0
	switch {
	case binary && allPos:
		second = 1
		if pos > 0.5 {
			idx, second = 1, 0
		}
	case binary:
		second = 3
		if pos > 0 {
			idx, second = 1, 2
		}
	case pos > 0:
		idx = 1
	}
	if two {
		o[0], o[1] = p0, p1
		mlPostRow(o, post)
		return idx
	}
	switch {
	case post == mlPostProbit:
		o[0], o[1] = mlProbit(p0), 0
	case second == 0 || second == 1:
		o[0], o[1] = 1-p0, p0
	case second >= 2 && post == mlPostLogistic:
		o[0], o[1] = mlLogistic(-p0), mlLogistic(p0)
	case second >= 2:
		o[0], o[1] = -p0, p0
	default:
		o[0], o[1] = p0, 0
	}
	return idx
}

// ---- simple transforms ----

func mlArrayFeatureExtractor(c *lctx) error {
	x, err := c.H(0)
	if err != nil {
		return err
	}
	ind, err := c.Ints(1)
	if err != nil {
		return err
	}
	if len(x.shape) == 0 {
		return fmt.Errorf("ArrayFeatureExtractor needs an input of rank >= 1")
	}
	last := x.shape[len(x.shape)-1]
	outer := x.size() / max(last, 1)
	if last == 0 {
		outer = numel(x.shape[:len(x.shape)-1])
	}
	for _, i := range ind {
		if i < 0 || i >= int64(last) {
			return fmt.Errorf("index %d out of range for last dimension %d", i, last)
		}
	}
	var shape []int
	if len(x.shape) == 1 {
		shape = []int{1, len(ind)}
	} else {
		shape = append(append([]int{}, x.shape[:len(x.shape)-1]...), len(ind))
	}
	idx := make([]int, 0, outer*len(ind))
	for o := 0; o < outer; o++ {
		for _, i := range ind {
			idx = append(idx, o*last+int(i))
		}
	}
	c.OutH(0, hTake(x, shape, idx))
	return nil
}

func mlBinarizer(c *lctx) error {
	x, err := c.H(0)
	if err != nil {
		return err
	}
	th := float64(c.AFloat("threshold", 0))
	v := x.f64()
	for i, e := range v {
		if e > th {
			v[i] = 1
		} else {
			v[i] = 0
		}
	}
	c.OutH(0, fromF64(x.dt, x.shape, v))
	return nil
}

// mlLabelEncoder is LabelEncoder 1, 2 and 4.
func mlLabelEncoder(c *lctx) error {
	x, err := c.H(0)
	if err != nil {
		return err
	}
	var keys, values, def *htensor
	if c.ver < 2 {
		classes := c.n.AttrStrings("classes_strings", nil)
		ks := &htensor{dt: canonical.String, shape: []int{len(classes)}, data: classes}
		ids := make([]int64, len(classes))
		for i := range ids {
			ids[i] = int64(i)
		}
		is := fromI64(canonical.Int64, []int{len(ids)}, ids)
		if x.dt == canonical.String {
			keys, values = ks, is
			def = fromI64(canonical.Int64, []int{1}, []int64{c.AInt("default_int64", -1)})
		} else {
			keys, values = is, ks
			def = &htensor{dt: canonical.String, shape: []int{1}, data: []string{c.AStr("default_string", "_Unused")}}
		}
	} else {
		if keys, err = mlAttrTensor(c, "keys_tensor"); err != nil {
			return err
		}
		if keys == nil {
			keys = mlListAttr(c, "keys")
		}
		if values, err = mlAttrTensor(c, "values_tensor"); err != nil {
			return err
		}
		if values == nil {
			values = mlListAttr(c, "values")
		}
		if keys == nil || values == nil {
			return fmt.Errorf("LabelEncoder needs keys_* and values_* attributes")
		}
		if def, err = mlAttrTensor(c, "default_tensor"); err != nil {
			return err
		}
		if def == nil || def.size() == 0 {
			switch {
			case values.dt == canonical.String:
				def = &htensor{dt: canonical.String, shape: []int{1}, data: []string{c.AStr("default_string", "_Unused")}}
			case isFloatType(values.dt):
				d := float64(c.AFloat("default_float", float32(math.Copysign(0, -1))))
				def = fromF64(values.dt, []int{1}, []float64{d})
			default:
				def = fromI64(values.dt, []int{1}, []int64{c.AInt("default_int64", -1)})
			}
		} else if def.dt != values.dt {
			return fmt.Errorf("default_tensor has type %v, values have %v", def.dt, values.dt)
		}
	}
	if keys.size() != values.size() {
		return fmt.Errorf("LabelEncoder has %d keys and %d values", keys.size(), values.size())
	}
	if (keys.dt == canonical.String) != (x.dt == canonical.String) {
		return fmt.Errorf("input of type %v does not match keys of type %v", x.dt, keys.dt)
	}
	nk := keys.size()
	idx := make([]int, x.size())
	switch {
	case x.dt == canonical.String:
		m := map[string]int{}
		for i, k := range keys.data.([]string) {
			m[k] = i
		}
		for i, v := range x.data.([]string) {
			if j, ok := m[v]; ok {
				idx[i] = j
			} else {
				idx[i] = nk
			}
		}
	case isFloatType(x.dt) || isFloatType(keys.dt):
		m := map[float64]int{}
		nan := -1
		for i, k := range keys.f64() {
			if math.IsNaN(k) {
				nan = i
			} else {
				m[k] = i
			}
		}
		for i, v := range x.f64() {
			j, ok := m[v]
			switch {
			case ok:
				idx[i] = j
			case math.IsNaN(v) && nan >= 0:
				idx[i] = nan
			default:
				idx[i] = nk
			}
		}
	default:
		m := map[int64]int{}
		for i, k := range keys.i64() {
			m[k] = i
		}
		for i, v := range x.i64() {
			if j, ok := m[v]; ok {
				idx[i] = j
			} else {
				idx[i] = nk
			}
		}
	}
	all := &htensor{dt: values.dt, data: concatAny([]any{values.data, takeAny(def.data, []int{0})})}
	c.OutH(0, hTake(all, x.shape, idx))
	return nil
}

// mlListAttr reads prefix_strings / prefix_int64s / prefix_floats as a 1-D
// host tensor.
func mlListAttr(c *lctx, prefix string) *htensor {
	switch {
	case c.HasAttr(prefix + "_strings"):
		s := c.n.AttrStrings(prefix+"_strings", nil)
		return &htensor{dt: canonical.String, shape: []int{len(s)}, data: s}
	case c.HasAttr(prefix + "_int64s"):
		v := c.AInts(prefix+"_int64s", nil)
		return fromI64(canonical.Int64, []int{len(v)}, v)
	case c.HasAttr(prefix + "_floats"):
		v := c.AFloats(prefix+"_floats", nil)
		return &htensor{dt: canonical.Float, shape: []int{len(v)}, data: append([]float32{}, v...)}
	}
	return nil
}

func mlCategoryMapper(c *lctx) error {
	x, err := c.H(0)
	if err != nil {
		return err
	}
	ints := c.AInts("cats_int64s", nil)
	strs := c.n.AttrStrings("cats_strings", nil)
	if len(ints) != len(strs) {
		return fmt.Errorf("cats_int64s has %d entries, cats_strings %d", len(ints), len(strs))
	}
	if x.dt == canonical.String {
		m := map[string]int64{}
		for i, s := range strs {
			m[s] = ints[i]
		}
		def := c.AInt("default_int64", -1)
		out := newH(canonical.Int64, x.shape)
		o := out.data.([]int64)
		for i, s := range x.data.([]string) {
			if v, ok := m[s]; ok {
				o[i] = v
			} else {
				o[i] = def
			}
		}
		c.OutH(0, out)
		return nil
	}
	m := map[int64]string{}
	for i, v := range ints {
		m[v] = strs[i]
	}
	def := c.AStr("default_string", "_Unused")
	out := newH(canonical.String, x.shape)
	o := out.data.([]string)
	for i, v := range x.i64() {
		if s, ok := m[v]; ok {
			o[i] = s
		} else {
			o[i] = def
		}
	}
	c.OutH(0, out)
	return nil
}

func mlOneHotEncoder(c *lctx) error {
	x, err := c.H(0)
	if err != nil {
		return err
	}
	zeros := c.AInt("zeros", 1) != 0
	var idx []int
	var k int
	if x.dt == canonical.String {
		cats := c.n.AttrStrings("cats_strings", nil)
		if len(cats) == 0 {
			return fmt.Errorf("OneHotEncoder on strings needs cats_strings")
		}
		k = len(cats)
		m := map[string]int{}
		for i, s := range cats {
			m[s] = i
		}
		for _, s := range x.data.([]string) {
			j, ok := m[s]
			if !ok {
				j = -1
			}
			idx = append(idx, j)
		}
	} else {
		cats := c.AInts("cats_int64s", nil)
		if len(cats) == 0 {
			return fmt.Errorf("OneHotEncoder on numbers needs cats_int64s")
		}
		k = len(cats)
		m := map[int64]int{}
		for i, v := range cats {
			m[v] = i
		}
		for _, v := range x.i64() {
			j, ok := m[v]
			if !ok {
				j = -1
			}
			idx = append(idx, j)
		}
	}
	out := make([]float64, len(idx)*k)
	for i, j := range idx {
		if j < 0 {
			if !zeros {
				return fmt.Errorf("OneHotEncoder: element %d is not a known category and zeros=0", i)
			}
			continue
		}
		out[i*k+j] = 1
	}
	c.OutH(0, fromF64(canonical.Float, append(append([]int{}, x.shape...), k), out))
	return nil
}

func mlImputer(c *lctx) error {
	x, err := c.H(0)
	if err != nil {
		return err
	}
	last := 1
	if len(x.shape) > 0 {
		last = x.shape[len(x.shape)-1]
	}
	if isFloatType(x.dt) {
		imp := c.AFloats("imputed_value_floats", nil)
		if len(imp) == 0 || len(imp) != 1 && len(imp) != last {
			return fmt.Errorf("imputed_value_floats has %d entries for %d features", len(imp), last)
		}
		rep := float64(c.AFloat("replaced_value_float", 0))
		v := x.f64()
		for i, e := range v {
			if e == rep || math.IsNaN(rep) && math.IsNaN(e) {
				v[i] = float64(imp[(i%last)%len(imp)])
			}
		}
		c.OutH(0, fromF64(x.dt, x.shape, v))
		return nil
	}
	imp := c.AInts("imputed_value_int64s", nil)
	if len(imp) == 0 || len(imp) != 1 && len(imp) != last {
		return fmt.Errorf("imputed_value_int64s has %d entries for %d features", len(imp), last)
	}
	rep := c.AInt("replaced_value_int64", 0)
	v := x.i64()
	for i, e := range v {
		if e == rep {
			v[i] = imp[(i%last)%len(imp)]
		}
	}
	c.OutH(0, fromI64(x.dt, x.shape, v))
	return nil
}

func mlScaler(c *lctx) error {
	x, err := c.H(0)
	if err != nil {
		return err
	}
	off, sc := c.AFloats("offset", nil), c.AFloats("scale", nil)
	last := 1
	if len(x.shape) > 0 {
		last = x.shape[len(x.shape)-1]
	}
	get := func(a []float32, i int, def float64) (float64, error) {
		switch len(a) {
		case 0:
			return def, nil
		case 1:
			return float64(a[0]), nil
		case last:
			return float64(a[i%last]), nil
		}
		return 0, fmt.Errorf("Scaler attribute has %d entries for %d features", len(a), last)
	}
	v := x.f64()
	for i, e := range v {
		o, err := get(off, i, 0)
		if err != nil {
			return err
		}
		s, err := get(sc, i, 1)
		if err != nil {
			return err
		}
		v[i] = (e - o) * s
	}
	c.OutH(0, fromF64(canonical.Float, x.shape, v))
	return nil
}

func mlNormalizer(c *lctx) error {
	x, v, n, f, err := mlRows(c, 0)
	if err != nil {
		return err
	}
	norm := c.AStr("norm", "MAX")
	for r := 0; r < n; r++ {
		row := v[r*f : (r+1)*f]
		var d float64
		switch norm {
		case "MAX":
			d = math.Inf(-1)
			for _, e := range row {
				d = math.Max(d, e)
			}
		case "L1":
			for _, e := range row {
				d += math.Abs(e)
			}
		case "L2":
			for _, e := range row {
				d += e * e
			}
			d = math.Sqrt(d)
		default:
			return fmt.Errorf("unknown norm %q", norm)
		}
		if d == 0 || math.IsInf(d, -1) {
			continue
		}
		for i := range row {
			row[i] /= d
		}
	}
	c.OutH(0, fromF64(canonical.Float, x.shape, v))
	return nil
}

func mlFeatureVectorizer(c *lctx) error {
	dims := c.AInts("inputdimensions", nil)
	if len(dims) != c.NIn() {
		return fmt.Errorf("inputdimensions has %d entries for %d inputs", len(dims), c.NIn())
	}
	total := 0
	for _, d := range dims {
		if d < 0 {
			return fmt.Errorf("negative input dimension %d", d)
		}
		total += int(d)
	}
	n := -1
	var out []float64
	off := 0
	for i := 0; i < c.NIn(); i++ {
		_, v, rows, cols, err := mlRows(c, i)
		if err != nil {
			return err
		}
		if n < 0 {
			n = rows
			out = make([]float64, n*total)
		} else if rows != n {
			return fmt.Errorf("input %d has %d rows, input 0 has %d", i, rows, n)
		}
		d := int(dims[i])
		for r := 0; r < n; r++ {
			for j := 0; j < d && j < cols; j++ {
				out[r*total+off+j] = v[r*cols+j]
			}
		}
		off += d
	}
	if n < 0 {
		n = 0
	}
	c.OutH(0, fromF64(canonical.Float, []int{n, total}, out))
	return nil
}

// mlLinear computes X·Wᵀ + b for W of k rows.
func mlLinear(x []float64, n, f int, coef []float32, icpt []float32, k int) ([]float64, error) {
	if len(coef) != k*f {
		return nil, fmt.Errorf("coefficients has %d entries, expected %d (%d x %d)", len(coef), k*f, k, f)
	}
	if len(icpt) != 0 && len(icpt) != k {
		return nil, fmt.Errorf("intercepts has %d entries, expected %d", len(icpt), k)
	}
	out := make([]float64, n*k)
	for r := 0; r < n; r++ {
		for t := 0; t < k; t++ {
			s := 0.0
			if len(icpt) > 0 {
				s = float64(icpt[t])
			}
			for j := 0; j < f; j++ {
				s += x[r*f+j] * float64(coef[t*f+j])
			}
			out[r*k+t] = s
		}
	}
	return out, nil
}

func mlLinearRegressor(c *lctx) error {
	_, v, n, f, err := mlRows(c, 0)
	if err != nil {
		return err
	}
	k := int(c.AInt("targets", 1))
	post, err := mlPostFromString(c.AStr("post_transform", "NONE"))
	if err != nil {
		return err
	}
	out, err := mlLinear(v, n, f, c.AFloats("coefficients", nil), c.AFloats("intercepts", nil), k)
	if err != nil {
		return err
	}
	mlPost(out, k, post)
	c.OutH(0, fromF64(canonical.Float, []int{n, k}, out))
	return nil
}

func mlLinearClassifier(c *lctx) error {
	_, v, n, f, err := mlRows(c, 0)
	if err != nil {
		return err
	}
	labels := mlClassLabels(c, "classlabels_ints", "classlabels_strings")
	post, err := mlPostFromString(c.AStr("post_transform", "NONE"))
	if err != nil {
		return err
	}
	coef, icpt := c.AFloats("coefficients", nil), c.AFloats("intercepts", nil)
	k := len(icpt)
	if k == 0 && f > 0 {
		k = len(coef) / f
	}
	if k == 0 {
		return fmt.Errorf("LinearClassifier has no classes (coefficients %d, intercepts %d)", len(coef), len(icpt))
	}
	scores, err := mlLinear(v, n, f, coef, icpt, k)
	if err != nil {
		return err
	}
	idx := make([]int, n)
	if k == 1 {
		// One score per row: the label is its sign; with two labels the
		// scores become [1-s, s] (ONNX Runtime's rule).
		two := labels.n() == 2
		cols := 1
		if two {
			cols = 2
		}
		out := make([]float64, n*cols)
		for r, s := range scores {
			if s > 0 {
				idx[r] = 1
			}
			switch {
			case post == mlPostProbit:
				out[r*cols] = mlProbit(s)
			case two:
				out[2*r], out[2*r+1] = 1-s, s
			default:
				out[r] = s
			}
		}
		c.OutH(0, mlBinaryLabels(labels, idx))
		c.OutH(1, fromF64(canonical.Float, []int{n, cols}, out))
		return nil
	}
	if labels.n() != k {
		return fmt.Errorf("LinearClassifier has %d class labels for %d score columns", labels.n(), k)
	}
	for r := 0; r < n; r++ {
		idx[r] = argmaxRow(scores[r*k : (r+1)*k])
	}
	mlPost(scores, k, post)
	c.OutH(0, labels.out(idx))
	c.OutH(1, fromF64(canonical.Float, []int{n, k}, scores))
	return nil
}

// mlBinaryLabels maps 0/1 to the two class labels, or to 0/1 ("0"/"1")
// when the model does not give exactly two.
func mlBinaryLabels(labels mlLabels, idx []int) *htensor {
	if labels.n() == 2 {
		return labels.out(idx)
	}
	if labels.isStr {
		h := newH(canonical.String, []int{len(idx)})
		for i, j := range idx {
			h.data.([]string)[i] = fmt.Sprint(j)
		}
		return h
	}
	v := make([]int64, len(idx))
	for i, j := range idx {
		v[i] = int64(j)
	}
	return fromI64(canonical.Int64, []int{len(idx)}, v)
}

// ---- SVMs ----

type mlKernel struct {
	kind                 string
	gamma, coef0, degree float64
}

func mlKernelOf(c *lctx) (mlKernel, error) {
	k := mlKernel{kind: c.AStr("kernel_type", "LINEAR")}
	p := c.AFloats("kernel_params", nil)
	if len(p) > 0 {
		k.gamma = float64(p[0])
	}
	if len(p) > 1 {
		k.coef0 = float64(p[1])
	}
	if len(p) > 2 {
		k.degree = float64(p[2])
	}
	switch k.kind {
	case "LINEAR", "POLY", "RBF", "SIGMOID":
		return k, nil
	}
	return k, fmt.Errorf("unknown kernel_type %q", k.kind)
}

func (k mlKernel) eval(a []float64, b []float32) float64 {
	switch k.kind {
	case "RBF":
		s := 0.0
		for i := range a {
			d := a[i] - float64(b[i])
			s += d * d
		}
		return math.Exp(-k.gamma * s)
	}
	s := 0.0
	for i := range a {
		s += a[i] * float64(b[i])
	}
	switch k.kind {
	case "POLY":
		return math.Pow(s*k.gamma+k.coef0, k.degree)
	case "SIGMOID":
		return math.Tanh(s*k.gamma + k.coef0)
	}
	return s
}

// mlDot is the plain dot product (the linear kernel).
func mlDot(a []float64, b []float32) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * float64(b[i])
	}
	return s
}

// mlSVMRegressor follows ONNX Runtime: with support vectors the score is
// sum(coef_j K(x, sv_j)) + rho[0]; without, x·coefficients + rho[0].
func mlSVMRegressor(c *lctx) error {
	_, v, n, f, err := mlRows(c, 0)
	if err != nil {
		return err
	}
	kern, err := mlKernelOf(c)
	if err != nil {
		return err
	}
	post, err := mlPostFromString(c.AStr("post_transform", "NONE"))
	if err != nil {
		return err
	}
	ns := int(c.AInt("n_supports", 0))
	sv := c.AFloats("support_vectors", nil)
	coef := c.AFloats("coefficients", nil)
	rho := c.AFloats("rho", nil)
	oneClass := c.AInt("one_class", 0) != 0
	if len(rho) == 0 {
		return fmt.Errorf("SVMRegressor needs rho")
	}
	if ns > 0 && (len(sv) != ns*f || len(coef) != ns) {
		return fmt.Errorf("support_vectors has %d entries and coefficients %d for %d supports of %d features", len(sv), len(coef), ns, f)
	}
	if ns == 0 && len(coef) != f {
		return fmt.Errorf("linear SVMRegressor has %d coefficients for %d features", len(coef), f)
	}
	out := make([]float64, n)
	for r := 0; r < n; r++ {
		x := v[r*f : (r+1)*f]
		s := float64(rho[0])
		if ns > 0 {
			for j := 0; j < ns; j++ {
				s += float64(coef[j]) * kern.eval(x, sv[j*f:(j+1)*f])
			}
		} else {
			s += mlDot(x, coef)
		}
		if oneClass {
			if s > 0 {
				s = 1
			} else {
				s = -1
			}
		}
		if post == mlPostProbit {
			s = mlProbit(s)
		}
		out[r] = s
	}
	c.OutH(0, fromF64(canonical.Float, []int{n, 1}, out))
	return nil
}

// mlSVMClassifier follows ONNX Runtime. Linear mode (no support vectors):
// one score per class, x·coef_c + rho[0]. SVC mode: one-vs-one decision
// values d_ij = rho_ij + sum coef K; the label is the class with the most
// votes; scores are the decision values ([-d, d] or [1-d, d] for two
// classes) or, with prob_a/prob_b, the coupled pairwise probabilities.
func mlSVMClassifier(c *lctx) error {
	_, v, n, f, err := mlRows(c, 0)
	if err != nil {
		return err
	}
	kern, err := mlKernelOf(c)
	if err != nil {
		return err
	}
	post, err := mlPostFromString(c.AStr("post_transform", "NONE"))
	if err != nil {
		return err
	}
	labels := mlClassLabels(c, "classlabels_ints", "classlabels_strings")
	nc := labels.n()
	if nc == 0 {
		return fmt.Errorf("SVMClassifier has no class labels")
	}
	vpc := c.AInts("vectors_per_class", nil)
	sv := c.AFloats("support_vectors", nil)
	coef := c.AFloats("coefficients", nil)
	rho := c.AFloats("rho", nil)
	probA, probB := c.AFloats("prob_a", nil), c.AFloats("prob_b", nil)
	if len(probA) != len(probB) {
		return fmt.Errorf("prob_a has %d entries, prob_b %d", len(probA), len(probB))
	}
	if len(rho) == 0 {
		return fmt.Errorf("SVMClassifier needs rho")
	}
	allPos := true
	for _, w := range coef {
		if w < 0 {
			allPos = false
		}
	}
	nv := 0
	for _, k := range vpc {
		if k < 0 {
			return fmt.Errorf("negative vectors_per_class %d", k)
		}
		nv += int(k)
	}
	idx := make([]int, n)
	npairs := nc * (nc - 1) / 2
	if nv == 0 {
		if len(coef) != nc*f {
			return fmt.Errorf("coefficients has %d entries, expected %d classes x %d features", len(coef), nc, f)
		}
		scores := make([]float64, n*nc)
		for r := 0; r < n; r++ {
			row := scores[r*nc : (r+1)*nc]
			for j := range row {
				row[j] = mlDot(v[r*f:(r+1)*f], coef[j*f:(j+1)*f]) + float64(rho[0])
			}
			best := argmaxRow(row)
			idx[r] = best
			if nc == 2 && (allPos && row[best] >= 0.5 || !allPos && row[best] > 0) {
				idx[r] = 1
			}
		}
		mlPost(scores, nc, post)
		c.OutH(0, labels.out(idx))
		c.OutH(1, fromF64(canonical.Float, []int{n, nc}, scores))
		return nil
	}
	if len(vpc) != nc {
		return fmt.Errorf("vectors_per_class has %d entries for %d classes", len(vpc), nc)
	}
	if len(sv) != nv*f {
		return fmt.Errorf("support_vectors has %d entries, expected %d", len(sv), nv*f)
	}
	if len(coef) != (nc-1)*nv {
		return fmt.Errorf("coefficients has %d entries, expected %d", len(coef), (nc-1)*nv)
	}
	if len(rho) != npairs {
		return fmt.Errorf("rho has %d entries, expected %d", len(rho), npairs)
	}
	useProb := len(probA) > 0
	if useProb && len(probA) != npairs {
		return fmt.Errorf("prob_a/prob_b need %d entries", npairs)
	}
	start := make([]int, nc)
	for i := 1; i < nc; i++ {
		start[i] = start[i-1] + int(vpc[i-1])
	}
	ncol := nc
	if !useProb && nc > 2 {
		ncol = npairs
	}
	out := make([]float64, n*ncol)
	kv := make([]float64, nv)
	votes := make([]int, nc)
	dec := make([]float64, npairs)
	for r := 0; r < n; r++ {
		x := v[r*f : (r+1)*f]
		for j := 0; j < nv; j++ {
			kv[j] = kern.eval(x, sv[j*f:(j+1)*f])
		}
		clear(votes)
		e := 0
		for i := 0; i < nc; i++ {
			for j := i + 1; j < nc; j++ {
				s := float64(rho[e])
				for t := 0; t < int(vpc[i]); t++ {
					s += float64(coef[(j-1)*nv+start[i]+t]) * kv[start[i]+t]
				}
				for t := 0; t < int(vpc[j]); t++ {
					s += float64(coef[i*nv+start[j]+t]) * kv[start[j]+t]
				}
				dec[e] = s
				if s > 0 {
					votes[i]++
				} else {
					votes[j]++
				}
				e++
			}
		}
		best := 0
		for i, vt := range votes {
			if vt > votes[best] {
				best = i
			}
		}
		idx[r] = best
		o := out[r*ncol : (r+1)*ncol]
		switch {
		case useProb:
			copy(o, mlSVMProbabilities(dec, probA, probB, nc))
			mlPostRow(o, post)
		case nc == 2:
			d := dec[0]
			switch post {
			case mlPostNone:
				o[0], o[1] = -d, d
			case mlPostProbit:
				o[0], o[1] = mlProbit(d), 0
			default:
				o[0], o[1] = 1-d, d
			}
		default:
			copy(o, dec)
			mlPostRow(o, post)
		}
	}
	c.OutH(0, labels.out(idx))
	c.OutH(1, fromF64(canonical.Float, []int{n, ncol}, out))
	return nil
}

// mlSVMProbabilities is libsvm's pairwise coupling of Platt-scaled
// decision values.
func mlSVMProbabilities(dec []float64, probA, probB []float32, k int) []float64 {
	r := make([][]float64, k)
	for i := range r {
		r[i] = make([]float64, k)
	}
	e := 0
	for i := 0; i < k; i++ {
		for j := i + 1; j < k; j++ {
			p := mlLogistic(-(dec[e]*float64(probA[e]) + float64(probB[e])))
			p = math.Min(math.Max(p, 1e-7), 1-1e-7)
			r[i][j], r[j][i] = p, 1-p
			e++
		}
	}
	// multiclass_probability (Wu, Lin, Weng 2004)
	p := make([]float64, k)
	q := make([][]float64, k)
	qp := make([]float64, k)
	for t := 0; t < k; t++ {
		p[t] = 1 / float64(k)
		q[t] = make([]float64, k)
		for j := 0; j < k; j++ {
			if j != t {
				q[t][t] += r[j][t] * r[j][t]
				q[t][j] = -r[j][t] * r[t][j]
			}
		}
	}
	maxIter := max(100, k)
	eps := 0.005 / float64(k)
	for iter := 0; iter < maxIter; iter++ {
		pQp := 0.0
		for t := 0; t < k; t++ {
			qp[t] = 0
			for j := 0; j < k; j++ {
				qp[t] += q[t][j] * p[j]
			}
			pQp += p[t] * qp[t]
		}
		maxErr := 0.0
		for t := 0; t < k; t++ {
			maxErr = math.Max(maxErr, math.Abs(qp[t]-pQp))
		}
		if maxErr < eps {
			break
		}
		for t := 0; t < k; t++ {
			diff := (-qp[t] + pQp) / q[t][t]
			p[t] += diff
			pQp = (pQp + diff*(diff*q[t][t]+2*qp[t])) / (1 + diff) / (1 + diff)
			for j := 0; j < k; j++ {
				qp[j] = (qp[j] + diff*q[t][j]) / (1 + diff)
				p[j] /= 1 + diff
			}
		}
	}
	return p
}

// ---- maps ----

func mlZipMap(c *lctx) error {
	x, v, n, f, err := mlRows(c, 0)
	if err != nil {
		return err
	}
	labels := mlClassLabels(c, "classlabels_int64s", "classlabels_strings")
	if labels.n() != f {
		return fmt.Errorf("ZipMap has %d keys for %d columns", labels.n(), f)
	}
	seq := make([]*htensor, n)
	for r := 0; r < n; r++ {
		seq[r] = fromF64(x.dt, []int{f}, v[r*f:(r+1)*f])
	}
	c.OutSeq(0, seq, x.dt)
	return nil
}

func mlDictVectorizer(c *lctx) error {
	m, err := c.Seq(0)
	if err != nil {
		return fmt.Errorf("DictVectorizer takes a map, given as a sequence [keys, values]: %w", err)
	}
	if len(m) != 2 || m[0].size() != m[1].size() {
		return fmt.Errorf("DictVectorizer takes a map given as a sequence [keys, values] of equal length")
	}
	keys, vals := m[0], m[1]
	var pos []int
	var size int
	if keys.dt == canonical.String {
		voc := c.n.AttrStrings("string_vocabulary", nil)
		size = len(voc)
		at := map[string]int{}
		for i, s := range voc {
			at[s] = i
		}
		for _, k := range keys.data.([]string) {
			p, ok := at[k]
			if !ok {
				p = -1
			}
			pos = append(pos, p)
		}
	} else {
		voc := c.AInts("int64_vocabulary", nil)
		size = len(voc)
		at := map[int64]int{}
		for i, s := range voc {
			at[s] = i
		}
		for _, k := range keys.i64() {
			p, ok := at[k]
			if !ok {
				p = -1
			}
			pos = append(pos, p)
		}
	}
	out := newH(vals.dt, []int{1, size})
	if vals.dt == canonical.String {
		o, s := out.data.([]string), vals.data.([]string)
		for i, p := range pos {
			if p >= 0 {
				o[p] = s[i]
			}
		}
	} else {
		o := make([]float64, size)
		for i, e := range vals.f64() {
			if pos[i] >= 0 {
				o[pos[i]] = e
			}
		}
		out = fromF64(vals.dt, []int{1, size}, o)
	}
	c.OutH(0, out)
	return nil
}
