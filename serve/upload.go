package serve

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// A RequestError is the client's fault: the status says which (400, 413…).
type RequestError struct {
	Status int
	Msg    string
}

func (e *RequestError) Error() string { return e.Msg }

func badRequest(format string, a ...any) error {
	return &RequestError{Status: 400, Msg: fmt.Sprintf(format, a...)}
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// safeName turns a client's file name into a name for a file in the job's
// folder: the last element only, characters outside [A-Za-z0-9._-]
// replaced, no leading dot; "model" when nothing is left.
func safeName(name string) string {
	name = path.Base(strings.ReplaceAll(name, "\\", "/"))
	name = unsafeChars.ReplaceAllString(name, "_")
	name = strings.TrimLeft(name, ".")
	if len(name) > 100 {
		name = name[len(name)-100:]
	}
	if name == "" || name == "_" {
		return "model"
	}
	return name
}

// saveUpload copies r into dir/name and returns its size and SHA-256.
// The reader is already bounded by the upload limit.
func saveUpload(r io.Reader, file string) (int64, string, error) {
	f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, "", err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// archiveKind tells whether an upload is a folder packed as zip or tar.
func archiveKind(name string) string {
	l := strings.ToLower(name)
	switch {
	case strings.HasSuffix(l, ".zip") && !strings.HasSuffix(l, ".keras.zip"):
		return "zip"
	case strings.HasSuffix(l, ".tar"):
		return "tar"
	case strings.HasSuffix(l, ".tar.gz"), strings.HasSuffix(l, ".tgz"):
		return "tgz"
	}
	return ""
}

// limits of an unpacked folder.
type unpackLimits struct {
	bytes int64 // all files together
	files int
}

// tooBig is the 413 of an archive past lim.bytes.
func (lim unpackLimits) tooBig() error {
	return &RequestError{Status: 413, Msg: fmt.Sprintf("the archive unpacks to more than %d bytes (the unpack limit or your token's remaining quota)", lim.bytes)}
}

// memberError is the 400 of a member the file system refuses (a name too
// long, a folder too deep): it names the member and the reason, never the
// server's path.
func memberError(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return badRequest("archive member %q cannot be unpacked: %v", name, err)
}

// unpack extracts the archive at file into dir: regular files and folders
// only, every name relative and inside dir (no "..", no absolute path, no
// link), at most lim.files files and lim.bytes bytes in all. A member whose
// declared size crosses the limit is refused before a byte of it is
// written, so that the disk written stays within the limit.
func unpack(file, kind, dir string, lim unpackLimits) error {
	var total int64
	files := 0
	put := func(name string, isDir bool, size int64, r io.Reader) error {
		clean := path.Clean(strings.ReplaceAll(name, "\\", "/"))
		if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(name, "\x00") {
			return badRequest("archive member %q is outside the archive's folder", name)
		}
		if clean == "." {
			return nil
		}
		target := filepath.Join(dir, filepath.FromSlash(clean))
		if isDir {
			if err := os.MkdirAll(target, 0o700); err != nil {
				return memberError(name, err)
			}
			return nil
		}
		files++
		if files > lim.files {
			return &RequestError{Status: 413, Msg: fmt.Sprintf("the archive holds more than %d files", lim.files)}
		}
		if size > lim.bytes-total {
			return lim.tooBig()
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return memberError(name, err)
		}
		f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			if errors.Is(err, os.ErrExist) {
				return badRequest("archive member %q appears twice", name)
			}
			return memberError(name, err)
		}
		n, err := io.Copy(f, io.LimitReader(r, lim.bytes-total+1))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		total += n
		if total > lim.bytes {
			return lim.tooBig()
		}
		if err != nil {
			return memberError(name, err)
		}
		return nil
	}
	switch kind {
	case "zip":
		zr, err := zip.OpenReader(file)
		if err != nil {
			return badRequest("not a zip archive: %v", err)
		}
		defer zr.Close()
		var declared uint64
		for _, zf := range zr.File {
			declared += zf.UncompressedSize64
			if declared > uint64(lim.bytes) {
				return lim.tooBig()
			}
		}
		for _, zf := range zr.File {
			mode := zf.Mode()
			if mode&os.ModeSymlink != 0 || (!mode.IsRegular() && !mode.IsDir()) {
				return badRequest("archive member %q is not a regular file or folder", zf.Name)
			}
			if mode.IsDir() {
				if err := put(zf.Name, true, 0, nil); err != nil {
					return err
				}
				continue
			}
			rc, err := zf.Open()
			if err != nil {
				return badRequest("archive member %q: %v", zf.Name, err)
			}
			err = put(zf.Name, false, int64(zf.UncompressedSize64), rc)
			rc.Close()
			if err != nil {
				return err
			}
		}
		return nil
	case "tar", "tgz":
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		defer f.Close()
		var r io.Reader = f
		if kind == "tgz" {
			gz, err := gzip.NewReader(f)
			if err != nil {
				return badRequest("not a gzip file: %v", err)
			}
			defer gz.Close()
			r = gz
		}
		tr := tar.NewReader(r)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return badRequest("not a tar archive: %v", err)
			}
			switch h.Typeflag {
			case tar.TypeDir:
				err = put(h.Name, true, 0, nil)
			case tar.TypeReg:
				err = put(h.Name, false, h.Size, tr)
			case tar.TypeXGlobalHeader, tar.TypeXHeader:
				continue
			default:
				return badRequest("archive member %q is not a regular file or folder", h.Name)
			}
			if err != nil {
				return err
			}
		}
	}
	return badRequest("unknown archive kind %q", kind)
}

// modelIn returns what to convert in an unpacked folder: its
// saved_model.pb when it is a SavedModel, a TF.js or Keras
// model.json, the one file of a one-file archive, the one .onnx file
// (its external data beside it), or the folder.
// One top folder that holds everything is stepped into first.
func modelIn(dir string) string {
	for {
		ents, err := os.ReadDir(dir)
		if err != nil || len(ents) != 1 || !ents[0].IsDir() {
			break
		}
		dir = filepath.Join(dir, ents[0].Name())
	}
	// A SavedModel by its saved_model.pb (the importer reads the folder
	// from it), as a batch manifest names only files.
	if _, err := os.Stat(filepath.Join(dir, "saved_model.pb")); err == nil {
		return filepath.Join(dir, "saved_model.pb")
	}
	if _, err := os.Stat(filepath.Join(dir, "model.json")); err == nil {
		return filepath.Join(dir, "model.json")
	}
	ents, err := os.ReadDir(dir)
	if err == nil && len(ents) == 1 && ents[0].Type().IsRegular() {
		return filepath.Join(dir, ents[0].Name())
	}
	// An ONNX model with its external data files beside it (over 2 GiB,
	// or saved so): the one .onnx file.
	var onnx []string
	for _, e := range ents {
		if e.Type().IsRegular() && strings.EqualFold(filepath.Ext(e.Name()), ".onnx") {
			onnx = append(onnx, e.Name())
		}
	}
	if len(onnx) == 1 {
		return filepath.Join(dir, onnx[0])
	}
	return dir
}
