package canonical

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// kernelCopy copies up to n bytes at off of src to dst's current offset in
// the kernel: copy_file_range, else (once it said it cannot, *useSendfile
// is set) sendfile. It returns the bytes copied.
func kernelCopy(dst, src *os.File, off int64, n int, useSendfile *bool) (int, error) {
	for {
		o := off
		if !*useSendfile {
			k, err := unix.CopyFileRange(int(src.Fd()), &o, int(dst.Fd()), nil, n, 0)
			if err != nil && (errors.Is(err, unix.EXDEV) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP)) {
				*useSendfile = true
				continue
			}
			if err == unix.EINTR {
				return 0, errInterrupted
			}
			return k, err
		}
		k, err := unix.Sendfile(int(dst.Fd()), int(src.Fd()), &o, n)
		if err == unix.EINTR {
			return 0, errInterrupted
		}
		return k, err
	}
}
