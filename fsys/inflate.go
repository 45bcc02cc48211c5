package fsys

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/onnxconv/onnxconv/internal/bytesize"
)

// MaxRatio is the default bound on how many times its compressed size a
// stream may expand to (zlib's best case is about 1000; real model files
// compress 2 to 20 times).
const MaxRatio = 200

// InflateError is a compressed stream that expands beyond its ratio or
// the absolute cap.
type InflateError struct {
	What       string
	Compressed int64
	Limit      int64
}

func (e *InflateError) Error() string {
	return fmt.Sprintf("%s: the %s compressed stream expands beyond %s (a decompression bomb?); onnxconv stops there",
		e.What, bytesize.Format(e.Compressed), bytesize.Format(e.Limit))
}

// Inflate reads the decompressed stream r (made from compressed bytes of
// the stream) whole, stopping with an *InflateError once it passes
// maxRatio times the compressed size (<= 0: MaxRatio, at least 1 MiB) or
// cap bytes (<= 0: no cap but the budget), and charging what it holds to
// b. what names the stream in errors.
func Inflate(r io.Reader, compressed, maxRatio, cap int64, b *Budget, what string) ([]byte, error) {
	if maxRatio <= 0 {
		maxRatio = MaxRatio
	}
	limit := int64(1) << 62
	if compressed < limit/maxRatio {
		limit = max(compressed*maxRatio, 1<<20)
	}
	if cap > 0 {
		limit = min(limit, cap)
	}
	var buf bytes.Buffer
	const chunk = 1 << 20
	var taken int64
	for {
		n, err := io.CopyN(&buf, r, chunk)
		if n > 0 {
			if int64(buf.Len()) > limit {
				b.Release(taken)
				return nil, &InflateError{What: what, Compressed: compressed, Limit: limit}
			}
			if err := b.Take(n, what); err != nil {
				b.Release(taken)
				return nil, err
			}
			taken += n
		}
		if errors.Is(err, io.EOF) {
			return buf.Bytes(), nil
		}
		if err != nil {
			b.Release(taken)
			return nil, fmt.Errorf("%s: decompressing: %w", what, err)
		}
	}
}
