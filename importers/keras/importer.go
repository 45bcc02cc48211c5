// Package keras imports Keras models (format "keras") into canonical ONNX
// models:
//
//   - Keras 3 .keras files: a zip holding config.json (the model config),
//     metadata.json and model.weights.h5 (weights by position:
//     layers/NAME/vars/0, 1, ...);
//   - Keras 2 full-model HDF5 files (.h5): a model_config attribute on the
//     root group and the weights in the model_weights group (by name, in the
//     order of each layer's weight_names attribute);
//   - Keras 2 architecture JSON (model.to_json()) with its weights .h5
//     (save_weights): the weights file is found beside the JSON
//     (NAME_weights.h5, NAME.h5, NAME.weights.h5) or named with the option
//     "weights".
//
// The files are read by formats/keras (shared with the TF.js runtime); the
// layers are mapped by importers/keraslayers, the one Keras-layer mapping
// (shared with TF.js layers models). A custom layer (QKeras, HGQ, any class
// keraslayers does not map) is a *keras.CustomLayerError of formats/keras
// naming every such class. Files are detected by content (zip entries, the
// HDF5 signature and a model_config attribute, a Keras config JSON), not by
// name. Nothing a file contains is
// executed (a Lambda layer's code is refused, not run). The reference
// runtime is TF.js ("tfjs"), which runs the same architecture and weights.
package keras

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"

	"github.com/onnxconv/onnxconv/canonical"
	kfile "github.com/onnxconv/onnxconv/formats/keras"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/custom"
	"github.com/onnxconv/onnxconv/importers/keraslayers"
	"github.com/onnxconv/onnxconv/options"
)

// Name is the importer and format name.
const Name = "keras"

// Runtime is the reference runtime that computes Keras models as their
// framework does: TF.js running the same architecture and weights.
const Runtime = "tfjs"

// Options of Import.
type Options struct {
	// Opset is the ai.onnx opset of the result (0: keraslayers' default).
	Opset int
	// Weights is the weights .h5 of an architecture JSON (relative to the
	// JSON's folder unless absolute); "" finds it beside the JSON.
	Weights string
	// Layout is the layout of the graph's image-like inputs and outputs
	// (keraslayers.Options.Layout): "" or "nhwc" keeps Keras's
	// channels-last, "nchw" makes them channels-first.
	Layout string
	// Custom is an ONNX file of functions defining the model's custom
	// layer classes ("" none; importers/custom).
	Custom string
}

// New returns the Keras importer.
func New() importers.Importer { return importer{} }

type importer struct{}

// optionSet is every option of the importer, with its parser.
func optionSet() importers.OptionSet[Options] {
	return importers.OptionSet[Options]{Name: Name, Options: []importers.Option[Options]{
		keraslayers.OpsetOption(func(o *Options) *int { return &o.Opset }),
		options.String("weights", "", "weights .h5 of a Keras 2 architecture JSON (default: NAME_weights.h5, NAME.h5 or NAME.weights.h5 beside it)",
			func(o *Options) *string { return &o.Weights }).Then(func(_ *Options, v string) error {
			if v == "" {
				return fmt.Errorf("give the path of the weights .h5")
			}
			return nil
		}),
		keraslayers.LayoutOption("layout of the graph's image inputs and outputs: nhwc (Keras's channels-last) or nchw "+
			"(channels-first NCW/NCHW/NCDHW for the image-like rank-3/4/5 ones; fewer Transposes; metadata onnxconv.channels_first names them)",
			func(o *Options) *string { return &o.Layout }),
		custom.Option(func(o *Options) *string { return &o.Custom }),
	}}
}

func (importer) Describe() importers.Description {
	return importers.Description{
		Name:        Name,
		Format:      Name,
		Summary:     "Keras 3 .keras zip, Keras 2 full-model .h5, or Keras 2 architecture JSON with its weights .h5",
		Extensions:  []string{".keras", ".h5", ".hdf5", ".json"},
		FolderFiles: []string{"config.json"}, // an unpacked .keras file
		Magic:       []importers.Magic{{Offset: 0, Bytes: []byte("\x89HDF\r\n\x1a\n")}},
		Options:     optionSet().Specs(),
		Runtime:     Runtime,
	}
}

// ParseOptions reads "opset", "weights", "layout" and "custom"; an unknown key or a
// bad value is an *importers.OptionError.
func ParseOptions(m map[string]string) (Options, error) { return optionSet().Parse(m) }

// Detect is formats/keras's Detect: 1 for a zip holding config.json and
// model.weights.h5, and for an HDF5 file with a model_config attribute;
// 0.5 for an HDF5 file of Keras weights alone (Import then says to give
// the architecture JSON); 0.8 for a JSON object that looks like a Keras
// model config; else 0.
func (importer) Detect(path string, head []byte) float32 { return kfile.Detect(path, head) }

// Import reads the file at path.
func (importer) Import(ctx context.Context, path string, opts importers.Options) (*importers.Result, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	mp, warns, err := ImportFile(ctx, path, o)
	if err != nil {
		return nil, err
	}
	return &importers.Result{Model: mp, Warnings: warns}, nil
}

// ImportFile converts the Keras file at path to a canonical ONNX model, with
// warnings for the user.
func ImportFile(ctx context.Context, path string, o Options) (*canonical.Model, []string, error) {
	var cs *custom.Set
	if o.Custom != "" {
		var err error
		if cs, err = custom.Load(o.Custom); err != nil {
			return nil, nil, err
		}
	}
	src, err := kfile.LoadCustom(ctx, path, o.Weights, func(class string) bool { return cs.Lookup(class) != nil })
	if err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	mp, err := convert(src, o.Opset, o.Layout, cs)
	if err != nil {
		return nil, nil, err
	}
	return mp, src.Warnings, nil
}

// convert builds the ONNX model of the Keras file m.
func convert(m *kfile.Model, opset int, layout string, cs *custom.Set) (*canonical.Model, error) {
	top := m.Config
	if m.KerasVersion != "" {
		if _, ok := top["keras_version"]; !ok {
			top = maps.Clone(top)
			top["keras_version"] = m.KerasVersion
		}
	}
	mp, err := keraslayers.ConvertConfig(top, m.Weights, keraslayers.Options{Opset: opset, File: m.Path, Keras3: m.Kind == kfile.KerasV3, Layout: layout, Custom: cs})
	if err != nil {
		return nil, err
	}
	doc := fmt.Sprintf("Keras model %s (%s", filepath.Base(m.Path), m.Kind)
	if m.KerasVersion != "" {
		doc += ", Keras " + m.KerasVersion
	}
	doc += ")"
	mp.DocString = doc
	return mp, nil
}
