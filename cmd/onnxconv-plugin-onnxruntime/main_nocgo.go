//go:build !cgo

package main

import (
	"fmt"
	"os"
)

// Without cgo there is no ONNX Runtime: say how to build the plugin.
func main() {
	fmt.Fprintln(os.Stderr, "onnxconv-plugin-onnxruntime was built without cgo and cannot run ONNX Runtime; "+
		"rebuild it with CGO_ENABLED=1: go build -o ~/.config/onnxconv/plugins/onnxconv-plugin-onnxruntime ./cmd/onnxconv-plugin-onnxruntime")
	os.Exit(1)
}
