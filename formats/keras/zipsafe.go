package keras

import (
	"archive/zip"
	"path"
	"path/filepath"
	"strings"

	"github.com/onnxconv/onnxconv/fsys"
)

// localZipName reports whether a zip member name stays inside the archive
// (relative, no "..", no backslash or drive letter).
func localZipName(name string) bool {
	return name != "" && !strings.ContainsAny(name, `\:`) && !path.IsAbs(name) &&
		path.Clean(name) != ".." && !strings.HasPrefix(path.Clean(name), "../")
}

// zipRatio is how many times its compressed size member f may inflate to:
// a stored member not at all, a deflated one fsys.MaxRatio times.
func zipRatio(f *zip.File) int64 {
	if f.Method == zip.Store {
		return 1
	}
	return fsys.MaxRatio
}

// readWeights reads the weights .h5 wp of the architecture JSON path: the
// file named by -O weights as given, the one found beside the JSON
// through fsys (a regular file inside its folder only).
func readWeights(path, wp string, given bool) ([]byte, error) {
	if given {
		return fsys.ReadFile(wp, MaxFileBytes)
	}
	root, err := fsys.OpenRoot(filepath.Dir(path), nil)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.ReadFile(filepath.Base(wp), MaxFileBytes)
}
