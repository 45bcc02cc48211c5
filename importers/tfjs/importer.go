// Package tfjs imports TensorFlow.js models (format "tfjs"): a model.json
// with its weight files beside it, as tf.io and tensorflowjs_converter
// write them.
//
//   - layers models ("format": "layers-model": a Keras topology) go
//     through importers/keraslayers, the one Keras-layer mapping;
//   - graph models ("format": "graph-model": a GraphDef in JSON) go
//     through importers/tfops, the one TF-op mapping.
//
// Weights are float32, int32, bool, float16 and quantized uint8/uint16
// (scale and min), dequantized as TF.js does when it loads them. The file
// is detected by its content (a JSON object with modelTopology or
// weightsManifest), not by its name. Its reference runtime is TF.js itself
// ("tfjs", runtimes/tfjs). Nothing the file holds is executed; weight
// paths must stay inside the model's folder.
package tfjs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/custom"
	"github.com/onnxconv/onnxconv/importers/keraslayers"
	"github.com/onnxconv/onnxconv/importers/tfops"
)

// Name is the importer and format name, and the name of its reference
// runtime.
const Name = "tfjs"

// Options of Import.
type Options struct {
	// Opset is the ai.onnx opset of the result (0: 17).
	Opset int
	// Layout is the layout of the graph's image-like inputs and outputs:
	// "" or "nhwc" keeps TF's channels-last; "nchw" makes them
	// channels-first (those keraslayers.Options.Layout picks for a layers
	// model, every one of rank 4 for a graph model) and names them in the
	// metadata_props keraslayers.MetaChannelsFirst.
	Layout string
	// Inputs and Outputs, when set, replace a graph model's signature:
	// the graph is cut at the named tensors (tfops.ParseTensors).
	Inputs, Outputs []tfops.IO
	// Warn, when set, receives the conversion's warnings.
	Warn func(string)
	// Custom is an ONNX file of functions defining custom layer classes
	// of a layers model or TF ops of a graph model ("" none;
	// importers/custom).
	Custom string
}

// New returns the TF.js importer.
func New() importers.Importer { return importer{} }

type importer struct{}

// optionSet is every option of the importer, with its parser.
func optionSet() importers.OptionSet[Options] {
	return importers.OptionSet[Options]{Name: Name, Options: []importers.Option[Options]{
		keraslayers.OpsetOption(func(o *Options) *int { return &o.Opset }),
		tfops.TensorsOption("inputs", "graph inputs of a graph model, TF tensor names NAME:0,… replacing the signature's (the graph is cut there, as tf2onnx --inputs)",
			func(o *Options) *[]tfops.IO { return &o.Inputs }),
		tfops.TensorsOption("outputs", "graph outputs of a graph model, TF tensor names NAME:0,… replacing the signature's (as tf2onnx --outputs)",
			func(o *Options) *[]tfops.IO { return &o.Outputs }),
		keraslayers.LayoutOption("layout of the graph's image inputs and outputs: nhwc (TF's channels-last, as the model.json has them) or nchw "+
			"(channels-first NCW/NCHW/NCDHW for the image-like rank-3/4/5 ones of a layers model, NCHW for rank 4 of a graph model; fewer Transposes; "+
			"metadata onnxconv.channels_first names them)", func(o *Options) *string { return &o.Layout }),
		custom.Option(func(o *Options) *string { return &o.Custom }),
	}}
}

func (importer) Describe() importers.Description {
	return importers.Description{
		Name:        Name,
		Format:      Name,
		Summary:     "TensorFlow.js model.json (layers or graph model) with its weight files",
		Extensions:  []string{".json"},
		FolderFiles: []string{"model.json"},
		Options:     optionSet().Specs(),
		Runtime:     Name,
	}
}

// Detect is 1 for a JSON object whose head names a TF.js format
// ("layers-model", "graph-model") beside modelTopology or
// weightsManifest, 0.9 for one with modelTopology or weightsManifest
// keys alone, else 0.
func (importer) Detect(path string, head []byte) float32 {
	return detect(head)
}

func detect(head []byte) float32 {
	t := bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf")
	if len(t) == 0 || t[0] != '{' {
		return 0
	}
	keys := bytes.Contains(t, []byte(`"modelTopology"`)) || bytes.Contains(t, []byte(`"weightsManifest"`))
	if !keys {
		return 0
	}
	if bytes.Contains(t, []byte(`"layers-model"`)) || bytes.Contains(t, []byte(`"graph-model"`)) {
		return 1
	}
	return 0.9
}

// ParseOptions reads "opset", "inputs", "outputs", "layout" and "custom"; an unknown
// key or a bad value is an *importers.OptionError.
func ParseOptions(m map[string]string) (Options, error) { return optionSet().Parse(m) }

func (importer) Import(ctx context.Context, path string, opts importers.Options) (*importers.Result, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	var warnings []string
	o.Warn = func(w string) { warnings = append(warnings, w) }
	mp, err := ImportFile(ctx, path, o)
	if err != nil {
		return nil, err
	}
	return &importers.Result{Model: mp, Warnings: warnings}, nil
}

// Kind tells a layers model from a graph model.
type Kind string

// The kinds of TF.js models.
const (
	Layers Kind = "layers-model"
	Graph  Kind = "graph-model"
)

// ImportFile converts the model.json at path (weights read from beside
// it) to an ONNX ModelProto.
func ImportFile(ctx context.Context, path string, o Options) (*canonical.Model, error) {
	data, err := importers.ReadFile(path, MaxModelJSON)
	if err != nil {
		return nil, fmt.Errorf("tfjs import: %w", err)
	}
	m, err := parseModel(path, data)
	if err != nil {
		return nil, err
	}
	kind, err := kindOf(path, m)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	weights, err := loadWeights(path, m)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var cs *custom.Set
	if o.Custom != "" {
		if cs, err = custom.Load(o.Custom); err != nil {
			return nil, err
		}
	}
	base := filepath.Base(path)
	switch kind {
	case Layers:
		var top map[string]any
		if err := json.Unmarshal(m.ModelTopology, &top); err != nil {
			return nil, &FormatError{Path: path, Detail: "modelTopology is not a Keras model config: " + err.Error()}
		}
		mp, err := keraslayers.ConvertConfig(top, keraslayers.WeightMap(weights), keraslayers.Options{Opset: o.Opset, File: path, Layout: o.Layout, Custom: cs})
		if err != nil {
			return nil, err
		}
		mp.DocString = "TF.js layers model " + base
		return mp, nil
	default:
		g, err := graphModel(path, m, weights, o.Opset)
		if err != nil {
			return nil, err
		}
		g.Name = base
		if o.Inputs != nil {
			g.Inputs = o.Inputs
		}
		if o.Outputs != nil {
			g.Outputs = o.Outputs
		}
		mp, err := tfops.Convert(g, tfops.Options{Opset: o.Opset, File: path, Layout: o.Layout, Format: "tfjs", Warn: o.Warn, Custom: cs})
		if err != nil {
			return nil, err
		}
		mp.DocString = "TF.js graph model " + base
		if o.Layout == keraslayers.LayoutNCHW {
			markChannelsFirst(mp)
		}
		return mp, nil
	}
}

// markChannelsFirst records on a graph model converted with layout nchw
// which of its inputs and outputs are channels-first (those of rank 4), in
// the metadata keys keraslayers uses for layers models.
func markChannelsFirst(m *canonical.Model) {
	var names []string
	for _, vs := range [][]*canonical.Value{m.Graph.Inputs, m.Graph.Outputs} {
		for _, v := range vs {
			if _, dims, hasShape, ok := canonical.TensorTypeOf(v.Type); ok && hasShape && len(dims) == 4 {
				names = append(names, v.Name)
			}
		}
	}
	m.MetadataProps = append(m.MetadataProps,
		canonical.StringPair{Key: keraslayers.MetaLayout, Value: keraslayers.LayoutNCHW},
		canonical.StringPair{Key: keraslayers.MetaChannelsFirst, Value: strings.Join(names, ",")})
}

// KindOf reads whether the model.json at path is a layers or a graph model.
func KindOf(path string) (Kind, error) {
	data, err := importers.ReadFile(path, MaxModelJSON)
	if err != nil {
		return "", err
	}
	m, err := parseModel(path, data)
	if err != nil {
		return "", err
	}
	return kindOf(path, m)
}

func kindOf(path string, m *modelJSON) (Kind, error) {
	switch m.Format {
	case string(Layers):
		return Layers, nil
	case string(Graph):
		return Graph, nil
	case "":
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(m.ModelTopology, &probe); err != nil {
			return "", &FormatError{Path: path, Detail: "modelTopology is not an object"}
		}
		if _, ok := probe["node"]; ok {
			return Graph, nil
		}
		return Layers, nil
	}
	return "", &FormatError{Path: path, Detail: fmt.Sprintf("format %q is neither layers-model nor graph-model", m.Format)}
}
