package pipeline

import (
	expbuiltin "github.com/onnxconv/onnxconv/exporters/builtin"
	"github.com/onnxconv/onnxconv/importers/builtin"
	rtbuiltin "github.com/onnxconv/onnxconv/runtimes/builtin"
)

// builtins is the Env of the built-in formats in this process, as
// builtinenv.New assembles it (builtinenv imports pipeline, so this
// package's own tests cannot call it; builtinenv's TestNew checks that
// New holds exactly these registries' importers, exporters and runtimes).
func builtins() Env {
	return Env{Importers: builtin.Registry(), Exporters: expbuiltin.Registry(), Runtimes: rtbuiltin.Set(nil)}
}
