package importers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
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

// ImportBytes is the body of Import for an importer that converts a whole
// file in memory: it reads path (at most limit bytes), stops if ctx is
// done, converts the bytes with convert (a pure function of them) and
// turns the ModelProto into a canonical model whose external data would be
// relative to path's folder. Errors name the file and the format.
func ImportBytes(ctx context.Context, path string, limit int64, format string, convert func(data []byte) (*onnxpb.ModelProto, error)) (*Result, error) {
	data, err := ReadFile(path, limit)
	if err != nil {
		return nil, fmt.Errorf("%s import: %w", format, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s import %s: %w", format, path, err)
	}
	mp, err := convert(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("%s import %s: %w", format, path, err)
	}
	m, err := canonical.FromProto(mp, dir)
	if err != nil {
		return nil, fmt.Errorf("%s import %s: the converted model is malformed (please report): %w", format, path, err)
	}
	return &Result{Model: m}, nil
}
