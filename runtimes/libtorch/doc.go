// Package libtorch runs TorchScript archives with libtorch, PyTorch's C++
// library, through a small C++ shim (shim.cc: torch::jit::load, one
// method called on dense CPU tensors, the result flattened to tensors). It
// is the reference runtime of the torchscript format: verification runs
// the source archive here and compares with the converted model.
//
// It needs cgo and Debian's libtorch-dev (libtorch 1.13.1:
// `apt-get install libtorch-dev`), so it is built only with the build tag
// libtorch and served by its own plugin executable,
// cmd/onnxconv-plugin-libtorch:
//
//	go build -tags libtorch -o ~/.config/onnxconv/plugins/onnxconv-plugin-libtorch ./cmd/onnxconv-plugin-libtorch
//
// Without the tag, Load reports how to build it. onnxconv itself stays a
// static CGO_ENABLED=0 binary.
package libtorch

// RuntimeName is the name of the runtime (`--runtime libtorch`), the
// Runtime of the torchscript importer's description.
const RuntimeName = "libtorch"

// InstallHint says how to get the runtime.
const InstallHint = "install libtorch (apt-get install libtorch-dev) and the plugin: " +
	"go build -tags libtorch -o ~/.config/onnxconv/plugins/onnxconv-plugin-libtorch ./cmd/onnxconv-plugin-libtorch"
