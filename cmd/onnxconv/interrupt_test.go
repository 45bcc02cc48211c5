package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestInterrupt: Ctrl-C (SIGINT) during verification ends convert with
// exit 130, writes no output and leaves no temporary folder (the TF.js
// runtime plugin's included).
func TestInterrupt(t *testing.T) {
	testpaths.Node(t, "@tensorflow/tfjs")
	tmp, out := t.TempDir(), t.TempDir()
	cmd := exec.Command(onnxconvBin(t), "convert", filepath.Join(repoDir(t), "fixtures", "tfjs", "rnn", "model.json"),
		filepath.Join(out, "rnn.onnx"), "--samples", "500")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "verifying ") {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130", err)
	}
	for _, d := range []string{tmp, out} {
		if es, _ := os.ReadDir(d); len(es) > 0 {
			t.Errorf("%s holds %s after the interrupt", d, es[0].Name())
		}
	}
}
