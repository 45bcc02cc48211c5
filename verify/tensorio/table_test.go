package tensorio

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestReadTableLightGBMTSV reads a real test table of a LightGBM model
// (leaves' breast cancer TSV, 30 features).
func TestReadTableLightGBMTSV(t *testing.T) {
	p := testpaths.Shared(t, "models", "lightgbm", "leaves_breast_cancer_binary", "breast_cancer_test.tsv")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	first := strings.Split(strings.SplitN(string(b), "\n", 2)[0], "\t")
	tt, err := ReadTableFile(p, "x", canonical.Float, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(tt.Dims) != 2 || tt.Dims[1] != int64(len(first)) || tt.Dims[0] < 10 {
		t.Fatalf("dims %v (first line has %d cells)", tt.Dims, len(first))
	}
	vs, _ := tt.Float64s()
	if math.Abs(vs[0]-mustFloat(t, first[0])) > 1e-6*math.Max(1, math.Abs(vs[0])) {
		t.Errorf("first cell %v, file says %s", vs[0], first[0])
	}
	if _, err := ReadTableFile(p, "x", canonical.Float, 3); err == nil {
		t.Error("a 3-column input accepted the table")
	}
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	var x float64
	if _, err := fmt.Sscan(s, &x); err != nil {
		t.Fatal(err)
	}
	return x
}

// TestReadTableCSV: a header is skipped, empty cells are NaN, ragged rows
// and text are refused with the line.
func TestReadTableCSV(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.csv")
	if err := os.WriteFile(p, []byte("a,b,c\n1,2,3\n4,,6\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tt, err := ReadTableFile(p, "x", canonical.Double, 3)
	if err != nil {
		t.Fatal(err)
	}
	vs, _ := tt.Float64s()
	if len(vs) != 6 || vs[0] != 1 || !math.IsNaN(vs[4]) || vs[5] != 6 {
		t.Errorf("values %v", vs)
	}
	for _, bad := range []string{"1,2\n3\n", "1,2\nx,y\n", "", "1.5\n"} {
		if err := os.WriteFile(p, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		dt := canonical.Float
		if bad == "1.5\n" {
			dt = canonical.Int64
		}
		if _, err := ReadTableFile(p, "x", dt, 0); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzReadTable(f *testing.F) {
	// Tables other tools wrote: LightGBM's test data (TSV) and its
	// predictions.
	testpaths.AddFiles(f, "../../../shared/models/lightgbm/leaves_rf_iris/lg_rf_iris_true_predictions.txt",
		"../../../shared/models/lightgbm/leaves_dart_breast_cancer/lg_dart_breast_cancer_true_predictions.txt")
	f.Add([]byte("a,b\n1,2\n3,4\n"))
	f.Add([]byte("1\t2\n\n3\tnan\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tt, err := ReadTable(strings.NewReader(string(b)), ',', "x", canonical.Float, 0)
		if err == nil && (len(tt.Dims) != 2 || tt.Dims[0] < 1) {
			t.Fatalf("dims %v", tt.Dims)
		}
	})
}
