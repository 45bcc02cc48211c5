package catboost

import (
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/importers/trees"
)

// objective maps CatBoost's loss function to the transform of its
// prediction (what CatBoostClassifier.predict_proba and
// CatBoostRegressor.predict give). warn is set for a loss onnxconv
// does not know, whose output is the raw formula value.
func (m *model) objective() (obj trees.Objective, classifier bool, warn string) {
	switch m.loss {
	case "Logloss", "CrossEntropy":
		return trees.Logistic, true, ""
	case "MultiClass":
		return trees.Softprob, true, ""
	case "MultiClassOneVsAll":
		return trees.Logistic, true, ""
	case "Poisson", "Tweedie":
		return trees.Exp, false, ""
	case "RMSE", "MAE", "Quantile", "MAPE", "Lq", "Huber", "Expectile", "MultiRMSE", "MultiQuantile", "LogCosh", "FairLoss",
		"YetiRank", "YetiRankPairwise", "PairLogit", "PairLogitPairwise", "QueryRMSE", "QuerySoftMax", "QueryCrossEntropy", "StochasticRank", "LambdaMart", "StochasticFilter":
		return trees.Identity, false, ""
	}
	name := m.loss
	if name == "" {
		name = "(none recorded)"
	}
	return trees.Identity, false, fmt.Sprintf("catboost: loss function %s: the output \"predict\" is the raw formula value (RawFormulaVal), with no transform", name)
}

// gtThreshold returns t such that, for every double x, x > t exactly when
// float32(x) > border: CatBoost compares features as float32.
func gtThreshold(border float64) float64 {
	f := float32(border)
	if math.IsInf(float64(f), 0) || math.IsNaN(float64(f)) {
		return float64(f)
	}
	var mid float64
	if f == math.MaxFloat32 {
		mid = float64(f) + math.Ldexp(1, 103) // half an ulp: the tie rounds to +Inf
	} else {
		next := math.Nextafter32(f, float32(math.Inf(1)))
		mid = (float64(f) + float64(next)) / 2
	}
	if float32(mid) != f { // mid rounds up: it is already above
		return math.Nextafter(mid, math.Inf(-1))
	}
	return mid
}

// node makes the trees.Node of a split; True is the split's "right"
// (the condition holds).
func (m *model) splitNode(s split) (trees.Node, error) {
	switch s.kind {
	case splitFloat:
		f, err := m.floatByIndex(s.feature)
		if err != nil {
			return trees.Node{}, err
		}
		return trees.Node{Feature: f.flat, Mode: trees.GT, Threshold: gtThreshold(s.border), MissingTrue: f.nan == nanAsTrue}, nil
	case splitOneHot:
		c, err := m.catByIndex(s.feature)
		if err != nil {
			return trees.Node{}, err
		}
		return trees.Node{Feature: c.flat, Mode: trees.EQ, Threshold: float64(s.value)}, nil
	case splitCtr:
		if s.feature < 0 || s.feature >= len(m.ctrs) {
			return trees.Node{}, fmt.Errorf("a split uses CTR %d; the model has %d", s.feature, len(m.ctrs))
		}
		// CTR k is the trees' feature numFlat+k; its value is a float32.
		return trees.Node{Feature: m.numFlat + s.feature, Mode: trees.GT, Threshold: gtThreshold(s.border)}, nil
	}
	return trees.Node{}, fmt.Errorf("unknown split kind %d", s.kind)
}

// ensemble turns m into the tree ensemble it computes: each tree once
// per dimension of the approx, oblivious trees expanded to full binary
// trees (the root tests the last split, the leaf index's highest bit),
// the leaves scaled by Scale, Bias as the base.
func (m *model) ensemble() (*trees.Ensemble, string, error) {
	if err := m.check(); err != nil {
		return nil, "", err
	}
	obj, classifier, warn := m.objective()
	if obj == trees.Logistic && m.loss != "MultiClassOneVsAll" && m.dim != 1 {
		return nil, "", fmt.Errorf("loss %s with approx dimension %d; want 1", m.loss, m.dim)
	}
	// Count the nodes before making them.
	total := 0
	for _, t := range m.trees {
		n := len(t.nodes)
		if t.nodes == nil {
			n = 2<<len(t.splits) - 1
		}
		if n > trees.MaxNodes/m.dim || total > trees.MaxNodes-n*m.dim {
			return nil, "", fmt.Errorf("the trees have more than %d nodes in all", trees.MaxNodes)
		}
		total += n * m.dim
	}
	if total > 4*m.leafCount+16 {
		return nil, "", fmt.Errorf("the trees expand to %d nodes for %d leaf values in the file (leaves shared between nodes?)", total, m.leafCount)
	}
	e := &trees.Ensemble{
		Format:      Name,
		NumFeatures: m.numFlat,
		NumTargets:  m.dim,
		Objective:   obj,
		Classifier:  classifier,
		Double:      true,
	}
	if m.bias != nil {
		e.Base = append([]float64(nil), m.bias...)
	}
	for ci := range m.ctrs {
		l, err := m.lookup(ci)
		if err != nil {
			return nil, "", err
		}
		e.Lookups = append(e.Lookups, l)
	}
	named := false
	for _, f := range m.floats {
		named = named || f.id != ""
	}
	for _, c := range m.cats {
		named = named || c.id != ""
	}
	if named && m.numFlat <= len(m.floats)+len(m.cats)+len(m.otherFlat) {
		e.FeatureNames = make([]string, m.numFlat)
		for _, f := range m.floats {
			e.FeatureNames[f.flat] = f.id
		}
		for _, c := range m.cats {
			e.FeatureNames[c.flat] = c.id
		}
	}
	for ti, t := range m.trees {
		for k := 0; k < m.dim; k++ {
			var nodes []trees.Node
			var err error
			if t.nodes == nil {
				nodes, err = m.oblivious(t, k)
			} else {
				nodes, err = m.nonSymmetric(t, k)
			}
			if err != nil {
				return nil, "", fmt.Errorf("tree %d: %w", ti, err)
			}
			e.Trees = append(e.Trees, trees.Tree{Nodes: nodes, Target: k})
		}
	}
	if err := e.Validate(); err != nil {
		return nil, "", err
	}
	return e, warn, nil
}

func (m *model) oblivious(t tree, k int) ([]trees.Node, error) {
	depth := len(t.splits)
	inner := 1<<depth - 1
	nodes := make([]trees.Node, 2*inner+1)
	// Heap order: node i's children are 2i+1 (False, bit 0) and 2i+2
	// (True, bit 1); the root tests splits[depth-1], so leaf h is the
	// leaf index h-inner.
	for level, i := 0, 0; level < depth; level++ {
		nd, err := m.splitNode(t.splits[depth-1-level])
		if err != nil {
			return nil, err
		}
		for end := 2*i + 1; i < end; i++ {
			n := nd
			n.False, n.True = 2*i+1, 2*i+2
			nodes[i] = n
		}
	}
	for l := 0; l <= inner; l++ {
		nodes[inner+l] = trees.Node{Leaf: true, Value: m.scale * t.leaves[l*m.dim+k]}
	}
	return nodes, nil
}

func (m *model) nonSymmetric(t tree, k int) ([]trees.Node, error) {
	nodes := make([]trees.Node, len(t.nodes))
	for i, n := range t.nodes {
		if n.leaf {
			nodes[i] = trees.Node{Leaf: true, Value: m.scale * n.values[k]}
			continue
		}
		nd, err := m.splitNode(n.split)
		if err != nil {
			return nil, err
		}
		nd.False, nd.True = n.left, n.right
		nodes[i] = nd
	}
	return nodes, nil
}
