package canonical

import (
	"bufio"
	"errors"
	"os"
	"sync"
	"unsafe"
)

// copyMin is the size from which tensor data that lies in a mapped file is
// copied file to file in the kernel; smaller tensors go through the write
// buffer (a syscall per tensor would cost more than the copy).
const copyMin = 64 << 10

// errInterrupted is a kernel copy interrupted by a signal: try again.
var errInterrupted = errors.New("interrupted")

// releaseChunk is how many bytes of a mapping are read through user space
// before the pages they lie in are released (see mappedSource.release).
const releaseChunk = 8 << 20

// mappedSource is a memory-mapped file whose bytes tensors may alias. When
// such a tensor is saved, its data is copied file to file in the kernel
// (copy_file_range, else sendfile) instead of through user memory, which
// keeps the process's resident memory small and the copy fast. The pages
// that are read through user memory after all (the protobuf around the
// tensors, small tensors) are released as the reading goes on: the pages of
// a mapped file count in the process's resident memory while they are
// mapped, and the kernel maps up to 64 KiB around each page that is read.
type mappedSource struct {
	f    *os.File
	data []byte

	mu       sync.RWMutex // held for reading while releasing, for writing by unmap
	unmapped bool
}

// unmap unmaps the file (once).
func (s *mappedSource) unmap() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unmapped {
		return nil
	}
	s.unmapped = true
	return unmapBytes(s.data)
}

// release drops the process's page-table entries for the pages that hold
// bytes [off, off+n) of the mapping, so that they stop counting in its
// resident memory. The mapping is shared and read-only: the pages stay in
// the page cache, and reading them again faults them back in with the same
// bytes, so this changes no data, whoever holds slices of the mapping.
// It does nothing once the file is unmapped (the address range may then
// belong to other memory).
func (s *mappedSource) release(off, n int64) {
	if s == nil || n <= 0 || off < 0 {
		return
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	size := int64(len(s.data))
	if s.unmapped || off >= size {
		return
	}
	end := min(off+n, size)
	page := int64(os.Getpagesize())
	off = off / page * page // the mapping starts on a page boundary
	releasePages(s.data[off:end])
}

// releaser gathers the ranges of mappings read through user memory and
// releases them every releaseChunk bytes.
type releaser struct {
	src    *mappedSource
	lo, hi int64 // the span read since the last release
	read   int64 // bytes read in it
}

// add notes that bytes [off, off+n) of src were read.
func (r *releaser) add(src *mappedSource, off, n int64) {
	if r.src != src {
		r.flush()
		r.src, r.lo, r.hi = src, off, off
	}
	r.lo, r.hi = min(r.lo, off), max(r.hi, off+n)
	if r.read += n; r.read >= releaseChunk {
		r.flush()
	}
}

func (r *releaser) flush() {
	if r.src != nil && r.hi > r.lo {
		r.src.release(r.lo, r.hi-r.lo)
	}
	r.src, r.lo, r.hi, r.read = nil, 0, 0, 0
}

// offsetOf returns where b lies in s's mapping, if it does.
func (s *mappedSource) offsetOf(b []byte) (int64, bool) {
	if s == nil || s.f == nil || len(b) == 0 || len(s.data) == 0 {
		return 0, false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(s.data)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if p < base || p-base+uintptr(len(b)) > uintptr(len(s.data)) {
		return 0, false
	}
	return int64(p - base), true
}

// sources lists the mappings the model's tensors may alias.
func (m *Model) sources() []*mappedSource {
	var out []*mappedSource
	if m.src != nil {
		out = append(out, m.src)
	}
	if m.ext != nil {
		m.ext.mu.Lock()
		for _, f := range m.ext.files {
			if f.src != nil {
				out = append(out, f.src)
			}
		}
		m.ext.mu.Unlock()
	}
	return out
}

// rawCopier writes tensor data to dst, in the kernel when the data lies in
// one of srcs (dst nil: never), and releases the pages of srcs that it
// reads through user memory.
type rawCopier struct {
	dst      *os.File
	srcs     []*mappedSource
	pw       *progressWriter
	disabled bool
	rel      releaser
}

// write writes b, tensor data, to bw's output: file to file in the kernel
// (after flushing bw) when b is at least copyMin bytes of a mapped file,
// else through bw. A nil c writes through bw.
func (c *rawCopier) write(bw *bufio.Writer, b []byte) error {
	if c == nil || len(b) == 0 {
		return writeChunked(bw, b)
	}
	var src *mappedSource
	var off int64
	for _, s := range c.srcs {
		if o, ok := s.offsetOf(b); ok {
			src, off = s, o
			break
		}
	}
	if src != nil && c.dst != nil && !c.disabled && len(b) >= copyMin {
		if done, err := c.copy(bw, src, off, b); done || err != nil {
			return err
		}
	}
	if err := writeChunked(bw, b); err != nil {
		return err
	}
	if src != nil {
		c.rel.add(src, off, int64(len(b)))
	}
	return nil
}

// flush releases what is left to release.
func (c *rawCopier) flush() {
	if c != nil {
		c.rel.flush()
	}
}

// copy copies b, bytes [off, off+len(b)) of src, to c.dst after flushing
// bw. It returns false when the kernel cannot copy (the caller then writes
// b the usual way).
func (c *rawCopier) copy(bw *bufio.Writer, src *mappedSource, off int64, b []byte) (bool, error) {
	if err := bw.Flush(); err != nil {
		return true, err
	}
	left := int64(len(b))
	useSendfile := false
	for left > 0 {
		chunk := int(min(left, 64<<20))
		n, err := kernelCopy(c.dst, src.f, off, chunk, &useSendfile)
		if errors.Is(err, errInterrupted) {
			continue
		}
		if err != nil || n <= 0 {
			if left == int64(len(b)) {
				// Nothing copied yet: let the caller write it the usual way.
				c.disabled = true
				return false, nil
			}
			if err == nil {
				err = errors.New("short copy")
			}
			return true, err
		}
		off += int64(n)
		left -= int64(n)
		c.pw.done += int64(n)
		if c.pw.progress != nil {
			c.pw.progress(c.pw.done, c.pw.total)
		}
	}
	return true, nil
}

// ReleasePages drops from the process's resident memory the pages of m's
// file mappings (the model file, its external data files) that hold t's
// data, when t's data lies in one (see mappedSource.release: reading t
// again faults the same bytes back in). A caller that has made its own
// copy of a large weight (a packed kernel operand) calls it so that the
// weight is not resident twice. It does nothing for data held in memory.
func (m *Model) ReleasePages(t *Tensor) {
	if m == nil || t == nil || t.ext == nil && !t.hasRaw {
		return
	}
	b, err := t.Bytes()
	if err != nil || len(b) == 0 {
		return
	}
	for _, s := range m.sources() {
		if off, ok := s.offsetOf(b); ok {
			s.release(off, int64(len(b)))
			return
		}
	}
}
