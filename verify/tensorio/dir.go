package tensorio

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
)

// MaxNpzMembers bounds the number of arrays read from one .npz archive.
const MaxNpzMembers = 1 << 16

// ReadNpz reads every array of a NumPy .npz archive (np.savez or
// np.savez_compressed), keyed by name without the .npy suffix.
func ReadNpz(path string) (map[string]*canonical.Tensor, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, fmt.Errorf("npz %s: %w", path, err)
	}
	defer zr.Close()
	if len(zr.File) > MaxNpzMembers {
		return nil, fmt.Errorf("npz %s: %d members exceed the limit of %d", path, len(zr.File), MaxNpzMembers)
	}
	out := map[string]*canonical.Tensor{}
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, ".npy") {
			return nil, fmt.Errorf("npz %s: member %q is not an .npy array", path, f.Name)
		}
		name := strings.TrimSuffix(f.Name, ".npy")
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("npz %s: member %q appears twice", path, f.Name)
		}
		if f.UncompressedSize64 > uint64(MaxArrayBytes)+MaxHeaderLen+16 {
			return nil, fmt.Errorf("npz %s: member %q declares %d bytes, over the limit", path, f.Name, f.UncompressedSize64)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("npz %s: member %q: %w", path, f.Name, err)
		}
		// The declared size is checked against the shape by ReadNpy, and
		// the reader never yields more than declared (archive/zip checks
		// the size and CRC at EOF), so a lying header cannot make us read
		// more than the shape needs.
		size := int64(f.UncompressedSize64)
		t, err := ReadNpy(io.LimitReader(rc, size), name, size)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("npz %s: member %q: %w", path, f.Name, err)
		}
		out[name] = t
	}
	return out, nil
}

// ReadTensorFile reads one tensor from a .pb (TensorProto) or .npy file.
func ReadTensorFile(path string) (*canonical.Tensor, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".npy":
		return ReadNpyFile(path)
	case ".pb":
		return canonical.ReadTensorFile(path)
	}
	return nil, fmt.Errorf("%s: unknown tensor file type (want .pb or .npy)", path)
}

// SafeName maps a value name to a file name: path separators and colons
// become underscores.
func SafeName(s string) string {
	return strings.NewReplacer("/", "_", "\\", "_", ":", "_").Replace(s)
}

// SetDirs returns the sample folders under path: its test_data_set_N
// subfolders in numeric order when it has any, else path itself. A path
// naming an .npz file is one sample.
func SetDirs(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("tensor folder: %w", err)
	}
	if !st.IsDir() {
		if strings.EqualFold(filepath.Ext(path), ".npz") {
			return []string{path}, nil
		}
		return nil, fmt.Errorf("%s: not a folder or an .npz file", path)
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("tensor folder: %w", err)
	}
	type set struct {
		n   int
		dir string
	}
	var sets []set
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "test_data_set_") {
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "test_data_set_"))
		if err != nil {
			continue
		}
		sets = append(sets, set{n, filepath.Join(path, e.Name())})
	}
	if len(sets) == 0 {
		return []string{path}, nil
	}
	sort.Slice(sets, func(i, j int) bool { return sets[i].n < sets[j].n })
	dirs := make([]string, len(sets))
	for i, s := range sets {
		dirs[i] = s.dir
	}
	return dirs, nil
}

// LoadSet reads one sample: one tensor per name from dir (a folder, or an
// .npz file), found as LoadSamples finds them. It is LoadSamples for a
// single sample folder whose values are known by name only.
func LoadSet(dir, prefix string, names []string) ([]*canonical.Tensor, error) {
	return loadSample(dir, prefix, names, false)
}
