package tflite

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
)

// Name is the importer and format name.
const Name = "tflite"

// MaxFileSize bounds the files Import reads: a flatbuffer addresses at
// most 2 GiB.
const MaxFileSize = 2 << 30

// Detect confidences.
const (
	confMagic     = 1   // "TFL3" at byte 4
	confExtension = 0.5 // a file too short to hold the identifier, named .tflite
)

// magic is the flatbuffer file identifier of TFLite models.
var magic = []byte("TFL3")

// New returns the TFLite importer.
func New() importers.Importer { return importer{} }

type importer struct{}

// optionSpecs are the options ParseOptions reads.
func optionSpecs() []importers.OptionSpec {
	return []importers.OptionSpec{
		{Name: "opset", Doc: "ai.onnx opset of the result, 13 to 23 (default 21; int16-quantized models need 21 or newer)"},
		{Name: "keep_nhwc", Doc: "true keeps every value in the TFLite NHWC layout, with Transposes around NCHW-only ops (default false)"},
		{Name: "subgraph", Doc: "index of the subgraph to convert (default 0, the main one)"},
		{Name: "int8_kernels", Doc: "whose integer arithmetic int8 ADD/SUB reproduce exactly: xnnpack (default; TFLite's CPU delegate) or reference (TFLite's reference kernels, TFLite Micro)"},
	}
}

// Describe names the format: "tflite", extension .tflite, identifier
// "TFL3" at byte 4.
func (importer) Describe() importers.Description {
	return importers.Description{
		Name:       Name,
		Format:     Name,
		Summary:    "TensorFlow Lite flatbuffer model (float, int8/uint8 and int16 quantized)",
		Extensions: []string{".tflite"},
		Magic:      []importers.Magic{{Offset: 4, Bytes: bytes.Clone(magic)}},
		Options:    optionSpecs(),
		Runtime:    "tflite",
	}
}

// Detect is 1 when head holds the flatbuffer identifier "TFL3" at bytes
// 4..8; 0.5 for an empty head of a file named .tflite; else 0.
func (importer) Detect(path string, head []byte) float32 {
	if len(head) >= 8 {
		if bytes.Equal(head[4:8], magic) {
			return confMagic
		}
		return 0
	}
	if len(head) == 0 && importers.MatchExtension(filepath.Base(path), []string{".tflite"}) {
		return confExtension
	}
	return 0
}

// Import reads the .tflite file at path (at most MaxFileSize bytes) and
// converts it with Import. Options are those of ParseOptions.
func (importer) Import(ctx context.Context, path string, opts importers.Options) (*importers.Result, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	return importers.ImportBytes(ctx, path, MaxFileSize, Name, func(data []byte) (*canonical.Model, error) {
		return Import(data, o)
	})
}

// ParseOptions reads Options from string options: "opset" (integer, 13 to
// 23), "keep_nhwc" (true/false), "subgraph" (integer, 0 or more). An
// unknown key or a bad value is an *importers.OptionError.
func ParseOptions(m map[string]string) (Options, error) {
	var o Options
	opts := importers.Options(m)
	for _, k := range opts.Keys() {
		v := opts[k]
		var err error
		switch k {
		case "opset":
			if o.Opset, err = strconv.Atoi(v); err == nil && (o.Opset < 13 || o.Opset > 23) {
				err = fmt.Errorf("opset %d not supported (13 to 23)", o.Opset)
			}
		case "keep_nhwc":
			o.KeepNHWC, err = strconv.ParseBool(v)
		case "int8_kernels":
			if o.Int8Kernels = v; v != Int8XNNPACK && v != Int8Reference {
				err = fmt.Errorf("want %s or %s", Int8XNNPACK, Int8Reference)
			}
		case "subgraph":
			if o.Subgraph, err = strconv.Atoi(v); err == nil && o.Subgraph < 0 {
				err = fmt.Errorf("subgraph %d is negative", o.Subgraph)
			}
		default:
			return o, &importers.OptionError{Importer: Name, Key: k, Value: v, Known: importers.Names(optionSpecs())}
		}
		if err != nil {
			return o, &importers.OptionError{Importer: Name, Key: k, Value: v, Known: importers.Names(optionSpecs()), Err: err}
		}
	}
	return o, nil
}
