// Package importers defines what an importer is: the one interface that
// every source format satisfies (built in, like importers/tflite, or a
// third-party plugin through plugins.HostImporter), and the Registry that
// detects a file's format and finds its importer.
//
// The interface lives here, beside the format packages, rather than in
// pipeline (its main user), because the format packages, the plugin SDK
// (which serves an Importer out of process) and the registry of built-ins
// all name it; pipeline would otherwise have to import the built-ins and
// the built-ins pipeline.
package importers

import (
	"context"

	"github.com/onnxconv/onnxconv/canonical"
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
	// parser, as an OptionSet); any other key is an *OptionError.
	Options []OptionSpec `json:"options,omitempty"`
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
	// expected is read as the first of them it holds (Registry.FolderModel).
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

// Options are importer options, KEY=VALUE as given on the command line
// (-O keep_nhwc=true). Each importer parses them with its OptionSet.
type Options map[string]string

// Result is an imported model.
type Result struct {
	// Model is the imported canonical ONNX model. The caller closes it.
	Model *canonical.Model
	// Warnings are things the importer did that the user should know
	// (an approximation, an option ignored, ...).
	Warnings []string
}

// Importer reads one source format into a canonical ONNX model.
// Implementations are safe for concurrent use and never execute anything
// the file contains; hostile input is an error, never a panic.
type Importer interface {
	// Describe returns what the importer reads.
	Describe() Description
	// Detect tells how sure the importer is that the file at path, whose
	// first bytes (up to HeadSize) are head, is in its format: 0 for
	// "not mine", 1 for certain (a magic number), in between for
	// structural or extension guesses.
	Detect(path string, head []byte) float32
	// Import reads the file at path. Unknown or malformed options are an
	// *OptionError.
	Import(ctx context.Context, path string, opts Options) (*Result, error)
}

// Predictor is implemented by importers that can compute a source model
// directly from its parsed structure (the trees, leaves and base scores of
// a tree ensemble; the coefficients of a linear model), independently of
// the ONNX graph they build and of the executor. Verification compares
// the converted model with it.
type Predictor interface {
	// Source opens the file at path (read with the same options as
	// Import) for direct computation.
	Source(ctx context.Context, path string, opts Options) (Source, error)
}

// Source computes a source model as its own framework does. Its inputs and
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
