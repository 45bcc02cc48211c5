package lightgbm

import (
	"fmt"
	"math"
	"strings"

	"github.com/onnxconv/onnxconv/importers/trees"
)

// maxLeaves bounds num_leaves of one tree.
const maxLeaves = 1 << 24

// Decision type bits of the text format (LightGBM tree.h).
const (
	catMask         = 1
	defaultLeftMask = 2
)

// Missing types (decision_type bits 2-3).
const (
	missingNone = 0
	missingZero = 1
	missingNaN  = 2
)

// split is one interior node. A child >= 0 is an interior node, < 0 the
// leaf ^child.
type split struct {
	feature     int
	threshold   float64
	categorical bool
	cats        []float64 // categories that go left
	defaultLeft bool
	missing     int
	left, right int
}

type tree struct {
	splits []split
	leaves []float64
	linear bool
	// linears has, for a linear tree (is_linear=1), each leaf's
	// leaf_const, leaf_features and leaf_coeff.
	linears []trees.LinearLeaf
}

// model is a parsed LightGBM model (text or JSON dump).
type model struct {
	version      string
	numClass     int
	perIteration int
	numFeatures  int
	objective    string // the objective line: "binary sigmoid:1"
	average      bool   // average_output (random forest)
	featureNames []string
	trees        []tree
}

// objective maps LightGBM's objective to the ensemble's.
func objective(line string, numClass int) (obj trees.Objective, sigmoid float64, classifier bool, targets int, err error) {
	fields := strings.Fields(line)
	name := ""
	if len(fields) > 0 {
		name = fields[0]
	}
	sigmoid = 1
	for _, f := range fields[min(1, len(fields)):] {
		if k, v, ok := strings.Cut(f, ":"); ok && k == "sigmoid" {
			if _, e := fmt.Sscanf(v, "%g", &sigmoid); e != nil || !(sigmoid > 0) || math.IsInf(sigmoid, 0) {
				return 0, 0, false, 0, fmt.Errorf("objective %q: bad sigmoid %q", line, v)
			}
		}
		if f == "sqrt" {
			return 0, 0, false, 0, fmt.Errorf("objective %q: reg_sqrt (predictions squared back) is not supported; use raw_score=true and square the result", line)
		}
	}
	targets = 1
	switch name {
	case "", "none", "custom", "regression", "regression_l2", "l2", "mean_squared_error", "mse", "l2_root",
		"root_mean_squared_error", "rmse", "regression_l1", "l1", "mean_absolute_error", "mae",
		"huber", "fair", "quantile", "mape", "mean_absolute_percentage_error",
		"lambdarank", "rank_xendcg", "xendcg", "xe_ndcg", "xe_ndcg_mart", "xendcg_mart":
		return trees.Identity, 1, false, 1, nil
	case "binary":
		return trees.Logistic, sigmoid, true, 1, nil
	case "cross_entropy", "xentropy":
		return trees.Logistic, 1, false, 1, nil
	case "poisson", "gamma", "tweedie":
		return trees.Exp, 1, false, 1, nil
	case "multiclass", "softmax":
		return trees.Softprob, 1, true, numClass, nil
	case "multiclassova", "multiclass_ova", "ova", "ovr":
		return trees.Logistic, sigmoid, true, numClass, nil
	}
	return 0, 0, false, 0, fmt.Errorf("objective %q is not supported (regression, regression_l1, huber, fair, quantile, mape, poisson, gamma, tweedie, binary, cross_entropy, multiclass, multiclassova, lambdarank, rank_xendcg)", name)
}

// ensemble turns m into a tree ensemble using its first numIteration
// iterations (0: all).
func (m *model) ensemble(numIteration int, objOverride string) (*trees.Ensemble, error) {
	if m.objective == "" {
		m.objective = objOverride
	} else if objOverride != "" && strings.Fields(objOverride)[0] != strings.Fields(m.objective)[0] {
		return nil, fmt.Errorf("option objective=%q contradicts the model's objective %q", objOverride, m.objective)
	}
	obj, sig, cls, targets, err := objective(m.objective, m.numClass)
	if err != nil {
		return nil, err
	}
	if m.average && obj == trees.Logistic {
		// Random forest mode with a logistic objective: LightGBM's leaves
		// are probabilities already and predict averages them with no
		// sigmoid (as dmitryikh/leaves reads them, checked against
		// LightGBM's predictions of lg_rf_iris.model).
		obj = trees.Identity
	}
	if m.perIteration < 1 {
		return nil, fmt.Errorf("num_tree_per_iteration is %d", m.perIteration)
	}
	if targets != m.perIteration {
		return nil, fmt.Errorf("objective %q has %d outputs but num_tree_per_iteration is %d", m.objective, targets, m.perIteration)
	}
	ts := m.trees
	if numIteration > 0 && numIteration*m.perIteration < len(ts) {
		ts = ts[:numIteration*m.perIteration]
	}
	iters := (len(ts) + m.perIteration - 1) / m.perIteration
	e := &trees.Ensemble{
		Format: Name, NumFeatures: m.numFeatures, NumTargets: targets,
		Objective: obj, Sigmoid: sig, Classifier: cls, Double: true,
	}
	if len(m.featureNames) == m.numFeatures {
		e.FeatureNames = m.featureNames
	}
	for i := range ts {
		t := &ts[i]
		if t.linear && len(t.linears) != len(t.leaves) {
			return nil, fmt.Errorf("tree %d is linear (is_linear=1) but has %d linear leaves for %d leaves", i, len(t.linears), len(t.leaves))
		}
		if t.linear && m.average {
			return nil, fmt.Errorf("tree %d: linear leaves (linear_tree) with average_output (random forest) are not supported", i)
		}
		scale := 1.0
		if m.average && iters > 0 {
			scale = float64(iters)
		}
		nt, err := t.convert(i, m.numFeatures, scale)
		if err != nil {
			return nil, err
		}
		nt.Target = i % m.perIteration
		e.Trees = append(e.Trees, nt)
	}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return e, nil
}

// convert lays out a tree as trees.Nodes: splits first (0 is the root),
// then the leaves, then the extra tests of missing_type Zero splits.
// average divides the leaf values (average_output).
func (t *tree) convert(ti, numFeatures int, average float64) (trees.Tree, error) {
	ns, nl := len(t.splits), len(t.leaves)
	if nl == 0 || (ns != nl-1) {
		return trees.Tree{}, fmt.Errorf("tree %d: %d splits for %d leaves", ti, ns, nl)
	}
	leaf := func(j int) trees.Node {
		n := trees.Node{Leaf: true, Value: t.leaves[j] / average}
		if t.linear {
			l := t.linears[j]
			n.Linear = &l
		}
		return n
	}
	if ns == 0 {
		return trees.Tree{Nodes: []trees.Node{leaf(0)}}, nil
	}
	nodes := make([]trees.Node, ns+nl, ns+nl+ns)
	for j := range t.leaves {
		nodes[ns+j] = leaf(j)
	}
	ref := func(i, c int) (int, error) {
		if c >= 0 {
			if c >= ns {
				return 0, fmt.Errorf("tree %d node %d: child %d out of range (%d splits)", ti, i, c, ns)
			}
			return c, nil
		}
		if ^c >= nl {
			return 0, fmt.Errorf("tree %d node %d: leaf %d out of range (%d leaves)", ti, i, ^c, nl)
		}
		return ns + ^c, nil
	}
	for i, s := range t.splits {
		if s.feature < 0 || s.feature >= numFeatures {
			return trees.Tree{}, fmt.Errorf("tree %d node %d: split_feature %d out of range (max_feature_idx %d)", ti, i, s.feature, numFeatures-1)
		}
		l, err := ref(i, s.left)
		if err != nil {
			return trees.Tree{}, err
		}
		r, err := ref(i, s.right)
		if err != nil {
			return trees.Tree{}, err
		}
		switch {
		case s.categorical:
			// LightGBM sends listed categories left; NaN and negative
			// values always go right (on x86, int(NaN) is negative).
			nodes[i] = trees.Node{Feature: s.feature, Mode: trees.Member, Set: s.cats, True: l, False: r}
		case s.missing == missingNaN:
			nodes[i] = trees.Node{Feature: s.feature, Mode: trees.LEQ, Threshold: s.threshold, True: l, False: r, MissingTrue: s.defaultLeft}
		case s.missing == missingZero:
			// NaN is 0 here, and 0 goes the default way: test x == 0 first.
			def := r
			if s.defaultLeft {
				def = l
			}
			cmp := len(nodes)
			nodes = append(nodes, trees.Node{Feature: s.feature, Mode: trees.LEQ, Threshold: s.threshold, True: l, False: r})
			nodes[i] = trees.Node{Feature: s.feature, Mode: trees.EQ, Threshold: 0, True: def, False: cmp, MissingTrue: true}
		default: // None: NaN is 0
			nodes[i] = trees.Node{Feature: s.feature, Mode: trees.LEQ, Threshold: s.threshold, True: l, False: r, MissingTrue: 0 <= s.threshold}
		}
	}
	return trees.Tree{Nodes: nodes}, nil
}
