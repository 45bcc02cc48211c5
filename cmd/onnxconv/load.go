package main

import (
	"io"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/pipeline"
)

// loadModel reads a binary or text model with a progress line on a
// terminal; an unreadable file is a bad-input error (exit 2).
func loadModel(path string, stderr io.Writer) (*canonical.Model, error) {
	return loadModelOpts(path, stderr, canonical.LoadOptions{})
}

// loadModelOpts is loadModel with load options.
func loadModelOpts(path string, stderr io.Writer, opts canonical.LoadOptions) (*canonical.Model, error) {
	m, err := pipeline.Load(path, pipeline.LoadOptions{SkipDataChecks: opts.SkipDataChecks, Progress: newProgress(stderr).bytes, Importers: builtin.Registry()})
	if err != nil {
		return nil, badInput(err)
	}
	return m, nil
}
