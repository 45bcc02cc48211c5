package pipeline

import (
	"github.com/onnxconv/onnxconv/exporters"
	expbuiltin "github.com/onnxconv/onnxconv/exporters/builtin"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/runtimes"
	rtbuiltin "github.com/onnxconv/onnxconv/runtimes/builtin"
)

// Env is what the jobs work with, built once by the caller and shared by
// every step of a run (and by many runs): the importers that detect and
// read source files, the exporters that write targets, and the reference
// runtimes that compute sources and results. The command line builds it around its one plugin host: the
// built-in importers detected in process and imported out of process,
// third-party importer plugins, the built-in runtimes (Node) and the
// runtime plugins (ONNX Runtime). A nil field means the built-ins in this
// process, without plugins.
type Env struct {
	// Importers is where formats are detected and importers found.
	Importers *importers.Registry
	// Exporters write the targets (exporters/builtin: ONNX runtime
	// profiles and TFLite).
	Exporters *exporters.Registry
	// Runtimes are the reference runtimes (runtimes/builtin and the
	// runtime plugins of the caller's plugin host).
	Runtimes *runtimes.Set
}

// importers returns the registry of e (the built-ins when unset).
func (e Env) importers() *importers.Registry {
	if e.Importers != nil {
		return e.Importers
	}
	return builtin.Registry()
}

// exporters returns the exporters of e (the built-ins when unset).
func (e Env) exporters() *exporters.Registry {
	if e.Exporters != nil {
		return e.Exporters
	}
	return expbuiltin.Registry()
}

// runtimes returns the runtimes of e (the built-ins when unset).
func (e Env) runtimes() *runtimes.Set {
	if e.Runtimes != nil {
		return e.Runtimes
	}
	return rtbuiltin.Set(nil)
}
