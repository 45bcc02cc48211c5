package hdf5

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// expectation is what h5py read from a file (fixtures/hdf5/expected.json,
// written by fixtures/hdf5/make_fixtures.py).
type expectation struct {
	Attrs map[string]struct {
		Shape   []int     `json:"shape"`
		Strings []string  `json:"strings"`
		Numbers []float64 `json:"numbers"`
		Ints    []int64   `json:"ints"`
	} `json:"attrs"`
	Members []string  `json:"members"`
	Dtype   string    `json:"dtype"`
	Shape   []int     `json:"shape"`
	SHA256  string    `json:"sha256"`
	Values  []float64 `json:"values"`
	Sum     float64   `json:"sum"`
}

func loadExpected(t *testing.T) map[string]map[string]expectation {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testpaths.RepoRoot(t), "fixtures", "hdf5", "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]map[string]expectation
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// fileBytes returns the bytes of an expected.json key: a fixture, a
// shared file, or model.weights.h5 inside a shared .keras zip.
func fileBytes(t *testing.T, key string) []byte {
	t.Helper()
	if rel, ok := strings.CutPrefix(key, "shared:"); ok {
		zipPath, member, inZip := strings.Cut(rel, "!")
		p := testpaths.Shared(t, "models", zipPath)
		if !inZip {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		zr, err := zip.OpenReader(p)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		rc, err := zr.Open(member)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b, err := os.ReadFile(filepath.Join(testpaths.RepoRoot(t), "fixtures", "hdf5", key))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var dtypeNames = map[string]string{
	"float32": "float32", "float64": "float64", "float16": "float16", "int8": "int8", "int16": "int16",
	"int32": "int32", "int64": "int64", "uint8": "uint8", "uint16": "uint16", ">u2": "uint16", "uint32": "uint32", "uint64": "uint64",
}

func numpyName(dt *Datatype) string {
	switch dt.Class {
	case ClassFloat:
		return dt.String()
	case ClassInteger:
		return dt.String()
	}
	return dt.Class.String()
}

// littleEndian returns the raw elements in little-endian order.
func littleEndian(v *Value) []byte {
	if !v.Type.BigEndian {
		return v.raw
	}
	out := make([]byte, len(v.raw))
	es := v.Type.Size
	for i := 0; i+es <= len(out); i += es {
		for j := 0; j < es; j++ {
			out[i+j] = v.raw[i+es-1-j]
		}
	}
	return out
}

// TestAgainstH5py reads every fixture and every real Keras weight file
// and compares members, attributes and dataset values with what h5py read.
func TestAgainstH5py(t *testing.T) {
	all := loadExpected(t)
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		t.Run(strings.ReplaceAll(key, "/", "_"), func(t *testing.T) {
			want := all[key]
			f, err := Parse(key, fileBytes(t, key), Options{})
			if err != nil {
				t.Fatal(err)
			}
			root, err := f.Root()
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			datasets := 0
			err = root.Walk(func(o *Object) error {
				seen[o.Path()] = true
				e, ok := want[o.Path()]
				if !ok {
					t.Errorf("%s: h5py does not list it", o.Path())
					return nil
				}
				checkAttrs(t, o, e)
				if o.Kind() == KindGroup {
					links, err := o.Links()
					if err != nil {
						return err
					}
					var names []string
					for _, l := range links {
						names = append(names, l.Name)
					}
					if strings.Join(names, ",") != strings.Join(e.Members, ",") {
						t.Errorf("%s: members %v, h5py %v", o.Path(), names, e.Members)
					}
					return nil
				}
				datasets++
				d, err := o.Dataset()
				if err != nil {
					return err
				}
				if got := numpyName(d.Type); got != dtypeNames[e.Dtype] {
					t.Errorf("%s: type %s, h5py %s", o.Path(), got, e.Dtype)
				}
				if !equalInts(d.Shape, e.Shape) {
					t.Errorf("%s: shape %v, h5py %v", o.Path(), d.Shape, e.Shape)
				}
				v, err := d.Read()
				if err != nil {
					return err
				}
				sum := sha256.Sum256(littleEndian(v))
				if hex.EncodeToString(sum[:]) != e.SHA256 {
					t.Errorf("%s: sha256 of the values differs from h5py's", o.Path())
				}
				vals, err := v.Float64s()
				if err != nil {
					return err
				}
				var s float64
				for _, x := range vals {
					s += x
				}
				if math.Abs(s-e.Sum) > 1e-9*(1+math.Abs(e.Sum)) {
					t.Errorf("%s: sum %g, h5py %g", o.Path(), s, e.Sum)
				}
				for i, w := range e.Values[:min(6, len(e.Values))] {
					if vals[i] != w {
						t.Errorf("%s[%d] = %g, h5py %g", o.Path(), i, vals[i], w)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for p := range want {
				if !seen[p] {
					t.Errorf("%s: listed by h5py, not found", p)
				}
			}
			t.Logf("superblock v%d, %d objects, %d datasets", f.SuperblockVersion(), len(seen), datasets)
		})
	}
}

func checkAttrs(t *testing.T, o *Object, e expectation) {
	t.Helper()
	attrs, err := o.Attrs()
	if err != nil {
		t.Errorf("%s: %v", o.Path(), err)
		return
	}
	if len(attrs) != len(e.Attrs) {
		t.Errorf("%s: %d attributes, h5py %d", o.Path(), len(attrs), len(e.Attrs))
	}
	for _, a := range attrs {
		w, ok := e.Attrs[a.Name]
		if !ok {
			t.Errorf("%s@%s: not listed by h5py", o.Path(), a.Name)
			continue
		}
		if !equalInts(a.Shape, w.Shape) && !(len(a.Shape) == 0 && len(w.Shape) == 0) {
			t.Errorf("%s@%s: shape %v, h5py %v", o.Path(), a.Name, a.Shape, w.Shape)
		}
		switch {
		case w.Strings != nil:
			got, err := a.Strings()
			if err != nil || strings.Join(got, "\x00") != strings.Join(w.Strings, "\x00") {
				t.Errorf("%s@%s: %q (%v), h5py %q", o.Path(), a.Name, got, err, w.Strings)
			}
		case w.Ints != nil:
			got, err := a.Int64s()
			if err != nil || len(got) != len(w.Ints) || (len(got) > 0 && got[0] != w.Ints[0]) {
				t.Errorf("%s@%s: %v (%v), h5py %v", o.Path(), a.Name, got, err, w.Ints)
			}
		default:
			got, err := a.Float64s()
			if err != nil || len(got) != len(w.Numbers) {
				t.Errorf("%s@%s: %v (%v), h5py %v", o.Path(), a.Name, got, err, w.Numbers)
				continue
			}
			for i := range got {
				if got[i] != w.Numbers[i] {
					t.Errorf("%s@%s[%d] = %g, h5py %g", o.Path(), a.Name, i, got[i], w.Numbers[i])
				}
			}
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var _ = errors.As
