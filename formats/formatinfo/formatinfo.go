// Package formatinfo is what every role knows of a source format without
// reading one: its Description (name, extensions, magic numbers, options,
// reference runtime), the one magic and extension matchers, and the
// Source through which a format's own computation answers. It sits below
// importers, the plugin protocol and the plugin SDK, so that the plugin
// machinery that serves every role carries an importer's description
// without depending on the importers (docs/architecture.md).
package formatinfo

import (
	"context"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/options"
)

// HeadSize is how many bytes of a file Detect is given at most.
const HeadSize = 4096

// Magic is a byte pattern that identifies a format: the file holds Bytes
// at byte Offset.
type Magic struct {
	Offset int64  `json:"offset"`
	Bytes  []byte `json:"bytes"`
}

// Description describes an importer and the format it reads. It is the one
// description of an importer: built-ins return it, and the plugin protocol
// carries it whole (plugins/protocol.ImporterInfo adds the plugin's
// version), so that a plugin importer describes itself as a built-in does.
// importers.Description names it for the importers.
type Description struct {
	// Name identifies the importer ("tflite", "xgboost", or a plugin's
	// name).
	Name string `json:"name"`
	// Format is the name of the format read; "" means Name.
	Format string `json:"format,omitempty"`
	// Summary is one line for listings.
	Summary string `json:"description,omitempty"`
	// Extensions are file name suffixes with the dot, lower case.
	Extensions []string `json:"extensions,omitempty"`
	// Magic are byte patterns that identify the format.
	Magic []Magic `json:"magic,omitempty"`
	// Options lists the options Import takes (declared once, with their
	// parser, as an options.Set); any other key is an *options.Error.
	Options []options.Spec `json:"options,omitempty"`
	// Runtime names the reference runtime plugin (`--runtime NAME`) that
	// computes files of this format the way their own framework does
	// ("onnxruntime" for ONNX, "tflite" for TFLite, "tfjs" for TF.js and
	// Keras), or "" when there is none. Verification runs the source file
	// on it. An importer that computes the source itself implements
	// Predictor instead.
	Runtime string `json:"runtime,omitempty"`
	// FolderFiles names the files that make a folder a model of this
	// format, in order of preference ("saved_model.pb" for a SavedModel,
	// "model.json" for TF.js): a folder given where a model file is
	// expected is read as the first of them it holds (importers.Registry.FolderModel).
	// The plugin protocol does not carry it yet (pluginpb has no field):
	// a third-party importer plugin's format is given as its file.
	FolderFiles []string `json:"folder_files,omitempty"`
}

// FormatName is d.Format, or d.Name when Format is empty.
func (d Description) FormatName() string {
	if d.Format != "" {
		return d.Format
	}
	return d.Name
}

// Source computes a source model as its own framework does (an
// importers.Predictor opens one). Its inputs and
// outputs are those of the model Import makes from the same file: the same
// names, order, element types and shapes.
type Source interface {
	// Describe says what computes it, for reports ("xgboost trees, direct
	// Go predictor").
	Describe() string
	// Run computes the outputs for one sample of inputs.
	Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error)
	Close() error
}

// MatchMagic reports whether head holds one of the (non-empty) patterns.
// It is the one magic matcher, of built-ins and plugins alike.
func MatchMagic(head []byte, patterns []Magic) bool {
	for _, m := range patterns {
		end := m.Offset + int64(len(m.Bytes))
		if len(m.Bytes) > 0 && m.Offset >= 0 && end <= int64(len(head)) && string(head[m.Offset:end]) == string(m.Bytes) {
			return true
		}
	}
	return false
}

// MatchExtension reports whether path ends with one of exts, ignoring case.
func MatchExtension(path string, exts []string) bool { return ExtensionLength(path, exts) > 0 }

// ExtensionLength returns the length of the longest of exts that path ends
// with, ignoring case, or 0 if none does (a longer match, ".pb.json", is a
// better one).
func ExtensionLength(path string, exts []string) int {
	lp := strings.ToLower(path)
	best := 0
	for _, e := range exts {
		if e != "" && len(e) > best && strings.HasSuffix(lp, strings.ToLower(e)) {
			best = len(e)
		}
	}
	return best
}
