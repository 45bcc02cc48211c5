package hdf5

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

func fixtureBytes(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testpaths.RepoRoot(t), "fixtures", "hdf5", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readAll parses data and reads every object, attribute and dataset,
// returning the first error.
func readAll(name string, data []byte, opts Options) error {
	f, err := Parse(name, data, opts)
	if err != nil {
		return err
	}
	root, err := f.Root()
	if err != nil {
		return err
	}
	return root.Walk(func(o *Object) error {
		attrs, err := o.Attrs()
		if err != nil {
			return err
		}
		for _, a := range attrs {
			if _, err := a.Strings(); err != nil {
				if _, err := a.Float64s(); err != nil {
					var ue *UnsupportedError
					if !errors.As(err, &ue) {
						return err
					}
				}
			}
		}
		if o.Kind() != KindDataset {
			return nil
		}
		d, err := o.Dataset()
		if err != nil {
			return err
		}
		v, err := d.Read()
		if err != nil {
			return err
		}
		_, _ = v.Float64s()
		return nil
	})
}

// classified reports whether err is one of the package's error types and
// names the file.
func classified(err error, name string) bool {
	var fe *FormatError
	var ue *UnsupportedError
	var ne *NotFoundError
	var le *LimitError
	return (errors.As(err, &fe) || errors.As(err, &ue) || errors.As(err, &ne) || errors.As(err, &le)) &&
		strings.Contains(err.Error(), name)
}

func TestCycle(t *testing.T) {
	f, err := Parse("cycle.h5", fixtureBytes(t, "cycle.h5"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	root, _ := f.Root()
	n := 0
	if err := root.Walk(func(*Object) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 5 { // /, /a, /a/b, /a/b/c, /a/x
		t.Errorf("walk visited %d objects, want 5", n)
	}
	o, err := f.Get("a/" + strings.Repeat("b/c/loop/", 20) + "x")
	if err != nil {
		t.Fatal(err)
	}
	if o.Kind() != KindDataset {
		t.Errorf("%s is a %s", o.Path(), o.Kind())
	}
	_, err = f.Get("a/" + strings.Repeat("b/c/loop/", 100))
	if !classified(err, "cycle.h5") {
		t.Errorf("a 400-deep path: %v, want a FormatError", err)
	}
}

func TestDeepNesting(t *testing.T) {
	err := readAll("deep.h5", fixtureBytes(t, "deep.h5"), Options{})
	if !classified(err, "deep.h5") || !strings.Contains(err.Error(), "deeper") {
		t.Errorf("300 nested groups: %v, want a FormatError naming the depth", err)
	}
}

func TestHugeDims(t *testing.T) {
	start := time.Now()
	err := readAll("huge.h5", fixtureBytes(t, "huge.h5"), Options{})
	var le *LimitError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "huge.h5") {
		t.Errorf("a 2**80-element dataset: %v, want a LimitError", err)
	}
	if time.Since(start) > time.Second {
		t.Errorf("took %v", time.Since(start))
	}
}

func TestNotHDF5(t *testing.T) {
	for _, data := range [][]byte{nil, []byte("PK\x03\x04 not hdf5"), signature} {
		if err := readAll("x.h5", data, Options{}); !classified(err, "x.h5") {
			t.Errorf("%q: %v", data, err)
		}
	}
}

// TestTruncatedAndCorrupted cuts each fixture at many lengths and
// overwrites bytes with 0x00 and 0xff: every case is refused with a
// classified error naming the file, or read, never a panic. (How long
// the cases take is logged, not asserted: a wall-clock bound in a test
// fails on a loaded machine; FuzzRead and the hostile regression set
// bound the work per file.)
func TestTruncatedAndCorrupted(t *testing.T) {
	start := time.Now()
	for _, name := range []string{"earliest.h5", "v18.h5", "latest.h5", "cycle.h5"} {
		data := fixtureBytes(t, name)
		step := max(1, len(data)/400)
		for n := 0; n < len(data); n += step {
			if err := readAll(name, data[:n], Options{MaxBytes: 1 << 20}); err == nil {
				continue
			} else if !classified(err, name) {
				t.Errorf("%s cut at %d: unclassified error %v", name, n, err)
			}
		}
		for off := 0; off < len(data); off += step {
			for _, b := range []byte{0x00, 0xff, 0x7f} {
				mut := append([]byte(nil), data...)
				mut[off] = b
				if err := readAll(name, mut, Options{MaxBytes: 1 << 20}); err != nil && !classified(err, name) {
					t.Errorf("%s with byte %d = %#x: unclassified error %v", name, off, b, err)
				}
			}
		}
	}
	t.Logf("hostile cases took %v", time.Since(start))
}

// FuzzRead parses arbitrary bytes and reads everything in them.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"earliest.h5", "v18.h5", "latest.h5", "cycle.h5", "userblock.h5", "huge.h5"} {
		f.Add(fixtureBytes(f, name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := readAll("fuzz.h5", data, Options{MaxBytes: 1 << 20}); err != nil && !classified(err, "fuzz.h5") {
			t.Errorf("unclassified error: %v", err)
		}
	})
}
