//go:build !unix

package canonical

import (
	"fmt"
	"io"
	"os"
)

// mapFile reads size bytes of f into memory: there is no memory mapping
// here, so a model costs its size in memory on this platform.
func mapFile(f *os.File, size int) ([]byte, error) {
	data := make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, int64(size)), data); err != nil {
		return nil, fmt.Errorf("reading the file: %w", err)
	}
	return data, nil
}

// unmapBytes releases what mapFile read (the garbage collector does).
func unmapBytes([]byte) error { return nil }

// releasePages does nothing: the bytes are ordinary memory.
func releasePages([]byte) {}
