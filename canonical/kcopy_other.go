//go:build !linux

package canonical

import (
	"errors"
	"os"
)

// kernelCopy has no in-kernel file-to-file copy here: it copies nothing,
// and the caller writes the bytes the usual way.
func kernelCopy(_, _ *os.File, _ int64, _ int, _ *bool) (int, error) {
	return 0, errors.ErrUnsupported
}
