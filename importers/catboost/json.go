package catboost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// The JSON export (save_model(format="json")).
type jsonModel struct {
	FeaturesInfo struct {
		FloatFeatures []struct {
			Borders           []float64 `json:"borders"`
			FeatureID         string    `json:"feature_id"`
			FeatureIndex      *int      `json:"feature_index"`
			FlatFeatureIndex  *int      `json:"flat_feature_index"`
			NanValueTreatment string    `json:"nan_value_treatment"`
		} `json:"float_features"`
		CategoricalFeatures []struct {
			FeatureID        string `json:"feature_id"`
			FeatureIndex     *int   `json:"feature_index"`
			FlatFeatureIndex *int   `json:"flat_feature_index"`
		} `json:"categorical_features"`
		TextFeatures      []jsonNamedFeature `json:"text_features"`
		EmbeddingFeatures []jsonNamedFeature `json:"embedding_features"`
		Ctrs              []jsonCtr          `json:"ctrs"`
	} `json:"features_info"`
	ModelInfo struct {
		Params struct {
			LossFunction struct {
				Type string `json:"type"`
			} `json:"loss_function"`
		} `json:"params"`
		ClassParams *classParams `json:"class_params"`
	} `json:"model_info"`
	ObliviousTrees []struct {
		LeafValues []float64   `json:"leaf_values"`
		Splits     []jsonSplit `json:"splits"`
	} `json:"oblivious_trees"`
	Trees        []*jsonNode       `json:"trees"`
	ScaleAndBias []json.RawMessage `json:"scale_and_bias"`
	CtrData      map[string]struct {
		CounterDenominator int32             `json:"counter_denominator"`
		HashMap            []json.RawMessage `json:"hash_map"`
		HashStride         int               `json:"hash_stride"`
	} `json:"ctr_data"`
}

type jsonCtr struct {
	Borders  []float64 `json:"borders"`
	CtrType  string    `json:"ctr_type"`
	Elements []struct {
		CatFeatureIndex    *int     `json:"cat_feature_index"`
		FloatFeatureIndex  *int     `json:"float_feature_index"`
		Border             *float64 `json:"border"`
		Value              *int64   `json:"value"`
		CombinationElement string   `json:"combination_element"`
	} `json:"elements"`
	Identifier       string  `json:"identifier"`
	PriorDenomerator float64 `json:"prior_denomerator"`
	PriorNumerator   float64 `json:"prior_numerator"`
	Scale            float64 `json:"scale"`
	Shift            float64 `json:"shift"`
	TargetBorderIdx  int     `json:"target_border_idx"`
}

type jsonNamedFeature struct {
	FeatureID        string `json:"feature_id"`
	FeatureIndex     int    `json:"feature_index"`
	FlatFeatureIndex int    `json:"flat_feature_index"`
}

type jsonSplit struct {
	SplitType         string   `json:"split_type"`
	SplitIndex        *int     `json:"split_index"`
	Border            *float64 `json:"border"`
	FloatFeatureIndex *int     `json:"float_feature_index"`
	CatFeatureIndex   *int     `json:"cat_feature_index"`
	Value             *int64   `json:"value"`
}

type jsonNode struct {
	Split *jsonSplit      `json:"split"`
	Left  *jsonNode       `json:"left"`
	Right *jsonNode       `json:"right"`
	Value json.RawMessage `json:"value"`
}

// maxJSONDepth bounds the nesting of a non-symmetric tree.
const maxJSONDepth = 512

func isJSON(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

func parseJSON(data []byte) (*model, error) {
	var j jsonModel
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, err
	}
	m := &model{format: "JSON export", scale: 1, loss: j.ModelInfo.Params.LossFunction.Type, dim: 1}
	if j.ModelInfo.ClassParams != nil {
		m.classNames = j.ModelInfo.ClassParams.names()
	}
	fi := &j.FeaturesInfo
	for i, f := range fi.FloatFeatures {
		if f.FeatureIndex == nil || f.FlatFeatureIndex == nil {
			return nil, fmt.Errorf("float feature %d: no feature_index or flat_feature_index", i)
		}
		ff := floatFeature{index: *f.FeatureIndex, flat: *f.FlatFeatureIndex, id: f.FeatureID}
		switch f.NanValueTreatment {
		case "", "AsIs":
			ff.nan = nanAsIs
		case "AsFalse":
			ff.nan = nanAsFalse
		case "AsTrue":
			ff.nan = nanAsTrue
		default:
			return nil, fmt.Errorf("float feature %d: unknown nan_value_treatment %q", *f.FeatureIndex, f.NanValueTreatment)
		}
		for _, b := range f.Borders {
			ff.borders = append(ff.borders, float64(float32(b)))
		}
		m.floats = append(m.floats, ff)
	}
	for i, c := range fi.CategoricalFeatures {
		if c.FeatureIndex == nil || c.FlatFeatureIndex == nil {
			return nil, fmt.Errorf("categorical feature %d: no feature_index or flat_feature_index", i)
		}
		m.cats = append(m.cats, catFeature{index: *c.FeatureIndex, flat: *c.FlatFeatureIndex, id: c.FeatureID})
	}
	for _, t := range fi.TextFeatures {
		m.textNames = append(m.textNames, featureName("text", t.FeatureIndex, t.FlatFeatureIndex, t.FeatureID))
		m.otherFlat = append(m.otherFlat, t.FlatFeatureIndex)
	}
	for _, t := range fi.EmbeddingFeatures {
		m.textNames = append(m.textNames, featureName("embedding", t.FeatureIndex, t.FlatFeatureIndex, t.FeatureID))
		m.otherFlat = append(m.otherFlat, t.FlatFeatureIndex)
	}
	if err := m.jsonCtrs(&j); err != nil {
		return nil, err
	}
	// scale_and_bias: [scale, [bias...]].
	if len(j.ScaleAndBias) > 0 {
		if len(j.ScaleAndBias) != 2 {
			return nil, fmt.Errorf("scale_and_bias has %d elements; want [scale, [bias...]]", len(j.ScaleAndBias))
		}
		if err := json.Unmarshal(j.ScaleAndBias[0], &m.scale); err != nil {
			return nil, fmt.Errorf("scale_and_bias scale: %w", err)
		}
		if err := json.Unmarshal(j.ScaleAndBias[1], &m.bias); err != nil {
			var b float64
			if err2 := json.Unmarshal(j.ScaleAndBias[1], &b); err2 != nil {
				return nil, fmt.Errorf("scale_and_bias bias: %w", err)
			}
			m.bias = []float64{b}
		}
	}
	if len(j.ObliviousTrees) > 0 && len(j.Trees) > 0 {
		return nil, fmt.Errorf("the model has both oblivious_trees and trees")
	}
	for ti, ot := range j.ObliviousTrees {
		t := tree{leaves: ot.LeafValues, splits: []split{}}
		m.leafCount += len(ot.LeafValues)
		if len(ot.Splits) > maxDepth {
			return nil, fmt.Errorf("tree %d: depth %d; at most %d", ti, len(ot.Splits), maxDepth)
		}
		for _, js := range ot.Splits {
			s, err := m.jsonSplit(js)
			if err != nil {
				return nil, fmt.Errorf("tree %d: %w", ti, err)
			}
			t.splits = append(t.splits, s)
		}
		m.trees = append(m.trees, t)
	}
	for ti, jt := range j.Trees {
		var t tree
		if jt == nil {
			return nil, fmt.Errorf("tree %d is null", ti)
		}
		if _, err := m.jsonNode(&t, jt, 0); err != nil {
			return nil, fmt.Errorf("tree %d: %w", ti, err)
		}
		m.trees = append(m.trees, t)
	}
	// The dimension: the bias's length, else the first tree's leaves.
	switch {
	case len(m.bias) > 1:
		m.dim = len(m.bias)
	case len(m.trees) > 0 && m.trees[0].nodes == nil:
		m.dim = max(1, len(m.trees[0].leaves)>>len(m.trees[0].splits))
	case len(m.trees) > 0:
		for _, n := range m.trees[0].nodes {
			if n.leaf {
				m.dim = max(1, len(n.values))
				break
			}
		}
	}
	if len(m.bias) == 1 && m.dim > 1 {
		b := m.bias[0]
		m.bias = make([]float64, m.dim)
		for i := range m.bias {
			m.bias[i] = b
		}
	}
	return m, nil
}

func (m *model) jsonSplit(js jsonSplit) (split, error) {
	switch js.SplitType {
	case "FloatFeature":
		if js.Border == nil || js.FloatFeatureIndex == nil {
			return split{}, fmt.Errorf("a FloatFeature split without border or float_feature_index")
		}
		return split{kind: splitFloat, feature: *js.FloatFeatureIndex, border: float64(float32(*js.Border))}, nil
	case "OneHotFeature":
		if js.Value == nil || js.CatFeatureIndex == nil {
			return split{}, fmt.Errorf("a OneHotFeature split without value or cat_feature_index")
		}
		if *js.Value < -1<<31 || *js.Value >= 1<<32 {
			return split{}, fmt.Errorf("one-hot value %d is not a 32-bit hash", *js.Value)
		}
		return split{kind: splitOneHot, feature: *js.CatFeatureIndex, value: int32(*js.Value)}, nil
	case "OnlineCtr":
		return m.jsonCtrSplit(js)
	case "EstimatedFeature", "TextFeature", "EmbeddingFeature":
		return split{}, unsupported("a split uses a feature computed from text or embedding features (%s), which onnxconv does not compute", joinNames(m.textNames))
	}
	return split{}, unsupported("unknown split type %q", js.SplitType)
}

// jsonNode appends jn (and its subtree) to t.nodes and returns its index.
func (m *model) jsonNode(t *tree, jn *jsonNode, depth int) (int, error) {
	if depth > maxJSONDepth {
		return 0, fmt.Errorf("nested deeper than %d", maxJSONDepth)
	}
	at := len(t.nodes)
	t.nodes = append(t.nodes, node{})
	if jn.Split == nil {
		if len(jn.Value) == 0 {
			return 0, fmt.Errorf("a node with neither split nor value")
		}
		var vals []float64
		if err := json.Unmarshal(jn.Value, &vals); err != nil {
			var v float64
			if err2 := json.Unmarshal(jn.Value, &v); err2 != nil {
				return 0, fmt.Errorf("leaf value: %w", err)
			}
			vals = []float64{v}
		}
		t.nodes[at] = node{leaf: true, values: vals}
		m.leafCount += len(vals)
		return at, nil
	}
	if jn.Left == nil || jn.Right == nil {
		return 0, fmt.Errorf("a split node without left or right")
	}
	s, err := m.jsonSplit(*jn.Split)
	if err != nil {
		return 0, err
	}
	l, err := m.jsonNode(t, jn.Left, depth+1)
	if err != nil {
		return 0, err
	}
	r, err := m.jsonNode(t, jn.Right, depth+1)
	if err != nil {
		return 0, err
	}
	t.nodes[at] = node{split: s, left: l, right: r}
	return at, nil
}

var ctrTypeByName = map[string]int{"Borders": ctrBorders, "Buckets": ctrBuckets, "BinarizedTargetMeanValue": ctrBinarizedTargetMeanValue,
	"FloatTargetMeanValue": ctrFloatTargetMeanValue, "Counter": ctrCounter, "FeatureFreq": ctrFeatureFreq}

// jsonCtrs reads features_info.ctrs and their ctr_data tables (keyed by
// the CTR's identifier; hash_map is hash, then hash_stride-1 values, per
// bucket).
func (m *model) jsonCtrs(j *jsonModel) error {
	byID := map[string]*ctrTable{}
	for ci, c := range j.FeaturesInfo.Ctrs {
		typ, ok := ctrTypeByName[c.CtrType]
		if !ok {
			return unsupported("CTR %d: CTR type %q is not supported", ci, c.CtrType)
		}
		cf := ctrFeature{base: ctrProj{typ: typ}, targetBorderIdx: c.TargetBorderIdx,
			priorNum: float32(c.PriorNumerator), priorDenom: float32(c.PriorDenomerator), shift: float32(c.Shift), scale: float32(c.Scale)}
		for _, e := range c.Elements {
			switch {
			case e.CombinationElement == "cat_feature_value" && e.CatFeatureIndex != nil:
				cf.base.cats = append(cf.base.cats, *e.CatFeatureIndex)
			case e.CombinationElement == "float_feature" && e.FloatFeatureIndex != nil && e.Border != nil:
				cf.base.floats = append(cf.base.floats, floatProjSplit{index: *e.FloatFeatureIndex, border: float64(float32(*e.Border))})
			case e.CombinationElement == "cat_feature_exact_value" && e.CatFeatureIndex != nil && e.Value != nil:
				cf.base.oneHots = append(cf.base.oneHots, oneHotProjSplit{index: *e.CatFeatureIndex, value: int32(*e.Value)})
			default:
				return unsupported("CTR %d: combination element %q is not supported", ci, e.CombinationElement)
			}
		}
		for _, b := range c.Borders {
			cf.borders = append(cf.borders, float64(float32(b)))
		}
		m.ctrs = append(m.ctrs, cf)
		if _, done := byID[c.Identifier]; done {
			m.ctrTables[cf.base.key()] = byID[c.Identifier]
			continue
		}
		d, ok := j.CtrData[c.Identifier]
		if !ok {
			return fmt.Errorf("CTR %d (%s): no ctr_data table %q", ci, m.ctrName(&cf), c.Identifier)
		}
		if d.HashStride < 2 || len(d.HashMap)%d.HashStride != 0 {
			return fmt.Errorf("CTR %d: hash_map of %d values with hash_stride %d", ci, len(d.HashMap), d.HashStride)
		}
		t := &ctrTable{denominator: d.CounterDenominator, targetClasses: d.HashStride - 1}
		seen := map[uint64]bool{}
		for p := 0; p < len(d.HashMap); p += d.HashStride {
			var hs string
			if err := json.Unmarshal(d.HashMap[p], &hs); err != nil {
				return fmt.Errorf("CTR %d: hash_map hash %.30s: %w", ci, d.HashMap[p], err)
			}
			h, err := strconv.ParseUint(hs, 10, 64)
			if err != nil {
				return fmt.Errorf("CTR %d: hash_map hash %q: %w", ci, hs, err)
			}
			if h == emptyHash || seen[h] {
				continue // an empty slot, printed with another slot's values
			}
			seen[h] = true
			vals := d.HashMap[p+1 : p+d.HashStride]
			b := len(t.hashes)
			t.hashes, t.index = append(t.hashes, h), append(t.index, b)
			switch typ {
			case ctrBinarizedTargetMeanValue, ctrFloatTargetMeanValue:
				var sum float32
				var cnt int32
				if len(vals) != 2 || json.Unmarshal(vals[0], &sum) != nil || json.Unmarshal(vals[1], &cnt) != nil {
					return fmt.Errorf("CTR %d: hash_map entry %d: want sum and count", ci, b)
				}
				t.sums, t.counts = append(t.sums, sum), append(t.counts, cnt)
			default:
				for _, v := range vals {
					var n int32
					if err := json.Unmarshal(v, &n); err != nil {
						return fmt.Errorf("CTR %d: hash_map entry %d: %w", ci, b, err)
					}
					t.ints = append(t.ints, n)
				}
			}
		}
		if typ == ctrCounter || typ == ctrFeatureFreq {
			t.targetClasses = 0
		}
		if m.ctrTables == nil {
			m.ctrTables = map[string]*ctrTable{}
		}
		m.ctrTables[cf.base.key()] = t
		byID[c.Identifier] = t
	}
	return nil
}

// jsonCtrSplit finds the CTR border an OnlineCtr split's split_index
// names: the binary features are every float border, then every CTR
// border in features_info.ctrs order.
func (m *model) jsonCtrSplit(js jsonSplit) (split, error) {
	if js.SplitIndex == nil || js.Border == nil {
		return split{}, fmt.Errorf("an OnlineCtr split without split_index or border")
	}
	k := *js.SplitIndex
	for _, f := range m.floats {
		k -= len(f.borders)
	}
	for ci, c := range m.ctrs {
		if k >= 0 && k < len(c.borders) {
			b := float64(float32(*js.Border))
			if c.borders[k] != b {
				return split{}, unsupported("OnlineCtr split %d: border %v, but binary feature %d is CTR %d's border %v (one-hot features before the CTRs?)", *js.SplitIndex, b, *js.SplitIndex, ci, c.borders[k])
			}
			return split{kind: splitCtr, feature: ci, border: b}, nil
		}
		k -= len(c.borders)
	}
	return split{}, fmt.Errorf("OnlineCtr split_index %d out of range", *js.SplitIndex)
}
