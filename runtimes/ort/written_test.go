//go:build cgo

package ort

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/verify"
)

// TestWrittenFilesLoadInORT runs convert, opset, optimize, fp16 (float16
// and bfloat16) and quantize of the onnxconv binary over the suite's fixtures (ONNX models,
// TFLite, TF.js, XGBoost, scikit-learn, and CatBoost from ../shared) and
// loads and runs every ONNX file they write in ONNX Runtime 1.30. A command
// may refuse (exit 1, 2 for unreadable input, 4 unsupported) before writing, naming the
// node; a crash, any other exit, or a file written that ONNX Runtime cannot
// load or run fails the test.
func TestWrittenFilesLoadInORT(t *testing.T) {
	if testing.Short() {
		t.Skip("long: runs about 150 conversions")
	}
	rt := openForTest(t)
	root := repoRoot(t)
	bin := onnxconvBin(t)
	type job struct {
		args []string // command and input; OUT is appended after the input
		ext  []string // flags after OUT
	}
	var jobs []job
	models, _ := filepath.Glob(filepath.Join(root, "fixtures", "models", "*", "model.onnx"))
	for _, m := range models {
		jobs = append(jobs,
			job{[]string{"convert", m}, []string{"--target", "onnxruntime-1.17"}},
			job{[]string{"opset", m}, []string{"--opset", "11"}},
			job{[]string{"optimize", m}, nil},
			job{[]string{"fp16", m}, []string{"--keep-io-types"}},
			job{[]string{"fp16", m}, nil},
			job{[]string{"fp16", m}, []string{"--bf16"}},
			job{[]string{"quantize", m}, []string{"--mode", "dynamic"}},
			job{[]string{"quantize", m}, []string{"--mode", "static", "--calibration-samples", "4"}})
	}
	glob := func(pattern string) []string {
		fs, _ := filepath.Glob(pattern)
		return fs
	}
	for _, f := range glob(filepath.Join(root, "fixtures", "tflite", "*.tflite")) {
		jobs = append(jobs, job{[]string{"convert", f}, nil})
	}
	for _, f := range glob(filepath.Join(root, "fixtures", "tfjs", "*", "model.json")) {
		jobs = append(jobs, job{[]string{"convert", f}, nil})
	}
	for _, f := range glob(filepath.Join(root, "fixtures", "xgboost", "*.json")) {
		jobs = append(jobs, job{[]string{"convert", f}, nil})
	}
	for _, f := range glob(filepath.Join(root, "fixtures", "sklearn", "*.joblib")) {
		if !strings.Contains(filepath.Base(f), ".bz2.") {
			jobs = append(jobs, job{[]string{"convert", f}, nil})
		}
	}
	for _, f := range glob(filepath.Join(testpaths.Shared(t, "models", "catboost"), "*", "*", "*.cbm")) {
		jobs = append(jobs, job{[]string{"convert", f}, nil})
	}
	out := t.TempDir()
	written, ran, refused := 0, 0, 0
	for i, j := range jobs {
		name := fmt.Sprintf("%s_%d_%s", j.args[0], i, strings.TrimSuffix(filepath.Base(j.args[1]), filepath.Ext(j.args[1])))
		t.Run(name, func(t *testing.T) {
			dst := filepath.Join(out, strconv.Itoa(i)+".onnx")
			args := append(append(append([]string{}, j.args...), dst), j.ext...)
			args = append(args, "--no-verify")
			cmd := exec.Command(bin, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			// A refusal exits 1, 2 (unreadable input) or 4 (unsupported)
			// with a message and writes nothing; anything else (a crash,
			// which exits 2 too, a signal, another code) fails.
			var ee *exec.ExitError
			if errors.As(err, &ee) && (ee.ExitCode() == 1 || ee.ExitCode() == 2 || ee.ExitCode() == 4) {
				if bad := testpaths.CrashSign(stderr.String()); bad != "" {
					t.Fatalf("%v: exit %d with %q in its output, a crash: %s", args, ee.ExitCode(), bad, firstLines(stderr.String(), 12))
				}
				refused++
				if _, serr := os.Stat(dst); serr == nil {
					t.Errorf("exit %d but %s was written", ee.ExitCode(), dst)
				}
				t.Logf("refused before writing (exit %d): %s", ee.ExitCode(), firstLines(stderr.String(), 2))
				return
			}
			if err != nil {
				t.Fatalf("%v: %v, want exit 0, or 1, 2 or 4 refusing before writing: %s", args, err, firstLines(stderr.String(), 3))
			}
			written++
			if runWritten(t, rt, dst) {
				ran++
			}
		})
	}
	t.Logf("%d jobs: %d files written, each loaded in ONNX Runtime %s and %d of them run (the others have a scalar input or output, which the test's binding cannot make or read); %d refused before writing", len(jobs), written, rt.Version(), ran, refused)
}

// runWritten loads path in ONNX Runtime and runs it on generated inputs
// (symbolic dims as convert's verification sizes them).
func runWritten(t *testing.T, rt *Runtime, path string) (ran bool) {
	t.Helper()
	s, err := rt.NewSession(path)
	if err != nil {
		t.Fatalf("ONNX Runtime cannot load %s: %v", path, err)
	}
	defer func() { _ = s.Close() }()
	for _, o := range s.Outputs() {
		if o.Tensor && len(o.Dims) == 0 {
			// onnxruntime_go reads no rank-0 tensors: loaded, not run.
			t.Logf("loaded; not run (scalar output %q)", o.Name)
			return false
		}
	}
	m, err := canonical.Load(path, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Close() }()
	// Symbolic dims 1, or what the source's runtime or the graph's
	// constant indices need (as convert's verification generates them).
	dims := verify.RuntimeDims(m)
	least := verify.MinDims(m)
	for _, v := range verify.GraphInputs(m) {
		_, ds, _, _ := canonical.TensorTypeOf(v.Type)
		for i, d := range ds {
			if !d.Known {
				key := d.Param
				if key == "" {
					key = v.Name + ":" + strconv.Itoa(i)
				}
				dims[key] = max(dims[key], least[key], 1)
			}
		}
	}
	ins, err := verify.GenerateInputs(m, verify.GenOptions{Dims: dims}, 0)
	if err != nil {
		t.Logf("loaded; not run (%v)", err)
		return false
	}
	var tps []*onnxpb.TensorProto
	for _, in := range ins {
		if len(in.Dims) == 0 {
			// onnxruntime_go makes no rank-0 tensors: loaded, not run.
			t.Logf("loaded; not run (scalar input %q)", in.Name)
			return false
		}
		tp, err := canonical.TensorToProto(in)
		if err != nil {
			t.Fatal(err)
		}
		tps = append(tps, tp)
	}
	if _, err := s.Run(tps); err != nil {
		t.Errorf("ONNX Runtime cannot run %s: %v", path, err)
	}
	return true
}

func firstLines(s string, n int) string {
	ls := strings.SplitN(s, "\n", n+1)
	return strings.Join(ls[:min(n, len(ls))], " | ")
}
