//go:build unix

package plugins

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
	onnximp "github.com/onnxconv/onnxconv/importers/onnx"
	"github.com/onnxconv/onnxconv/importers/trees/treetest"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// A request of a kept process is bounded by the call timeout on its own,
// and by its caller's context: an import that hangs is killed and
// classified as for a single call (time limit, or canceled), and no
// process is left.
func TestSessionRequestLimits(t *testing.T) {
	dir := pluginDir(t, "hang")
	opts := testOptions(t, dir)
	opts.CallTimeout, opts.StartTimeout = 3*time.Second, 4*time.Second
	h := newHost(t, opts)
	work := t.TempDir()
	in := writeFile(t, filepath.Join(work, "input.hang"), "Relu\n")
	out := filepath.Join(work, "out.onnx")

	start := time.Now()
	_, sess, _, err := h.importKeep(context.Background(), "hang", in, out, map[string]string{})
	elapsed := time.Since(start)
	var pe *PluginError
	if !errors.As(err, &pe) || !errors.Is(err, ErrTimeout) || pe.Op != "import" || !strings.Contains(err.Error(), "did not finish within 3s") {
		t.Errorf("hanging import: %v, want a *PluginError of op import, kind ErrTimeout, within 3s", err)
	}
	if sess != nil {
		t.Error("a session is left after a failed import")
	}
	if limit := opts.CallTimeout + 4*time.Second; elapsed > limit {
		t.Errorf("took %v, want under %v", elapsed, limit)
	}
	if pe != nil {
		assertGone(t, pe.PID)
	}
	assertNoChildren(t)

	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(300*time.Millisecond, func() { cancel(errors.New("the user pressed Ctrl-C")) })
	_, _, _, err = h.importKeep(ctx, "hang", in, out, map[string]string{})
	if !errors.As(err, &pe) || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "Ctrl-C") {
		t.Errorf("canceled import: %v, want a *PluginError of kind context.Canceled naming the cause", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output %s exists after a failure (stat: %v)", out, err)
	}
	assertNoChildren(t)
}

// The process kept by ImportSource serves its source longer than the call
// timeout: each request has the whole timeout, the session as a whole is
// not bounded by it.
func TestSessionOutlivesCallTimeout(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts := BuiltinOptions(testBuiltins(), []string{"__plugin", "serve"})
	opts.Executable = exe
	opts.NoThirdParty = true
	o := testOptions(t, "")
	opts.UserDir, opts.DescribeTimeout, opts.StartTimeout = o.UserDir, o.DescribeTimeout, o.StartTimeout
	opts.CallTimeout = 3 * time.Second
	h := newHost(t, opts)
	r, err := Registry(h, builtin.Importers(), onnximp.Name)
	if err != nil {
		t.Fatal(err)
	}
	imp, err := r.Lookup("xgboost")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "fixtures", "xgboost", "binary_logistic.json")
	res, src, err := imp.(importers.SourceImporter).ImportSource(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Model.Close()
	if src == nil {
		t.Fatal("no source")
	}
	defer src.Close()
	in := xgbInput(t)
	time.Sleep(opts.CallTimeout + 500*time.Millisecond)
	if _, err := src.Run(context.Background(), []*canonical.Tensor{in}); err != nil {
		t.Errorf("a run %v after the import, past the call timeout: %v", opts.CallTimeout+500*time.Millisecond, err)
	}
}

// xgbInput is the input of fixtures/xgboost/binary_logistic.json that
// xgboost's own outputs were stored for.
func xgbInput(t *testing.T) *canonical.Tensor {
	t.Helper()
	x, err := tensorio.ReadNpyFile(filepath.Join("..", "fixtures", "xgboost", "binary_logistic.input.npy"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := x.Float64s()
	if err != nil || len(x.Dims) != 2 {
		t.Fatalf("input: %v (dims %v)", err, x.Dims)
	}
	rows := make([][]float64, x.Dims[0])
	for i := range rows {
		rows[i] = v[i*int(x.Dims[1]) : (i+1)*int(x.Dims[1])]
	}
	return treetest.Input(canonical.Float, rows)
}
