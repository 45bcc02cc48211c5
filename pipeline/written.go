package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
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
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}
