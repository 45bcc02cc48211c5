package verify

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ReportPathReason classifies a report path that cannot be written.
type ReportPathReason string

// The reasons CheckReportPath gives.
const (
	// ReportPathEmpty: no path was given.
	ReportPathEmpty ReportPathReason = "empty"
	// ReportPathFormat: the extension names no report format.
	ReportPathFormat ReportPathReason = "unknown_format"
	// ReportPathIsDir: the path is an existing directory.
	ReportPathIsDir ReportPathReason = "is_directory"
	// ReportPathNoFolder: the folder the report would go to does not
	// exist (or is not a folder).
	ReportPathNoFolder ReportPathReason = "no_folder"
	// ReportPathNotWritable: no file can be created in the folder.
	ReportPathNotWritable ReportPathReason = "not_writable"
)

// ReportPathError is a report path rejected before any work is done. Use
// errors.As to read Reason; Err is the underlying error, if any.
type ReportPathError struct {
	Path   string
	Reason ReportPathReason
	// Dir is the folder the report would be written to.
	Dir string
	Err error
}

func (e *ReportPathError) Error() string {
	msg := "report " + e.Path + ": "
	switch e.Reason {
	case ReportPathEmpty:
		return "report: empty path: give a file name ending in " + strings.Join(Formats(), ", ")
	case ReportPathFormat:
		msg += fmt.Sprintf("unknown format %q: end the name with %s", filepath.Ext(e.Path), strings.Join(Formats(), ", "))
	case ReportPathIsDir:
		msg += "is a directory: give a file name inside it, e.g. " + filepath.Join(e.Path, "report"+reportExt(e.Path))
	case ReportPathNoFolder:
		msg += fmt.Sprintf("folder %s does not exist: create it first (mkdir -p %s) or write the report elsewhere", e.Dir, shellQuote(e.Dir))
	case ReportPathNotWritable:
		msg += fmt.Sprintf("folder %s is not writable: fix its permissions or write the report elsewhere", e.Dir)
	default:
		msg += string(e.Reason)
	}
	if e.Err != nil {
		msg += " (" + e.Err.Error() + ")"
	}
	return msg
}

func (e *ReportPathError) Unwrap() error { return e.Err }

// reportExt is the extension to suggest for a path that is a directory.
func reportExt(path string) string {
	if isReportExt(filepath.Ext(path)) {
		return filepath.Ext(path)
	}
	return ".html"
}

func isReportExt(ext string) bool {
	switch strings.ToLower(ext) {
	case ".json", ".md", ".markdown", ".html", ".htm", ".xml":
		return true
	}
	return false
}

// CheckReportPath reports, before any work is done, a report path that
// WriteReport could not write: an unknown extension, a path that is a
// directory, a folder that does not exist or is not writable. The error is
// a *ReportPathError. Checking writability creates and removes a
// temporary file in the folder.
func CheckReportPath(path string) error {
	if path == "" {
		return &ReportPathError{Path: path, Reason: ReportPathEmpty}
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return &ReportPathError{Path: path, Reason: ReportPathIsDir, Dir: dir}
	}
	if !isReportExt(filepath.Ext(path)) {
		return &ReportPathError{Path: path, Reason: ReportPathFormat, Dir: dir}
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &ReportPathError{Path: path, Reason: ReportPathNoFolder, Dir: dir}
	case err != nil:
		return &ReportPathError{Path: path, Reason: ReportPathNotWritable, Dir: dir, Err: err}
	case !fi.IsDir():
		return &ReportPathError{Path: path, Reason: ReportPathNoFolder, Dir: dir, Err: fmt.Errorf("%s is not a folder", dir)}
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".check-*")
	if err != nil {
		return &ReportPathError{Path: path, Reason: ReportPathNotWritable, Dir: dir, Err: err}
	}
	name := f.Name()
	cerr := f.Close()
	if rerr := os.Remove(name); rerr != nil && cerr == nil {
		cerr = rerr
	}
	if cerr != nil {
		return &ReportPathError{Path: path, Reason: ReportPathNotWritable, Dir: dir, Err: cerr}
	}
	return nil
}
