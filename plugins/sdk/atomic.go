package sdk

import (
	"io"

	"github.com/onnxconv/onnxconv/canonical"
)

// WriteFileAtomic writes the file at path through write: to a temporary
// file in the same folder, synced, then renamed onto path. On error nothing
// is left at path or beside it. It is canonical.WriteFileAtomic, offered
// here so a plugin needs only the SDK.
func WriteFileAtomic(path string, write func(w io.Writer) error) error {
	return canonical.WriteFileAtomic(path, write)
}
