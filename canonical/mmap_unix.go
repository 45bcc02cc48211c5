//go:build unix

package canonical

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps size bytes of f read-only and shared, for sequential
// reading.
func mapFile(f *os.File, size int) ([]byte, error) {
	data, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	_ = unix.Madvise(data, unix.MADV_SEQUENTIAL)
	return data, nil
}

// unmapBytes unmaps what mapFile mapped.
func unmapBytes(b []byte) error { return unix.Munmap(b) }

// releasePages drops the process's page-table entries for the pages of b
// (a page-aligned part of a read-only shared mapping): they stay in the
// page cache and fault back in with the same bytes.
func releasePages(b []byte) { _ = unix.Madvise(b, unix.MADV_DONTNEED) }
