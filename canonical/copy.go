package canonical

import (
	"bufio"
	"errors"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mappedSource is a memory-mapped file whose bytes tensors may alias. When
// such a tensor is saved, its data is copied file to file in the kernel
// (copy_file_range, else sendfile) instead of through user memory, which
// keeps the process's resident memory small and the copy fast.
type mappedSource struct {
	f    *os.File
	data []byte
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
// one of srcs.
type rawCopier struct {
	dst      *os.File
	srcs     []*mappedSource
	pw       *progressWriter
	disabled bool
}

// write writes b after flushing bw. It returns false when b is not from a
// mapped file (the caller then writes it through bw).
func (c *rawCopier) write(bw *bufio.Writer, b []byte) (bool, error) {
	if c == nil || c.disabled || len(b) < 1<<20 {
		return false, nil
	}
	var src *mappedSource
	var off int64
	for _, s := range c.srcs {
		if o, ok := s.offsetOf(b); ok {
			src, off = s, o
			break
		}
	}
	if src == nil {
		return false, nil
	}
	if err := bw.Flush(); err != nil {
		return true, err
	}
	left := int64(len(b))
	useSendfile := false
	for left > 0 {
		chunk := int(min(left, 64<<20))
		var n int
		var err error
		if !useSendfile {
			o := off
			n, err = unix.CopyFileRange(int(src.f.Fd()), &o, int(c.dst.Fd()), nil, chunk, 0)
			if err != nil && (errors.Is(err, unix.EXDEV) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP)) {
				useSendfile = true
				continue
			}
		} else {
			o := off
			n, err = unix.Sendfile(int(c.dst.Fd()), int(src.f.Fd()), &o, chunk)
		}
		if err == unix.EINTR {
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
