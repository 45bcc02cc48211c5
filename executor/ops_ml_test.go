package executor_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/importers/xgboost"
)

// mlNpy is a little-endian C-order .npy array of float32, float64 or int64.
type mlNpy struct {
	shape []int64
	f     []float64
	descr string
}

var (
	mlNpyDescr = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	mlNpyOrder = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	mlNpyShape = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

func mlReadNpy(t *testing.T, path string) mlNpy {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 12 || string(b[:6]) != "\x93NUMPY" {
		t.Fatalf("%s: not a .npy file", path)
	}
	hlen, off := int(binary.LittleEndian.Uint16(b[8:10])), 10
	if b[6] >= 2 {
		hlen, off = int(binary.LittleEndian.Uint32(b[8:12])), 12
	}
	if off+hlen > len(b) {
		t.Fatalf("%s: truncated header", path)
	}
	header := string(b[off : off+hlen])
	data := b[off+hlen:]
	d, o, s := mlNpyDescr.FindStringSubmatch(header), mlNpyOrder.FindStringSubmatch(header), mlNpyShape.FindStringSubmatch(header)
	if d == nil || o == nil || s == nil || o[1] != "False" {
		t.Fatalf("%s: unsupported header %q", path, header)
	}
	a := mlNpy{descr: d[1]}
	n := int64(1)
	for _, p := range strings.Split(s[1], ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			t.Fatalf("%s: bad shape %q", path, s[1])
		}
		a.shape = append(a.shape, v)
		n *= v
	}
	size := map[string]int{"<f4": 4, "<f8": 8, "<i8": 8}[a.descr]
	if size == 0 || int64(len(data)) != n*int64(size) {
		t.Fatalf("%s: dtype %s with %d bytes for %d values", path, a.descr, len(data), n)
	}
	a.f = make([]float64, n)
	for i := range a.f {
		e := data[i*size:]
		switch a.descr {
		case "<f4":
			a.f[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(e)))
		case "<f8":
			a.f[i] = math.Float64frombits(binary.LittleEndian.Uint64(e))
		case "<i8":
			a.f[i] = float64(int64(binary.LittleEndian.Uint64(e)))
		}
	}
	return a
}

func mlFloatTensor(name string, a mlNpy) *canonical.Tensor {
	raw := make([]byte, 4*len(a.f))
	for i, v := range a.f {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(v)))
	}
	return canonical.NewTensor(name, canonical.Float, a.shape, raw)
}

// TestXGBoostFixtures imports the xgboost fixtures with TreeEnsemble (ml
// 5) and TreeEnsembleRegressor (ml 3), runs them on the executor and
// compares every output with the predictions xgboost stored (1e-5
// relative, 1e-6 absolute; labels exactly).
func TestXGBoostFixtures(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "fixtures", "xgboost")
	mb, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var man struct {
		Models []struct {
			Name, Objective, Booster string
			Outputs                  []string
		}
	}
	if err := json.Unmarshal(mb, &man); err != nil {
		t.Fatal(err)
	}
	if len(man.Models) < 20 {
		t.Fatalf("manifest lists %d models, expected the full fixture set", len(man.Models))
	}
	ran := 0
	for _, fm := range man.Models {
		src, err := os.ReadFile(filepath.Join(dir, fm.Name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		input := mlReadNpy(t, filepath.Join(dir, fm.Name+".input.npy"))
		for _, ml := range []int{5, 3} {
			for _, output := range []string{xgboost.OutputPredict, xgboost.OutputMargin} {
				t.Run(fmt.Sprintf("%s/ml%d/%s", fm.Name, ml, output), func(t *testing.T) {
					m, err := xgboost.Import(src, xgboost.Options{MLOpset: ml, Output: output})
					if strings.HasPrefix(fm.Name, "categorical") && ml < 5 {
						if err == nil {
							t.Fatal("categorical splits imported at ml opset 3")
						}
						return
					}
					if err != nil {
						t.Fatalf("import: %v", err)
					}
					if fm.Booster != "gblinear" {
						wantOp := "TreeEnsemble"
						if ml == 3 {
							wantOp = "TreeEnsembleRegressor"
						}
						found := false
						for _, n := range m.Graph.Nodes {
							found = found || n.OpType == wantOp
						}
						if !found {
							t.Fatalf("imported model has no %s node", wantOp)
						}
					}
					ex, err := executor.New(m, executor.Options{})
					if err != nil {
						t.Fatal(err)
					}
					defer ex.Close()
					outs, err := ex.Run(context.Background(), []*canonical.Tensor{mlFloatTensor("input", input)})
					if err != nil {
						t.Fatal(err)
					}
					byName := map[string]*canonical.Tensor{}
					for i, o := range m.Graph.Outputs {
						byName[o.Name] = outs[i]
					}
					want := []string{"margin"}
					if output == xgboost.OutputPredict {
						want = []string{"predict"}
						for _, o := range fm.Outputs {
							if o == "label" || o == "probabilities" {
								want = append(want, o)
							}
						}
					}
					if len(outs) != len(want) {
						t.Fatalf("model has %d outputs, want %v", len(outs), want)
					}
					for _, name := range want {
						exact := name == "label" || name == "predict" && (fm.Objective == "multi:softmax" || fm.Objective == "binary:hinge")
						mlCompare(t, name, byName[name], mlReadNpy(t, filepath.Join(dir, fm.Name+"."+name+".npy")), exact)
					}
					ran++
				})
			}
		}
	}
	if ran < 80 {
		t.Errorf("only %d model runs compared", ran)
	}
}

func mlCompare(t *testing.T, what string, got *canonical.Tensor, want mlNpy, exact bool) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: output missing", what)
		return
	}
	if fmt.Sprint(got.Dims) != fmt.Sprint(want.shape) {
		t.Errorf("%s: shape %v, xgboost gives %v", what, got.Dims, want.shape)
		return
	}
	g, err := got.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i, w := range want.f {
		ok := g[i] == w
		if !exact {
			ok = math.Abs(g[i]-w) <= 1e-6+1e-5*math.Abs(w)
		}
		if !ok {
			if bad < 3 {
				t.Errorf("%s[%d]: got %.9g, xgboost %.9g", what, i, g[i], w)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values differ", what, bad, len(want.f))
	}
}
