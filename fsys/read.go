package fsys

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// TooLargeError is an input file larger than an importer reads.
type TooLargeError struct {
	Path  string
	Size  int64
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: the file is %d bytes, more than the %d this importer reads", e.Path, e.Size, e.Limit)
}

// NotRegularError is an input path that is not a regular file (a folder,
// a device, a pipe).
type NotRegularError struct {
	Path string
	Mode os.FileMode
}

func (e *NotRegularError) Error() string {
	what := "not a regular file"
	if e.Mode.IsDir() {
		what = "a folder, not a model file"
	}
	return fmt.Sprintf("%s: is %s", e.Path, what)
}

// ReadFile reads the whole regular file at path for a byte-based importer,
// refusing files over limit bytes (limit <= 0: no limit). Errors name the
// file: a folder or device is a *NotRegularError, a file over the limit a
// *TooLargeError, and os errors stay matchable with errors.Is
// (fs.ErrNotExist, fs.ErrPermission).
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: st.Mode()}
	}
	size := st.Size()
	if limit > 0 && size > limit {
		return nil, &TooLargeError{Path: path, Size: size, Limit: limit}
	}
	// Read one byte more than the size seen, to notice a file that grows.
	buf := make([]byte, size+1)
	n, err := io.ReadFull(f, buf)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return buf[:n], nil
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	// The file grew while being read: read the rest, within the limit.
	var r io.Reader = f
	if limit > 0 {
		r = io.LimitReader(f, limit-int64(n)+1)
	}
	rest, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	total := int64(n) + int64(len(rest))
	if limit > 0 && total > limit {
		return nil, &TooLargeError{Path: path, Size: total, Limit: limit}
	}
	return append(buf[:n], rest...), nil
}
