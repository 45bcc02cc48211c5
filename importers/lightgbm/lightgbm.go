// Package lightgbm imports LightGBM models, the text format
// (Booster.save_model, model.txt, versions v2 to v4) and the JSON dump
// (Booster.dump_model), into ONNX through importers/trees.
//
// The graph input is "input", double [N, max_feature_idx+1], NaN meaning
// missing; categorical features are fed as their integer codes. The model
// computes in double precision as LightGBM does. Outputs follow
// Booster.predict: "predict" (the transformed score: probability for
// binary, [N, K] probabilities for multiclass, exp for poisson, gamma and
// tweedie), and for classifiers "label" and "probabilities"; with
// raw_score=true the raw margin alone ("margin", predict(raw_score=True)).
//
// Splits: numerical (x <= threshold) with missing_type None (NaN is 0),
// Zero (0 and NaN take the default side) and NaN (NaN takes the default
// side); categorical bitsets (listed categories go left, NaN and negative
// values right). average_output (random forest) divides each tree's leaves
// by the number of iterations. Linear_tree leaves are computed (importers/trees LinearLeaf). Not supported: reg_sqrt
// and cross_entropy_lambda. A categorical value with a fraction is not
// truncated (LightGBM truncates it): feed integer codes.
package lightgbm

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers/trees"
	"github.com/onnxconv/onnxconv/internal/recovered"
)

// Name is the importer and format name.
const Name = "lightgbm"

// Options controls the conversion; the zero value means ml opset 5,
// ai.onnx opset 21, every iteration, and the predictions as outputs.
type Options struct {
	MLOpset, AIOpset int
	// RawScore makes the raw margin the only output.
	RawScore bool
	// NumIteration uses the first NumIteration iterations (0: all).
	NumIteration int
	// Objective is the objective of a file that names none (a JSON dump
	// of LightGBM 2.x has no "objective"): "binary", "multiclass", ...
	Objective string
}

// isJSON reports whether data starts (after spaces) with '{'.
func isJSON(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// parse reads the text format or the JSON dump.
func parse(data []byte) (*model, string, error) {
	if isJSON(data) {
		m, err := parseJSON(data)
		return m, "JSON dump", err
	}
	m, err := parseText(data)
	return m, "text model", err
}

// Ensemble parses data (text or JSON) into the tree ensemble it computes.
func Ensemble(data []byte, o Options) (*trees.Ensemble, error) {
	e, _, err := ensemble(data, o)
	return e, err
}

func ensemble(data []byte, o Options) (e *trees.Ensemble, m *model, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, &recovered.Error{Pkg: "lightgbm", Doing: "while reading", Value: r}
		}
	}()
	if o.NumIteration < 0 {
		return nil, nil, fmt.Errorf("lightgbm: num_iteration %d is negative", o.NumIteration)
	}
	m, format, err := parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("lightgbm: reading the %s: %w", format, err)
	}
	e, err = m.ensemble(o.NumIteration, strings.TrimSpace(o.Objective))
	if err != nil {
		return nil, nil, fmt.Errorf("lightgbm: %s: %w", format, err)
	}
	return e, m, nil
}

// Import converts a LightGBM text model or JSON dump to ONNX.
func Import(data []byte, o Options) (*canonical.Model, error) {
	e, m, err := ensemble(data, o)
	if err != nil {
		return nil, err
	}
	meta := [][2]string{
		{"lightgbm.objective", m.objective},
		{"lightgbm.num_class", strconv.Itoa(m.numClass)},
		{"lightgbm.num_trees", strconv.Itoa(len(e.Trees))},
	}
	if m.version != "" {
		meta = append(meta, [2]string{"lightgbm.version", m.version})
	}
	mp, err := trees.Build(e, trees.BuildOptions{
		MLOpset: o.MLOpset, AIOpset: o.AIOpset, Raw: o.RawScore,
		GraphName: "lightgbm", Domain: "ai.onnxconv.lightgbm",
		Doc:      fmt.Sprintf("LightGBM model (objective %q, %d trees)", m.objective, len(e.Trees)),
		Metadata: meta,
	})
	if err != nil {
		return nil, fmt.Errorf("lightgbm: %w", err)
	}
	return mp, nil
}
