//go:build xla

package executor

// Building with -tags xla (needs cgo, so not the static onnxconv binary)
// registers GoMLX's XLA backend, selectable with
// Options.Backend = "xla:cpu" (or "xla:cuda", ...) or ONNXCONV_BACKEND.
// It needs a PJRT plugin already installed: GOMLX_NO_AUTO_INSTALL is set,
// so nothing is downloaded at run time.
import _ "github.com/gomlx/gomlx/backends/xla"
