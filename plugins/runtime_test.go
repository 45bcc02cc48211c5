//go:build unix

package plugins

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// ortLibrary returns the absolute path of the ONNX Runtime library, or
// skips the test (counted and reported by TestMain, which fails the package
// unless ONNXCONV_SKIP_ORT=1).
func ortLibrary(t *testing.T) string {
	t.Helper()
	return testpaths.ORT(t)
}

// buildORTPlugin builds cmd/onnxconv-plugin-onnxruntime (cgo) into a new
// folder and returns the folder.
func buildORTPlugin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, ExecutablePrefix+"onnxruntime"), "../cmd/onnxconv-plugin-onnxruntime")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("%s", out)
		testpaths.SkipORT(t, "building the ONNX Runtime plugin (needs cgo): "+err.Error())
	}
	return dir
}

func readTensorProto(t *testing.T, path string) *onnxpb.TensorProto {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tp := &onnxpb.TensorProto{}
	if err := proto.Unmarshal(data, tp); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tp
}

func floats(t *testing.T, raw []byte) []float32 {
	t.Helper()
	if len(raw)%4 != 0 {
		t.Fatalf("%d bytes is not a float32 array", len(raw))
	}
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

// maxAbsDiff compares float32 tensors of the same length.
func maxAbsDiff(t *testing.T, got, want []float32) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d values, want %d", len(got), len(want))
	}
	m := 0.0
	for i := range got {
		m = max(m, math.Abs(float64(got[i])-float64(want[i])))
	}
	return m
}

// TestRuntimeORT runs the mlp fixture on ONNX Runtime through the plugin
// and checks the outputs against those torch computed.
func TestRuntimeORT(t *testing.T) {
	lib := ortLibrary(t)
	dir := buildORTPlugin(t)
	t.Setenv("ONNXRUNTIME_LIB", lib)
	opts := testOptions(t, dir)
	opts.CallTimeout = 60 * time.Second
	opts.MemoryLimit = 2 << 30
	h := newHost(t, opts)
	ctx := context.Background()

	p, ok := h.Plugin("onnxruntime")
	if !ok || p.Err != nil || p.Kind() != "runtime" || p.Runtime == nil || p.Runtime.Name != "onnxruntime" {
		t.Fatalf("plugin onnxruntime: found %v, %+v", ok, p)
	}
	if rts := h.Runtimes(); len(rts) != 1 || rts[0].Name != "onnxruntime" {
		t.Errorf("Runtimes() = %+v", rts)
	}

	fix := filepath.Join("..", "fixtures", "models", "mlp_opset17")
	model := filepath.Join(fix, "model.onnx")
	in := readTensorProto(t, filepath.Join(fix, "test_data_set_0", "input_0.pb"))
	want := readTensorProto(t, filepath.Join(fix, "test_data_set_0", "output_0.pb"))
	wantF := floats(t, want.GetRawData())

	t.Run("host.Run", func(t *testing.T) {
		for _, ro := range []RunOptions{{Threads: 1}, {Threads: 1, Options: map[string]string{"optimization": "disable"}}} {
			outs, err := h.Run(ctx, "onnxruntime", model, []*onnxpb.TensorProto{in}, ro)
			if err != nil {
				t.Fatalf("Run(%+v): %v", ro, err)
			}
			if len(outs) != 1 || outs[0].GetName() != "output" || !equalDims(outs[0].GetDims(), []int64{4, 10}) ||
				outs[0].GetDataType() != int32(onnxpb.TensorProto_FLOAT) {
				t.Fatalf("Run(%+v) outputs: %d, first %q %v type %d", ro, len(outs), outs[0].GetName(), outs[0].GetDims(), outs[0].GetDataType())
			}
			// torch and ONNX Runtime agree to float32 rounding.
			if d := maxAbsDiff(t, floats(t, outs[0].GetRawData()), wantF); d > 1e-5 {
				t.Errorf("Run(%+v): max abs diff from torch's output %g, want <= 1e-5", ro, d)
			}
		}
		assertNoChildren(t)
	})

	t.Run("Runner", func(t *testing.T) {
		x, err := canonical.TensorFromProto(in)
		if err != nil {
			t.Fatal(err)
		}
		x.Name = "not_the_input_name" // the runner names inputs after the graph
		r, err := h.Runner("onnxruntime", model, []string{"input"}, RunOptions{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		outs, err := r.Run(ctx, []*canonical.Tensor{x})
		if err != nil {
			t.Fatal(err)
		}
		raw, err := outs[0].Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if d := maxAbsDiff(t, floats(t, raw), wantF); len(outs) != 1 || outs[0].DataType != canonical.Float || d > 1e-5 {
			t.Errorf("Runner: %d outputs, type %v, max abs diff %g", len(outs), outs[0].DataType, d)
		}
		if _, err := r.Run(ctx, nil); err == nil || !strings.Contains(err.Error(), "0 inputs given, the model takes 1") {
			t.Errorf("Runner with no inputs: %v", err)
		}
	})

	t.Run("OpenRuntime", func(t *testing.T) {
		// One process serves every run of the session; a failed run ends
		// it, and Close leaves no process.
		x, err := canonical.TensorFromProto(in)
		if err != nil {
			t.Fatal(err)
		}
		s, err := h.OpenRuntime(ctx, "onnxruntime", model, []string{"input"}, RunOptions{Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			outs, err := s.Run(ctx, []*canonical.Tensor{x})
			if err != nil {
				t.Fatalf("run %d: %v", i, err)
			}
			raw, err := outs[0].Bytes()
			if err != nil {
				t.Fatal(err)
			}
			if d := maxAbsDiff(t, floats(t, raw), wantF); d > 1e-5 {
				t.Errorf("run %d: max abs diff from torch's output %g", i, d)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(ctx, []*canonical.Tensor{x}); err == nil {
			t.Error("a closed session ran")
		}
		assertNoChildren(t)
	})

	t.Run("errors", func(t *testing.T) {
		// A wrong shape: ONNX Runtime refuses it, the plugin reports it.
		bad := proto.Clone(in).(*onnxpb.TensorProto)
		bad.Dims = []int64{8, 16}
		_, err := h.Run(ctx, "onnxruntime", model, []*onnxpb.TensorProto{bad}, RunOptions{Threads: 1})
		var perr *PluginError
		if !errors.As(err, &perr) || !errors.Is(err, ErrFailed) || perr.Op != "run" || perr.Input != model {
			t.Errorf("wrong shape: %v, want a run failure of %s", err, model)
		}
		_, err = h.Run(ctx, "onnxruntime", model, []*onnxpb.TensorProto{in}, RunOptions{Options: map[string]string{"fast": "yes"}})
		if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), `unknown option "fast"`) {
			t.Errorf("unknown option: %v", err)
		}
		_, err = h.Run(ctx, "onnxruntime", filepath.Join(fix, "missing.onnx"), []*onnxpb.TensorProto{in}, RunOptions{})
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("missing model: %v", err)
		}
		assertNoChildren(t)
	})

	t.Run("library missing", func(t *testing.T) {
		t.Setenv("ONNXRUNTIME_LIB", filepath.Join(t.TempDir(), "libonnxruntime.so.1"))
		_, err := h.Run(ctx, "onnxruntime", model, []*onnxpb.TensorProto{in}, RunOptions{Threads: 1})
		if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), "ONNX Runtime shared library not found") ||
			!strings.Contains(err.Error(), "npm install --ignore-scripts onnxruntime-node@1.30.0") {
			t.Errorf("library missing: %v", err)
		}
	})
}

// TestRuntimeLookup checks the errors for a runtime nobody serves and for a
// plugin without a runtime, and that a plugin without the runtime service
// (an importer+exporter) is still described.
func TestRuntimeLookup(t *testing.T) {
	h := newHost(t, testOptions(t, pluginDir(t, "good")))
	ctx := context.Background()
	p, ok := h.Plugin("good")
	if !ok || p.Err != nil || p.Kind() != "importer+exporter" || p.Runtime != nil {
		t.Fatalf("plugin good: %v %+v", ok, p)
	}
	model := filepath.Join("..", "fixtures", "models", "mlp_opset17", "model.onnx")
	_, err := h.Run(ctx, "onnxruntime", model, nil, RunOptions{})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `runtime "onnxruntime": no such plugin serves it (runtimes installed: none`) {
		t.Errorf("missing runtime: %v", err)
	}
	if _, err := h.Runner("good", model, nil, RunOptions{}); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "serves no runtime") {
		t.Errorf("plugin without runtime: %v", err)
	}
	if rts := h.Runtimes(); len(rts) != 0 {
		t.Errorf("Runtimes() = %+v, want none", rts)
	}
	assertNoChildren(t)
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
