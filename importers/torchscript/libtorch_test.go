package torchscript_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/plugins"
)

// libtorchHost starts a plugin host that finds the libtorch plugin (built
// once per test process), or skips t as testpaths.LibtorchPlugin does.
func libtorchHost(t *testing.T) *plugins.Host {
	t.Helper()
	dir := testpaths.LibtorchPlugin(t)
	host, err := plugins.NewHost(context.Background(), plugins.Options{PluginPath: dir, UserDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return host
}

// runLibtorch runs the archive in dir on libtorch.
func runLibtorch(t *testing.T, host *plugins.Host, dir string, ins []*canonical.Tensor) []*canonical.Tensor {
	t.Helper()
	r, err := host.Runner("libtorch", filepath.Join(dir, "model.pt"), nil, plugins.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	lt, err := r.Run(rctx, ins)
	if err != nil {
		t.Fatalf("libtorch: %v", err)
	}
	return lt
}

// compareLibtorch runs the archive in dir on libtorch and compares it with
// torch's stored outputs and with the converted model's outputs got.
func compareLibtorch(t *testing.T, host *plugins.Host, dir string, f fixture, got []*canonical.Tensor) {
	t.Helper()
	name := filepath.Base(dir)
	lt := runLibtorch(t, host, dir, f.ins)
	if len(lt) != len(got) || len(lt) != len(f.out) {
		t.Fatalf("libtorch gives %d outputs, the converted model %d, torch stored %d", len(lt), len(got), len(f.out))
	}
	for i := range lt {
		if e := relErr(t, lt[i], f.out[i]); e > 1e-6 {
			t.Errorf("output_%d: libtorch differs from torch's stored output by %.3g", i, e)
		}
		e := relErr(t, got[i], lt[i])
		t.Logf("%s output_%d: converted vs libtorch max relative error %.3g", name, i, e)
		if e > 1e-5 {
			t.Errorf("output_%d: converted model vs libtorch %.3g > 1e-5", i, e)
		}
	}
}

// TestAgainstLibtorch runs each committed archive with libtorch through
// the plugin (what `convert x.pt` verifies against) and compares with the
// converted model on the executor and with torch's stored outputs.
func TestAgainstLibtorch(t *testing.T) {
	host := libtorchHost(t)
	root := filepath.Join(testpaths.RepoRoot(t), "fixtures", "torchscript")
	for _, name := range []string{"branchy_scripted", "shufflenet_v2_x0_5_traced", "recurrent_scripted", "transformer_encoder_scripted", "spectrogram_scripted", "more_ops_scripted", "conv_transpose_traced"} {
		t.Run(name, func(t *testing.T) {
			d := filepath.Join(root, name)
			f := loadFixture(t, d)
			m := importDetected(t, filepath.Join(d, "model.pt"), map[string]string{"shapes": shapesOption(f.ins)})
			compareLibtorch(t, host, d, f, run(t, m, f.ins))
		})
	}
}
