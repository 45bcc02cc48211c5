// Package importers defines what an importer is: the one interface that
// every source format satisfies (built in, like importers/tflite, or a
// third-party plugin through importhost.HostImporter), and the Registry that
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
	"github.com/onnxconv/onnxconv/formats/formatinfo"
)

// The description of a format lives below the roles (formats/formatinfo),
// which the plugin protocol carries; these names keep the importers'
// declarations short.
type (
	Magic       = formatinfo.Magic
	Description = formatinfo.Description
	Source      = formatinfo.Source
)

// HeadSize is how many bytes of a file Detect is given at most.
const HeadSize = formatinfo.HeadSize

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
