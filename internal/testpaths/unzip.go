package testpaths

import (
	"archive/zip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// Unzip writes the members of the zip at path (a .keras file) into a new
// temporary folder, flat, as `unzip` does for a zip without folders, and
// returns the folder.
func Unzip(t testing.TB, path string) string {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	dir := t.TempDir()
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f.Name)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
