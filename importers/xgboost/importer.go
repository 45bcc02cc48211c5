package xgboost

import (
	"context"
	"fmt"
	"strconv"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/trees"
	"github.com/onnxconv/onnxconv/options"
)

// Name is the importer and format name.
const Name = "xgboost"

// MaxFileSize bounds the files Import reads (the JSON or UBJSON text is
// parsed in memory).
const MaxFileSize = 4 << 30

// confDetect is Detect's confidence for a file it recognises: an xgboost
// UBJSON prefix, or a JSON object with a "learner" key in its head.
const confDetect = 1

// New returns the XGBoost importer.
func New() importers.Importer { return importer{} }

type importer struct{}

// optionSet is every option of the importer, with its parser.
func optionSet() importers.OptionSet[Options] {
	return importers.OptionSet[Options]{Name: Name, Options: []importers.Option[Options]{
		trees.MLOpsetOption(1, "1 to 4: TreeEnsembleRegressor, no categorical splits", func(o *Options) *int { return &o.MLOpset }),
		trees.AIOpsetOption(func(o *Options) *int { return &o.AIOpset }),
		options.Enum("output", OutputPredict, `predict: predict, and label and probabilities for classifiers; margin: the raw margin alone`,
			[]string{OutputPredict, OutputMargin}, func(o *Options) *string { return &o.Output }),
		{Spec: importers.OptionSpec{Name: "raw_score", Kind: importers.KindBool, Default: "false", Doc: "true: the raw margin alone (the same as output=margin)"},
			Set: func(o *Options, v string) error {
				raw, err := strconv.ParseBool(v)
				if err != nil {
					return err
				}
				if raw && o.Output == OutputPredict {
					return fmt.Errorf("raw_score=true contradicts output=predict")
				}
				if raw {
					o.Output = OutputMargin
				}
				return nil
			}},
		{Spec: importers.OptionSpec{Name: "iteration_range", Kind: importers.KindString, Default: "",
			Doc: "BEGIN:END: only the trees of boosting rounds BEGIN to END-1, as Booster.predict(iteration_range=(BEGIN, END)); ntree_limit=N of xgboost < 1.4 is 0:N"},
			Set: func(o *Options, v string) error {
				r, err := parseRounds(v)
				o.Rounds = r
				return err
			}},
	}}
}

func (importer) Describe() importers.Description {
	magic := []importers.Magic{{Bytes: []byte(`{"learner"`)}}
	for _, p := range ubjPrefixes() {
		magic = append(magic, importers.Magic{Bytes: p})
	}
	magic = append(magic, legacyMagic()...)
	return importers.Description{
		Name:       Name,
		Format:     Name,
		Summary:    "XGBoost model, JSON or UBJSON (xgboost >= 1.0) or the legacy binary format (xgboost 0.x, save_raw(\"deprecated\")): gbtree, dart, gblinear",
		Extensions: []string{".json", ".ubj"},
		Magic:      magic,
		Options:    optionSet().Specs(),
	}
}

// Detect is 1 for a head that starts like an xgboost UBJSON model or is a
// JSON object with a "learner" key, else 0.
func (importer) Detect(path string, head []byte) float32 {
	if detect(head, path) {
		return confDetect
	}
	if looksOldBinary(head) {
		return 0.5 // Import says how to convert it (OldBinaryError)
	}
	return 0
}

// Import reads the model at path (at most MaxFileSize bytes) and converts
// it with Import. Options are those of ParseOptions.
func (importer) Import(ctx context.Context, path string, opts importers.Options) (*importers.Result, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	return importers.ImportBytes(ctx, path, MaxFileSize, Name, func(data []byte) (*canonical.Model, error) {
		mp, err := Import(data, o)
		return mp, oldBinaryFallback(data, err)
	})
}

// Source reads the model at path (with Import's options) into the direct
// Go predictor over its trees (or linear model), computing in float32 as
// xgboost does.
func (importer) Source(ctx context.Context, path string, opts importers.Options) (importers.Source, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	data, err := importers.ReadFile(path, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("xgboost: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e, err := Ensemble(data, o.Rounds)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return trees.NewSource(e, o.Output == OutputMargin, "xgboost "+e.Format)
}

var _ importers.Predictor = importer{}

// ParseOptions reads Options from string options: "ml_opset" (1 to
// MaxMLOpset), "opset" (MinAIOpset to MaxAIOpset) and "output" ("predict"
// or "margin"). An unknown key or a bad value is an
// *importers.OptionError.
func ParseOptions(m map[string]string) (Options, error) { return optionSet().Parse(m) }
