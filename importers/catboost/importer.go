package catboost

import (
	"bytes"
	"context"
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/trees"
)

// MaxFileSize bounds the files Import reads (parsed in memory).
const MaxFileSize = 2 << 30

// New returns the CatBoost importer. It implements importers.Predictor.
func New() importers.Importer { return importer{} }

type importer struct{}

var _ importers.Predictor = importer{}

// optionSet is every option of the importer, with its parser.
func optionSet() importers.OptionSet[Options] {
	return importers.OptionSet[Options]{Name: Name, Options: []importers.Option[Options]{
		trees.MLOpsetOption(3, "3 and 4: TreeEnsembleRegressor, whose output is float; 1 and 2 lack the double the model computes in", func(o *Options) *int { return &o.MLOpset }),
		trees.AIOpsetOption(func(o *Options) *int { return &o.AIOpset }),
		trees.RawScoreOption(`true: the raw formula value alone as output "margin" (prediction_type="RawFormulaVal")`, func(o *Options) *bool { return &o.RawScore }),
	}}
}

// Describe names the format: "catboost", .cbm and .json files.
func (importer) Describe() importers.Description {
	return importers.Description{
		Name:       Name,
		Format:     Name,
		Summary:    "CatBoost model: binary .cbm (save_model) or JSON export (save_model(format=\"json\"))",
		Extensions: []string{".cbm", ".json"},
		Magic:      []importers.Magic{{Bytes: cbmMagic}},
		Options:    optionSet().Specs(),
	}
}

// Detect is 1 for the CBM1 magic, 0.9 for a JSON head with CatBoost's
// "features_info" and "oblivious_trees", "model_info", "scale_and_bias"
// or "float_features", or one that starts with CatBoost's "ctr_data"
// (keys are sorted, so a model with CTRs starts with its tables), else 0.
func (importer) Detect(path string, head []byte) float32 {
	if bytes.HasPrefix(head, cbmMagic) {
		return 1
	}
	t := bytes.TrimLeft(head, " \t\r\n")
	if len(t) > 0 && t[0] == '{' && bytes.Contains(t, []byte(`"features_info"`)) &&
		(bytes.Contains(t, []byte(`"oblivious_trees"`)) || bytes.Contains(t, []byte(`"model_info"`)) ||
			bytes.Contains(t, []byte(`"scale_and_bias"`)) || bytes.Contains(t, []byte(`"float_features"`))) {
		return 0.9
	}
	if bytes.HasPrefix(t, []byte(`{`)) && bytes.HasPrefix(bytes.TrimLeft(t[1:], " \t\r\n"), []byte(`"ctr_data"`)) &&
		bytes.Contains(t, []byte(`combination_element`)) {
		return 0.9
	}
	return 0
}

// ParseOptions reads "ml_opset", "opset" and "raw_score"; an unknown key
// or a bad value is an *importers.OptionError.
func ParseOptions(m map[string]string) (Options, error) { return optionSet().Parse(m) }

// Import reads the model at path and converts it with Import.
func (importer) Import(ctx context.Context, path string, opts importers.Options) (*importers.Result, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	var warnings []string
	res, err := importers.ImportBytes(ctx, path, MaxFileSize, Name, func(data []byte) (*canonical.Model, error) {
		mp, w, err := Import(data, o)
		warnings = w
		return mp, err
	})
	if err != nil {
		return nil, err
	}
	res.Warnings = append(res.Warnings, warnings...)
	return res, nil
}

// Source reads the model at path (with Import's options) into the direct
// Go predictor over its trees.
func (importer) Source(ctx context.Context, path string, opts importers.Options) (importers.Source, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	data, err := importers.ReadFile(path, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("catboost: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return trees.NewSource(m.Ensemble, o.RawScore, "catboost trees")
}
