// Package xgboost imports XGBoost models (the JSON and UBJSON schema of
// xgboost >= 1.0: gbtree, dart and gblinear boosters) into ONNX.
//
// Tree models become one ai.onnx.ml TreeEnsemble node (ml opset 5) or
// TreeEnsembleRegressor (ml opsets 1-4), followed by the objective's
// transform; linear models become MatMul and Add. The graph input is
// "input", float [N, num_feature], NaN meaning missing. Outputs follow what
// xgboost returns: "predict" (Booster.predict), and for classifiers "label"
// and "probabilities" (XGBClassifier.predict and predict_proba), or
// "margin" alone (output_margin=True) when Options.Output is "margin".
//
// Categorical features are fed as their integer category codes (as
// pandas' cat.codes), NaN for missing; categorical splits become
// BRANCH_MEMBER nodes, so they need ml opset 5. Every tree is used (as
// Booster.predict without iteration_range) unless Options.Rounds names
// a range of boosting rounds; dart trees are scaled by weight_drop. The base score is folded into the leaves of each output's
// first tree, which keeps xgboost's float32 summation order.
//
// Not supported: vector-leaf trees (multi_strategy=multi_output_tree) and
// custom objectives. xgboost versions differ on where a categorical value
// outside the split's bit field (or negative) goes; here it is not a
// member, so it goes left.
//
// Import is a pure function of its input bytes.
package xgboost

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers/trees"
	"github.com/onnxconv/onnxconv/internal/recovered"
)

// Output values for Options.Output.
const (
	OutputPredict = "predict"
	OutputMargin  = "margin"
)

// Supported opset ranges.
const (
	MinAIOpset = 9
	MaxAIOpset = 26
	MaxMLOpset = 5
)

// Options controls the conversion. The zero value means ml opset 5,
// ai.onnx opset 21 and the "predict" outputs.
type Options struct {
	// MLOpset is the ai.onnx.ml opset: 5 (default) uses TreeEnsemble,
	// 1 to 4 use TreeEnsembleRegressor (ml opset 4 has no newer version
	// of it; categorical splits need 5).
	MLOpset int
	// AIOpset is the ai.onnx opset, MinAIOpset to MaxAIOpset (default 21).
	AIOpset int
	// Output is OutputPredict (default) or OutputMargin.
	Output string
	// Rounds keeps the trees of boosting rounds [Rounds[0], Rounds[1])
	// as Booster.predict(iteration_range=...) does; {0, 0} keeps all.
	Rounds [2]int
}

func (o Options) withDefaults() (Options, error) {
	if o.MLOpset == 0 {
		o.MLOpset = 5
	}
	if o.AIOpset == 0 {
		o.AIOpset = 21
	}
	if o.Output == "" {
		o.Output = OutputPredict
	}
	if o.MLOpset < 1 || o.MLOpset > MaxMLOpset {
		return o, fmt.Errorf("ai.onnx.ml opset %d not supported: use 1 to %d", o.MLOpset, MaxMLOpset)
	}
	if o.AIOpset < MinAIOpset || o.AIOpset > MaxAIOpset {
		return o, fmt.Errorf("ai.onnx opset %d not supported: use %d to %d", o.AIOpset, MinAIOpset, MaxAIOpset)
	}
	if o.Output != OutputPredict && o.Output != OutputMargin {
		return o, fmt.Errorf("output %q not supported: use %q or %q", o.Output, OutputPredict, OutputMargin)
	}
	return o, nil
}

// Import converts an XGBoost JSON or UBJSON model to ONNX.
func Import(data []byte, opts Options) (mp *canonical.Model, err error) {
	defer func() {
		if r := recover(); r != nil {
			mp, err = nil, &recovered.Error{Pkg: "xgboost", Doing: "while importing", Value: r}
		}
	}()
	o, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("xgboost: %w", err)
	}
	m, err := readModel(data)
	if err != nil {
		return nil, err
	}
	if err := m.keepRounds(o.Rounds); err != nil {
		return nil, fmt.Errorf("xgboost: %w", err)
	}
	mp, err = build(m, o)
	if err != nil {
		return nil, fmt.Errorf("xgboost: %w", err)
	}
	return mp, nil
}

// Ensemble decodes an XGBoost JSON or UBJSON model into the tree ensemble
// (or linear model) it computes over the boosting rounds [rounds[0],
// rounds[1]) ({0, 0}: all).
func Ensemble(data []byte, rounds [2]int) (e *trees.Ensemble, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, &recovered.Error{Pkg: "xgboost", Doing: "while reading", Value: r}
		}
	}()
	m, err := readModel(data)
	if err != nil {
		return nil, err
	}
	if err := m.keepRounds(rounds); err != nil {
		return nil, fmt.Errorf("xgboost: %w", err)
	}
	if e, err = m.ensemble(); err != nil {
		return nil, fmt.Errorf("xgboost: %w", err)
	}
	return e, nil
}

// readModel decodes a JSON, UBJSON or legacy binary model.
func readModel(data []byte) (*model, error) {
	if claimsLegacy(data) {
		m, err := parseLegacy(data)
		if err != nil {
			return nil, fmt.Errorf("xgboost: %w", err)
		}
		return m, nil
	}
	doc, format, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("xgboost: reading %s: %w", format, err)
	}
	m, err := decodeModel(&doc)
	if err != nil {
		return nil, fmt.Errorf("xgboost: %s model: %w", format, err)
	}
	return m, nil
}

// parse decodes JSON (first non-space byte '{' followed by a quote or
// space) or UBJSON (anything else that starts with '{' or '[').
func parse(data []byte) (value, string, error) {
	if isJSON(data) {
		v, err := parseJSON(data)
		return v, "JSON", err
	}
	if len(data) == 0 {
		return value{}, "input", fmt.Errorf("empty input")
	}
	v, err := parseUBJSON(data)
	return v, "UBJSON", err
}

func isJSON(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return false
	}
	if len(t) == 1 {
		return true
	}
	switch t[1] {
	case '"', ' ', '\t', '\r', '\n', '}', ']', '{', '[':
		return true
	}
	return false
}

// ubjPrefixes are the starts of xgboost UBJSON files: an object whose first
// key is "learner", its length written as int64 by xgboost ('L'), or as a
// smaller integer by other UBJSON writers.
func ubjPrefixes() [][]byte {
	return [][]byte{
		[]byte("{L\x00\x00\x00\x00\x00\x00\x00\x07learner"),
		[]byte("{i\x07learner"),
		[]byte("{U\x07learner"),
		[]byte("{I\x00\x07learner"),
		[]byte("{l\x00\x00\x00\x07learner"),
	}
}

// detect reports whether head (the first bytes of a file) looks like an
// XGBoost JSON or UBJSON model.
func detect(head []byte, path string) bool {
	for _, p := range ubjPrefixes() {
		if bytes.HasPrefix(head, p) {
			return true
		}
	}
	t := bytes.TrimLeft(head, " \t\r\n")
	if len(t) > 0 && t[0] == '{' && isJSON(t) && bytes.Contains(t, []byte(`"learner"`)) {
		return true
	}
	if isLegacy(head) {
		return true
	}
	// A UBJSON object whose first key is not learner (another writer's key
	// order): trust the .ubj extension when "learner" is in the head.
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".ubj" && len(t) > 1 && t[0] == '{' && bytes.Contains(head, []byte("learner"))
}
