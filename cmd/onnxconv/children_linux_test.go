package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/internal/proctrace"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes/tflite"
)

// TestChildProcesses counts, under ptrace, every program the onnxconv
// binary executes during a conversion: built-in importers are described
// statically and detected in process, only Import starts a plugin process,
// runtimes are not started to be described, one plugin host serves the
// run, and the TFLite runtime loads the model once in one node process
// that serves every sample.
func TestChildProcesses(t *testing.T) {
	bin := onnxconvBin(t)
	root := repoDir(t)
	dir := t.TempDir()
	// No third-party plugins: the user folder and the plugin path are
	// empty.
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("ONNXCONV_PLUGIN_PATH", "")
	run := func(args ...string) (onnxconv, node int, execs []proctrace.Exec) {
		t.Helper()
		stdout, err := os.CreateTemp(dir, "stdout")
		if err != nil {
			t.Fatal(err)
		}
		defer stdout.Close()
		cmd := exec.Command(bin, args...)
		cmd.Dir = root
		cmd.Stdout, cmd.Stderr = stdout, stdout
		res, err := proctrace.Run(cmd, 5*time.Minute)
		if errors.Is(err, proctrace.ErrUnsupported) {
			t.Skipf("cannot count child processes: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 0 {
			out, _ := os.ReadFile(stdout.Name())
			t.Fatalf("onnxconv %s: exit code %d\n%s", strings.Join(args, " "), res.ExitCode, out)
		}
		for _, e := range res.Execs {
			switch {
			case len(e.Args) > 0 && filepath.Base(e.Args[0]) == "node":
				node++
			case len(e.Args) > 0 && e.Args[0] == bin:
				onnxconv++
			}
		}
		return onnxconv, node, res.Execs
	}

	t.Run("onnx", func(t *testing.T) {
		n, nodes, execs := run("convert", "fixtures/models/squeezenet/model.onnx", filepath.Join(dir, "squeezenet.onnx"))
		if len(execs) != 0 {
			t.Errorf("ONNX in, ONNX out started %d process(es) (%d onnxconv, %d node): %v", len(execs), n, nodes, execs)
		}
	})
	t.Run("xgboost", func(t *testing.T) {
		n, _, execs := run("convert", "fixtures/xgboost/binary_hinge.json", filepath.Join(dir, "xgb.onnx"))
		if len(execs) > 1 || n > 1 {
			t.Errorf("an XGBoost conversion started %d process(es), want at most 1 (the importer): %v", len(execs), execs)
		}
	})
	t.Run("tflite", func(t *testing.T) {
		testpaths.Node(t, tflite.Package)
		n, nodes, execs := run("convert", "fixtures/tflite/cnn.tflite", filepath.Join(dir, "cnn.onnx"), "--verify", "--samples", "2")
		if n > 1 || nodes != 1 || len(execs) != n+nodes {
			t.Errorf("a verified TFLite conversion of 2 samples started %d onnxconv process(es) (want at most 1) and node %d time(s) (want 1): %v", n, nodes, execs)
		}
	})
}
