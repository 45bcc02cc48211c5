// Package builtin lists the reference runtimes built into onnxconv: one
// line per runtime. They run in the host process's children (Node for
// TFLite, TF.js and ONNX Runtime through npm's onnxruntime-node), never as
// plugin processes; runtimes that need cgo (libtorch, and the ONNX Runtime
// plugin, which the built-in onnxruntime of the same name wins over) are
// plugins, found by the plugin host.
package builtin

import (
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/runtimes/ortnode"
	"github.com/onnxconv/onnxconv/runtimes/tfjs"
	"github.com/onnxconv/onnxconv/runtimes/tflite"
)

// Runtimes returns the built-in runtimes.
func Runtimes() []runtimes.Runtime {
	return []runtimes.Runtime{
		tflite.New(tflite.FindOptions{}),
		tfjs.New(tfjs.FindOptions{}),
		ortnode.New(ortnode.FindOptions{}),
	}
}

// Set returns the built-in runtimes followed by the runtime plugins of
// host (nil: none), as the runtimes of a run.
func Set(host *plugins.Host) *runtimes.Set { return runtimes.NewSet(host, Runtimes()...) }
