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

import (
	"fmt"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
)

// RuntimeName is the name of the runtime (`--runtime libtorch`), the
// Runtime of the torchscript importer's description.
const RuntimeName = "libtorch"

// InstallHint says how to get the runtime.
const InstallHint = "install libtorch (apt-get install libtorch-dev) and the plugin: " +
	"go build -tags libtorch -o ~/.config/onnxconv/plugins/onnxconv-plugin-libtorch ./cmd/onnxconv-plugin-libtorch"

// Call says how Module.Run calls a method.
type Call struct {
	// Inputs are the arguments; a 0-d tensor feeds an int, float or bool
	// parameter as a number.
	Inputs []*canonical.Tensor
	// Names, when set (one per input), pass each input by keyword; an
	// empty name passes it by position.
	Names []string
	// State are paths of module attributes ("_state", "decoder.h") whose
	// values after the call follow the method's outputs: state the module
	// keeps inside itself.
	State []string
	// Threads is the number of intra-op threads (0: libtorch's default).
	Threads int
}

// Error is an error libtorch raised. Msg is the line that says what
// failed; Detail the whole text libtorch gave (its C++ backtrace, the
// TorchScript traceback), which Error prints after that line.
type Error struct {
	Path   string
	Msg    string
	Detail string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("libtorch: %s: %s", e.Path, e.Msg)
	if e.Detail != "" && e.Detail != e.Msg {
		s += "\n" + e.Detail
	}
	return s
}

func newError(path, text string) *Error {
	return &Error{Path: path, Msg: Brief(text), Detail: strings.TrimSpace(text)}
}

// Brief is the line of a libtorch exception's text that says what failed:
// the text before its C++ backtrace ("Exception raised from …", "frame
// #0: …"), and of a TorchScript traceback its last line (the error the
// scripted code raised).
func Brief(text string) string {
	head := text
	for _, cut := range []string{"\nException raised from ", "\nframe #0:"} {
		if i := strings.Index(head, cut); i >= 0 {
			head = head[:i]
		}
	}
	var lines []string
	for _, l := range strings.Split(head, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	switch {
	case len(lines) == 0:
		return strings.TrimSpace(text)
	case strings.Contains(head, "Traceback of TorchScript"):
		return lines[len(lines)-1]
	}
	return lines[0]
}
