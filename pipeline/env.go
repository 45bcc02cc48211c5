package pipeline

import (
	"github.com/onnxconv/onnxconv/exporters"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/runtimes"
)

// Env is what the jobs work with, built once by the caller and shared by
// every step of a run (and by many runs): the importers that detect and
// read source files, the exporters that write targets, and the reference
// runtimes that compute sources and results. pipeline names no format:
// package builtinenv assembles the Env of the built-in formats, in this
// process (builtinenv.New) or around the caller's plugin host
// (builtinenv.Hosted: the built-in importers detected in process and
// imported out of process, third-party importer plugins, the built-in
// runtimes and the runtime plugins).
type Env struct {
	// Importers is where formats are detected and importers found;
	// Convert needs it.
	Importers *importers.Registry
	// Exporters write the targets; Convert needs them.
	Exporters *exporters.Registry
	// Runtimes are the reference runtimes; nil means none (the executor
	// only).
	Runtimes *runtimes.Set
}

// check tells whether e can convert.
func (e Env) check() error {
	if e.Importers == nil || e.Exporters == nil {
		return usageErr("the pipeline's Env has no importers or no exporters: build it with builtinenv.New (the built-in formats) or builtinenv.Hosted")
	}
	return nil
}
