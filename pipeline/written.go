package pipeline

import (
	"os"

	"github.com/onnxconv/onnxconv/fsys"
)

// recordWritten records the file a conversion wrote (path; "" for none) in
// the conversion facts, with its SHA-256, and writes the reports again so
// that they name the file actually written.
func (c *converter) recordWritten(path string) error {
	cv := &c.res.Conversion
	cv.Output, cv.OutputSHA256 = path, fileSHA256(path)
	if len(c.res.Comparisons) == 0 {
		return nil
	}
	return c.writeReports()
}

// fileSHA256 is the hex SHA-256 of the regular file at path; "" for
// anything else (a SavedModel folder, no file).
func fileSHA256(path string) string {
	if path == "" {
		return ""
	}
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return ""
	}
	sum, err := fsys.SHA256File(path)
	if err != nil {
		return ""
	}
	return sum
}
