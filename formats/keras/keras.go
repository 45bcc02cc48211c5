package keras

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/formats/hdf5"
)

// Limits on what a file may make the loader read.
const (
	// MaxFileBytes bounds a .keras zip, an .h5 file and an architecture JSON.
	MaxFileBytes = 4 << 30
	// MaxConfigBytes bounds config.json, metadata.json and a model_config
	// attribute.
	MaxConfigBytes = 64 << 20
	// maxZipEntries bounds the entries of a .keras zip.
	maxZipEntries = 1 << 12
	// maxJSONDepth bounds the nesting of a config.
	maxJSONDepth = 256
)

// Weight is one weight of a layer.
type Weight struct {
	// Name is the weight's short Keras name ("kernel", "bias",
	// "recurrent_kernel", "gamma", "beta", "moving_mean",
	// "moving_variance", "embeddings", "depthwise_kernel",
	// "pointwise_kernel", "alpha"), or "" when the file gives only
	// positions (Keras 3 vars/0, vars/1, ...): the weights are then taken
	// in Keras's order (layer.weights).
	Name   string
	Tensor *canonical.Tensor
}

// Weights finds the weights of a layer.
type Weights interface {
	// LayerWeights returns the weights of the layer whose name path is
	// path (the names of the enclosing nested models, then the layer's;
	// the top model is not included), in Keras's order when the names are
	// empty. A layer with no weights returns nil, nil.
	LayerWeights(path []string) ([]Weight, error)
}

// Layers lists the Keras layer classes onnxconv maps (importers/keraslayers
// converts each; its tests check that this list is exactly its table), and
// the model classes that nest layers. A model using any other class is a
// *CustomLayerError.
func Layers() []string {
	return []string{
		"Activation", "ActivityRegularization", "Add", "AlphaDropout", "Average",
		"AveragePooling1D", "AveragePooling2D", "AveragePooling3D", "BatchNormalization", "Bidirectional",
		"Concatenate", "Conv1D", "Conv1DTranspose", "Conv2D", "Conv2DTranspose", "Conv3D", "Conv3DTranspose",
		"Cropping1D", "Cropping2D", "Cropping3D", "Dense", "DepthwiseConv2D", "Dot", "Dropout", "ELU",
		"Embedding", "Flatten", "Functional", "GRU", "GaussianDropout", "GaussianNoise",
		"GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalAveragePooling3D",
		"GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D", "InputLayer", "LSTM",
		"LayerNormalization", "LeakyReLU", "Masking", "MaxPooling1D", "MaxPooling2D", "MaxPooling3D",
		"Maximum", "Minimum", "Model", "Multiply", "PReLU", "Permute", "ReLU", "RepeatVector", "Rescaling",
		"Reshape", "SeparableConv1D", "SeparableConv2D", "Sequential", "SimpleRNN", "Softmax",
		"SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "Subtract", "TimeDistributed",
		"UpSampling1D", "UpSampling2D", "ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D",
	}
}

// Detect tells how surely the file at path (head its first bytes) is a
// Keras file Load reads: 1 for a zip holding config.json and
// model.weights.h5, and for an HDF5 file with a model_config attribute;
// 0.5 for an HDF5 file of Keras weights alone (Load then says to give the
// architecture JSON) and for a zip with a member leaving the archive (Load
// says why it refuses it); 0.8 for a JSON object that looks like a Keras
// model config; else 0.
func Detect(path string, head []byte) float32 {
	switch {
	case hdf5.IsHDF5(head):
		return detectHDF5(path)
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return detectZip(path)
	}
	return detectJSON(head)
}

func detectJSON(head []byte) float32 {
	t := bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf")
	if len(t) == 0 || t[0] != '{' {
		return 0
	}
	if bytes.Contains(t, []byte(`"modelTopology"`)) || bytes.Contains(t, []byte(`"weightsManifest"`)) {
		return 0 // a TF.js model.json
	}
	if !bytes.Contains(t, []byte(`"class_name"`)) {
		return 0
	}
	for _, k := range []string{`"keras_version"`, `"backend"`, `"Sequential"`, `"Functional"`, `"Model"`} {
		if bytes.Contains(t, []byte(k)) {
			return 0.8
		}
	}
	return 0
}

// f32Bytes encodes float32 values little-endian, as a tensor's raw data.
func f32Bytes(v []float32) []byte {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	return raw
}
