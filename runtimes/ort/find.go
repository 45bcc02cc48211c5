//go:build cgo

package ort

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/runtimes/node"
)

// LibraryEnv is the environment variable that names the ONNX Runtime shared
// library file to use; when set, nothing else is searched.
const LibraryEnv = "ONNXRUNTIME_LIB"

// NPMVersion is the onnxruntime-node release whose library onnxconv is
// tested with.
const NPMVersion = "1.30.0"

// NPMLibraryPath is where `npm install --ignore-scripts
// onnxruntime-node@1.30.0` puts the library on linux/amd64, relative to the
// folder npm ran in (FindLibrary looks for the GOOS/GOARCH equivalent).
const NPMLibraryPath = "node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"

// InstallHint tells a person how to get the library.
const InstallHint = "install ONNX Runtime with `onnxconv runtimes install` (npm install --ignore-scripts onnxruntime-node@" + NPMVersion + " into the onnxconv data folder), or `npm install --ignore-scripts onnxruntime-node@" + NPMVersion + "` " +
	"(npm's onnxruntime-node ships the library: " + NPMLibraryPath + " on linux/amd64), " +
	"then set " + LibraryEnv + " to that file, or copy libonnxruntime.so.1 beside the onnxconv-plugin-onnxruntime executable " +
	"or into the user plugins folder"

// ErrLibraryNotFound matches (errors.Is) every *LibraryNotFoundError.
var ErrLibraryNotFound = errors.New("ONNX Runtime shared library not found")

// LibraryNotFoundError is returned by FindLibrary when no ONNX Runtime
// library is found. Its message lists what was searched, in order, and how
// to install the library.
type LibraryNotFoundError struct {
	// Env is the value of $ONNXRUNTIME_LIB when it is set; then it is the
	// only place looked at and Err says why it is unusable.
	Env string
	Err error
	// Names are the file names looked for in each folder of Searched.
	Names []string
	// Searched are the folders looked in, in order.
	Searched []string
	// why[i], when present, says why Searched[i] was looked in.
	why []string
}

func (e *LibraryNotFoundError) Error() string {
	var b strings.Builder
	b.WriteString(ErrLibraryNotFound.Error())
	if e.Env != "" {
		fmt.Fprintf(&b, ": $%s=%q", LibraryEnv, e.Env)
		if e.Err != nil {
			fmt.Fprintf(&b, ": %v", e.Err)
		}
		fmt.Fprintf(&b, " (unset %s to search the default places).\n%s", LibraryEnv, sentence(InstallHint))
		return b.String()
	}
	fmt.Fprintf(&b, ": looked for %s, in order:\n  $%s: not set", strings.Join(e.Names, " or "), LibraryEnv)
	for i, d := range e.Searched {
		b.WriteString("\n  ")
		b.WriteString(d)
		if i < len(e.why) && e.why[i] != "" {
			b.WriteString(" (" + e.why[i] + ")")
		}
	}
	b.WriteString("\n")
	b.WriteString(sentence(InstallHint))
	return b.String()
}

// sentence capitalises the first letter of an ASCII hint and ends it with
// a full stop.
func sentence(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// Is reports whether target is ErrLibraryNotFound.
func (e *LibraryNotFoundError) Is(target error) bool { return target == ErrLibraryNotFound }

// Unwrap returns why $ONNXRUNTIME_LIB is unusable, if it is set.
func (e *LibraryNotFoundError) Unwrap() error { return e.Err }

// FindLibrary returns the path of the ONNX Runtime shared library, looking,
// in this order, at:
//
//  1. $ONNXRUNTIME_LIB (a file; if it is set and names none, that is the
//     error and nothing else is searched);
//  2. the folder of the running executable (the plugin), and lib/ in it:
//     the folder of its absolute os.Args[0] (a link in a plugin folder),
//     then that of os.Executable() with links resolved;
//  3. node_modules/onnxruntime-node/bin/napi-v6/<os>/<arch> in the
//     onnxconv data folder (node.DataDir: 'onnxconv runtimes install'),
//     the user plugins folder (plugins.UserDir), and lib/ in it;
//  4. node_modules/onnxruntime-node/bin/napi-v6/<os>/<arch> under the
//     nearest folder at or above the working directory holding a go.mod
//     (a development checkout, after `npm ci --ignore-scripts`);
//  5. the dynamic loader's folders: $LD_LIBRARY_PATH ($DYLD_LIBRARY_PATH on
//     darwin), /usr/local/lib, /usr/lib and their multiarch folders for
//     GOARCH (/usr/lib/x86_64-linux-gnu on linux/amd64).
//
// In each folder it looks for libonnxruntime.so.1, then libonnxruntime.so
// (libonnxruntime.dylib on darwin, onnxruntime.dll on windows). When none is
// found the error is a *LibraryNotFoundError (matching ErrLibraryNotFound).
func FindLibrary() (string, error) {
	return defaultSearch().find()
}

// search is what FindLibrary looks at, as inputs, so that tests can give
// their own.
type search struct {
	lib     string   // $ONNXRUNTIME_LIB
	exeDirs []string // folders of the running executable: as started, and with links resolved
	userDir string   // user plugins folder; "" unknown
	dataDir string   // onnxconv data folder ('onnxconv runtimes install'); "" unknown
	wd      string   // working directory; "" unknown
	ldPath  string   // $LD_LIBRARY_PATH (or the platform's equivalent)
	sysDirs []string // the loader's default folders
	goos    string
	goarch  string
}

// defaultSearch reads the inputs of FindLibrary from the process.
func defaultSearch() search {
	s := search{lib: os.Getenv(LibraryEnv), goos: runtime.GOOS, goarch: runtime.GOARCH}
	// A plugin host starts a plugin by its absolute path, which may be a
	// symbolic link in a plugin folder: look beside the link, then beside
	// the file it resolves to.
	if len(os.Args) > 0 && filepath.IsAbs(os.Args[0]) {
		s.exeDirs = append(s.exeDirs, filepath.Dir(os.Args[0]))
	}
	if exe, err := os.Executable(); err == nil {
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		s.exeDirs = append(s.exeDirs, filepath.Dir(exe))
	}
	if d, err := plugins.UserDir(); err == nil {
		s.userDir = d
	}
	if d, err := node.DataDir(os.Getenv); err == nil {
		s.dataDir = d
	}
	if wd, err := os.Getwd(); err == nil {
		s.wd = wd
	}
	s.ldPath = os.Getenv(ldPathEnv(s.goos))
	s.sysDirs = systemDirs(s.goos, s.goarch)
	return s
}

// find looks for the library (see FindLibrary).
func (s search) find() (string, error) {
	if s.lib != "" {
		st, err := os.Stat(s.lib)
		switch {
		case err != nil:
			return "", &LibraryNotFoundError{Env: s.lib, Err: err}
		case st.IsDir():
			return "", &LibraryNotFoundError{Env: s.lib, Err: fmt.Errorf("%s is a folder, not the library file", s.lib)}
		}
		return s.lib, nil
	}
	names := libraryNames(s.goos)
	dirs, why := s.folders()
	for _, d := range dirs {
		for _, n := range names {
			p := filepath.Join(d, n)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p, nil
			}
		}
	}
	return "", &LibraryNotFoundError{Names: names, Searched: dirs, why: why}
}

// folders returns the folders to search, in order, without duplicates, and
// why each is searched.
func (s search) folders() (dirs, why []string) {
	seen := map[string]bool{}
	add := func(d, reason string) {
		if d == "" {
			return
		}
		if !filepath.IsAbs(d) {
			if s.wd == "" {
				return
			}
			d = filepath.Join(s.wd, d)
		}
		d = filepath.Clean(d)
		if seen[d] {
			return
		}
		seen[d] = true
		dirs = append(dirs, d)
		why = append(why, reason)
	}
	for _, d := range s.exeDirs {
		add(d, "beside the executable")
		add(filepath.Join(d, "lib"), "beside the executable")
	}
	if s.dataDir != "" {
		add(filepath.Join(s.dataDir, "node_modules", "onnxruntime-node", "bin", "napi-v6", npmPlatform(s.goos), npmArch(s.goarch)),
			"onnxconv runtimes install")
	}
	if s.userDir != "" {
		add(s.userDir, "user plugins folder")
		add(filepath.Join(s.userDir, "lib"), "user plugins folder")
	}
	if s.wd != "" {
		if root, err := moduleRoot(s.wd); err == nil {
			add(filepath.Join(root, "node_modules", "onnxruntime-node", "bin", "napi-v6", npmPlatform(s.goos), npmArch(s.goarch)),
				"npm install in the checkout")
		}
	}
	for _, d := range filepath.SplitList(s.ldPath) {
		add(d, "$"+ldPathEnv(s.goos))
	}
	for _, d := range s.sysDirs {
		add(d, "system library folder")
	}
	return dirs, why
}

// moduleRoot walks up from dir to the first folder holding a go.mod.
func moduleRoot(dir string) (string, error) {
	for d := dir; ; {
		if fi, err := os.Stat(filepath.Join(d, "go.mod")); err == nil && !fi.IsDir() {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod at or above %s", dir)
		}
		d = parent
	}
}

// libraryNames are the file names of the library on goos, preferred first.
func libraryNames(goos string) []string {
	switch goos {
	case "darwin":
		return []string{"libonnxruntime.dylib", "libonnxruntime.1.dylib", "libonnxruntime." + NPMVersion + ".dylib"}
	case "windows":
		return []string{"onnxruntime.dll"}
	}
	return []string{"libonnxruntime.so.1", "libonnxruntime.so"}
}

// ldPathEnv is the variable of extra folders of goos's dynamic loader.
func ldPathEnv(goos string) string {
	switch goos {
	case "darwin":
		return "DYLD_LIBRARY_PATH"
	case "windows":
		return "PATH"
	}
	return "LD_LIBRARY_PATH"
}

// systemDirs are the dynamic loader's default folders.
func systemDirs(goos, goarch string) []string {
	switch goos {
	case "windows":
		return nil
	case "darwin":
		return []string{"/usr/local/lib", "/opt/homebrew/lib", "/usr/lib"}
	}
	var dirs []string
	t := multiarch(goarch)
	if t != "" {
		dirs = append(dirs, "/usr/local/lib/"+t)
	}
	dirs = append(dirs, "/usr/local/lib")
	if t != "" {
		dirs = append(dirs, "/usr/lib/"+t)
	}
	dirs = append(dirs, "/usr/lib")
	if goarch == "amd64" || goarch == "arm64" || goarch == "ppc64le" || goarch == "s390x" || goarch == "riscv64" || goarch == "loong64" {
		dirs = append(dirs, "/usr/lib64")
	}
	return dirs
}

// multiarch is the Debian multiarch triplet of goarch ("" if unknown).
func multiarch(goarch string) string {
	switch goarch {
	case "amd64":
		return "x86_64-linux-gnu"
	case "arm64":
		return "aarch64-linux-gnu"
	case "386":
		return "i386-linux-gnu"
	case "arm":
		return "arm-linux-gnueabihf"
	case "ppc64le":
		return "powerpc64le-linux-gnu"
	case "s390x":
		return "s390x-linux-gnu"
	case "riscv64":
		return "riscv64-linux-gnu"
	case "loong64":
		return "loongarch64-linux-gnu"
	}
	return ""
}

// npmPlatform and npmArch name goos and goarch as onnxruntime-node's bin/
// folders do.
func npmPlatform(goos string) string {
	if goos == "windows" {
		return "win32"
	}
	return goos
}

func npmArch(goarch string) string {
	switch goarch {
	case "amd64":
		return "x64"
	case "386":
		return "ia32"
	}
	return goarch
}
