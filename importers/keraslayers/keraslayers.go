// Package keraslayers is the one Keras-layer → ONNX mapping, shared by
// TF.js layers models (importers/tfjs) and Keras files (importers/keras:
// Keras 2 HDF5 and Keras 3 .keras).
//
// Input: the Keras model config JSON as Keras and TF.js write it — an
// object {"class_name": "Sequential"|"Functional"|"Model", "config": {...}}
// with its layers and, for functional models, inbound_nodes in the Keras 2
// form ([["layer", node, tensor, {}], ...]) or the Keras 3 form
// ({"args": [{"class_name": "__keras_tensor__", "config": {"keras_history":
// ["layer", node, tensor]}}]}); a TF.js modelTopology or a Keras 2
// model_config wrapper ({"model_config": {...}}) is accepted too. Weights
// come from a Weights lookup by layer. Output: an ONNX ModelProto:
//
//	mp, err := keraslayers.Convert(configJSON, keraslayers.WeightMap{
//		"dense/kernel": kernel, "dense/bias": bias,
//	}, keraslayers.Options{File: "model.json"})
//
// Layout: Keras is channels-last; the ONNX graph keeps NHWC (NWC, NDHWC)
// at its inputs and outputs and runs convolutions, pools and the
// elementwise layers between them channels-first, with a Transpose only
// where a value must change layout. With Options.Layout LayoutNCHW the
// graph's image-like inputs and outputs (rank 3, 4, 5) are channels-first
// (NCW, NCHW, NCDHW) instead, with no Transpose at those edges.
//
// Errors: an unknown or custom layer class (QKeras, HGQ, a Lambda) or an
// unsupported setting is a *LayerError naming the layer, its class and the
// file; a missing or misshapen weight is a *LayerError too. Nothing in the
// config is executed (a Lambda's code is never run).
package keraslayers

import (
	"fmt"
	"github.com/onnxconv/onnxconv/importers/custom"
	"sort"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/formats/keras"
	"github.com/onnxconv/onnxconv/importers"
)

// Weight is one weight of a layer (formats/keras reads them from Keras
// files).
type Weight = keras.Weight

// Weights finds the weights of a layer (LayerWeights returns those of the
// layer whose name path is path, in Keras's order when the names are
// empty; a layer with no weights returns nil, nil).
type Weights = keras.Weights

// WeightMap is a Weights keyed by Keras weight names as TF.js manifests
// and Keras 2 HDF5 files write them: "layer/kernel", "layer/kernel:0",
// "model/layer/kernel" or "layer/cell/kernel" (the last path element is the
// weight's name, the layer is matched by its name anywhere before it).
type WeightMap map[string]*canonical.Tensor

// LayerWeights returns the weights whose name has the layer's path (or
// its own name) as a prefix component, sorted by name.
func (m WeightMap) LayerWeights(path []string) ([]Weight, error) {
	if len(path) == 0 {
		return nil, nil
	}
	full := strings.Join(path, "/") + "/"
	last := path[len(path)-1] + "/"
	var out []Weight
	for _, pass := range []string{full, last} {
		for k, t := range m {
			key := strings.TrimSuffix(k, ":0")
			if strings.HasPrefix(key, pass) || strings.Contains(key, "/"+pass) {
				out = append(out, Weight{Name: key[strings.LastIndexByte(key, '/')+1:], Tensor: t})
			}
		}
		if len(out) > 0 {
			break
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Options configure Convert.
type Options struct {
	// Opset is the ai.onnx opset (0: 17; at least 14).
	Opset int
	// File names the source file in messages.
	File string
	// Keras3 selects Keras 3 semantics where they differ from Keras 2 and
	// TF.js (hard_sigmoid is x/6+0.5 instead of 0.2x+0.5). Convert also
	// turns it on for a config with "module": "keras" entries.
	Keras3 bool
	// InputDType is the ONNX element type of the inputs when the config
	// names none (0: float32).
	InputDType canonical.DataType
	// Layout is the layout of the graph's image-like inputs and outputs:
	// LayoutNHWC ("" too: Keras's own channels-last NWC, NHWC, NDHWC) or
	// LayoutNCHW (channels-first NCW, NCHW, NCDHW: the channel axis moved
	// from last to second). Under LayoutNCHW an input of rank 3 to 5 is
	// channels-first unless the layers read it only channels-last (a
	// sequence into an RNN or a Dense), and an output of rank 3 to 5 is
	// channels-first when the layer making it computes channels-first
	// (convolutions, pools, batch norms and the elementwise layers
	// between them); the model's metadata_props MetaLayout and
	// MetaChannelsFirst name them. Other values are unchanged. Any other
	// Layout is a *LayoutError.
	Layout string
	// Custom holds the user's ONNX functions for layer classes Convert
	// does not map (-O custom=FILE.onnx; importers/custom): a layer of
	// such a class becomes a call of the function of its class name.
	Custom *custom.Set
}

// The values of Options.Layout.
const (
	LayoutNHWC = "nhwc"
	LayoutNCHW = "nchw"
)

// Layouts lists the values Options.Layout takes, the default first.
func Layouts() []string { return []string{LayoutNHWC, LayoutNCHW} }

// MetaLayout and MetaChannelsFirst are the metadata_props keys a model
// converted with Layout LayoutNCHW carries: MetaLayout "nchw", and
// MetaChannelsFirst the comma-separated names of the graph inputs and
// outputs made channels-first (so a runner feeding the source framework
// knows which values to transpose).
const (
	MetaLayout        = "onnxconv.layout"
	MetaChannelsFirst = importers.MetaChannelsFirst
)

// LayoutError is an Options.Layout value Convert does not know.
type LayoutError struct {
	Layout string
}

func (e *LayoutError) Error() string {
	return fmt.Sprintf("layout %q: use %s", e.Layout, strings.Join(Layouts(), " or "))
}

// channelsFirstIO tells whether a graph input or output of rank r may be
// channels-first under layout.
func channelsFirstIO(layout string, r int) bool {
	return layout == LayoutNCHW && r >= 3 && r <= 5
}

// LayerError is a layer Convert cannot map.
type LayerError struct {
	File  string
	Layer string
	Class string
	// Unsupported is true for a layer class with no mapping (custom or
	// not yet mapped).
	Unsupported bool
	Err         error
}

func (e *LayerError) Error() string {
	where := ""
	if e.File != "" {
		where = e.File + ": "
	}
	if e.Unsupported {
		return fmt.Sprintf("%slayer %q: Keras layer class %s is not supported (a custom layer, or not mapped yet); "+
			"%s; or replace it with built-in layers before exporting (supported: %s)",
			where, e.Layer, e.Class, custom.Hint("Keras layer class", e.Class), strings.Join(Supported(), ", "))
	}
	return fmt.Sprintf("%slayer %q (%s): %v", where, e.Layer, e.Class, e.Err)
}

func (e *LayerError) Unwrap() error { return e.Err }

// Supported lists the layer classes Convert maps, sorted.
func Supported() []string {
	var out []string
	for k := range layerTable() {
		out = append(out, k)
	}
	out = append(out, "Sequential", "Functional", "Model")
	sort.Strings(out)
	return out
}
