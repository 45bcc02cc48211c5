package pipeline

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxtext"
	"github.com/onnxconv/onnxconv/exporters"
	"github.com/onnxconv/onnxconv/importers"
)

// Progress reports bytes done of total for a long read or write; what is
// "reading" or "writing".
type Progress func(what string, done, total int64)

// LoadOptions tune Load.
type LoadOptions struct {
	// SkipDataChecks reads the structure only (for describing models whose
	// tensor data is missing or damaged).
	SkipDataChecks bool
	Progress       Progress
	// Importers, when set, name the format of a file that is not ONNX
	// (a *NotONNXError: "convert it first"), and refuse a file another
	// importer is surer of before it is parsed as ONNX. Nil: such a file
	// is refused as an unreadable ONNX model, unnamed.
	Importers *importers.Registry
}

// IsText reports whether path names an ONNX text syntax file (.onnxtxt).
func IsText(path string) bool {
	return strings.EqualFold(filepath.Ext(path), ".onnxtxt")
}

// Load reads an ONNX model: binary protobuf (memory-mapped, external data
// beside it) or the ONNX text syntax (.onnxtxt). Close the model when
// done.
func Load(path string, opts LoadOptions) (*canonical.Model, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		if path, err = inputFile(opts.Importers, path); err != nil {
			return nil, err
		}
	}
	if IsText(path) {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, inputErr(fmt.Errorf("cannot read the model: %w", err))
		}
		mp, err := onnxtext.Parse(path, src)
		if err != nil {
			return nil, inputErr(fmt.Errorf("%w; fix the text or re-export it", err))
		}
		dir, err := filepath.Abs(filepath.Dir(path))
		if err != nil {
			return nil, inputErr(fmt.Errorf("%s: %w", path, err))
		}
		m, err := canonical.FromProto(mp, dir)
		if err != nil {
			return nil, inputErr(fmt.Errorf("%s: %w", path, err))
		}
		return m, nil
	}
	if format := claimedByOther(opts.Importers, path); format != "" {
		return nil, inputErr(&NotONNXError{Path: path, Format: format})
	}
	lo := canonical.LoadOptions{SkipDataChecks: opts.SkipDataChecks}
	if opts.Progress != nil {
		lo.Progress = func(done, total int64) { opts.Progress("reading", done, total) }
	}
	m, err := canonical.Load(path, lo)
	if err != nil {
		if format := otherFormat(opts.Importers, path); format != "" {
			return nil, inputErr(&NotONNXError{Path: path, Format: format})
		}
		return nil, inputErr(fmt.Errorf("%w; the file is not a readable ONNX model (re-export it, or check that its external data files are beside it)", err))
	}
	return m, nil
}

// NotONNXError is a file given where an ONNX model is expected that an
// importer recognises as another format.
type NotONNXError struct {
	Path   string
	Format string
}

func (e *NotONNXError) Error() string {
	return fmt.Sprintf("%s is not an ONNX model: it is in the %s format; convert it first: onnxconv convert %s OUT.onnx", e.Path, e.Format, e.Path)
}

// otherFormat names the format of path when an importer of reg other
// than ONNX's recognises it ("" when reg is nil).
func otherFormat(reg *importers.Registry, path string) string {
	if reg == nil {
		return ""
	}
	imp, conf, err := reg.Detect(path)
	if err != nil || conf < 0.5 {
		return ""
	}
	if f := imp.Describe().FormatName(); !strings.EqualFold(f, "onnx") {
		return f
	}
	return ""
}

// SaveOptions tune Save.
type SaveOptions struct {
	// ExternalData moves every tensor of at least ExternalThreshold bytes
	// to one data file beside the model (ExternalFile, default the
	// model's name + ".data"). Save does so without it too when the model
	// still has tensors in external data (its input had them) or when its
	// protobuf would exceed 2 GiB, unless Inline is set.
	ExternalData bool
	// Inline keeps every tensor inside the model file even when the model
	// had external data (ignored with ExternalData).
	Inline            bool
	ExternalThreshold int64
	ExternalFile      string
	Progress          Progress
}

// OutputFormat is how Save writes a path, from its extension.
type OutputFormat int

const (
	// Binary is binary protobuf (.onnx, .pb, or another extension).
	Binary OutputFormat = iota
	// Text is the ONNX text syntax (.onnxtxt).
	Text
)

// OutputFormatOf tells how path will be written as ONNX, and a warning when
// it has no extension. An extension that names no ONNX form is an
// *OutputExtensionError (Convert first asks the Env's exporters, which
// write the other file formats); a ".txt" path is an error too: it reads as
// a text file but would be binary protobuf.
func OutputFormatOf(path string) (OutputFormat, string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".onnx", ".pb":
		return Binary, "", nil
	case ".onnxtxt":
		return Text, "", nil
	case ".txt", ".text":
		return Binary, "", usageErr("%s: the ONNX text syntax is written to files ending in .onnxtxt; name the output .onnxtxt for text, or .onnx for binary protobuf", path)
	case ".json":
		return Binary, "", usageErr("%s: onnxconv writes ONNX (.onnx binary protobuf, .onnxtxt text), not JSON; name the output .onnx", path)
	case "":
		return Binary, fmt.Sprintf("%s has no extension: writing binary ONNX protobuf (name it .onnx to say so)", path), nil
	}
	return Binary, "", &Error{Kind: KindUsage, Err: &OutputExtensionError{Path: path, Ext: filepath.Ext(path)}}
}

// outputFormat is OutputFormatOf, its *OutputExtensionError naming the
// extensions exps writes besides ONNX (exps may be nil).
func outputFormat(path string, exps *exporters.Registry) (OutputFormat, string, error) {
	format, warning, err := OutputFormatOf(path)
	var ee *OutputExtensionError
	if errors.As(err, &ee) && exps != nil {
		ee.Exported = exps.Extensions()
	}
	return format, warning, err
}

// OutputExtensionError is an output path whose extension names no format
// onnxconv writes (OUT.bin): refused before any work, rather than written
// as ONNX under a name that says otherwise. Exported are the extensions
// the run's exporters write besides ONNX (Convert's), none where only
// ONNX is written.
type OutputExtensionError struct {
	Path, Ext string
	Exported  []string
}

func (e *OutputExtensionError) Error() string {
	if slices.Contains(e.Exported, strings.ToLower(e.Ext)) {
		return fmt.Sprintf("%s: this step writes ONNX; %s files are written by convert (an exporter's format): name the output .onnx (binary ONNX) or .onnxtxt (ONNX text syntax), or convert it", e.Path, e.Ext)
	}
	if len(e.Exported) == 0 {
		return fmt.Sprintf("%s: onnxconv does not write %s files here; name the output .onnx (binary ONNX) or .onnxtxt (ONNX text syntax)", e.Path, e.Ext)
	}
	return fmt.Sprintf("%s: onnxconv does not write %s files; name the output .onnx (binary ONNX), .onnxtxt (ONNX text syntax) or %s (an exporter's format)", e.Path, e.Ext, strings.Join(e.Exported, ", "))
}

// Save writes m to path atomically, as binary protobuf or as the text
// syntax by path's extension (see OutputFormatOf). A failed save leaves no
// file behind.
func Save(path string, m *canonical.Model, opts SaveOptions) error {
	format, _, err := OutputFormatOf(path)
	if err != nil {
		return err
	}
	if format == Text {
		if opts.ExternalData {
			return usageErr("%s: the text syntax cannot reference external data; write a .onnx file for external data", path)
		}
		mp, err := m.ToProtoInline()
		if err != nil {
			return inputErr(fmt.Errorf("%s: %w", path, err))
		}
		src, err := onnxtext.Format(mp)
		if err != nil {
			return inputErr(fmt.Errorf("%s: cannot write the model as text: %w; write a .onnx file instead", path, err))
		}
		if err := canonical.WriteFileAtomic(path, func(w io.Writer) error {
			_, err := w.Write(src)
			return err
		}); err != nil {
			return inputErr(err)
		}
		return nil
	}
	so := canonical.SaveOptions{
		ExternalData:      opts.ExternalData || !opts.Inline && canonical.HasExternalData(m),
		ExternalThreshold: opts.ExternalThreshold,
		ExternalFile:      opts.ExternalFile,
	}
	if opts.Progress != nil {
		so.Progress = func(done, total int64) { opts.Progress("writing", done, total) }
	}
	err = canonical.Save(path, m, so)
	if errors.Is(err, canonical.ErrTooLarge) && !so.ExternalData && !opts.Inline {
		// Over 2 GiB inline: canonical.Save refuses before writing
		// anything, so write it again with external data.
		so.ExternalData = true
		err = canonical.Save(path, m, so)
	}
	if err != nil {
		return inputErr(err)
	}
	return nil
}

// sameFile reports whether a and b name the same file (or a would replace
// b).
func sameFile(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	if err1 == nil && err2 == nil && aa == bb {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// inputFile checks that path is a readable regular file, or a folder that
// stands for a model file inside it (a SavedModel folder, a TF.js model
// folder: importers.Registry.FolderModel with reg), and returns the file.
func inputFile(reg *importers.Registry, path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", inputErr(fmt.Errorf("cannot read the input: %w", err))
	}
	if st.IsDir() && reg != nil {
		p, err := reg.FolderModel(path)
		if err != nil {
			return "", inputErr(err)
		}
		return p, nil
	}
	if !st.Mode().IsRegular() {
		return "", inputErr(fmt.Errorf("%s is not a regular file", path))
	}
	return path, nil
}

// checkOutputPath checks, before any work, that out can be written: not a
// folder, in a folder that exists and takes new files.
func checkOutputPath(out string) error {
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return usageErr("%s is a folder: name the output file (for example %s)", out, filepath.Join(out, "model.onnx"))
	}
	dir := filepath.Dir(out)
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return usageErr("%s: the output folder %s does not exist", out, dir)
	}
	f, err := os.CreateTemp(dir, ".onnxconv-probe-*")
	if err != nil {
		return usageErr("%s: the output folder %s does not take new files (%v); choose another output", out, dir, err)
	}
	name := f.Name()
	_ = f.Close()
	_ = os.Remove(name)
	return nil
}

// keptName is where a failed result is kept: OUT's name with
// ".not-equivalent" before the extension.
func keptName(out string) string {
	ext := filepath.Ext(out)
	return strings.TrimSuffix(out, ext) + ".not-equivalent" + ext
}
