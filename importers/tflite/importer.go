package tflite

import (
	"bytes"
	"context"
	"path/filepath"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/formats/formatinfo"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/custom"
	optspec "github.com/onnxconv/onnxconv/options"
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

// optionSet is every option of the importer, with its parser.
func optionSet() importers.OptionSet[Options] {
	return importers.OptionSet[Options]{Name: Name, Options: []importers.Option[Options]{
		optspec.Int("opset", "21", "ai.onnx opset of the result (int16-quantized models need 21 or newer)", func(o *Options) *int { return &o.Opset }).Range(13, 23),
		optspec.Bool("keep_nhwc", "false", "true keeps every value in the TFLite NHWC layout, with Transposes around NCHW-only ops", func(o *Options) *bool { return &o.KeepNHWC }),
		optspec.Int("subgraph", "0", "index of the subgraph to convert (0: the main one)", func(o *Options) *int { return &o.Subgraph }).AtLeast(0),
		optspec.Enum("int8_kernels", Int8XNNPACK, "whose integer arithmetic int8 ADD/SUB reproduce exactly: xnnpack (TFLite's CPU delegate) or reference (TFLite's reference kernels, TFLite Micro)",
			[]string{Int8XNNPACK, Int8Reference}, func(o *Options) *string { return &o.Int8Kernels }),
		custom.Option(func(o *Options) *string { return &o.Custom }),
	}}
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
		Options:    optionSet().Specs(),
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
	if len(head) == 0 && formatinfo.MatchExtension(filepath.Base(path), []string{".tflite"}) {
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
func ParseOptions(m map[string]string) (Options, error) { return optionSet().Parse(m) }
