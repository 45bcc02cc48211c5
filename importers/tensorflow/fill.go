package tensorflow

import (
	"fmt"

	"github.com/onnxconv/onnxconv/internal/bytesize"
)

// maxFillBytes bounds a constant that TF's rule fills from fewer values
// than its shape holds (the last value repeated): such a constant costs
// its file a few bytes whatever its size, so its size is checked before
// it is allocated.
const maxFillBytes = 256 << 20

// checkFill refuses a constant of dims filled to bytes from count values.
func checkFill(file, node string, dims []int64, count int, bytes uint64) error {
	if bytes <= maxFillBytes {
		return nil
	}
	return &FormatError{File: file, What: fmt.Sprintf(
		"node %q: constant of shape %v would be filled to %s from %d value(s), more than the %s onnxconv fills from a repeated value (store the values, or compute the constant with tf.fill)",
		node, dims, bytesize.Format(int64(min(bytes, 1<<62))), count, bytesize.Format(maxFillBytes))}
}
