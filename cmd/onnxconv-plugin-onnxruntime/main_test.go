//go:build cgo

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/runtimes/ort"
)

// TestMain reports tests skipped for a missing ONNX Runtime (see
// internal/testpaths).
func TestMain(m *testing.M) { os.Exit(testpaths.Main(m, "cmd/onnxconv-plugin-onnxruntime")) }

// skipOrFailORT skips the test as a counted ONNX Runtime skip.
func skipOrFailORT(t *testing.T, format string, args ...any) {
	t.Helper()
	testpaths.SkipORT(t, fmt.Sprintf(format, args...))
}

// realLibrary returns the absolute path of the ONNX Runtime library the
// checkout uses ($ONNXRUNTIME_LIB or the npm-installed copy), or skips.
func realLibrary(t *testing.T) string {
	t.Helper()
	p := os.Getenv(ort.LibraryEnv)
	if p == "" {
		p = filepath.Join("..", "..", filepath.FromSlash(ort.NPMLibraryPath))
	}
	abs, err := filepath.Abs(p)
	if err == nil {
		_, err = os.Stat(abs)
	}
	if err != nil {
		skipOrFailORT(t, "ONNX Runtime library not available (%v); npm ci --ignore-scripts", err)
	}
	return abs
}

// TestMissingLibrary: without the library the plugin still describes
// itself (version unknown) and every run fails with the typed error.
func TestMissingLibrary(t *testing.T) {
	t.Setenv(ort.LibraryEnv, filepath.Join(t.TempDir(), "libonnxruntime.so.1"))
	s := open("")
	info := s.info()
	if info.Name != RuntimeName || info.Version != unknownVersion || !strings.Contains(info.Description, version) {
		t.Errorf("info %+v", info)
	}
	model := filepath.Join("..", "..", "fixtures", "models", "mlp_opset17", "model.onnx")
	_, err := s.run(context.Background(), model, nil)
	var nf *ort.LibraryNotFoundError
	if !errors.As(err, &nf) || !errors.Is(err, ort.ErrLibraryNotFound) {
		t.Fatalf("run err = %v, want a *ort.LibraryNotFoundError", err)
	}
	if _, err := findLibrary(filepath.Join(t.TempDir(), "nope.so")); err == nil || !strings.Contains(err.Error(), "--ort-lib") {
		t.Errorf("--ort-lib missing: %v", err)
	}
}

// TestInstalledFromAnyFolder installs the plugin with a copy of the
// library beside it (no $ONNXRUNTIME_LIB, no checkout above the working
// directory, empty user folder and loader path) and runs a model through a
// plugin host: the plugin finds the library beside itself and describes
// ONNX Runtime's own version.
func TestInstalledFromAnyFolder(t *testing.T) {
	lib := realLibrary(t)
	model, err := filepath.Abs(filepath.Join("..", "..", "fixtures", "models", "mlp_opset17", "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	built := filepath.Join(t.TempDir(), plugins.ExecutablePrefix+RuntimeName)
	build := exec.Command("go", "build", "-o", built, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		skipOrFailORT(t, "go build ./cmd/onnxconv-plugin-onnxruntime (needs cgo): %v\n%s", err, out)
	}

	t.Setenv(ort.LibraryEnv, "")
	t.Setenv("LD_LIBRARY_PATH", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Chdir(t.TempDir())

	// The plugin installed as a copy, or as a symbolic link to where it was
	// built (which has no library): either way the library beside the
	// installed name is found.
	for _, how := range []string{"copy", "symlink"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			exe := filepath.Join(dir, filepath.Base(built))
			if how == "copy" {
				data, err := os.ReadFile(built)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(exe, data, 0o755); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Symlink(built, exe); err != nil {
				t.Fatal(err)
			}
			beside := filepath.Join(dir, "libonnxruntime.so.1")
			if err := os.Symlink(lib, beside); err != nil {
				t.Fatal(err)
			}
			runInstalled(t, dir, beside, model)
		})
	}
}

// runInstalled runs model on the plugin installed in dir, which must use
// the library at lib.
func runInstalled(t *testing.T, dir, lib, model string) {
	t.Helper()
	ctx := context.Background()
	h, err := plugins.NewHost(ctx, plugins.Options{PluginPath: dir, UserDir: t.TempDir(), CallTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.RuntimePlugin(RuntimeName)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Runtime.Version, "1.30.") {
		t.Errorf("runtime version %q, want ONNX Runtime's 1.30.x (description %q)", p.Runtime.Version, p.Runtime.Description)
	}
	if want := "ONNX Runtime " + p.Runtime.Version; !strings.Contains(p.Runtime.Description, want) ||
		!strings.Contains(p.Runtime.Description, lib) || !strings.Contains(p.Runtime.Description, "onnxconv-plugin-onnxruntime "+version) {
		t.Errorf("description %q, want %q, the library %s and the plugin version", p.Runtime.Description, want, lib)
	}

	in := readTensor(t, filepath.Join(filepath.Dir(model), "test_data_set_0", "input_0.pb"))
	outs, err := h.Run(ctx, RuntimeName, model, []*onnxpb.TensorProto{in}, plugins.RunOptions{Threads: 1})
	if err != nil {
		t.Fatalf("run from %s: %v", dir, err)
	}
	if len(outs) != 1 || len(outs[0].GetRawData()) != 4*4*10 {
		t.Errorf("outputs %d", len(outs))
	}
}

func readTensor(t *testing.T, path string) *onnxpb.TensorProto {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tp onnxpb.TensorProto
	if err := proto.Unmarshal(b, &tp); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &tp
}
