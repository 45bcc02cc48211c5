//go:build !cgo || !libtorch

package libtorch

import (
	"errors"

	"github.com/onnxconv/onnxconv/canonical"
)

// Available reports whether this build has libtorch.
const Available = false

// ErrNotBuilt is returned by Load in a build without libtorch.
var ErrNotBuilt = errors.New("libtorch: this build has no libtorch (build with cgo and -tags libtorch); " + InstallHint)

// Version is "" without libtorch.
func Version() string { return "" }

// Module is a loaded TorchScript archive (never, in this build).
type Module struct{}

// Load fails: this build has no libtorch.
func Load(path string) (*Module, error) { return nil, ErrNotBuilt }

// Close does nothing.
func (m *Module) Close() error { return nil }

// Run fails: this build has no libtorch.
func (m *Module) Run(method string, c Call) ([]*canonical.Tensor, error) {
	return nil, ErrNotBuilt
}

// RunCapture fails: this build has no libtorch.
func (m *Module) RunCapture(method string, c Call, keys []string) ([]*canonical.Tensor, error) {
	return nil, ErrNotBuilt
}
