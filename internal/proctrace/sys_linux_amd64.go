package proctrace

import (
	"bytes"
	"syscall"
)

// canTraceFiles: system-call stops are decoded on this architecture.
const canTraceFiles = true

// x86-64 system call numbers.
const (
	sysRead    = 0
	sysOpen    = 2
	sysClose   = 3
	sysMmap    = 9
	sysPread64 = 17
	sysReadv   = 19
	sysOpenat  = 257
	sysPreadv  = 295
	sysPreadv2 = 327
	enosys     = ^uint64(37) // -ENOSYS: rax at a system call's entry
)

// syscallStop decodes a system-call stop of task tid: at the exit of an
// open, read or close of a watched file, it records it.
func (f *fileTracer) syscallStop(tid int) {
	var r syscall.PtraceRegs
	if err := syscall.PtraceGetRegs(tid, &r); err != nil || r.Rax == enosys {
		return // or an entry: the arguments are read at the exit
	}
	ret := int64(r.Rax)
	switch r.Orig_rax {
	case sysOpenat:
		if ret >= 0 {
			f.opened(tid, peekString(tid, uintptr(r.Rsi)), uint64(ret))
		}
	case sysOpen:
		if ret >= 0 {
			f.opened(tid, peekString(tid, uintptr(r.Rdi)), uint64(ret))
		}
	case sysRead, sysPread64, sysReadv, sysPreadv, sysPreadv2:
		f.read(tid, r.Rdi, ret)
	case sysMmap:
		if ret >= 0 && int64(r.R8) >= 0 {
			f.mapped(tid, r.R8)
		}
	case sysClose:
		if ret == 0 {
			f.closed(tid, r.Rdi)
		}
	}
}

// peekString reads a NUL-terminated string of at most 4 KiB from the
// memory of task tid.
func peekString(tid int, addr uintptr) string {
	var out []byte
	buf := make([]byte, 256)
	for len(out) < 4096 {
		n, err := syscall.PtracePeekData(tid, addr+uintptr(len(out)), buf)
		if n > 0 {
			if i := bytes.IndexByte(buf[:n], 0); i >= 0 {
				return string(append(out, buf[:i]...))
			}
			out = append(out, buf[:n]...)
		}
		if err != nil || n == 0 {
			break
		}
	}
	return string(out)
}
