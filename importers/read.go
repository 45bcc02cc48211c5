package importers

import (
	"context"
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/fsys"
)

// TooLargeError is an input file larger than an importer reads (the
// error of fsys, where files are read).
type TooLargeError = fsys.TooLargeError

// NotRegularError is an input path that is not a regular file (a folder,
// a device, a pipe).
type NotRegularError = fsys.NotRegularError

// ReadFile is fsys.ReadFile: it reads the whole regular file at path for a
// byte-based importer, refusing files over limit bytes (limit <= 0: no
// limit).
func ReadFile(path string, limit int64) ([]byte, error) { return fsys.ReadFile(path, limit) }

// ImportBytes is the body of Import for an importer that converts a whole
// file in memory: it reads path (at most limit bytes), stops if ctx is
// done and converts the bytes with convert (a pure function of them) into
// a canonical model. Errors name the file and the format.
func ImportBytes(ctx context.Context, path string, limit int64, format string, convert func(data []byte) (*canonical.Model, error)) (*Result, error) {
	data, err := ReadFile(path, limit)
	if err != nil {
		return nil, fmt.Errorf("%s import: %w", format, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s import %s: %w", format, path, err)
	}
	m, err := convert(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Result{Model: m}, nil
}
