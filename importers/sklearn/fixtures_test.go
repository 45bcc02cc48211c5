package sklearn_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/importers/sklearn"
)

const fixtureDir = "../../fixtures/sklearn"

type fixture struct {
	Name       string   `json:"name"`
	Class      string   `json:"class"`
	Outputs    []string `json:"outputs"`
	Compressed string   `json:"compressed"`
}

type manifest struct {
	Version string    `json:"sklearn_version"`
	Models  []fixture `json:"models"`
}

func loadManifest(t testing.TB) manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Models) < 20 {
		t.Fatalf("manifest lists %d models", len(m.Models))
	}
	return m
}

// npy is a little-endian C-order .npy array, as float64.
type npy struct {
	shape []int64
	f     []float64
	descr string
}

var (
	reDescr = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	reOrder = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	reShape = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

func readNpy(t testing.TB, name string) npy {
	t.Helper()
	return readNpyFile(t, filepath.Join(fixtureDir, name))
}

func readNpyFile(t testing.TB, name string) npy {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" || b[6] != 1 {
		t.Fatalf("%s: not a version 1 .npy file", name)
	}
	hlen := int(binary.LittleEndian.Uint16(b[8:10]))
	header, data := string(b[10:10+hlen]), b[10+hlen:]
	d, o, s := reDescr.FindStringSubmatch(header), reOrder.FindStringSubmatch(header), reShape.FindStringSubmatch(header)
	if d == nil || o == nil || s == nil || o[1] != "False" {
		t.Fatalf("%s: unsupported header %q", name, header)
	}
	a := npy{descr: d[1]}
	n := int64(1)
	for _, p := range strings.Split(s[1], ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		a.shape = append(a.shape, v)
		n *= v
	}
	size := map[string]int{"<f8": 8, "<i8": 8, "<i4": 4}[a.descr]
	if size == 0 || int64(len(data)) != n*int64(size) {
		t.Fatalf("%s: dtype %s, %d bytes for %d values", name, a.descr, len(data), n)
	}
	a.f = make([]float64, n)
	for i := range a.f {
		switch a.descr {
		case "<f8":
			a.f[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:]))
		case "<i8":
			a.f[i] = float64(int64(binary.LittleEndian.Uint64(data[8*i:])))
		case "<i4":
			a.f[i] = float64(int32(binary.LittleEndian.Uint32(data[4*i:])))
		}
	}
	return a
}

func fixtureFiles(f fixture) []string {
	return []string{f.Name + ".skops", f.Name + ".p0.pkl", f.Name + ".p1.pkl", f.Name + ".p4.pkl", f.Name + ".p5.pkl", f.Name + ".joblib", f.Name + "." + f.Compressed + ".joblib"}
}

// expected maps each graph output to the scikit-learn output stored for
// it, and whether it must match exactly.
func expected(f fixture) map[string]struct {
	file  string
	exact bool
} {
	type e = struct {
		file  string
		exact bool
	}
	has := map[string]bool{}
	for _, o := range f.Outputs {
		has[o] = true
	}
	m := map[string]e{}
	switch {
	case f.Class == "KMeans":
		m["label"] = e{"predict", true}
		m["scores"] = e{"transform", false}
	case f.Class == "IsolationForest":
		m["label"] = e{"predict", true}
		m["scores"] = e{"decision_function", false}
	case has["transform"]:
		m["variable"] = e{"transform", false}
	case has["predict_proba"] || has["decision_function"] || strings.HasSuffix(f.Class, "Classifier") || strings.HasSuffix(f.Class, "NB") || strings.HasSuffix(f.Class, "SVC") || f.Class == "Perceptron":
		m["label"] = e{"predict", true}
		if has["predict_proba"] {
			m["probabilities"] = e{"predict_proba", false}
		}
		if has["decision_function"] {
			m["scores"] = e{"decision_function", false}
		}
	default:
		m["variable"] = e{"predict", false}
	}
	return m
}

func compare(t *testing.T, what string, got *canonical.Tensor, want npy, exact bool) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: missing", what)
		return
	}
	g, err := got.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	if len(g) != len(want.f) {
		t.Errorf("%s: %d values (shape %v), scikit-learn gives %d (shape %v)", what, len(g), got.Dims, len(want.f), want.shape)
		return
	}
	if got.Dims[0] != want.shape[0] {
		t.Errorf("%s: shape %v, scikit-learn %v", what, got.Dims, want.shape)
	}
	bad, worst := 0, 0.0
	for i, w := range want.f {
		if d := math.Abs(g[i]-w) / math.Max(math.Abs(w), 1e-300); d > worst && w != 0 {
			worst = d
		}
		ok := g[i] == w
		if !exact {
			ok = math.Abs(g[i]-w) <= 1e-6*math.Abs(w)+1e-12
		}
		if !ok {
			if bad < 3 {
				t.Errorf("%s[%d]: got %.17g, scikit-learn %.17g", what, i, g[i], w)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values differ", what, bad, len(want.f))
	}
	t.Logf("%s: largest relative difference %.3g", what, worst)
}

func inputTensor(a npy) *canonical.Tensor {
	raw := make([]byte, 8*len(a.f))
	for i, v := range a.f {
		binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(v))
	}
	return canonical.NewTensor(sklearn.InputName, canonical.Double, a.shape, raw)
}

// TestFixturesThroughRegistry detects every fixture file through the
// built-in registry (no format named), imports it, runs it on the
// executor and checks the outputs against what scikit-learn stored; the
// direct Go predictor is checked against the same numbers.
func TestFixturesThroughRegistry(t *testing.T) {
	man := loadManifest(t)
	reg := builtin.Registry()
	for _, f := range man.Models {
		x := readNpy(t, f.Name+".X.npy")
		for _, file := range fixtureFiles(f) {
			t.Run(file, func(t *testing.T) {
				path := filepath.Join(fixtureDir, file)
				imp, conf, err := reg.Detect(path)
				if err != nil {
					t.Fatal(err)
				}
				if imp.Describe().Name != sklearn.Name || conf != 1 {
					t.Fatalf("detected as %s (%.2f)", imp.Describe().Name, conf)
				}
				res, err := imp.Import(context.Background(), path, nil)
				if err != nil {
					t.Fatal(err)
				}
				m := res.Model
				defer m.Close()
				ex, err := executor.New(m, executor.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer ex.Close()
				outs, err := ex.Run(context.Background(), []*canonical.Tensor{inputTensor(x)})
				if err != nil {
					t.Fatal(err)
				}
				src, err := imp.(importers.Predictor).Source(context.Background(), path, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer src.Close()
				direct, err := src.Run(context.Background(), []*canonical.Tensor{inputTensor(x)})
				if err != nil {
					t.Fatal(err)
				}
				if len(direct) != len(outs) {
					t.Fatalf("the Go predictor gives %d outputs, the graph %d", len(direct), len(outs))
				}
				byName := map[string]int{}
				for i, o := range m.Graph.Outputs {
					byName[o.Name] = i
					if direct[i].Name != o.Name || direct[i].DataType != outs[i].DataType || len(direct[i].Dims) != len(outs[i].Dims) {
						t.Errorf("output %d: Go predictor %s %v %v, graph %s %v %v", i, direct[i].Name, direct[i].DataType, direct[i].Dims, o.Name, outs[i].DataType, outs[i].Dims)
					}
				}
				exp := expected(f)
				if len(exp) == 0 {
					t.Fatal("no expected outputs")
				}
				for name, e := range exp {
					i, ok := byName[name]
					if !ok {
						t.Errorf("no output %q (outputs %v)", name, byName)
						continue
					}
					want := readNpy(t, f.Name+"."+e.file+".npy")
					compare(t, "executor "+name, outs[i], want, e.exact)
					compare(t, "Go predictor "+name, direct[i], want, e.exact)
				}
			})
		}
	}
}
