package torchscript_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// LargeModelsEnv names the folder fixtures/torchscript/make.py --large
// wrote the torchvision models to.
const LargeModelsEnv = "ONNXCONV_LARGE_MODELS"

// fixture is a model folder of make.py: model.pt and test_data_set_0.
type fixture struct {
	dir string
	ins []*canonical.Tensor
	out []*canonical.Tensor
}

func loadFixture(t *testing.T, dir string) fixture {
	t.Helper()
	f := fixture{dir: dir}
	for i := 0; ; i++ {
		p := filepath.Join(dir, "test_data_set_0", fmt.Sprintf("input_%d.npy", i))
		if _, err := os.Stat(p); err != nil {
			break
		}
		x, err := tensorio.ReadNpyFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f.ins = append(f.ins, x)
	}
	for i := 0; ; i++ {
		p := filepath.Join(dir, "test_data_set_0", fmt.Sprintf("output_%d.npy", i))
		if _, err := os.Stat(p); err != nil {
			break
		}
		y, err := tensorio.ReadNpyFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f.out = append(f.out, y)
	}
	if len(f.ins) == 0 || len(f.out) == 0 {
		t.Fatalf("%s: no stored inputs or outputs", dir)
	}
	return f
}

func shapesOption(ins []*canonical.Tensor) string {
	var parts []string
	for _, x := range ins {
		if len(x.Dims) == 0 {
			parts = append(parts, "s")
			continue
		}
		var ds []string
		for _, d := range x.Dims {
			ds = append(ds, fmt.Sprint(d))
		}
		p := strings.Join(ds, "x")
		if x.DataType == canonical.Int64 {
			p += ":int64"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ";")
}

// importDetected imports path through the built-in registry, detected by
// content (no --from).
func importDetected(t *testing.T, path string, opts map[string]string) *canonical.Model {
	t.Helper()
	reg := builtin.Registry()
	imp, _, err := reg.Detect(path)
	if err != nil {
		t.Fatalf("detect %s: %v", path, err)
	}
	if imp.Describe().Name != "torchscript" {
		t.Fatalf("detect %s: %s, want torchscript", path, imp.Describe().Name)
	}
	res, err := imp.Import(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("import %s: %v", path, err)
	}
	t.Cleanup(func() { res.Model.Close() })
	return res.Model
}

func run(t *testing.T, m *canonical.Model, ins []*canonical.Tensor) []*canonical.Tensor {
	t.Helper()
	ex, err := executor.New(m, executor.Options{})
	if err != nil {
		t.Fatalf("executor: %v", err)
	}
	defer ex.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	outs, err := ex.Run(ctx, ins)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return outs
}

// relErr is max |got−want| / (|want| + max|want|), the error relative to
// each value with the output's largest magnitude as the floor for values
// near zero (float32 sums in another order), as numpy's allclose with an
// absolute tolerance of rtol times that magnitude (the project's other
// fixture tests compare the same way).
func relErr(t *testing.T, got, want *canonical.Tensor) float64 {
	t.Helper()
	g, err := got.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	w, err := want.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	if len(g) != len(w) {
		t.Fatalf("%d values, want %d (shape %v, want %v)", len(g), len(w), got.Dims, want.Dims)
	}
	scale := 0.0
	for _, x := range w {
		scale = math.Max(scale, math.Abs(float64(x)))
	}
	worst := 0.0
	for i := range g {
		d := math.Abs(float64(g[i]) - float64(w[i]))
		if math.IsNaN(float64(g[i])) {
			d = math.Inf(1)
		}
		worst = math.Max(worst, d/(math.Abs(float64(w[i]))+scale+1e-12))
	}
	return worst
}

func checkFixture(t *testing.T, dir string, ops ...string) {
	checkFixtureOn(t, nil, dir, ops...)
}

// checkFixtureOn also compares with libtorch when host is not nil.
func checkFixtureOn(t *testing.T, host *plugins.Host, dir string, ops ...string) {
	f := loadFixture(t, dir)
	m := importDetected(t, filepath.Join(dir, "model.pt"), map[string]string{"shapes": shapesOption(f.ins)})
	for _, op := range ops {
		found := false
		for _, n := range m.Graph.Nodes {
			found = found || n.OpType == op
		}
		if !found {
			t.Errorf("%s: no %s node", dir, op)
		}
	}
	outs := run(t, m, f.ins)
	if len(outs) != len(f.out) {
		t.Fatalf("%d outputs, want %d", len(outs), len(f.out))
	}
	for i := range outs {
		e := relErr(t, outs[i], f.out[i])
		t.Logf("%s output_%d: max relative error %.3g", filepath.Base(dir), i, e)
		if e > 1e-5 {
			t.Errorf("%s output_%d: max relative error %.3g > 1e-5", filepath.Base(dir), i, e)
		}
	}
	if host != nil {
		compareLibtorch(t, host, dir, f, outs)
	}
}

// TestFixtures converts the committed archives of make.py without --from
// and compares the executor's outputs with torch's.
func TestFixtures(t *testing.T) {
	root := filepath.Join(testpaths.RepoRoot(t), "fixtures", "torchscript")
	// the if on a tensor is an If, the for loop a Loop
	t.Run("branchy_scripted", func(t *testing.T) { checkFixture(t, filepath.Join(root, "branchy_scripted"), "If", "Loop") })
	t.Run("recurrent_scripted", func(t *testing.T) { checkFixture(t, filepath.Join(root, "recurrent_scripted"), "LSTM", "GRU") })
	for _, name := range []string{"shufflenet_v2_x0_5_traced", "transformer_encoder_scripted", "spectrogram_scripted", "more_ops_scripted", "conv_transpose_traced"} {
		t.Run(name, func(t *testing.T) { checkFixture(t, filepath.Join(root, name)) })
	}
}

// TestLargeFixtures does the same for the torchvision models make.py
// --large writes (tens of MB each, not committed), and compares them with
// libtorch too (testpaths.Libtorch: ONNXCONV_SKIP_LIBTORCH=1 skips that).
func TestLargeFixtures(t *testing.T) {
	dir := os.Getenv(LargeModelsEnv)
	if dir == "" {
		t.Skip("set " + LargeModelsEnv + " to the folder of 'fixtures/torchscript/make.py --large DIR'")
	}
	var host *plugins.Host
	if os.Getenv(testpaths.SkipLibtorchEnv) != "1" {
		host = libtorchHost(t)
	}
	for _, name := range []string{"resnet18_traced", "mobilenet_v3_small_traced", "googlenet_traced", "densenet121_traced", "shufflenet_v2_x1_0_traced"} {
		t.Run(name, func(t *testing.T) { checkFixtureOn(t, host, filepath.Join(dir, "torchscript", name)) })
	}
}
