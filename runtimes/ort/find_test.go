//go:build cgo

package ort

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// placeLibrary puts a library named name in dir: a symbolic link to the
// real ONNX Runtime library when the checkout has one, else a stand-in file
// (the search only looks for files).
func placeLibrary(t *testing.T, dir, name string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	real := filepath.Join(repoRoot(t), filepath.FromSlash(NPMLibraryPath))
	if _, err := os.Stat(real); err == nil {
		if err := os.Symlink(real, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := os.WriteFile(p, []byte("stand-in"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// emptySearch is a linux/amd64 search over empty temporary folders: a fake
// executable folder, user plugins folder, checkout (with go.mod, as the
// working directory) and two $LD_LIBRARY_PATH and system folders.
func emptySearch(t *testing.T) (search, string) {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"bin", "user", "checkout/sub", "ld1", "ld2", "sys1", "sys2"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "checkout", "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return search{
		exeDirs: []string{filepath.Join(root, "bin")},
		userDir: filepath.Join(root, "user"),
		wd:      filepath.Join(root, "checkout", "sub"),
		ldPath:  filepath.Join(root, "ld1") + string(os.PathListSeparator) + filepath.Join(root, "ld2"),
		sysDirs: []string{filepath.Join(root, "sys1"), filepath.Join(root, "sys2")},
		goos:    "linux",
		goarch:  "amd64",
	}, root
}

// TestFindLibraryBesideExecutable: an installed plugin finds the library
// copied beside it, or in lib/ beside it, whatever the working directory.
func TestFindLibraryBesideExecutable(t *testing.T) {
	s, root := emptySearch(t)
	s.wd = t.TempDir() // no checkout above
	want := placeLibrary(t, filepath.Join(root, "bin", "lib"), "libonnxruntime.so.1")
	if got, err := s.find(); err != nil || got != want {
		t.Fatalf("lib/ beside the executable: find = %q, %v; want %q", got, err, want)
	}
	want = placeLibrary(t, filepath.Join(root, "bin"), "libonnxruntime.so")
	if got, err := s.find(); err != nil || got != want {
		t.Fatalf("beside the executable: find = %q, %v; want %q", got, err, want)
	}
	// libonnxruntime.so.1 is preferred to libonnxruntime.so in a folder.
	want = placeLibrary(t, filepath.Join(root, "bin"), "libonnxruntime.so.1")
	if got, err := s.find(); err != nil || got != want {
		t.Fatalf("so.1 beside so: find = %q, %v; want %q", got, err, want)
	}
}

// TestFindLibraryOrder: each place is used when the ones before it have
// nothing: user plugins folder, checkout, $LD_LIBRARY_PATH, system.
func TestFindLibraryOrder(t *testing.T) {
	s, root := emptySearch(t)
	// Filled from the last place to the first, each must win over the
	// ones filled before it.
	steps := []struct{ dir, what string }{
		{"sys2", "second system folder"},
		{"sys1", "first system folder"},
		{"ld2", "second $LD_LIBRARY_PATH entry"},
		{"ld1", "first $LD_LIBRARY_PATH entry"},
		{"checkout/node_modules/onnxruntime-node/bin/napi-v6/linux/x64", "checkout's node_modules"},
		{"user/lib", "lib/ in the user plugins folder"},
		{"user", "user plugins folder"},
		{"bin/lib", "lib/ beside the executable"},
		{"bin", "beside the executable"},
	}
	for _, st := range steps {
		want := placeLibrary(t, filepath.Join(root, filepath.FromSlash(st.dir)), "libonnxruntime.so.1")
		if got, err := s.find(); err != nil || got != want {
			t.Fatalf("%s: find = %q, %v; want %q", st.what, got, err, want)
		}
	}
	// $ONNXRUNTIME_LIB wins over all of them.
	s.lib = placeLibrary(t, filepath.Join(root, "env"), "custom.so")
	if got, err := s.find(); err != nil || got != s.lib {
		t.Fatalf("$%s: find = %q, %v; want %q", LibraryEnv, got, err, s.lib)
	}
}

// TestFindLibraryEnvMissing: $ONNXRUNTIME_LIB set to no file is an error,
// even when the library is elsewhere.
func TestFindLibraryEnvMissing(t *testing.T) {
	s, root := emptySearch(t)
	placeLibrary(t, filepath.Join(root, "bin"), "libonnxruntime.so.1")
	s.lib = filepath.Join(root, "missing", "libonnxruntime.so.1")
	_, err := s.find()
	var nf *LibraryNotFoundError
	if !errors.As(err, &nf) || nf.Env != s.lib || len(nf.Searched) != 0 {
		t.Fatalf("err = %#v, want a *LibraryNotFoundError for $%s only", err, LibraryEnv)
	}
	if !errors.Is(err, ErrLibraryNotFound) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("errors.Is(ErrLibraryNotFound, fs.ErrNotExist) fail for %v", err)
	}
	for _, want := range []string{LibraryEnv, s.lib, "npm install --ignore-scripts onnxruntime-node@1.30.0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q:\n%v", want, err)
		}
	}
	// A folder is not the library.
	s.lib = root
	if _, err := s.find(); !errors.As(err, &nf) || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("$%s a folder: err = %v", LibraryEnv, err)
	}
}

// TestFindLibraryNotFound: when nothing is found, the error lists every
// folder searched, in order, and says how to install the library.
func TestFindLibraryNotFound(t *testing.T) {
	s, root := emptySearch(t)
	// A second copy of a folder is searched once.
	s.ldPath += string(os.PathListSeparator) + filepath.Join(root, "bin")
	_, err := s.find()
	var nf *LibraryNotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("err = %#v, want a *LibraryNotFoundError", err)
	}
	if !errors.Is(err, ErrLibraryNotFound) {
		t.Errorf("errors.Is(err, ErrLibraryNotFound) = false")
	}
	j := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
	want := []string{
		j("bin"), j("bin/lib"), j("user"), j("user/lib"),
		j("checkout/node_modules/onnxruntime-node/bin/napi-v6/linux/x64"),
		j("ld1"), j("ld2"), j("sys1"), j("sys2"),
	}
	if !reflect.DeepEqual(nf.Searched, want) {
		t.Errorf("Searched:\n%q\nwant\n%q", nf.Searched, want)
	}
	if !reflect.DeepEqual(nf.Names, []string{"libonnxruntime.so.1", "libonnxruntime.so"}) {
		t.Errorf("Names %q", nf.Names)
	}
	msg := err.Error()
	last := strings.Index(msg, "$"+LibraryEnv+": not set")
	if last < 0 {
		t.Errorf("message does not say $%s is not set:\n%s", LibraryEnv, msg)
	}
	for _, d := range want {
		i := strings.Index(msg, "\n  "+d+" (")
		if i < last {
			t.Errorf("message lists %s out of order (at %d, previous at %d):\n%s", d, i, last, msg)
		}
		last = i
	}
	for _, hint := range []string{"npm install --ignore-scripts onnxruntime-node@1.30.0", "set " + LibraryEnv,
		"copy libonnxruntime.so.1 beside the onnxconv-plugin-onnxruntime executable"} {
		if !strings.Contains(msg, hint) {
			t.Errorf("message lacks %q:\n%s", hint, msg)
		}
	}

	// Without a checkout above the working directory, node_modules is not
	// searched.
	s.wd = t.TempDir()
	if _, err := s.find(); !errors.As(err, &nf) || len(nf.Searched) != len(want)-1 {
		t.Errorf("no checkout: err = %v", err)
	}
}

// TestFindLibraryPlatforms: names and folders follow GOOS and GOARCH.
func TestFindLibraryPlatforms(t *testing.T) {
	if got := systemDirs("linux", "arm64"); !reflect.DeepEqual(got, []string{"/usr/local/lib/aarch64-linux-gnu", "/usr/local/lib",
		"/usr/lib/aarch64-linux-gnu", "/usr/lib", "/usr/lib64"}) {
		t.Errorf("linux/arm64 system folders %q", got)
	}
	if got := systemDirs("linux", "amd64"); got[2] != "/usr/lib/x86_64-linux-gnu" {
		t.Errorf("linux/amd64 system folders %q", got)
	}
	if got := libraryNames("darwin"); got[0] != "libonnxruntime.dylib" {
		t.Errorf("darwin names %q", got)
	}
	if got := ldPathEnv("darwin"); got != "DYLD_LIBRARY_PATH" {
		t.Errorf("darwin loader path %q", got)
	}
	s := search{wd: "/w", goos: "darwin", goarch: "arm64"}
	if p := filepath.Join("bin", "napi-v6", npmPlatform(s.goos), npmArch(s.goarch)); p != filepath.Join("bin", "napi-v6", "darwin", "arm64") {
		t.Errorf("npm folder %s", p)
	}
}

// TestFindLibraryDefault: the process's own search finds the checkout's
// library when nothing else is set (as the other tests of this package
// rely on), and looks beside the test executable first.
func TestFindLibraryDefault(t *testing.T) {
	t.Setenv(LibraryEnv, "")
	s := defaultSearch()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		t.Fatal(err)
	}
	dirs, _ := s.folders()
	var first []string // the executable's folders, with lib/ in each
	for _, d := range dirs {
		if filepath.Base(d) != "lib" {
			first = append(first, d)
		}
		if len(first) == 2 {
			break
		}
	}
	want := filepath.Dir(exe)
	if filepath.IsAbs(os.Args[0]) && filepath.Dir(os.Args[0]) != want {
		if len(first) < 2 || first[0] != filepath.Dir(os.Args[0]) || first[1] != want {
			t.Errorf("first folders searched %q, want %s then %s", dirs, filepath.Dir(os.Args[0]), want)
		}
	} else if len(dirs) == 0 || dirs[0] != want {
		t.Errorf("first folder searched %q, want the executable's %s", dirs, want)
	}
	real := filepath.Join(repoRoot(t), filepath.FromSlash(NPMLibraryPath))
	if _, err := os.Stat(real); err != nil {
		testpaths.SkipORT(t, fmt.Sprintf("no npm-installed library: %v", err))
	}
	if _, err := FindLibrary(); err != nil {
		t.Errorf("FindLibrary: %v", err)
	}
}
