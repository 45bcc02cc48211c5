package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	"github.com/onnxconv/onnxconv/canonical/tensortest"
	"github.com/onnxconv/onnxconv/fsys"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes/tflite"
	"github.com/onnxconv/onnxconv/verify/reduce"
)

// resizeChain builds a 111-node model around one of the executor's known
// disagreements with ONNX Runtime (docs/ort-agreement.md): 60 Add/Sub
// nodes that give their input back exactly, the Resize of the ONNX
// backend test resize_downsample_scales_linear_align_corners (scales
// that shrink an axis to a non-integer length: ONNX Runtime divides by
// the rounded length, the ONNX reference and the executor by scale*in),
// then 50 Mul nodes by 2 and 0.5.
func resizeChain(t *testing.T, scales *canonical.Tensor) *canonical.Model {
	t.Helper()
	b := build.New(13)
	cur := "x"
	for range 30 {
		cur = b.Op("Add", "add", []string{cur, b.Scalar("one", 1)})
		cur = b.Op("Sub", "sub", []string{cur, b.Scalar("one", 1)})
	}
	sc := *scales
	sc.Name = ""
	cur = b.Op("Resize", "resize", []string{cur, "", b.Const("scales", &sc)},
		canonical.StringAttr("mode", "linear"), canonical.StringAttr("coordinate_transformation_mode", "align_corners"))
	for i := range 50 {
		f := float32(2)
		if i%2 == 1 {
			f = 0.5
		}
		if i == 49 {
			cur = b.OpTo("Mul", "y", []string{cur, b.Scalar("f", f)})
		} else {
			cur = b.Op("Mul", "mul", []string{cur, b.Scalar("f", f)})
		}
	}
	m, err := b.Model("resize_chain", []build.Info{build.TensorInfo("x", canonical.Float, []int64{1, 1, 2, 4}, false)},
		[]build.Info{build.TensorInfo("y", canonical.Float, nil, true)})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestReduceResizeAgainstORT: reduce on a 111-node model on which ONNX
// Runtime (under Node) and the executor genuinely disagree gives a bundle
// of the one Resize. Its input, cut from ONNX Runtime's run of the whole
// model, is the backend test's input; the executor's output in the bundle
// is the backend test's stored output (the ONNX reference's) and ONNX
// Runtime's is not. The bundle replays with the commands its README
// gives: both exit 1, not equivalent.
func TestReduceResizeAgainstORT(t *testing.T) {
	useModules(t, "onnxruntime-node")
	bt := testpaths.Shared(t, "onnx-v1.22", "backend-tests", "node", "test_resize_downsample_scales_linear_align_corners", "test_data_set_0")
	read := func(p string) *canonical.Tensor {
		t.Helper()
		x, err := canonical.ReadTensorFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	x, scales, want := read(filepath.Join(bt, "input_0.pb")), read(filepath.Join(bt, "input_1.pb")), read(filepath.Join(bt, "output_0.pb"))
	dir := t.TempDir()
	m := resizeChain(t, scales)
	model := filepath.Join(dir, "chain.onnx")
	if err := canonical.Save(model, m, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	m.Close()
	ins := filepath.Join(dir, "inputs")
	if err := os.MkdirAll(ins, 0o755); err != nil {
		t.Fatal(err)
	}
	xn := *x
	xn.Name = "x"
	if err := canonical.WriteTensorFile(filepath.Join(ins, "x.pb"), &xn); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(dir, "bundle")
	code, stdout, stderr := runCmd("reduce", model, "--inputs", ins, "-o", bundle)
	if code != 0 {
		t.Fatalf("reduce: exit %d\n%s%s", code, stdout, stderr)
	}
	t.Log(stdout)
	if !strings.Contains(stdout, "from 111 nodes to 1 (Resize") {
		t.Errorf("summary:\n%s", stdout)
	}
	var man reduce.Manifest
	data, err := os.ReadFile(filepath.Join(bundle, reduce.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &man); err != nil {
		t.Fatal(err)
	}
	if len(man.Nodes) > 5 || len(man.Nodes) != 1 || man.Nodes[0].OpType != "Resize" || man.Source.Nodes != 111 || man.Mode != reduce.Diverges {
		t.Fatalf("manifest: %s", data)
	}
	if !strings.Contains(man.A, "onnxruntime 1.30") || !strings.Contains(man.B, "executor") || man.Source.SHA256 == "" {
		t.Errorf("manifest sides and source: %s", data)
	}
	in := read(filepath.Join(bundle, reduce.DataDir, "input_0.pb"))
	closeTo(t, "the cut input", in, x, 0)
	closeTo(t, "the executor's output", read(filepath.Join(bundle, reduce.CandidateDir, "output_0.pb")), want, 1e-5)
	ortOut := read(filepath.Join(bundle, reduce.DataDir, "output_0.pb"))
	if d := tensortest.Compare(t, ortOut, want).Abs; d < 1e-3 {
		t.Errorf("ONNX Runtime's output is the reference's (max diff %g): the disagreement is gone, pick another", d)
	}
	sums, err := os.ReadFile(filepath.Join(bundle, reduce.SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		sum, name, _ := strings.Cut(line, "  ")
		if got, err := fsys.SHA256File(filepath.Join(bundle, name)); err != nil || got != sum {
			t.Errorf("SHA256SUMS: %s: %s, listed %s", name, got, sum)
		}
	}
	readme, err := os.ReadFile(filepath.Join(bundle, reduce.ReadmeFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(man.Replay) != 2 {
		t.Fatalf("replay commands: %+v", man.Replay)
	}
	// The sides agree on a fixture: nothing to reduce, nothing written.
	empty := filepath.Join(dir, "none")
	if code, _, errs := runCmd("reduce", verifyFixture("mlp_opset17"), "-o", empty); code != 2 || !strings.Contains(errs, "nothing to reduce") {
		t.Errorf("reduce on a model both sides agree on: exit %d\n%s", code, errs)
	}
	if _, err := os.Stat(empty); err == nil {
		t.Errorf("%s was written", empty)
	}
	for _, r := range man.Replay {
		if !strings.Contains(string(readme), r.Command) {
			t.Errorf("README lacks %q:\n%s", r.Command, readme)
		}
		args := strings.Fields(r.Command)
		if args[0] != "onnxconv" {
			t.Fatalf("replay command %q", r.Command)
		}
		for i, a := range args {
			if a == reduce.ModelFile || a == reduce.DataDir {
				args[i] = filepath.Join(bundle, a)
			}
		}
		code, out, errs := runCmd(args[1:]...)
		if code != 1 || !strings.Contains(out, "not equivalent") {
			t.Errorf("%s: exit %d, want 1, not equivalent\n%s%s", r.Command, code, out, errs)
		}
	}
}

// TestReduceRefusals: reduce against the executor itself, or against a
// runtime that does not load ONNX files, is refused with a line saying
// why; a bundle folder that is not empty is not written over.
func TestReduceRefusals(t *testing.T) {
	model := verifyFixture("mlp_opset17")
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"executor", []string{"--against", "executor", "-o", t.TempDir()}, "both sides would run on executor"},
		{"tflite", []string{"--against", "tflite", "-o", t.TempDir()}, "does not load ONNX files as they are"},
		{"full", []string{"-o", full}, "is not empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "tflite" {
				// Found (Node and the package), so that the refusal is
				// reduce's and not the runtime missing.
				useModules(t, tflite.Package)
			}
			code, _, stderr := runCmd(append([]string{"reduce", model}, c.args...)...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Errorf("reduce %v: exit %d, want 2 and %q:\n%s", c.args, code, c.want, stderr)
			}
		})
	}
}

// useModules points the data folder of this process at the repository's
// node_modules, which must hold pkgs (else t is skipped), as 'onnxconv
// runtimes install' would fill it.
func useModules(t *testing.T, pkgs ...string) {
	t.Helper()
	_, modules := testpaths.Node(t, pkgs...)
	_, _, env := dataFolder(t, modules)
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		t.Setenv(k, v)
	}
}

func closeTo(t *testing.T, what string, got, want *canonical.Tensor, tol float64) {
	t.Helper()
	if d := tensortest.Compare(t, got, want).Abs; d > tol {
		t.Errorf("%s differs by %g (tolerance %g)", what, d, tol)
	}
}
