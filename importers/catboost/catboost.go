// Package catboost imports CatBoost models, the binary format (.cbm,
// save_model's default: "CBM1" then a flatbuffers TModelCore) and the JSON
// export (save_model(format="json")), into ONNX through importers/trees.
//
// The graph input is "input", double [N, F] in CatBoost's flat feature
// order (float and categorical features by their column index); NaN means
// missing. A categorical feature is given as its CatBoost hash
// (CatFeatureHash of the category string, an int32 as a number). Features
// are compared as float32, as CatBoost does. Outputs follow CatBoost's
// predict: "predict" (the probability for Logloss and CrossEntropy,
// [N, K] probabilities for MultiClass, exp for Poisson and Tweedie, the
// raw formula value otherwise) and for classifiers "label" (the class
// index; the class names are in the metadata) and "probabilities"; with
// raw_score=true the raw formula value alone ("margin",
// prediction_type="RawFormulaVal").
//
// Supported: oblivious (symmetric) trees and non-symmetric trees
// (Depthwise, Lossguide), float features with their borders and NaN
// treatment, one-hot categorical features, multi-dimensional approxes,
// scale and bias, CTR features (target statistics of categorical features
// and their combinations: Borders, Buckets, BinarizedTargetMeanValue,
// FloatTargetMeanValue, Counter, FeatureFreq) from the tables the .cbm
// carries after its core (or the JSON export's ctr_data), computed as a
// trees.Lookup: CatBoost's projection hash, a LabelEncoder from hash to
// the CTR value (float32, as CatBoost computes it), appended to the input
// of the tree op. Refused with an *importers.UnsupportedOpsError naming the feature:
// features computed from text or embedding features.
package catboost

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers/trees"
	"github.com/onnxconv/onnxconv/internal/recovered"
)

// Name is the importer and format name.
const Name = "catboost"

// Options controls the conversion; the zero value means ml opset 5,
// ai.onnx opset 21 and the predictions as outputs.
type Options struct {
	MLOpset, AIOpset int
	// RawScore makes the raw formula value the only output ("margin").
	RawScore bool
}

// Model is what Parse reads: the ensemble and what describes it.
type Model struct {
	Ensemble *trees.Ensemble
	// Format is "binary model (.cbm)" or "JSON export".
	Format string
	// Loss is CatBoost's loss function ("" when the file records none).
	Loss string
	// ClassNames are the classifier's class names, in label order.
	ClassNames []string
	// Warnings are things the user should know (an unknown loss).
	Warnings []string
}

// Parse reads a .cbm file or a JSON export into the tree ensemble it
// computes. Models with CTR, text or embedding features are an
// *importers.UnsupportedOpsError.
func Parse(data []byte) (res *Model, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, &recovered.Error{Pkg: "catboost", Doing: "while reading", Value: r}
		}
	}()
	var m *model
	format := "binary model (.cbm)"
	if isJSON(data) {
		format = "JSON export"
		m, err = parseJSON(data)
	} else {
		m, err = parseCBM(data)
	}
	if err != nil {
		return nil, fmt.Errorf("catboost: reading the %s: %w", format, err)
	}
	e, warn, err := m.ensemble()
	if err != nil {
		return nil, fmt.Errorf("catboost: %s: %w", format, err)
	}
	res = &Model{Ensemble: e, Format: format, Loss: m.loss, ClassNames: m.classNames}
	if warn != "" {
		res.Warnings = append(res.Warnings, warn)
	}
	res.Warnings = append(res.Warnings, m.notes...)
	if len(m.textNames) > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("catboost: the model declares %s but does not use them; their input columns are ignored", joinNames(m.textNames)))
	}
	return res, nil
}

// Import converts a CatBoost model (.cbm or JSON export) to ONNX.
func Import(data []byte, o Options) (*canonical.Model, []string, error) {
	m, err := Parse(data)
	if err != nil {
		return nil, nil, err
	}
	e := m.Ensemble
	meta := [][2]string{
		{"catboost.loss_function", m.Loss},
		{"catboost.format", m.Format},
		{"catboost.num_trees", strconv.Itoa(len(e.Trees) / e.NumTargets)},
		{"catboost.categorical_input", "CatFeatureHash of the category string (CatBoost's CalcCatFeatureHash), as a number"},
	}
	if len(m.ClassNames) > 0 {
		meta = append(meta, [2]string{"catboost.class_names", strings.Join(m.ClassNames, ",")})
	}
	mp, err := trees.Build(e, trees.BuildOptions{
		MLOpset: o.MLOpset, AIOpset: o.AIOpset, Raw: o.RawScore,
		GraphName: "catboost", Domain: "ai.onnxconv.catboost",
		Doc:      fmt.Sprintf("CatBoost model (%s, loss %q, %d trees)", m.Format, m.Loss, len(e.Trees)/e.NumTargets),
		Metadata: meta,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("catboost: %w", err)
	}
	return mp, m.Warnings, nil
}
