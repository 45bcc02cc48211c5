// Package builtinenv assembles the pipeline.Env of the formats built into
// onnxconv, for the callers of pipeline (the command line, batch, serve):
// the built-in importers (importers/builtin), exporters (exporters/builtin)
// and runtimes (runtimes/builtin), in this process or around a plugin
// host. It is the one place that names them all; pipeline names none.
package builtinenv

import (
	expbuiltin "github.com/onnxconv/onnxconv/exporters/builtin"
	"github.com/onnxconv/onnxconv/importers/builtin"
	onnximp "github.com/onnxconv/onnxconv/importers/onnx"
	"github.com/onnxconv/onnxconv/pipeline"
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/plugins/importhost"
	rtbuiltin "github.com/onnxconv/onnxconv/runtimes/builtin"
)

// New returns the Env of the built-ins in this process, without plugins:
// every built-in importer (detected and imported here), the built-in
// exporters, and the built-in runtimes (node children of this process).
func New() pipeline.Env {
	return pipeline.Env{Importers: builtin.Registry(), Exporters: expbuiltin.Registry(), Runtimes: rtbuiltin.Set(nil)}
}

// Hosted returns the Env of runs around the plugin host h (whose
// built-in plugins are the built-in importers, see plugins.BuiltinOptions):
// every built-in importer but ONNX's detected in this process and imported
// through its plugin process on h, then h's third-party importer plugins,
// then the ONNX importer in process (canonical's checked loader; going out
// of process would only copy the model); the built-in exporters; the
// built-in runtimes and h's runtime plugins.
func Hosted(h *plugins.Host) (pipeline.Env, error) {
	reg, err := importhost.Registry(h, builtin.Importers(), onnximp.Name)
	if err != nil {
		return pipeline.Env{}, err
	}
	return pipeline.Env{Importers: reg, Exporters: expbuiltin.Registry(), Runtimes: rtbuiltin.Set(h)}, nil
}
