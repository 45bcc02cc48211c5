package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/importers"
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
		res, err := proctrace.Run(cmd, proctrace.Options{Timeout: 5 * time.Minute})
		if errors.Is(err, proctrace.ErrUnsupported) {
			testpaths.SkipTrace(t, "cannot count child processes: "+err.Error())
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
		// The source and the result each run in ONNX Runtime under Node
		// (one node process each, when installed); nothing else starts.
		n, nodes, execs := run("convert", "fixtures/models/squeezenet/model.onnx", filepath.Join(dir, "squeezenet.onnx"))
		if len(execs) != ortNodes(execs) || ortNodes(execs) > 2 {
			t.Errorf("ONNX in, ONNX out started %d process(es) (%d onnxconv, %d node), want at most 2 node processes running ONNX Runtime: %v", len(execs), n, nodes, execs)
		}
	})
	t.Run("xgboost", func(t *testing.T) {
		n, _, execs := run("convert", "fixtures/xgboost/binary_hinge.json", filepath.Join(dir, "xgb.onnx"), "--no-verify")
		if len(execs) != 1 || n != 1 {
			t.Errorf("an XGBoost conversion started %d process(es) (%d onnxconv), want exactly 1 (the importer's plugin): %v", len(execs), n, execs)
		}
		// Verified (the default), the importer's plugin process computes
		// the source too (importers.SourceImporter): still 1.
		n, _, execs = run("convert", "fixtures/xgboost/binary_hinge.json", filepath.Join(dir, "xgb2.onnx"))
		if len(execs)-ortNodes(execs) != 1 || n != 1 || ortNodes(execs) > 1 {
			t.Errorf("a verified XGBoost conversion started %d process(es) (%d onnxconv), want exactly 1 (the importer's plugin, which computes the source too) and at most one node process running the result in ONNX Runtime: %v", len(execs), n, execs)
		}
	})
	t.Run("tflite", func(t *testing.T) {
		testpaths.Node(t, tflite.Package)
		n, nodes, execs := run("convert", "fixtures/tflite/cnn.tflite", filepath.Join(dir, "cnn.onnx"), "--verify", "--samples", "2")
		// One node process runs TFLite for both samples; one more runs
		// the result in ONNX Runtime when it is installed.
		if n != 1 || nodes-ortNodes(execs) != 1 || ortNodes(execs) > 1 || len(execs) != n+nodes {
			t.Errorf("a verified TFLite conversion of 2 samples started %d onnxconv process(es) (want exactly 1, the importer's plugin) and node %d time(s) (want 1, and one more for ONNX Runtime): %v", n, nodes, execs)
		}
	})
}

// ortNodes counts the node processes of execs that run ONNX Runtime
// (runtimes/ortnode's runner names onnxruntime-node).
func ortNodes(execs []proctrace.Exec) int {
	k := 0
	for _, e := range execs {
		if len(e.Args) > 0 && filepath.Base(e.Args[0]) == "node" && strings.Contains(strings.Join(e.Args, " "), "onnxruntime-node") {
			k++
		}
	}
	return k
}

// TestPickleReadInPlugin traces which processes open and read a pickle
// during a verified conversion: the host reads the detection head only
// (at most importers.HeadSize bytes, nothing mapped); the whole file is
// parsed in one plugin process, which imports it and computes the source
// that verification compares with.
func TestPickleReadInPlugin(t *testing.T) {
	bin := onnxconvBin(t)
	root := repoDir(t)
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("ONNXCONV_PLUGIN_PATH", "")
	src := filepath.Join("fixtures", "sklearn", "decision_tree_regressor.p4.pkl")
	st, err := os.Stat(filepath.Join(root, src))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() <= importers.HeadSize {
		t.Fatalf("%s has %d bytes: the test needs a pickle longer than the detection head", src, st.Size())
	}
	out, err := os.CreateTemp(dir, "out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(bin, "convert", src, filepath.Join(dir, "nb.onnx"), "--verify", "--samples", "2")
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = out, out
	res, err := proctrace.Run(cmd, proctrace.Options{Timeout: 5 * time.Minute, Files: []string{src}})
	if errors.Is(err, proctrace.ErrUnsupported) {
		testpaths.SkipTrace(t, "cannot trace file reads: "+err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		b, _ := os.ReadFile(out.Name())
		t.Fatalf("exit code %d\n%s", res.ExitCode, b)
	}
	host := cmd.Process.Pid
	children := 0
	for _, u := range res.Files {
		t.Logf("process %d: %d open(s), %d byte(s) read, mapped %v", u.PID, u.Opens, u.Read, u.Mapped)
		switch {
		case u.PID == host:
			if u.Read > importers.HeadSize || u.Mapped {
				t.Errorf("the host read %d bytes of %s (mapped: %v): more than the detection head (%d bytes)", u.Read, src, u.Mapped, importers.HeadSize)
			}
		case u.Read < st.Size():
			t.Errorf("process %d read %d of the %d bytes of %s: only the host's detection and the importer's process read it", u.PID, u.Read, st.Size(), src)
		default:
			children++
		}
	}
	if children != 1 {
		t.Errorf("%d plugin process(es) read all of %s, want 1 (the importer, which computes the source too): %+v", children, src, res.Files)
	}
}
