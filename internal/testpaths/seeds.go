package testpaths

import (
	"archive/zip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// AddFiles adds the bytes of real files to a fuzz target's seed corpus
// (for a target whose one argument is []byte): each pattern is a path or
// a filepath.Glob pattern, relative to the package folder, and must name
// at least one file, so that a seed that moved or vanished fails the
// target rather than leave the fuzzer starting from less.
func AddFiles(f *testing.F, patterns ...string) {
	f.Helper()
	for _, pat := range patterns {
		files, err := filepath.Glob(pat)
		if err != nil || len(files) == 0 {
			f.Fatalf("fuzz seed %s: no such file (%v)", pat, err)
		}
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatalf("fuzz seed: %v", err)
			}
			f.Add(b)
		}
	}
}

// ZipMembers returns the contents of the members whose names end in
// suffix of every zip archive matching the filepath.Glob pattern (such
// as the Python code inside TorchScript archives, for a fuzz target that
// takes source text); it fails t when nothing matches.
func ZipMembers(t testing.TB, pattern, suffix string) []string {
	t.Helper()
	archives, err := filepath.Glob(pattern)
	if err != nil || len(archives) == 0 {
		t.Fatalf("no archive matches %s (%v)", pattern, err)
	}
	var out []string
	for _, a := range archives {
		zr, err := zip.OpenReader(a)
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		for _, m := range zr.File {
			if !strings.HasSuffix(m.Name, suffix) {
				continue
			}
			rc, err := m.Open()
			if err != nil {
				t.Fatalf("%s: %s: %v", a, m.Name, err)
			}
			b, err := io.ReadAll(rc)
			_ = rc.Close()
			if err != nil {
				t.Fatalf("%s: %s: %v", a, m.Name, err)
			}
			out = append(out, string(b))
		}
		_ = zr.Close()
	}
	if len(out) == 0 {
		t.Fatalf("no member ending in %s in %s", suffix, pattern)
	}
	return out
}
