// Package treetest holds test helpers shared by the tree importers' tests:
// check that a registry (the caller's: the built-ins, for detection without
// --from) picks a real file's format, run the ONNX result on the executor
// and the importer's direct predictor on the same inputs, and compare
// outputs. It imports no registry itself: importers/builtin imports every
// importer, and a helper of their tests sits below them.
package treetest

import (
	"bufio"
	"context"
	"encoding/binary"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/importers"
)

// Outputs are named output values (as float64) with their shapes.
type Outputs map[string]Output

// Output is one output.
type Output struct {
	Dims   []int64
	Values []float64
}

// Input makes the model input [rows, cols] of type dt from rows.
func Input(dt canonical.DataType, rows [][]float64) *canonical.Tensor {
	n, f := len(rows), 0
	if n > 0 {
		f = len(rows[0])
	}
	var raw []byte
	for _, r := range rows {
		for _, v := range r {
			if dt == canonical.Double {
				raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(v))
			} else {
				raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(float32(v)))
			}
		}
	}
	return canonical.NewTensor("input", dt, []int64{int64(n), int64(f)}, raw)
}

func collect(t testing.TB, names []string, ts []*canonical.Tensor) Outputs {
	t.Helper()
	out := Outputs{}
	for i, x := range ts {
		v, err := x.Float64s()
		if err != nil {
			t.Fatalf("output %s: %v", names[i], err)
		}
		out[names[i]] = Output{Dims: x.Dims, Values: v}
	}
	return out
}

// Detect checks that reg picks format for path.
func Detect(t testing.TB, reg *importers.Registry, path, format string) importers.Importer {
	t.Helper()
	imp, _, err := reg.Detect(path)
	if err != nil {
		t.Fatalf("detect %s: %v", path, err)
	}
	if got := imp.Describe().FormatName(); got != format {
		t.Fatalf("detect %s: %s, want %s", path, got, format)
	}
	return imp
}

// RunONNX imports path with imp and runs the result on the executor.
func RunONNX(t testing.TB, imp importers.Importer, path string, opts importers.Options, in *canonical.Tensor) Outputs {
	t.Helper()
	res, err := imp.Import(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("import %s: %v", path, err)
	}
	m := res.Model
	defer m.Close()
	ex, err := executor.New(m, executor.Options{})
	if err != nil {
		t.Fatalf("executor: %v", err)
	}
	defer ex.Close()
	outs, err := ex.Run(context.Background(), []*canonical.Tensor{in})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	names := make([]string, len(m.Graph.Outputs))
	for i, o := range m.Graph.Outputs {
		names[i] = o.Name
	}
	return collect(t, names, outs)
}

// RunSource runs imp's direct predictor on in.
func RunSource(t testing.TB, imp importers.Importer, path string, opts importers.Options, in *canonical.Tensor) Outputs {
	t.Helper()
	p, ok := imp.(importers.Predictor)
	if !ok {
		t.Fatalf("%s importer is not an importers.Predictor", imp.Describe().Name)
	}
	src, err := p.Source(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("source %s: %v", path, err)
	}
	defer src.Close()
	outs, err := src.Run(context.Background(), []*canonical.Tensor{in})
	if err != nil {
		t.Fatalf("source run: %v", err)
	}
	names := make([]string, len(outs))
	for i, o := range outs {
		names[i] = o.Name
	}
	return collect(t, names, outs)
}

// MaxRelErr is the largest |a-b| / max(1, |b|)... relative to |b| with a
// floor of floor, over the values; a length mismatch is +Inf.
func MaxRelErr(a, b []float64, floor float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	m := 0.0
	for i := range a {
		if math.IsNaN(a[i]) != math.IsNaN(b[i]) {
			return math.Inf(1)
		}
		if math.IsNaN(a[i]) {
			continue
		}
		d := math.Abs(a[i]-b[i]) / math.Max(floor, math.Abs(b[i]))
		m = math.Max(m, d)
	}
	return m
}

// SameOutputs checks that a and b have the same outputs, shapes and values
// (within rel, relative to max(|b|, 1e-3)); it returns the largest error.
func SameOutputs(t testing.TB, what string, a, b Outputs, rel float64) float64 {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%s: %d outputs vs %d", what, len(a), len(b))
	}
	worst := 0.0
	for name, x := range a {
		y, ok := b[name]
		if !ok {
			t.Errorf("%s: output %s missing", what, name)
			continue
		}
		if !equalDims(x.Dims, y.Dims) {
			t.Errorf("%s: output %s shape %v vs %v", what, name, x.Dims, y.Dims)
			continue
		}
		e := MaxRelErr(x.Values, y.Values, 1e-3)
		worst = math.Max(worst, e)
		if e > rel {
			t.Errorf("%s: output %s differs: max relative error %.3g > %.3g", what, name, e, rel)
		}
	}
	return worst
}

func equalDims(a, b []int64) bool {
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

// ReadTable reads whitespace-separated numbers, one row a line; libsvm
// "i:v" entries go to column i (others NaN) after the first label column
// when libsvm is set (then cols is the feature count).
func ReadTable(t testing.TB, path string, libsvm bool, cols int) [][]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows [][]float64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 {
			continue
		}
		var row []float64
		if libsvm {
			row = make([]float64, cols+1)
			for i := 1; i < len(row); i++ {
				row[i] = math.NaN()
			}
			v, err := strconv.ParseFloat(fs[0], 64)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			row[0] = v
			for _, kv := range fs[1:] {
				k, val, _ := strings.Cut(kv, ":")
				i, err1 := strconv.Atoi(k)
				x, err2 := strconv.ParseFloat(val, 64)
				if err1 != nil || err2 != nil || i < 0 || i >= cols {
					t.Fatalf("%s: bad entry %q", path, kv)
				}
				row[i+1] = x
			}
		} else {
			for _, s := range fs {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				row = append(row, v)
			}
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// Generated makes n rows of f features, deterministic: a spread of values
// (negative, zero, small integers for categorical splits, large), with
// some NaN.
func Generated(n, f int, seed uint64) [][]float64 {
	s := seed*6364136223846793005 + 1442695040888963407
	next := func() uint64 {
		s = s*6364136223846793005 + 1442695040888963407
		return s >> 11
	}
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = make([]float64, f)
		for j := range rows[i] {
			u := float64(next()%1000000) / 1000000
			switch next() % 8 {
			case 0:
				rows[i][j] = math.NaN()
			case 1:
				rows[i][j] = 0
			case 2:
				rows[i][j] = float64(next() % 40)
			case 3:
				rows[i][j] = (u - 0.5) * 20
			case 4:
				rows[i][j] = u * 1000
			default:
				rows[i][j] = (u - 0.3) * 100
			}
		}
	}
	return rows
}
