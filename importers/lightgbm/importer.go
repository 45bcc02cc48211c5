package lightgbm

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/trees"
)

// MaxFileSize bounds the files Import reads (parsed in memory).
const MaxFileSize = 2 << 30

// New returns the LightGBM importer. It implements importers.Predictor.
func New() importers.Importer { return importer{} }

type importer struct{}

var _ importers.Predictor = importer{}

func optionSpecs() []importers.OptionSpec {
	return []importers.OptionSpec{
		{Name: "ml_opset", Doc: fmt.Sprintf("ai.onnx.ml opset, 3 to %d (default 5: TreeEnsemble; 3 and 4: TreeEnsembleRegressor, categorical sets as BRANCH_EQ chains)", trees.MaxMLOpset)},
		{Name: "opset", Doc: fmt.Sprintf("ai.onnx opset, %d to %d (default 21)", trees.MinAIOpset, trees.MaxAIOpset)},
		{Name: "raw_score", Doc: `"true": the raw margin alone as output "margin" (predict(raw_score=True)); default false`},
		{Name: "num_iteration", Doc: "use the first N iterations (default 0: all)"},
		{Name: "objective", Doc: `the objective of a file that names none (LightGBM 2.x JSON dumps): "binary", "multiclass num_class:5", ...; refused when it contradicts the file's`},
	}
}

// Describe names the format: "lightgbm", .txt, .model and .json files.
func (importer) Describe() importers.Description {
	return importers.Description{
		Name:       Name,
		Format:     Name,
		Summary:    "LightGBM model: text format (save_model) or JSON dump (dump_model)",
		Extensions: []string{".txt", ".model", ".json"},
		Magic:      []importers.Magic{{Bytes: []byte("tree\nversion=")}},
		Options:    optionSpecs(),
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

// ParseOptions reads "ml_opset", "opset", "raw_score" and
// "num_iteration"; an unknown key or a bad value is an
// *importers.OptionError.
func ParseOptions(m map[string]string) (Options, error) {
	var o Options
	opts := importers.Options(m)
	known := importers.Names(optionSpecs())
	for _, k := range opts.Keys() {
		v := opts[k]
		var err error
		switch k {
		case "ml_opset":
			if o.MLOpset, err = strconv.Atoi(v); err == nil && (o.MLOpset < 3 || o.MLOpset > trees.MaxMLOpset) {
				err = fmt.Errorf("ai.onnx.ml opset %d not supported: use 3 to %d (the model computes in double, which ml opsets 1 and 2 lack)", o.MLOpset, trees.MaxMLOpset)
			}
		case "opset":
			if o.AIOpset, err = strconv.Atoi(v); err == nil && (o.AIOpset < trees.MinAIOpset || o.AIOpset > trees.MaxAIOpset) {
				err = fmt.Errorf("ai.onnx opset %d not supported: use %d to %d", o.AIOpset, trees.MinAIOpset, trees.MaxAIOpset)
			}
		case "raw_score":
			o.RawScore, err = strconv.ParseBool(v)
		case "num_iteration":
			if o.NumIteration, err = strconv.Atoi(v); err == nil && o.NumIteration < 0 {
				err = fmt.Errorf("num_iteration %d is negative", o.NumIteration)
			}
		case "objective":
			o.Objective = v
			if _, _, _, _, err = objective(v, 1<<16); err == nil && strings.TrimSpace(v) == "" {
				err = fmt.Errorf("empty objective")
			}
		default:
			return o, &importers.OptionError{Importer: Name, Key: k, Value: v, Known: known}
		}
		if err != nil {
			return o, &importers.OptionError{Importer: Name, Key: k, Value: v, Known: known, Err: err}
		}
	}
	return o, nil
}

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
