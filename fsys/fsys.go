// Package fsys is the one file-access layer of the importers and of the
// format readers under formats/ (it is below both, so that a reader shared
// with an exporter or a runtime is confined the same way): a Root opens
// only regular files inside a model's folder (through os.Root, so no
// path — "..", an absolute name or a symbolic link — reaches outside it),
// and a Budget bounds the bytes one import may read, decompress and
// allocate, shared by every step of that import.
//
// A hostile file cannot make an importer read /etc/passwd through a
// symlinked weight shard, nor read one shard four thousand times, nor
// inflate a zip member or a joblib stream to gigabytes: each of those is
// an error that names the file and the fault.
package fsys

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/onnxconv/onnxconv/internal/bytesize"
)

// Limits shape a Budget: an import may allocate (decompress, fill,
// re-read) Floor bytes, or Ratio times the bytes of the distinct files it
// read, whichever is more, and never more than Max.
type Limits struct {
	Floor int64
	Ratio int64
	Max   int64
}

// DefaultLimits are limits no real model meets: 512 MiB, or 16 times the
// model's files, up to 16 GiB.
func DefaultLimits() Limits {
	return Limits{Floor: 512 << 20, Ratio: 16, Max: 16 << 30}
}

// Budget is the byte budget of one import. It is safe for concurrent use.
type Budget struct {
	mu   sync.Mutex
	lim  Limits
	base int64 // bytes of the distinct files read
	used int64 // bytes allocated beyond them
	read map[string]bool
}

// NewBudget returns a budget with the given limits (zero fields take the
// defaults).
func NewBudget(l Limits) *Budget {
	d := DefaultLimits()
	if l.Floor <= 0 {
		l.Floor = d.Floor
	}
	if l.Ratio <= 0 {
		l.Ratio = d.Ratio
	}
	if l.Max <= 0 {
		l.Max = d.Max
	}
	return &Budget{lim: l, read: map[string]bool{}}
}

// BudgetError is an import that asked for more bytes than its budget.
type BudgetError struct {
	// What is what asked ("weights.bin read again", "zip member
	// model.weights.h5").
	What  string
	Need  int64
	Used  int64
	Limit int64
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("%s needs %s, beyond the import's budget of %s (%s already used): the file asks for far more memory than its size warrants",
		e.What, bytesize.Format(e.Need), bytesize.Format(e.Limit), bytesize.Format(e.Used))
}

func (b *Budget) limit() int64 {
	l := max(b.lim.Floor, b.base*b.lim.Ratio)
	if b.base > 0 && b.base*b.lim.Ratio/b.lim.Ratio != b.base { // overflow
		l = b.lim.Max
	}
	return min(l, b.lim.Max)
}

// Take charges n bytes (an allocation, a decompressed stream, a fill) to
// the budget, or returns a *BudgetError naming what. A nil Budget takes
// anything up to the default floor.
func (b *Budget) Take(n int64, what string) error {
	if b == nil {
		if n < 0 || n > DefaultLimits().Floor {
			return &BudgetError{What: what, Need: n, Limit: DefaultLimits().Floor}
		}
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.limit()
	if n < 0 || n > l-b.used {
		return &BudgetError{What: what, Need: n, Used: b.used, Limit: l}
	}
	b.used += n
	return nil
}

// Release gives back n bytes taken earlier (a buffer dropped).
func (b *Budget) Release(n int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.used = max(0, b.used-n)
	b.mu.Unlock()
}

// readOnce records that the file key of size bytes is read: the first
// read of a file is its own cost (the file is on disk), a repeated read
// is charged.
func (b *Budget) readOnce(key string, size int64) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	first := !b.read[key]
	if first {
		b.read[key] = true
		b.base += size
	}
	b.mu.Unlock()
	if first {
		return nil
	}
	return b.Take(size, key+" read again")
}

// OutsideError is a name that does not lead to a regular file inside the
// model's folder: absolute, with "..", through a symbolic link that
// leaves the folder, or a folder, device or pipe.
type OutsideError struct {
	Root string
	Name string
	Why  string
}

func (e *OutsideError) Error() string {
	return fmt.Sprintf("%s: %s; onnxconv reads only regular files inside the model's folder %s (copy the file into it)",
		e.Name, e.Why, e.Root)
}

// Root is a model's folder, opened for confined reads charged to a
// budget.
type Root struct {
	dir    string
	root   *os.Root
	budget *Budget
}

// OpenRoot opens dir (the model's folder) with budget b (nil: a new
// default budget).
func OpenRoot(dir string, b *Budget) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", dir, err)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("opening the model's folder %s: %w", dir, err)
	}
	if b == nil {
		b = NewBudget(Limits{})
	}
	return &Root{dir: abs, root: r, budget: b}, nil
}

// Dir is the folder's absolute path.
func (r *Root) Dir() string { return r.dir }

// Budget is the import's budget.
func (r *Root) Budget() *Budget { return r.budget }

// Close closes the folder.
func (r *Root) Close() error { return r.root.Close() }

// Local turns name (slash- or OS-separated, relative to the folder) into
// a clean local name, or returns an *OutsideError.
func (r *Root) Local(name string) (string, error) {
	n := filepath.FromSlash(name)
	switch {
	case name == "":
		return "", &OutsideError{Root: r.dir, Name: `""`, Why: "an empty file name"}
	case strings.Contains(name, "://"):
		return "", &OutsideError{Root: r.dir, Name: name, Why: "a URL, not a file name"}
	case filepath.IsAbs(n) || strings.HasPrefix(name, "/"):
		return "", &OutsideError{Root: r.dir, Name: name, Why: "an absolute path; names must be relative to the model's folder"}
	case !filepath.IsLocal(n):
		return "", &OutsideError{Root: r.dir, Name: name, Why: "a path that leaves the model's folder (..)"}
	}
	return filepath.Clean(n), nil
}

// open opens name for reading, a regular file inside the folder.
func (r *Root) open(name string) (*os.File, fs.FileInfo, string, error) {
	n, err := r.Local(name)
	if err != nil {
		return nil, nil, "", err
	}
	f, err := r.root.Open(n)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil, nil, "", fmt.Errorf("%s: %w", filepath.Join(r.dir, n), err)
		}
		// os.Root refuses a link that leaves the folder; say so.
		if r.viaLink(n) {
			return nil, nil, "", &OutsideError{Root: r.dir, Name: name, Why: "a symbolic link to a file outside the folder"}
		}
		return nil, nil, "", fmt.Errorf("%s: %w", filepath.Join(r.dir, n), err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, "", fmt.Errorf("%s: %w", filepath.Join(r.dir, n), err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		what := "not a regular file"
		if st.IsDir() {
			what = "a folder, not a file"
		}
		return nil, nil, "", &OutsideError{Root: r.dir, Name: name, Why: what}
	}
	return f, st, n, nil
}

// viaLink reports whether a component of the local name n is a symbolic
// link.
func (r *Root) viaLink(n string) bool {
	p := ""
	for _, c := range strings.Split(n, string(filepath.Separator)) {
		p = filepath.Join(p, c)
		st, err := r.root.Lstat(p)
		if err != nil {
			return false
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return true
		}
	}
	return false
}

// Stat returns the size of the regular file name inside the folder.
func (r *Root) Stat(name string) (int64, error) {
	f, st, _, err := r.open(name)
	if err != nil {
		return 0, err
	}
	f.Close()
	return st.Size(), nil
}

// ReadFile reads the regular file name inside the folder, at most limit
// bytes (<= 0: no limit but the budget; a larger file is an
// *TooLargeError). A file read a second time is charged to the
// budget.
func (r *Root) ReadFile(name string, limit int64) ([]byte, error) {
	f, st, n, err := r.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	full := filepath.Join(r.dir, n)
	if limit > 0 && st.Size() > limit {
		return nil, &TooLargeError{Path: full, Size: st.Size(), Limit: limit}
	}
	if err := r.budget.readOnce(full, st.Size()); err != nil {
		return nil, err
	}
	buf := make([]byte, st.Size())
	if _, err := io.ReadFull(f, buf); err != nil {
		return nil, fmt.Errorf("reading %s: %w", full, err)
	}
	return buf, nil
}

// ReadAt reads n bytes at off of the regular file name inside the folder,
// charged to the budget.
func (r *Root) ReadAt(name string, off, n int64) ([]byte, error) {
	f, st, ln, err := r.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	full := filepath.Join(r.dir, ln)
	if off < 0 || n < 0 || off > st.Size() || n > st.Size()-off {
		return nil, fmt.Errorf("%s: %d bytes at %d are past the end (%d bytes)", full, n, off, st.Size())
	}
	if err := r.budget.Take(n, full); err != nil {
		return nil, err
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off); err != nil && !(errors.Is(err, io.EOF) && int64(len(buf)) == n) {
		return nil, fmt.Errorf("reading %s: %w", full, err)
	}
	return buf, nil
}
