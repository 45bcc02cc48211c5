package lightgbm

import (
	"encoding/json"
	"fmt"
	"github.com/onnxconv/onnxconv/importers/trees"
	"math"
	"strconv"
	"strings"
)

// jsonModel is Booster.dump_model().
type jsonModel struct {
	Name                *string         `json:"name"`
	Version             string          `json:"version"`
	NumClass            *int            `json:"num_class"`
	NumTreePerIteration *int            `json:"num_tree_per_iteration"`
	MaxFeatureIdx       *int            `json:"max_feature_idx"`
	Objective           string          `json:"objective"`
	AverageOutput       bool            `json:"average_output"`
	FeatureNames        []string        `json:"feature_names"`
	TreeInfo            []jsonTreeInfo  `json:"tree_info"`
	LinearTree          json.RawMessage `json:"linear_tree"`
}

type jsonTreeInfo struct {
	NumLeaves     int       `json:"num_leaves"`
	TreeStructure *jsonNode `json:"tree_structure"`
}

type jsonNode struct {
	SplitFeature *int            `json:"split_feature"`
	Threshold    json.RawMessage `json:"threshold"`
	DecisionType string          `json:"decision_type"`
	DefaultLeft  bool            `json:"default_left"`
	MissingType  string          `json:"missing_type"`
	LeftChild    *jsonNode       `json:"left_child"`
	RightChild   *jsonNode       `json:"right_child"`
	LeafValue    *float64        `json:"leaf_value"`
	LeafConst    *float64        `json:"leaf_const"`
	LeafFeatures []int           `json:"leaf_features"`
	LeafCoeff    []float64       `json:"leaf_coeff"`
}

// parseJSON reads a dump_model() JSON document.
func parseJSON(data []byte) (*model, error) {
	var jm jsonModel
	if err := json.Unmarshal(data, &jm); err != nil {
		return nil, fmt.Errorf("JSON dump: %w", err)
	}
	if jm.Name == nil || jm.TreeInfo == nil || jm.MaxFeatureIdx == nil {
		return nil, fmt.Errorf("JSON: not a LightGBM dump_model() document (needs name, max_feature_idx and tree_info)")
	}
	m := &model{version: jm.Version, objective: jm.Objective, average: jm.AverageOutput, numClass: 1, perIteration: 1}
	if jm.NumClass != nil {
		m.numClass = *jm.NumClass
	}
	if jm.NumTreePerIteration != nil {
		m.perIteration = *jm.NumTreePerIteration
	}
	if m.numClass < 1 || m.numClass > 1<<16 || m.perIteration < 1 || m.perIteration > 1<<16 {
		return nil, fmt.Errorf("num_class %d / num_tree_per_iteration %d out of range", m.numClass, m.perIteration)
	}
	if *jm.MaxFeatureIdx < 0 || *jm.MaxFeatureIdx >= 1<<24 {
		return nil, fmt.Errorf("max_feature_idx %d out of range", *jm.MaxFeatureIdx)
	}
	m.numFeatures = *jm.MaxFeatureIdx + 1
	m.featureNames = jm.FeatureNames
	for i, ti := range jm.TreeInfo {
		if ti.TreeStructure == nil {
			return nil, fmt.Errorf("tree_info[%d]: no tree_structure", i)
		}
		var t tree
		if _, err := t.walk(ti.TreeStructure, 0); err != nil {
			return nil, fmt.Errorf("tree_info[%d]: %w", i, err)
		}
		m.trees = append(m.trees, t)
	}
	if len(m.trees)%m.perIteration != 0 {
		return nil, fmt.Errorf("%d trees is not a multiple of num_tree_per_iteration %d", len(m.trees), m.perIteration)
	}
	return m, nil
}

// walk adds n and its subtree to t and returns its child reference.
func (t *tree) walk(n *jsonNode, depth int) (int, error) {
	if depth > 10000 {
		return 0, fmt.Errorf("tree deeper than 10000")
	}
	if n.SplitFeature == nil {
		if n.LeafValue == nil {
			return 0, fmt.Errorf("a node has neither split_feature nor leaf_value")
		}
		if n.LeafConst != nil {
			if len(n.LeafFeatures) != len(n.LeafCoeff) {
				return 0, fmt.Errorf("a linear leaf has %d leaf_features and %d leaf_coeff", len(n.LeafFeatures), len(n.LeafCoeff))
			}
			if len(t.leaves) != len(t.linears) {
				return 0, fmt.Errorf("a tree mixes linear and constant leaves")
			}
			t.linear = true
			t.linears = append(t.linears, trees.LinearLeaf{Const: *n.LeafConst, Features: n.LeafFeatures, Coeffs: n.LeafCoeff})
		} else if t.linear {
			return 0, fmt.Errorf("a tree mixes linear and constant leaves")
		}
		t.leaves = append(t.leaves, *n.LeafValue)
		return ^(len(t.leaves) - 1), nil
	}
	if n.LeftChild == nil || n.RightChild == nil {
		return 0, fmt.Errorf("split node without both children")
	}
	idx := len(t.splits)
	t.splits = append(t.splits, split{feature: *n.SplitFeature, defaultLeft: n.DefaultLeft})
	s := split{feature: *n.SplitFeature, defaultLeft: n.DefaultLeft}
	switch n.MissingType {
	case "None", "":
		s.missing = missingNone
	case "Zero":
		s.missing = missingZero
	case "NaN":
		s.missing = missingNaN
	default:
		return 0, fmt.Errorf("split %d: missing_type %q unknown", idx, n.MissingType)
	}
	switch n.DecisionType {
	case "<=", "":
		f, err := strconv.ParseFloat(strings.Trim(string(n.Threshold), `" `), 64)
		if (err != nil && !isRangeErr(err)) || math.IsNaN(f) {
			return 0, fmt.Errorf("split %d: threshold %.30s is not a number", idx, n.Threshold)
		}
		s.threshold = f
	case "==":
		s.categorical = true
		var str string
		if err := json.Unmarshal(n.Threshold, &str); err != nil {
			var f float64
			if err2 := json.Unmarshal(n.Threshold, &f); err2 != nil {
				return 0, fmt.Errorf("split %d: categorical threshold %.30s", idx, n.Threshold)
			}
			str = strconv.FormatFloat(f, 'g', -1, 64)
		}
		for _, c := range strings.Split(str, "||") {
			v, err := strconv.Atoi(strings.TrimSpace(c))
			if err != nil || v < 0 {
				return 0, fmt.Errorf("split %d: category %q is not a non-negative integer", idx, c)
			}
			s.cats = append(s.cats, float64(v))
		}
	default:
		return 0, fmt.Errorf("split %d: decision_type %q unknown", idx, n.DecisionType)
	}
	l, err := t.walk(n.LeftChild, depth+1)
	if err != nil {
		return 0, err
	}
	r, err := t.walk(n.RightChild, depth+1)
	if err != nil {
		return 0, err
	}
	s.left, s.right = l, r
	t.splits[idx] = s
	return idx, nil
}
