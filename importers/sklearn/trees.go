package sklearn

import (
	"fmt"
	"math"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/formats/pickle"
	"github.com/onnxconv/onnxconv/importers/trees"
)

// MLOpset is the ai.onnx.ml opset imported by graphs that hold trees
// (TreeEnsemble, double thresholds and leaf weights).
const MLOpset = 5

// float32Eps is np.finfo(np.float32).eps, the clip of gradient boosting's
// prior probabilities.
const float32Eps = 1.1920928955078125e-07

// sklTree is a fitted sklearn.tree._tree.Tree.
type sklTree struct {
	left, right, feature []int
	threshold, nSamples  []float64
	value                []float64 // [nodes, nCls] for one output
	missLeft             []bool    // missing_go_to_left (scikit-learn >= 1.3), or nil
	nCls                 int
	nFeatures            int
}

// readTree reads the tree_ of a DecisionTree* / ExtraTree* estimator.
func readTree(est *obj) (*sklTree, error) {
	tv, err := est.get("tree_")
	if err != nil {
		return nil, err
	}
	to, ok := tv.(*pickle.Object)
	if !ok || to.Class() == nil || to.Class().Name != "Tree" {
		return nil, est.errf("tree_", "expected a sklearn.tree._tree.Tree, found %s", pickle.Describe(tv))
	}
	o, err := asObj(tv, est.path+".tree_")
	if err != nil {
		return nil, err
	}
	t := &sklTree{}
	if len(to.Args) >= 3 {
		if f, ok := to.Args[0].(int64); ok && f > 0 && f <= trees.MaxFeatures {
			t.nFeatures = int(f)
		}
		if n, ok := to.Args[2].(int64); ok && n != 1 {
			return nil, est.errf("tree_", "%d outputs; only single-output trees are supported", n)
		}
	}
	if t.nFeatures == 0 {
		return nil, est.errf("tree_", "no feature count in the tree's arguments")
	}
	nv, err := o.get("nodes")
	if err != nil {
		return nil, err
	}
	na, err := toArray(nv)
	if err != nil || na.Kind != 'V' {
		return nil, o.errf("nodes", "expected the structured node array: %v", err)
	}
	cols := map[string][]float64{}
	for _, f := range []string{"left_child", "right_child", "feature", "threshold", "n_node_samples"} {
		c, ok := na.Fields[f]
		if !ok {
			return nil, o.errf("nodes", "no field %q", f)
		}
		cols[f] = c
	}
	n := len(cols["left_child"])
	if n == 0 || n > trees.MaxNodes {
		return nil, o.errf("nodes", "%d nodes", n)
	}
	vals, err := o.array("values")
	if err != nil {
		return nil, err
	}
	if len(vals.Shape) != 3 || vals.Shape[0] != n || vals.Shape[1] != 1 || vals.Shape[2] < 1 {
		return nil, o.errf("values", "shape %v for %d nodes; want [nodes, 1, classes]", vals.Shape, n)
	}
	t.nCls = vals.Shape[2]
	t.value = vals.F
	t.threshold, t.nSamples = cols["threshold"], cols["n_node_samples"]
	// scikit-learn 1.3 on records where a missing value goes at each
	// split (missing_go_to_left); before, NaN <= threshold was false:
	// right.
	if ml, ok := na.Fields["missing_go_to_left"]; ok {
		t.missLeft = make([]bool, n)
		for i, v := range ml {
			t.missLeft[i] = v != 0
		}
	}
	t.left, t.right, t.feature = make([]int, n), make([]int, n), make([]int, n)
	for i := 0; i < n; i++ {
		l, r, f := cols["left_child"][i], cols["right_child"][i], cols["feature"][i]
		if l == -1 || r == -1 {
			if l != r {
				return nil, o.errf("nodes", "node %d has one child", i)
			}
			t.left[i], t.right[i] = -1, -1
			continue
		}
		if l < 1 || l >= float64(n) || r < 1 || r >= float64(n) || f < 0 || f >= float64(t.nFeatures) {
			return nil, o.errf("nodes", "node %d: children %g, %g or feature %g out of range", i, l, r, f)
		}
		if math.IsNaN(t.threshold[i]) {
			return nil, o.errf("nodes", "node %d: threshold is NaN", i)
		}
		t.left[i], t.right[i], t.feature[i] = int(l), int(r), int(f)
	}
	return t, nil
}

// toTree is t for one target with the given leaf values; features are
// mapped through fmap when it is not nil. A node goes True (left) when
// x <= threshold, as scikit-learn's trees do; NaN goes where the node's
// missing_go_to_left says (scikit-learn >= 1.3), else right.
func (t *sklTree) toTree(target int, leaf func(i int) float64, fmap []int) trees.Tree {
	nodes := make([]trees.Node, len(t.left))
	for i := range nodes {
		if t.left[i] < 0 {
			nodes[i] = trees.Node{Leaf: true, Value: leaf(i)}
			continue
		}
		f := t.feature[i]
		if fmap != nil {
			f = fmap[f]
		}
		nodes[i] = trees.Node{Feature: f, Mode: trees.LEQ, Threshold: t.threshold[i], True: t.left[i], False: t.right[i]}
		if t.missLeft != nil {
			nodes[i].MissingTrue = t.missLeft[i]
		}
	}
	return trees.Tree{Nodes: nodes, Target: target}
}

// depths is the depth of every node (the root is 0); -1 for a node not
// reached.
func (t *sklTree) depths() []int {
	d := make([]int, len(t.left))
	for i := range d {
		d[i] = -1
	}
	d[0] = 0
	stack := []int{0}
	for len(stack) > 0 && len(stack) <= len(d) {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if t.left[i] < 0 {
			continue
		}
		for _, c := range []int{t.left[i], t.right[i]} {
			if d[c] >= 0 {
				continue
			}
			d[c] = d[i] + 1
			stack = append(stack, c)
		}
	}
	return d
}

// proba is the leaf's class fractions (value normalised by its sum, 0
// sums taken as 1), as DecisionTreeClassifier.predict_proba.
func (t *sklTree) proba(i, k int) float64 {
	row := t.value[i*t.nCls : (i+1)*t.nCls]
	s := 0.0
	for _, v := range row {
		s += v
	}
	if s == 0 {
		s = 1
	}
	return row[k] / s
}

// postKind is how a tree model turns its margin into outputs.
type postKind int

const (
	postProba   postKind = iota // probabilities = margin (/ trees); label argmax
	postRegress                 // variable = margin (/ trees)
	postExp                     // variable = exp(margin)
	postBinary                  // probabilities [1-p, p], p = expit(margin); scores = margin
	postMulti                   // probabilities softmax(margin); label argmax margin; scores = margin
	postIForest                 // scores = -2^(-margin/denom) - offset; label -1 / 1
)

// treeModel is a tree estimator: an ensemble computing its margin (in
// double, on X rounded to float32 first when f32, as scikit-learn's
// trees do), then the estimator's transform.
type treeModel struct {
	nF     int
	e      *trees.Ensemble
	src    *trees.Source
	f32    bool
	div    float64 // the margin is divided by div (forests); 0 means not
	post   postKind
	cls    []int64
	denom  float64 // IsolationForest
	offset float64
}

func newTreeModel(o *obj, e *trees.Ensemble, m *treeModel) (*treeModel, error) {
	e.Format = "sklearn"
	e.Double = true
	src, err := trees.NewSource(e, true, "scikit-learn "+o.class)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.path, err)
	}
	m.e, m.src, m.nF = e, src, e.NumFeatures
	return m, nil
}

func (m *treeModel) inDim() int { return m.nF }

func (m *treeModel) outputs() []output {
	T := m.e.NumTargets
	switch m.post {
	case postProba:
		return []output{{name: "label", kind: outLabels}, {name: "probabilities", kind: outMatrix, cols: len(m.cls)}}
	case postBinary:
		return []output{{name: "label", kind: outLabels}, {name: "probabilities", kind: outMatrix, cols: 2}, {name: "scores", kind: outVector}}
	case postMulti:
		return []output{{name: "label", kind: outLabels}, {name: "probabilities", kind: outMatrix, cols: T}, {name: "scores", kind: outMatrix, cols: T}}
	case postIForest:
		return []output{{name: "label", kind: outLabels}, {name: "scores", kind: outVector}}
	}
	return []output{{name: "variable", kind: outMatrix, cols: T}}
}

func (m *treeModel) predict(x *mat) []result {
	T := m.e.NumTargets
	mg := newMat(x.r, T)
	row := make([]float64, x.c)
	for i := 0; i < x.r; i++ {
		copy(row, x.row(i))
		if m.f32 {
			for j, v := range row {
				row[j] = float64(float32(v))
			}
		}
		m.src.Margin(row, mg.row(i))
	}
	if m.div != 0 {
		mg.apply(func(v float64) float64 { return v / m.div })
	}
	labels := make([]int64, x.r)
	switch m.post {
	case postProba:
		for i, k := range argmaxRows(mg) {
			labels[i] = m.cls[k]
		}
		return []result{{ints: labels}, {m: mg}}
	case postExp:
		mg.apply(math.Exp)
		return []result{{m: mg}}
	case postBinary:
		p := newMat(x.r, 2)
		for i := 0; i < x.r; i++ {
			e := sigmoid(mg.d[i])
			p.d[2*i], p.d[2*i+1] = 1-e, e
			if p.d[2*i+1] > p.d[2*i] {
				labels[i] = m.cls[1]
			} else {
				labels[i] = m.cls[0]
			}
		}
		return []result{{ints: labels}, {m: p}, {m: mg}}
	case postMulti:
		p := &mat{r: mg.r, c: mg.c, d: append([]float64(nil), mg.d...)}
		softmaxRows(p)
		for i, k := range argmaxRows(mg) {
			labels[i] = m.cls[k]
		}
		return []result{{ints: labels}, {m: p}, {m: mg}}
	case postIForest:
		for i := 0; i < x.r; i++ {
			s := -math.Pow(2, -mg.d[i]/m.denom) - m.offset
			mg.d[i] = s
			labels[i] = 1
			if s < 0 {
				labels[i] = -1
			}
		}
		return []result{{ints: labels}, {m: mg}}
	}
	return []result{{m: mg}}
}

func (m *treeModel) emit(g *graph, x string) []string {
	in := x
	if m.f32 {
		f := g.op("Cast", []string{x}, canonical.IntAttr("to", int64(canonical.Float)))
		in = g.op("Cast", []string{f}, canonical.IntAttr("to", int64(canonical.Double)))
	}
	mg := g.name("trees")
	if err := trees.Embed(g.b, m.e, trees.EmbedOptions{Input: in, Output: mg, MLOpset: MLOpset}); err != nil {
		g.fail(err)
		return nil
	}
	if m.div != 0 {
		mg = g.op("Div", []string{mg, g.scalar(m.div)})
	}
	switch m.post {
	case postProba:
		return []string{g.labelArgmax(m.cls, mg), mg}
	case postExp:
		return []string{g.op("Exp", []string{mg})}
	case postBinary:
		p := g.twoColumns(g.op("Sigmoid", []string{mg}))
		return []string{g.labelArgmax(m.cls, p), p, g.flatten(mg)}
	case postMulti:
		p := g.op("Softmax", []string{mg}, canonical.IntAttr("axis", 1))
		return []string{g.labelArgmax(m.cls, mg), p, mg}
	case postIForest:
		e := g.op("Neg", []string{g.op("Div", []string{mg, g.scalar(m.denom)})})
		s := g.op("Sub", []string{g.op("Neg", []string{g.op("Pow", []string{g.scalar(2), e})}), g.scalar(m.offset)})
		s = g.flatten(s)
		neg := g.op("Less", []string{s, g.scalar(0)})
		label := g.op("Where", []string{neg, g.int64s("minus_one", nil, []int64{-1}), g.int64s("one", nil, []int64{1})})
		return []string{label, s}
	}
	return []string{mg}
}

// isClassifier tells classifiers from regressors by class name.
func isClassifier(class string) bool { return strings.HasSuffix(class, "Classifier") }

// checkOutputs refuses multi-output estimators.
func checkOutputs(o *obj) error {
	if o.has("n_outputs_") {
		n, err := o.int("n_outputs_")
		if err != nil {
			return err
		}
		if n != 1 {
			return o.errf("n_outputs_", "%d outputs; only single-output trees are supported", n)
		}
	}
	return nil
}

// forestTrees turns fitted trees into ensemble trees: per class the
// leaf fractions for classifiers, the leaf value for regressors.
func forestTrees(ts []*sklTree, C int, o *obj) ([]trees.Tree, error) {
	var out []trees.Tree
	for ti, t := range ts {
		if C > 0 {
			if t.nCls != C {
				return nil, o.errf("estimators_", "tree %d has %d classes, the model %d", ti, t.nCls, C)
			}
			for k := 0; k < C; k++ {
				out = append(out, t.toTree(k, func(i int) float64 { return t.proba(i, k) }, nil))
			}
			continue
		}
		if t.nCls != 1 {
			return nil, o.errf("estimators_", "tree %d of a regressor has %d values per node", ti, t.nCls)
		}
		out = append(out, t.toTree(0, func(i int) float64 { return t.value[i] }, nil))
	}
	return out, nil
}

// readDecisionTree reads DecisionTreeClassifier/Regressor and
// ExtraTreeClassifier/Regressor.
func readDecisionTree(o *obj) (predictor, error) {
	if err := checkOutputs(o); err != nil {
		return nil, err
	}
	t, err := readTree(o)
	if err != nil {
		return nil, err
	}
	return treesModel(o, []*sklTree{t}, 0)
}

// treesModel is a classifier averaging class fractions or a regressor
// averaging values over ts (div: 0 for one tree).
func treesModel(o *obj, ts []*sklTree, div float64) (predictor, error) {
	nF := ts[0].nFeatures
	for _, t := range ts {
		if t.nFeatures != nF {
			return nil, o.errf("estimators_", "trees over %d and %d features", nF, t.nFeatures)
		}
	}
	m := &treeModel{f32: true, div: div, post: postRegress}
	C := 0
	if isClassifier(o.class) {
		cls, err := o.classes("classes_")
		if err != nil {
			return nil, err
		}
		m.cls, m.post, C = cls, postProba, len(cls)
	}
	tt, err := forestTrees(ts, C, o)
	if err != nil {
		return nil, err
	}
	T := 1
	if C > 0 {
		T = C
	}
	return newTreeModel(o, &trees.Ensemble{NumFeatures: nF, NumTargets: T, Trees: tt}, m)
}

// estimatorList reads a list (or object array) of fitted estimators.
func estimatorList(o *obj, field string) ([]*obj, error) {
	v, err := o.get(field)
	if err != nil {
		return nil, err
	}
	items, ok := pickleList(v)
	if !ok {
		a, err := toArray(v)
		if err != nil || a.Kind != 'O' {
			return nil, o.errf(field, "expected a list of estimators, found %s", pickle.Describe(v))
		}
		items = a.Objects
	}
	if len(items) == 0 || len(items) > 100000 {
		return nil, o.errf(field, "%d estimators", len(items))
	}
	out := make([]*obj, len(items))
	for i, it := range items {
		e, err := asObj(it, fmt.Sprintf("%s.%s[%d]", o.path, field, i))
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// readForest reads RandomForest* and ExtraTrees*: the mean of the trees'
// class fractions (label: their argmax) or values.
func readForest(o *obj) (predictor, error) {
	if err := checkOutputs(o); err != nil {
		return nil, err
	}
	ests, err := estimatorList(o, "estimators_")
	if err != nil {
		return nil, err
	}
	ts := make([]*sklTree, len(ests))
	for i, e := range ests {
		if ts[i], err = readTree(e); err != nil {
			return nil, err
		}
	}
	return treesModel(o, ts, float64(len(ts)))
}

// readGradientBoosting reads GradientBoostingClassifier/Regressor: the
// init estimator's raw prediction, then learning_rate times each stage's
// tree value, per class.
func readGradientBoosting(o *obj) (predictor, error) {
	lr, err := o.float("learning_rate")
	if err != nil {
		return nil, err
	}
	v, err := o.get("estimators_")
	if err != nil {
		return nil, err
	}
	a, err := toArray(v)
	if err != nil || a.Kind != 'O' || len(a.Shape) != 2 || a.Shape[0] < 1 || a.Shape[1] < 1 {
		return nil, o.errf("estimators_", "expected a 2-D array of trees")
	}
	stages, K := a.Shape[0], a.Shape[1]
	m := &treeModel{f32: true, post: postRegress}
	if isClassifier(o.class) {
		cls, err := o.classes("classes_")
		if err != nil {
			return nil, err
		}
		if loss := o.strOr("loss", "log_loss"); loss != "log_loss" && loss != "deviance" {
			return nil, o.errf("loss", "loss %q is not supported (log_loss is)", loss)
		}
		want := len(cls)
		if want == 2 {
			want = 1
		}
		if K != want {
			return nil, o.errf("estimators_", "%d trees per stage for %d classes", K, len(cls))
		}
		m.cls = cls
		m.post = postMulti
		if K == 1 {
			m.post = postBinary
		}
	} else if K != 1 {
		return nil, o.errf("estimators_", "%d trees per stage for a regressor", K)
	}
	init, err := gbInit(o, m.cls, K)
	if err != nil {
		return nil, err
	}
	var tt []trees.Tree
	for k := 0; k < K; k++ { // the init first, as scikit-learn adds the stages to it
		tt = append(tt, trees.Tree{Nodes: []trees.Node{{Leaf: true, Value: init[k]}}, Target: k})
	}
	nF := 0
	for s := 0; s < stages; s++ {
		for k := 0; k < K; k++ {
			e, err := asObj(a.Objects[s*K+k], fmt.Sprintf("%s.estimators_[%d, %d]", o.path, s, k))
			if err != nil {
				return nil, err
			}
			t, err := readTree(e)
			if err != nil {
				return nil, err
			}
			if t.nCls != 1 {
				return nil, e.errf("tree_", "%d values per node, want 1", t.nCls)
			}
			if nF == 0 {
				nF = t.nFeatures
			} else if t.nFeatures != nF {
				return nil, e.errf("tree_", "%d features, the others %d", t.nFeatures, nF)
			}
			tt = append(tt, t.toTree(k, func(i int) float64 { return lr * t.value[i] }, nil))
		}
	}
	return newTreeModel(o, &trees.Ensemble{NumFeatures: nF, NumTargets: K, Trees: tt}, m)
}

// gbInit is the raw prediction of gradient boosting's init estimator.
func gbInit(o *obj, cls []int64, K int) ([]float64, error) {
	v, err := o.get("init_")
	if err != nil {
		return nil, err
	}
	if s, ok := v.(string); ok && s == "zero" {
		return make([]float64, K), nil
	}
	io, err := asObj(v, o.path+".init_")
	if err != nil {
		return nil, err
	}
	switch io.class {
	case "DummyRegressor":
		c, err := io.vector("constant_")
		if err != nil {
			return nil, err
		}
		if len(c) != 1 || cls != nil {
			return nil, io.errf("constant_", "%d values; want 1", len(c))
		}
		return c, nil
	case "DummyClassifier":
		if s := io.strOr("_strategy", io.strOr("strategy", "prior")); s != "prior" {
			return nil, io.errf("strategy", "init strategy %q is not supported (prior is)", s)
		}
		p, err := io.vector("class_prior_")
		if err != nil {
			return nil, err
		}
		if cls == nil || len(p) != len(cls) {
			return nil, io.errf("class_prior_", "%d priors for %d classes", len(p), len(cls))
		}
		clip := func(x float64) float64 { return math.Min(math.Max(x, float32Eps), 1-float32Eps) }
		if K == 1 {
			p1 := clip(p[1])
			return []float64{math.Log(p1 / (1 - p1))}, nil
		}
		out := make([]float64, K)
		for k := range out {
			out[k] = math.Log(clip(p[k]))
		}
		return out, nil
	case "LogOddsEstimator", "ScaledLogOddsEstimator":
		// scikit-learn < 0.21, binary deviance (and exponential) loss:
		// the raw prediction is prior, the scaled log odds.
		p, err := io.float("prior")
		if err != nil {
			return nil, err
		}
		if K != 1 {
			return nil, io.errf("prior", "one log-odds prior for %d trees per stage", K)
		}
		return []float64{p}, nil
	case "PriorProbabilityEstimator":
		// scikit-learn < 0.21, multinomial deviance: the raw prediction
		// was the class priors themselves (not their logarithm, as from
		// 0.21 on).
		p, err := io.vector("priors")
		if err != nil {
			return nil, err
		}
		if len(p) != K {
			return nil, io.errf("priors", "%d priors for %d trees per stage", len(p), K)
		}
		return p, nil
	case "MeanEstimator", "QuantileEstimator":
		// scikit-learn < 0.21 regressors: the constant mean or quantile.
		field := "mean"
		if io.class == "QuantileEstimator" {
			field = "quantile"
		}
		c, err := io.float(field)
		if err != nil {
			return nil, err
		}
		if K != 1 || cls != nil {
			return nil, io.errf(field, "a regressor's init for %d trees per stage", K)
		}
		return []float64{c}, nil
	case "ZeroEstimator":
		return make([]float64, K), nil
	}
	return nil, io.errf("init_", "init estimator %s is not supported (DummyClassifier/DummyRegressor, 'zero', and before 0.21 LogOddsEstimator, PriorProbabilityEstimator, MeanEstimator, QuantileEstimator, ZeroEstimator are)", io.class)
}

// readHistGradientBoosting reads HistGradientBoostingClassifier/
// Regressor: baseline plus the trees of every iteration, numeric splits
// x <= threshold on float64 X, categorical splits on the left category
// bitset, missing values and unknown categories to the side learnt for
// missing values.
func readHistGradientBoosting(o *obj) (predictor, error) {
	K, err := o.int("n_trees_per_iteration_")
	if err != nil {
		return nil, err
	}
	nF, err := o.nFeaturesIn()
	if err != nil {
		return nil, err
	}
	if K < 1 || nF < 1 {
		return nil, o.errf("n_trees_per_iteration_", "%d trees per iteration over %d features", K, nF)
	}
	base, err := o.vector("_baseline_prediction")
	if err != nil {
		return nil, err
	}
	if len(base) != K {
		return nil, o.errf("_baseline_prediction", "%d values for %d trees per iteration", len(base), K)
	}
	m := &treeModel{post: postRegress}
	loss := o.strOr("loss", "")
	if isClassifier(o.class) {
		cls, err := o.classes("classes_")
		if err != nil {
			return nil, err
		}
		if (len(cls) == 2) != (K == 1) || (K > 1 && K != len(cls)) {
			return nil, o.errf("n_trees_per_iteration_", "%d trees per iteration for %d classes", K, len(cls))
		}
		m.cls, m.post = cls, postMulti
		if K == 1 {
			m.post = postBinary
		}
	} else {
		switch loss {
		case "squared_error", "absolute_error", "quantile", "least_squares", "least_absolute_deviation":
		case "poisson", "gamma":
			m.post = postExp
		default:
			return nil, o.errf("loss", "loss %q is not supported", loss)
		}
	}
	known, err := hgbKnownCategories(o, nF)
	if err != nil {
		return nil, err
	}
	pv, err := o.get("_predictors")
	if err != nil {
		return nil, err
	}
	iters, ok := pickleList(pv)
	if !ok || len(iters) > 100000 {
		return nil, o.errf("_predictors", "expected a list of iterations")
	}
	var tt []trees.Tree
	for k := 0; k < K; k++ {
		tt = append(tt, trees.Tree{Nodes: []trees.Node{{Leaf: true, Value: base[k]}}, Target: k})
	}
	for it, iv := range iters {
		ps, ok := pickleList(iv)
		if !ok || len(ps) != K {
			return nil, o.errf("_predictors", "iteration %d: expected %d trees", it, K)
		}
		for k, p := range ps {
			po, err := asObj(p, fmt.Sprintf("%s._predictors[%d][%d]", o.path, it, k))
			if err != nil {
				return nil, err
			}
			t, err := hgbTree(po, k, nF, known)
			if err != nil {
				return nil, err
			}
			tt = append(tt, t)
		}
	}
	return newTreeModel(o, &trees.Ensemble{NumFeatures: nF, NumTargets: K, Trees: tt}, m)
}

// hgbKnownCategories is, per categorical feature, the categories seen in
// fitting (the bin mapper's thresholds); nil for numeric features.
func hgbKnownCategories(o *obj, nF int) ([][]float64, error) {
	known := make([][]float64, nF)
	if !o.has("_bin_mapper") {
		return known, nil
	}
	bv, _ := o.get("_bin_mapper")
	bm, err := asObj(bv, o.path+"._bin_mapper")
	if err != nil {
		return nil, err
	}
	if !bm.has("is_categorical_") {
		return known, nil
	}
	isCat, err := bm.vector("is_categorical_")
	if err != nil {
		return nil, err
	}
	if len(isCat) != nF {
		return nil, bm.errf("is_categorical_", "%d values for %d features", len(isCat), nF)
	}
	tv, err := bm.get("bin_thresholds_")
	if err != nil {
		return nil, err
	}
	ths, ok := pickleList(tv)
	if !ok || len(ths) != nF {
		return nil, bm.errf("bin_thresholds_", "expected a list of %d arrays", nF)
	}
	for f, c := range isCat {
		if c == 0 {
			continue
		}
		a, err := toArray(ths[f])
		if err != nil || a.Kind == 'O' || a.Kind == 'V' {
			return nil, bm.errf("bin_thresholds_", "feature %d: expected its categories", f)
		}
		known[f] = a.F
	}
	return known, nil
}

// hgbTree converts one TreePredictor.
func hgbTree(po *obj, target, nF int, known [][]float64) (trees.Tree, error) {
	nv, err := po.get("nodes")
	if err != nil {
		return trees.Tree{}, err
	}
	na, err := toArray(nv)
	if err != nil || na.Kind != 'V' {
		return trees.Tree{}, po.errf("nodes", "expected the structured node array: %v", err)
	}
	col := func(f string) ([]float64, error) {
		c, ok := na.Fields[f]
		if !ok {
			return nil, po.errf("nodes", "no field %q", f)
		}
		return c, nil
	}
	names := []string{"value", "feature_idx", "num_threshold", "missing_go_to_left", "left", "right", "is_leaf"}
	cols := map[string][]float64{}
	for _, f := range names {
		if cols[f], err = col(f); err != nil {
			return trees.Tree{}, err
		}
	}
	n := len(cols["value"])
	// Categorical splits came with scikit-learn 0.24; earlier node
	// records have neither field (every split numeric).
	for _, f := range []string{"is_categorical", "bitset_idx"} {
		if c, ok := na.Fields[f]; ok {
			cols[f] = c
		} else {
			cols[f] = make([]float64, n)
		}
	}
	if n == 0 || n > trees.MaxNodes {
		return trees.Tree{}, po.errf("nodes", "%d nodes", n)
	}
	var bits *Array
	nodes := make([]trees.Node, n)
	for i := range nodes {
		if cols["is_leaf"][i] != 0 {
			nodes[i] = trees.Node{Leaf: true, Value: cols["value"][i]}
			continue
		}
		f, l, r := cols["feature_idx"][i], cols["left"][i], cols["right"][i]
		if f < 0 || f >= float64(nF) || l < 0 || l >= float64(n) || r < 0 || r >= float64(n) {
			return trees.Tree{}, po.errf("nodes", "node %d: feature %g or children %g, %g out of range", i, f, l, r)
		}
		missLeft := cols["missing_go_to_left"][i] != 0
		nd := trees.Node{Feature: int(f), Mode: trees.LEQ, Threshold: cols["num_threshold"][i], True: int(l), False: int(r), MissingTrue: missLeft}
		if cols["is_categorical"][i] != 0 {
			if bits == nil {
				if bits, err = po.array("raw_left_cat_bitsets"); err != nil {
					return trees.Tree{}, err
				}
				if len(bits.Shape) != 2 || bits.Shape[1] != 8 {
					return trees.Tree{}, po.errf("raw_left_cat_bitsets", "shape %v; want [n, 8]", bits.Shape)
				}
			}
			b := int(cols["bitset_idx"][i])
			if b < 0 || b >= bits.Shape[0] || known[int(f)] == nil {
				return trees.Tree{}, po.errf("nodes", "node %d: categorical split without its bitset or categories", i)
			}
			isLeft := func(c int) bool { return uint32(bits.F[b*8+c/32])>>(c%32)&1 == 1 }
			// Left: the categories of the bitset; unknown categories,
			// negative values and NaN go where missing values go.
			var set []float64
			for _, c := range known[int(f)] {
				ci := int(c)
				if c != float64(ci) || ci < 0 || ci > 255 {
					return trees.Tree{}, po.errf("nodes", "node %d: category %g is not an integer 0 to 255", i, c)
				}
				if isLeft(ci) != missLeft {
					set = append(set, c)
				}
			}
			nd = trees.Node{Feature: int(f), Mode: trees.Member, Set: set, True: int(l), False: int(r), MissingTrue: missLeft}
			if missLeft { // members are the known categories going right
				nd.True, nd.False, nd.MissingTrue = int(r), int(l), false
			}
		}
		nodes[i] = nd
	}
	return trees.Tree{Nodes: nodes, Target: target}, nil
}

// averagePathLength is IsolationForest's c(n).
func averagePathLength(n float64) float64 {
	switch {
	case n <= 1:
		return 0
	case n == 2:
		return 1
	}
	return 2.0*(math.Log(n-1.0)+0.5772156649015329) - 2.0*(n-1.0)/n
}

// readIsolationForest: the sum over trees of the leaf's depth plus c(its
// samples), scored as -2^(-sum / (trees c(max_samples_))) - offset_.
func readIsolationForest(o *obj) (predictor, error) {
	ests, err := estimatorList(o, "estimators_")
	if err != nil {
		return nil, err
	}
	nF, err := o.nFeaturesIn()
	if err != nil {
		return nil, err
	}
	maxFeat := nF
	if o.has("_max_features") {
		if maxFeat, err = o.int("_max_features"); err != nil {
			return nil, err
		}
	}
	var feats []pickle.Value
	if maxFeat != nF {
		fv, err := o.get("estimators_features_")
		if err != nil {
			return nil, err
		}
		var ok bool
		if feats, ok = pickleList(fv); !ok || len(feats) != len(ests) {
			return nil, o.errf("estimators_features_", "expected one feature list per tree")
		}
	}
	ms, err := o.float("max_samples_")
	if err != nil {
		return nil, err
	}
	off, err := o.float("offset_")
	if err != nil {
		return nil, err
	}
	var tt []trees.Tree
	for i, e := range ests {
		t, err := readTree(e)
		if err != nil {
			return nil, err
		}
		var fmap []int
		if feats != nil {
			a, err := toArray(feats[i])
			if err != nil || len(a.F) != t.nFeatures {
				return nil, o.errf("estimators_features_", "tree %d: %d features expected", i, t.nFeatures)
			}
			fmap = make([]int, len(a.F))
			for j, f := range a.F {
				if f < 0 || f >= float64(nF) {
					return nil, o.errf("estimators_features_", "tree %d: feature %g out of range", i, f)
				}
				fmap[j] = int(f)
			}
		} else if t.nFeatures != nF {
			return nil, e.errf("tree_", "%d features, the model %d", t.nFeatures, nF)
		}
		d := t.depths()
		tt = append(tt, t.toTree(0, func(j int) float64 {
			return float64(d[j]+1) + averagePathLength(t.nSamples[j]) - 1.0
		}, fmap))
	}
	m := &treeModel{f32: true, post: postIForest, offset: off,
		denom: float64(len(ests)) * averagePathLength(ms)}
	if m.denom == 0 {
		return nil, o.errf("max_samples_", "%g samples per tree", ms)
	}
	return newTreeModel(o, &trees.Ensemble{NumFeatures: nF, NumTargets: 1, Trees: tt}, m)
}
