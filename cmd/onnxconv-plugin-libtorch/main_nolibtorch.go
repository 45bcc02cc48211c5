//go:build !cgo || !libtorch

package main

import (
	"fmt"
	"os"
)

// Without cgo and the libtorch tag there is no libtorch: say how to build
// the plugin.
func main() {
	fmt.Fprintln(os.Stderr, "onnxconv-plugin-libtorch was built without libtorch; install it (apt-get install libtorch-dev) and rebuild: "+
		"go build -tags libtorch -o ~/.config/onnxconv/plugins/onnxconv-plugin-libtorch ./cmd/onnxconv-plugin-libtorch")
	os.Exit(1)
}
