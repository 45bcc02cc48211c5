package testpaths

import (
	"os"
	"path/filepath"
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
