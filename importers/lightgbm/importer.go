package lightgbm

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/trees"
	"github.com/onnxconv/onnxconv/options"
)

// MaxFileSize bounds the files Import reads (parsed in memory).
const MaxFileSize = 2 << 30

// New returns the LightGBM importer. It implements importers.Predictor.
func New() importers.Importer { return importer{} }

type importer struct{}

var _ importers.Predictor = importer{}

// optionSet is every option of the importer, with its parser.
func optionSet() importers.OptionSet[Options] {
	return importers.OptionSet[Options]{Name: Name, Options: []importers.Option[Options]{
		trees.MLOpsetOption(3, "3 and 4: TreeEnsembleRegressor, categorical sets as BRANCH_EQ chains; 1 and 2 lack the double the model computes in", func(o *Options) *int { return &o.MLOpset }),
		trees.AIOpsetOption(func(o *Options) *int { return &o.AIOpset }),
		trees.RawScoreOption(`true: the raw margin alone as output "margin" (predict(raw_score=True))`, func(o *Options) *bool { return &o.RawScore }),
		options.Int("num_iteration", "0", "use the first N iterations (0: all)", func(o *Options) *int { return &o.NumIteration }).AtLeast(0),
		options.String("objective", "", `the objective of a file that names none (LightGBM 2.x JSON dumps): "binary", "multiclass num_class:5", ...; refused when it contradicts the file's`,
			func(o *Options) *string { return &o.Objective }).Then(func(_ *Options, v string) error {
			if _, _, _, _, err := objective(v, 1<<16); err != nil {
				return err
			}
			if strings.TrimSpace(v) == "" {
				return fmt.Errorf("empty objective")
			}
			return nil
		}),
	}}
}

func (importer) Describe() importers.Description {
	return importers.Description{
		Name:       Name,
		Format:     Name,
		Summary:    "LightGBM model: text format (save_model) or JSON dump (dump_model)",
		Extensions: []string{".txt", ".model", ".json"},
		Magic:      []importers.Magic{{Bytes: []byte("tree\nversion=")}},
		Options:    optionSet().Specs(),
	}
}

// Detect is 1 for a text model header ("tree" then "version="), 0.9 for a
// JSON head with "name": "tree" and tree_info or max_feature_idx, 0.6 for
// a bare "Tree=" block with num_leaves, else 0.
func (importer) Detect(path string, head []byte) float32 {
	t := bytes.TrimLeft(head, " \t\r\n")
	switch {
	case bytes.HasPrefix(t, []byte("tree\nversion=")) || bytes.HasPrefix(t, []byte("tree\r\nversion=")):
		return 1
	case len(t) > 0 && t[0] == '{' && bytes.Contains(t, []byte(`"name": "tree"`)) &&
		(bytes.Contains(t, []byte(`"max_feature_idx"`)) || bytes.Contains(t, []byte(`"tree_info"`))):
		return 0.9
	case len(t) > 0 && t[0] == '{' && bytes.Contains(t, []byte(`"name":"tree"`)) && bytes.Contains(t, []byte(`"max_feature_idx"`)):
		return 0.9
	case bytes.HasPrefix(t, []byte("Tree=")) && bytes.Contains(t, []byte("\nnum_leaves=")):
		return 0.6
	}
	return 0
}

// ParseOptions reads "ml_opset", "opset", "raw_score", "num_iteration"
// and "objective"; an unknown key or a bad value is an
// *importers.OptionError.
func ParseOptions(m map[string]string) (Options, error) { return optionSet().Parse(m) }

// Import reads the model at path and converts it with Import.
func (importer) Import(ctx context.Context, path string, opts importers.Options) (*importers.Result, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	return importers.ImportBytes(ctx, path, MaxFileSize, Name, func(data []byte) (*canonical.Model, error) {
		return Import(data, o)
	})
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
		return nil, fmt.Errorf("lightgbm: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e, err := Ensemble(data, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return trees.NewSource(e, o.RawScore, "lightgbm trees")
}
