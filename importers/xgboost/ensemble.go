package xgboost

import (
	"encoding/json"
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers/trees"
)

// ensemble is m as a trees.Ensemble computing in float32 as xgboost does:
// each target's base margin is folded into the leaves of its first tree
// (xgboost's summation order: base first); a target with no tree gets its
// base as a single-leaf tree (trees.Ensemble.Base). Nodes keep xgboost's
// pre-order.
func (m *model) ensemble() (*trees.Ensemble, error) {
	e := &trees.Ensemble{
		Format: Name, NumFeatures: m.numFeature, NumTargets: m.numTargets,
		Classifier: m.obj.classifier && m.numTargets == 1,
	}
	switch m.obj.transform {
	case tIdentity:
		e.Objective = trees.Identity
	case tLogistic:
		e.Objective = trees.Logistic
	case tExp:
		e.Objective = trees.Exp
	case tHinge:
		e.Objective = trees.Hinge
	case tSoftprob:
		e.Objective, e.Classifier = trees.Softprob, true
	case tSoftmax:
		e.Objective, e.Classifier = trees.SoftmaxLabel, true
	default:
		return nil, fmt.Errorf("internal: unhandled transform %d", m.obj.transform)
	}
	if m.booster == "gblinear" {
		F, T := m.numFeature, m.numTargets
		l := &trees.Linear{Weights: make([]float64, F*T), Bias: make([]float64, T)}
		for i := range l.Weights {
			l.Weights[i] = float64(m.linear[i])
		}
		for t := range l.Bias {
			l.Bias[t] = float64(m.linear[F*T+t] + m.baseMargin[t])
		}
		e.Linear = l
		return e, e.Validate()
	}
	seen := make([]bool, m.numTargets)
	for ti := range m.trees {
		t := &m.trees[ti]
		base := float32(0)
		if !seen[t.target] {
			seen[t.target] = true
			base = m.baseMargin[t.target]
		}
		nt := trees.Tree{Target: t.target, Nodes: make([]trees.Node, len(t.nodes))}
		for i := range t.nodes {
			nd := &t.nodes[i]
			switch {
			case nd.leaf:
				nt.Nodes[i] = trees.Node{Leaf: true, Value: float64(leafWeight(t, nd.threshold) + base)}
			case nd.categorical:
				// xgboost sends the listed categories right, others left.
				set := make([]float64, len(nd.categories))
				for k, c := range nd.categories {
					set[k] = float64(c)
				}
				nt.Nodes[i] = trees.Node{Feature: nd.feature, Mode: trees.Member, Set: set,
					True: nd.right, False: nd.left, MissingTrue: !nd.defaultLeft}
			default:
				// xgboost goes left when x < split_condition.
				nt.Nodes[i] = trees.Node{Feature: nd.feature, Mode: trees.LT, Threshold: float64(nd.threshold),
					True: nd.left, False: nd.right, MissingTrue: nd.defaultLeft}
			}
		}
		e.Trees = append(e.Trees, nt)
	}
	e.Base = make([]float64, m.numTargets)
	for t := range e.Base {
		if !seen[t] {
			e.Base[t] = float64(m.baseMargin[t])
		}
	}
	return e, e.Validate()
}

// leafWeight is a leaf's contribution: dart scales it by weight_drop.
func leafWeight(t *tree, v float32) float32 {
	if t.weight == 1 {
		return v
	}
	return t.weight * v
}

// build turns the decoded model into an ONNX model through trees.Build.
func build(m *model, o Options) (*canonical.Model, error) {
	if m.categorical && o.MLOpset < 5 && m.booster != "gblinear" {
		return nil, fmt.Errorf("the model has categorical splits, which need ai.onnx.ml opset 5 (TreeEnsemble BRANCH_MEMBER); got ml opset %d", o.MLOpset)
	}
	e, err := m.ensemble()
	if err != nil {
		return nil, err
	}
	meta := [][2]string{
		{"xgboost.objective", m.objective},
		{"xgboost.booster", m.booster},
		{"xgboost.num_feature", fmt.Sprint(m.numFeature)},
	}
	if m.version != "" {
		meta = append(meta, [2]string{"xgboost.version", m.version})
	}
	if m.baseScoreRaw != "" {
		meta = append(meta, [2]string{"xgboost.base_score", m.baseScoreRaw})
	}
	for _, l := range []struct {
		key  string
		list []string
	}{{"xgboost.feature_names", m.featureNames}, {"xgboost.feature_types", m.featureTypes}} {
		if l.list != nil {
			b, err := json.Marshal(l.list)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", l.key, err)
			}
			meta = append(meta, [2]string{l.key, string(b)})
		}
	}
	doc := fmt.Sprintf("XGBoost %s model (objective %s", m.booster, m.objective)
	if m.version != "" {
		doc += ", xgboost " + m.version
	}
	doc += ")"
	return trees.Build(e, trees.BuildOptions{
		MLOpset: o.MLOpset, AIOpset: o.AIOpset, Raw: o.Output == OutputMargin,
		GraphName: "xgboost_" + m.booster, Domain: "ai.onnxconv.xgboost", Doc: doc, Metadata: meta,
	})
}
