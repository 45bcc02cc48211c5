package xgboost

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Limits on what a model may declare (far above real models, far below
// what would exhaust memory while building the graph).
const (
	maxFeatures = 1 << 24
	maxTargets  = 1 << 16
	maxCategory = 1 << 24 // categories are integers exactly representable as float32
)

// transform is what turns the margin into the prediction.
type transform int

const (
	tIdentity transform = iota
	tLogistic
	tExp
	tHinge
	tSoftprob
	tSoftmax
)

type objectiveInfo struct {
	transform transform
	// baseToMargin maps base_score (prediction space) to the margin.
	baseToMargin func(float32) (float32, error)
	classifier   bool // label and probabilities outputs
}

func identityBase(b float32) (float32, error) { return b, nil }

func logitBase(b float32) (float32, error) {
	if !(b > 0 && b < 1) {
		return 0, fmt.Errorf("base_score %g must be in (0, 1) for a logistic objective", b)
	}
	// xgboost: -log(1/base_score - 1), in float32.
	return float32(-math.Log(float64(float32(1/b) - 1))), nil
}

func logBase(b float32) (float32, error) {
	if !(b > 0) || math.IsInf(float64(b), 1) {
		return 0, fmt.Errorf("base_score %g must be positive for a log-link objective", b)
	}
	return float32(math.Log(float64(b))), nil
}

func lookupObjective(name string) (objectiveInfo, bool) {
	switch name {
	case "reg:squarederror", "reg:linear", "reg:squaredlogerror", "reg:pseudohubererror",
		"reg:absoluteerror", "reg:quantileerror", "rank:pairwise", "rank:ndcg", "rank:map":
		return objectiveInfo{transform: tIdentity, baseToMargin: identityBase}, true
	case "binary:logitraw":
		return objectiveInfo{transform: tIdentity, baseToMargin: identityBase}, true
	case "reg:logistic":
		return objectiveInfo{transform: tLogistic, baseToMargin: logitBase}, true
	case "binary:logistic":
		return objectiveInfo{transform: tLogistic, baseToMargin: logitBase, classifier: true}, true
	case "binary:hinge":
		return objectiveInfo{transform: tHinge, baseToMargin: identityBase, classifier: true}, true
	case "count:poisson", "reg:tweedie", "reg:gamma", "survival:cox", "survival:aft":
		return objectiveInfo{transform: tExp, baseToMargin: logBase}, true
	case "multi:softprob":
		return objectiveInfo{transform: tSoftprob, baseToMargin: identityBase, classifier: true}, true
	case "multi:softmax":
		return objectiveInfo{transform: tSoftmax, baseToMargin: identityBase, classifier: true}, true
	}
	return objectiveInfo{}, false
}

// node is one reachable tree node, renumbered in pre-order (root = 0).
type node struct {
	leaf        bool
	feature     int
	threshold   float32 // split condition, or leaf value for leaves
	defaultLeft bool
	categorical bool
	categories  []float32 // categories that go right (categorical splits)
	left, right int       // renumbered children
}

type tree struct {
	nodes  []node
	target int
	weight float32 // dart weight_drop, 1 otherwise
}

type model struct {
	version      string
	objective    string
	obj          objectiveInfo
	booster      string // gbtree, dart, gblinear
	numFeature   int
	numTargets   int       // columns of the margin
	baseMargin   []float32 // per target, in margin space
	baseScoreRaw string
	featureNames []string // learner.feature_names, when present
	featureTypes []string // learner.feature_types ("q", "c", "int", ...)
	trees        []tree
	indptr       []int64   // iteration_indptr: where each boosting round's trees start, then len(trees); nil if not stored
	perRound     int       // trees per boosting round when indptr is nil
	linear       []float32 // gblinear: (numFeature+1)*numTargets
	categorical  bool
}

// field helpers ------------------------------------------------------------

type path string

func (p path) sub(k string) path { return path(string(p) + "." + k) }

func need(v *value, p path, key string) (*value, error) {
	e := v.get(key)
	if e == nil {
		return nil, fmt.Errorf("%s: missing field %q", p, key)
	}
	return e, nil
}

func needObj(v *value, p path, key string) (*value, error) {
	e, err := need(v, p, key)
	if err != nil {
		return nil, err
	}
	if e.kind != kObject {
		return nil, fmt.Errorf("%s.%s: expected an object, got %s", p, key, e.kind)
	}
	return e, nil
}

func needArray(v *value, p path, key string) (*value, error) {
	e, err := need(v, p, key)
	if err != nil {
		return nil, err
	}
	if e.kind != kArray && e.kind != kNumArray {
		return nil, fmt.Errorf("%s.%s: expected an array, got %s", p, key, e.kind)
	}
	return e, nil
}

func asString(v *value, p path) (string, error) {
	if v.kind != kString {
		return "", fmt.Errorf("%s: expected a string, got %s", p, v.kind)
	}
	return v.str, nil
}

// asInt accepts a number or a numeric string (xgboost stores parameters
// as strings) and checks it lies in [lo, hi].
func asInt(v *value, p path, lo, hi int64) (int64, error) {
	var f float64
	switch v.kind {
	case kNumber:
		f = v.num
	case kString:
		n, err := strconv.ParseInt(strings.TrimSpace(v.str), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: expected an integer, got %q", p, v.str)
		}
		if n < lo || n > hi {
			return 0, fmt.Errorf("%s: %d out of range [%d, %d]", p, n, lo, hi)
		}
		return n, nil
	default:
		return 0, fmt.Errorf("%s: expected an integer, got %s", p, v.kind)
	}
	if f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, fmt.Errorf("%s: %v is not an integer in [%d, %d]", p, f, lo, hi)
	}
	return int64(f), nil
}

func optInt(v *value, p path, key string, def, lo, hi int64) (int64, error) {
	e := v.get(key)
	if e == nil {
		return def, nil
	}
	return asInt(e, p.sub(key), lo, hi)
}

// numbers returns the float64 and float32 views of a numeric array.
func numbers(v *value, p path) ([]float64, []float32, error) {
	switch v.kind {
	case kNumArray:
		return v.nums, v.nums2, nil
	case kArray:
		if len(v.elems) == 0 {
			return nil, nil, nil
		}
	}
	return nil, nil, fmt.Errorf("%s: expected an array of numbers, got %s", p, v.kind)
}

func intArray(v *value, p path, key string, lo, hi int64) ([]int64, error) {
	a, err := needArray(v, p, key)
	if err != nil {
		return nil, err
	}
	f, _, err := numbers(a, p.sub(key))
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(f))
	for i, x := range f {
		if x != math.Trunc(x) || x < float64(lo) || x > float64(hi) {
			return nil, fmt.Errorf("%s.%s[%d]: %v is not an integer in [%d, %d]", p, key, i, x, lo, hi)
		}
		out[i] = int64(x)
	}
	return out, nil
}

func floatArray(v *value, p path, key string) ([]float32, error) {
	a, err := needArray(v, p, key)
	if err != nil {
		return nil, err
	}
	_, f, err := numbers(a, p.sub(key))
	return f, err
}

// parseBaseScore reads base_score: a number, a numeric string, or (xgboost
// >= 2) a string holding a vector such as "[5E-1]" or "[1E0,2E0]".
func parseBaseScore(v *value, p path) ([]float32, string, error) {
	switch v.kind {
	case kNumber:
		return []float32{v.f32}, strconv.FormatFloat(v.num, 'g', -1, 64), nil
	case kNumArray:
		return v.nums2, "", nil
	case kString:
		s := strings.TrimSpace(v.str)
		raw := s
		if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
			s = s[1 : len(s)-1]
		}
		parts := strings.Split(s, ",")
		if len(parts) > maxTargets {
			return nil, "", fmt.Errorf("%s: too many values", p)
		}
		out := make([]float32, 0, len(parts))
		for _, part := range parts {
			f, err := strconv.ParseFloat(strings.TrimSpace(part), 32)
			if err != nil {
				return nil, "", fmt.Errorf("%s: bad number %q in %q", p, part, raw)
			}
			out = append(out, float32(f))
		}
		return out, raw, nil
	}
	return nil, "", fmt.Errorf("%s: expected a number or string, got %s", p, v.kind)
}

// decode --------------------------------------------------------------------

func decodeModel(doc *value) (*model, error) {
	if doc.kind != kObject {
		return nil, fmt.Errorf("top level: expected an object, got %s", doc.kind)
	}
	m := &model{}
	if ver := doc.get("version"); ver != nil {
		if f, _, err := numbers(ver, "version"); err == nil && len(f) <= 4 {
			parts := make([]string, len(f))
			for i, x := range f {
				parts[i] = strconv.FormatFloat(x, 'f', -1, 64)
			}
			m.version = strings.Join(parts, ".")
		}
	}
	learner, err := needObj(doc, "$", "learner")
	if err != nil {
		return nil, fmt.Errorf("not an XGBoost model (xgboost >= 1.0 JSON/UBJSON schema): %w", err)
	}
	lp := path("learner")

	// Objective.
	objV, err := needObj(learner, lp, "objective")
	if err != nil {
		return nil, err
	}
	nameV, err := need(objV, lp.sub("objective"), "name")
	if err != nil {
		return nil, err
	}
	if m.objective, err = asString(nameV, lp.sub("objective.name")); err != nil {
		return nil, err
	}
	var ok bool
	if m.obj, ok = lookupObjective(m.objective); !ok {
		return nil, fmt.Errorf("objective %q is not supported", m.objective)
	}

	// learner_model_param.
	mpp := lp.sub("learner_model_param")
	mp, err := needObj(learner, lp, "learner_model_param")
	if err != nil {
		return nil, err
	}
	nf, err := need(mp, mpp, "num_feature")
	if err != nil {
		return nil, err
	}
	numFeature, err := asInt(nf, mpp.sub("num_feature"), 1, maxFeatures)
	if err != nil {
		return nil, err
	}
	m.numFeature = int(numFeature)
	numClass, err := optInt(mp, mpp, "num_class", 0, 0, maxTargets)
	if err != nil {
		return nil, err
	}
	numTarget, err := optInt(mp, mpp, "num_target", 1, 1, maxTargets)
	if err != nil {
		return nil, err
	}
	switch {
	case m.obj.transform == tSoftprob || m.obj.transform == tSoftmax:
		if numClass < 1 {
			return nil, fmt.Errorf("%s.num_class is %d; objective %s needs at least 1 class", mpp, numClass, m.objective)
		}
		m.numTargets = int(numClass)
	case numClass > 1:
		return nil, fmt.Errorf("%s.num_class is %d but objective %s is not multi-class", mpp, numClass, m.objective)
	default:
		m.numTargets = int(numTarget)
	}
	base := []float32{0.5}
	if bv := mp.get("base_score"); bv != nil {
		if base, m.baseScoreRaw, err = parseBaseScore(bv, mpp.sub("base_score")); err != nil {
			return nil, err
		}
	}
	if len(base) != 1 && len(base) != m.numTargets {
		return nil, fmt.Errorf("%s.base_score has %d values for %d targets", mpp, len(base), m.numTargets)
	}
	m.baseMargin = make([]float32, m.numTargets)
	for i := range m.baseMargin {
		b := base[0]
		if len(base) > 1 {
			b = base[i]
		}
		if m.baseMargin[i], err = m.obj.baseToMargin(b); err != nil {
			return nil, fmt.Errorf("%s (objective %s): %w", mpp.sub("base_score"), m.objective, err)
		}
	}

	m.featureNames = stringList(learner.get("feature_names"), m.numFeature)
	m.featureTypes = stringList(learner.get("feature_types"), m.numFeature)

	// Booster.
	gbp := lp.sub("gradient_booster")
	gb, err := needObj(learner, lp, "gradient_booster")
	if err != nil {
		return nil, err
	}
	bn, err := need(gb, gbp, "name")
	if err != nil {
		return nil, err
	}
	if m.booster, err = asString(bn, gbp.sub("name")); err != nil {
		return nil, err
	}
	switch m.booster {
	case "gbtree":
		model, err := needObj(gb, gbp, "model")
		if err != nil {
			return nil, err
		}
		if err := m.decodeTrees(model, gbp.sub("model"), nil); err != nil {
			return nil, err
		}
	case "dart":
		inner, err := needObj(gb, gbp, "gbtree")
		if err != nil {
			return nil, err
		}
		model, err := needObj(inner, gbp.sub("gbtree"), "model")
		if err != nil {
			return nil, err
		}
		wd, err := floatArray(gb, gbp, "weight_drop")
		if err != nil {
			return nil, err
		}
		if err := m.decodeTrees(model, gbp.sub("gbtree.model"), wd); err != nil {
			return nil, err
		}
	case "gblinear":
		model, err := needObj(gb, gbp, "model")
		if err != nil {
			return nil, err
		}
		w, err := floatArray(model, gbp.sub("model"), "weights")
		if err != nil {
			return nil, err
		}
		want := (m.numFeature + 1) * m.numTargets
		if len(w) != want {
			return nil, fmt.Errorf("%s.model.weights has %d values, want (num_feature+1)*targets = %d", gbp, len(w), want)
		}
		m.linear = w
	default:
		return nil, fmt.Errorf("%s.name: booster %q is not supported (gbtree, dart, gblinear)", gbp, m.booster)
	}
	return m, nil
}

func (m *model) decodeTrees(mv *value, p path, weightDrop []float32) error {
	ta, err := needArray(mv, p, "trees")
	if err != nil {
		return err
	}
	if ta.kind == kNumArray {
		return fmt.Errorf("%s.trees: expected an array of objects", p)
	}
	nTrees := len(ta.elems)
	if err := checkNumTrees(mv, p, nTrees); err != nil {
		return err
	}
	info, err := intArray(mv, p, "tree_info", 0, int64(m.numTargets-1))
	if err != nil {
		return fmt.Errorf("%w (tree_info gives each tree's output group, %d groups)", err, m.numTargets)
	}
	if len(info) != nTrees {
		return fmt.Errorf("%s.tree_info has %d entries for %d trees", p, len(info), nTrees)
	}
	if weightDrop != nil && len(weightDrop) != nTrees {
		return fmt.Errorf("weight_drop has %d entries for %d trees", len(weightDrop), nTrees)
	}
	m.trees = make([]tree, nTrees)
	for i := range ta.elems {
		tp := path(fmt.Sprintf("%s.trees[%d]", p, i))
		nodes, err := m.decodeTree(&ta.elems[i], tp)
		if err != nil {
			return err
		}
		w := float32(1)
		if weightDrop != nil {
			w = weightDrop[i]
		}
		m.trees[i] = tree{nodes: nodes, target: int(info[i]), weight: w}
	}
	if mv.get("iteration_indptr") != nil {
		if m.indptr, err = intArray(mv, p, "iteration_indptr", 0, int64(nTrees)); err != nil {
			return err
		}
	}
	parallel, err := numParallelTree(mv, p)
	if err != nil {
		return err
	}
	m.perRound = parallel * m.numTargets
	return nil
}

func (m *model) decodeTree(tv *value, p path) ([]node, error) {
	if tv.kind != kObject {
		return nil, fmt.Errorf("%s: expected an object, got %s", p, tv.kind)
	}
	if tpv := tv.get("tree_param"); tpv != nil {
		slv, err := optInt(tpv, p.sub("tree_param"), "size_leaf_vector", 0, 0, math.MaxInt32)
		if err != nil {
			return nil, err
		}
		if slv > 1 {
			return nil, fmt.Errorf("%s: vector-leaf trees (size_leaf_vector=%d, multi_strategy=multi_output_tree) are not supported", p, slv)
		}
	}
	const maxID = math.MaxInt32
	left, err := intArray(tv, p, "left_children", -1, maxID)
	if err != nil {
		return nil, err
	}
	n := len(left)
	if n == 0 {
		return nil, fmt.Errorf("%s: tree has no nodes", p)
	}
	right, err := intArray(tv, p, "right_children", -1, maxID)
	if err != nil {
		return nil, err
	}
	feat, err := intArray(tv, p, "split_indices", 0, int64(maxFeatures))
	if err != nil {
		return nil, err
	}
	cond, err := floatArray(tv, p, "split_conditions")
	if err != nil {
		return nil, err
	}
	dl, err := intArray(tv, p, "default_left", 0, 1)
	if err != nil {
		return nil, err
	}
	var splitType []int64
	if tv.get("split_type") != nil {
		if splitType, err = intArray(tv, p, "split_type", 0, 1); err != nil {
			return nil, err
		}
	}
	for _, a := range []struct {
		name string
		n    int
	}{{"right_children", len(right)}, {"split_indices", len(feat)}, {"split_conditions", len(cond)}, {"default_left", len(dl)}} {
		if a.n != n {
			return nil, fmt.Errorf("%s.%s has %d entries, left_children has %d", p, a.name, a.n, n)
		}
	}
	if splitType != nil && len(splitType) != n {
		return nil, fmt.Errorf("%s.split_type has %d entries, left_children has %d", p, len(splitType), n)
	}

	// Categorical splits: categories_nodes[k] lists the node, its set is
	// categories[segments[k] : segments[k]+sizes[k]].
	catSets := map[int][]float32{}
	if tv.get("categories_nodes") != nil {
		cn, err := intArray(tv, p, "categories_nodes", 0, int64(n-1))
		if err != nil {
			return nil, err
		}
		seg, err := intArray(tv, p, "categories_segments", 0, maxID)
		if err != nil {
			return nil, err
		}
		sz, err := intArray(tv, p, "categories_sizes", 0, maxID)
		if err != nil {
			return nil, err
		}
		cats, err := intArray(tv, p, "categories", 0, maxCategory-1)
		if err != nil {
			return nil, err
		}
		if len(seg) != len(cn) || len(sz) != len(cn) {
			return nil, fmt.Errorf("%s: categories_nodes, categories_segments and categories_sizes differ in length (%d, %d, %d)", p, len(cn), len(seg), len(sz))
		}
		if err := checkSegments(p, sz, len(cats)); err != nil {
			return nil, err
		}
		for k, id := range cn {
			if seg[k] > int64(len(cats)) || sz[k] > int64(len(cats))-seg[k] {
				return nil, fmt.Errorf("%s: category segment %d [%d, +%d) exceeds categories (%d)", p, k, seg[k], sz[k], len(cats))
			}
			if _, dup := catSets[int(id)]; dup {
				return nil, fmt.Errorf("%s: node %d listed twice in categories_nodes", p, id)
			}
			set := make([]float32, sz[k])
			for j := range set {
				set[j] = float32(cats[seg[k]+int64(j)])
			}
			catSets[int(id)] = set
		}
	}

	return m.walkTree(p, left, right, feat, cond, dl, splitType, catSets)
}

// walkTree walks the reachable nodes of a tree given as parallel arrays
// (left_children of -1 for a leaf) from the root, renumbering them in
// pre-order and rejecting cycles, shared children and indices out of
// range.
func (m *model) walkTree(p path, left, right, feat []int64, cond []float32, dl, splitType []int64, catSets map[int][]float32) ([]node, error) {
	n := len(left)
	newID := make([]int, n)
	for i := range newID {
		newID[i] = -1
	}
	order := make([]int, 0, n)
	stack := []int{0}
	newID[0] = 0
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		newID[id] = len(order)
		order = append(order, id)
		if left[id] == -1 {
			continue
		}
		l, r := left[id], right[id]
		for _, c := range []int64{r, l} { // push right first: left is visited next
			if c < 0 || c >= int64(n) {
				return nil, fmt.Errorf("%s: node %d has child %d out of range [0, %d)", p, id, c, n)
			}
			if c == 0 || newID[c] != -1 {
				return nil, fmt.Errorf("%s: node %d links to node %d a second time (cycle or shared child)", p, id, c)
			}
			newID[c] = -2 // queued
			stack = append(stack, int(c))
		}
	}
	nodes := make([]node, len(order))
	for k, id := range order {
		nd := node{threshold: cond[id], defaultLeft: dl[id] == 1, feature: int(feat[id])}
		if left[id] == -1 {
			nd.leaf = true
			nd.feature = 0
		} else {
			if feat[id] >= int64(m.numFeature) {
				return nil, fmt.Errorf("%s: node %d splits on feature %d but the model has %d features", p, id, feat[id], m.numFeature)
			}
			nd.left, nd.right = newID[left[id]], newID[right[id]]
			if splitType != nil && splitType[id] == 1 {
				nd.categorical = true
				nd.categories = catSets[id]
				m.categorical = true
			}
		}
		nodes[k] = nd
	}
	return nodes, nil
}

// stringList returns v as a list of n strings, or nil when it is not one
// (feature names are metadata: a malformed list is dropped, not an error).
func stringList(v *value, n int) []string {
	if v == nil || v.kind != kArray || len(v.elems) != n {
		return nil
	}
	out := make([]string, n)
	for i := range v.elems {
		if v.elems[i].kind != kString {
			return nil
		}
		out[i] = v.elems[i].str
	}
	return out
}
