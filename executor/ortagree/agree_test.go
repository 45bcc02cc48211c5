//go:build cgo

package ortagree

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/onnxspec"
	"github.com/onnxconv/onnxconv/runtimes/ort"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/backendtest"
)

// backendSuites are the ONNX backend-test suites of ../shared/onnx-v1.22.
var backendSuites = []string{"node", "simple", "pytorch-converted", "pytorch-operator"}

// outcome of one model.
type outcome int

const (
	agree     outcome = iota // both ran, every output within tolerance
	disagree                 // outputs beyond tolerance, or the executor fails where ORT runs
	ortCannot                // ONNX Runtime (through runtimes/ort) cannot run the model
)

func (o outcome) String() string {
	return [...]string{"agree", "disagree", "ORT cannot run"}[o]
}

type result struct {
	name string
	out  outcome
	why  string
}

// ortError marks a failure on ONNX Runtime's side, so that the sweep tells
// it from the executor's with errors.As.
type ortError struct{ err error }

func (e *ortError) Error() string { return "ONNX Runtime: " + e.err.Error() }
func (e *ortError) Unwrap() error { return e.err }

// writeOutputs stores ONNX Runtime's outputs of the fixtures/divergence
// models beside their inputs, for TestExecutorMatchesStoredORTOutputs.
var writeOutputs = flag.Bool("write-outputs", false,
	"write ONNX Runtime's outputs of fixtures/divergence as test_data_set_0/output_N.pb")

// ortRunner runs one session of ONNX Runtime as a verify.Runner.
type ortRunner struct {
	s     *ort.Session
	names []string            // the graph inputs that are not initializers, in order
	last  []*canonical.Tensor // the outputs of the last run
}

func (r *ortRunner) Run(_ context.Context, in []*canonical.Tensor) ([]*canonical.Tensor, error) {
	tps := make([]*onnxpb.TensorProto, len(in))
	for i, x := range in {
		tp, err := canonical.TensorToProto(x)
		if err != nil {
			return nil, &ortError{fmt.Errorf("input %q: %w", r.names[i], err)}
		}
		tp.Name = &r.names[i]
		tps[i] = tp
	}
	outs, err := r.s.Run(tps)
	if err != nil {
		return nil, &ortError{err}
	}
	res := make([]*canonical.Tensor, len(outs))
	for i, o := range outs {
		if res[i], err = canonical.TensorFromProto(o); err != nil {
			return nil, &ortError{fmt.Errorf("output %q: %w", o.GetName(), err)}
		}
	}
	r.last = res
	return res, nil
}

// modelCase is one model to run: its name in the lists, its file, and the
// backend-test folder holding test_data_set_0 ("" when there is none).
type modelCase struct {
	name, path, dir string
}

// collect lists the models: every .onnx under fixtures/ (but
// fixtures/hostile, which holds attacks on the loaders, not models) and
// ../shared/models, and the backend-test cases. complete is false when a
// backend suite is missing.
func collect(t *testing.T) (cases []modelCase, complete bool) {
	t.Helper()
	root := testpaths.RepoRoot(t)
	shared := testpaths.Shared(t)
	complete = true
	walk := func(base, prefix string) {
		err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			// fixtures/hostile holds attacks on the loaders; fixtures/custom
			// libraries of ONNX functions given with -O custom=, no graph;
			// fixtures/onnx28 opset-28 node cases, which ONNX Runtime 1.30
			// does not load (opset/convert's TestOnnx28CasesInORT runs them
			// there converted to opset 26 and 17).
			if d.IsDir() && (d.Name() == "hostile" || d.Name() == "custom" || d.Name() == "onnx28") && filepath.Dir(p) == base {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() && strings.HasSuffix(p, ".onnx") {
				rel, _ := filepath.Rel(base, p)
				c := modelCase{name: prefix + filepath.ToSlash(rel), path: p}
				if _, err := os.Stat(filepath.Join(filepath.Dir(p), "test_data_set_0")); err == nil {
					c.dir = filepath.Dir(p)
				}
				cases = append(cases, c)
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("listing %s: %v", base, err)
		}
	}
	walk(filepath.Join(root, "fixtures"), "fixtures/")
	walk(filepath.Join(shared, "models"), "shared/models/")
	suites := filepath.Join(shared, "onnx-v1.22", "backend-tests")
	for _, s := range backendSuites {
		dirs, err := backendtest.FindCases([]string{filepath.Join(suites, s)})
		if err != nil {
			if os.Getenv(testpaths.RequireORTEnv) == "1" {
				t.Fatalf("ONNX backend tests: %v", err)
			}
			t.Logf("ONNX backend tests left out: %v", err)
			complete = false
			continue
		}
		for _, d := range dirs {
			cases = append(cases, modelCase{name: s + "/" + filepath.Base(d), path: filepath.Join(d, "model.onnx"), dir: d})
		}
	}
	return cases, complete
}

// TestExecutorAgreesWithORT runs every model (see collect) in ONNX Runtime
// and in the executor on the same inputs (test_data_set_0 when the model
// has one, else one generated sample) and compares them with
// verify.Compare, ONNX Runtime as the reference: an element agrees when
// |exec-ort| <= atol + rtol*|ort|, where for float32 outputs rtol is 1e-4
// and atol is 1e-5 times the output's scale (its largest finite |ort|, at
// least 1e-5), for float64 1e-7 and 1e-9 times the scale, for float16 1e-2
// and 1e-3 times the scale; int8/uint8 outputs may differ by one
// quantization step; other integers, bools and strings must be equal (the
// fp32/fp64/fp16/int8 profiles of verify, docs/verify.md). A model that
// ONNX Runtime cannot run must be in ortCannotRun, a disagreement (or an
// executor error on a model ONNX Runtime runs) in knownDisagreements, each
// with its reason; an entry that no longer applies fails the test too, so
// that the lists only shrink.
func TestExecutorAgreesWithORT(t *testing.T) {
	rt, err := ort.Open(testpaths.ORT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	cases, complete := collect(t)
	tmp := t.TempDir()
	counts := map[outcome]int{}
	start := time.Now()
	ran := map[string]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ran[c.name] = true
			r := check(rt, c, tmp)
			counts[r.out]++
			judge(t, c.name, r)
		})
	}
	if complete && len(ran) == len(cases) {
		// Every model ran: a listed model that is not there is stale too.
		for _, list := range []map[string]string{ortCannotRun, knownDisagreements} {
			for name := range list {
				if !ran[name] {
					t.Errorf("%s is listed but not found: remove it from the list", name)
				}
			}
		}
	}
	t.Logf("%d models in ONNX Runtime %s and the executor in %s: %d agree, %d disagree, %d ONNX Runtime cannot run",
		counts[agree]+counts[disagree]+counts[ortCannot], rt.Version(), time.Since(start).Round(time.Second),
		counts[agree], counts[disagree], counts[ortCannot])
	if len(cases) == 0 {
		t.Error("no models found")
	}
}

// judge fails t when r is not what the lists say of the model.
func judge(t *testing.T, name string, r result) {
	cannot, listedCannot := ortCannotRun[name]
	known, listedDiff := knownDisagreements[name]
	switch r.out {
	case agree:
		t.Log(r.why)
		if listedCannot {
			t.Errorf("ONNX Runtime runs it now (listed as %q): remove it from ortCannotRun", cannot)
		}
		if listedDiff {
			t.Errorf("the executor agrees with ONNX Runtime now (listed as %q): remove it from knownDisagreements", known)
		}
	case ortCannot:
		if !listedCannot {
			t.Errorf("ONNX Runtime cannot run it: %s (add it to ortCannotRun with the reason)", r.why)
		}
		if listedDiff {
			t.Errorf("listed in knownDisagreements, but ONNX Runtime cannot run it: %s", r.why)
		}
	case disagree:
		if listedCannot {
			t.Errorf("ONNX Runtime runs it now (listed as %q): remove it from ortCannotRun", cannot)
		}
		if !listedDiff {
			t.Errorf("the executor disagrees with ONNX Runtime: %s", r.why)
		} else {
			t.Logf("known disagreement (%s): %s", known, r.why)
		}
	}
}

// check runs one model in both runtimes.
func check(rt *ort.Runtime, c modelCase, tmp string) (r result) {
	r.name = c.name
	defer func() {
		if p := recover(); p != nil {
			r.out, r.why = disagree, fmt.Sprintf("the executor panics: %v", p)
		}
	}()
	m, inputs, err := load(c)
	if err != nil {
		var oe *ortError
		if errors.As(err, &oe) {
			return result{c.name, ortCannot, oneLine(err)}
		}
		return result{c.name, disagree, "loading: " + oneLine(err)}
	}
	defer m.Close()
	ortPath, restampedNote, err := ortModel(c.path, m, tmp)
	if err != nil {
		return result{c.name, disagree, "writing the copy for ONNX Runtime: " + oneLine(err)}
	}
	s, err := rt.NewSession(ortPath)
	if err != nil {
		return result{c.name, ortCannot, oneLine(err)}
	}
	defer s.Close()
	var names []string
	for _, v := range verify.GraphInputs(m) {
		names = append(names, v.Name)
	}
	ortR := &ortRunner{s: s, names: names}
	ref := &verify.Side{Name: "onnxruntime", Model: m, Runner: ortR, ComputedBy: "ONNX Runtime " + rt.Version()}
	// A decoder with a KV cache runs a prefill and 3 decode steps.
	opts := verify.Options{Samples: 1, Threads: 1, Decode: &verify.Decode{Steps: verify.DefaultDecodeSteps}}
	if inputs != nil {
		opts.Inputs = [][]*canonical.Tensor{inputs}
	}
	rep, err := verify.Compare(context.Background(), ref, verify.ModelSide("executor", m), opts)
	if err != nil {
		var oe *ortError
		if errors.As(err, &oe) {
			return result{c.name, ortCannot, oneLine(err)}
		}
		return result{c.name, disagree, "the executor fails: " + oneLine(err)}
	}
	if *writeOutputs && strings.HasPrefix(c.name, storedPrefix) && c.dir != "" {
		for i, o := range ortR.last {
			if err := canonical.WriteTensorFile(filepath.Join(c.dir, "test_data_set_0", fmt.Sprintf("output_%d.pb", i)), o); err != nil {
				return result{c.name, disagree, "writing ONNX Runtime's outputs: " + oneLine(err)}
			}
		}
	}
	if rep.Equivalent {
		worst := ""
		var ratio float64
		for _, o := range rep.Outputs {
			if o.Ratio >= ratio {
				worst, ratio = o.Name, o.Ratio
			}
		}
		return result{c.name, agree, fmt.Sprintf("worst output %q at %.3g of its tolerance%s", worst, ratio, restampedNote)}
	}
	var why []string
	for _, o := range rep.Outputs {
		if o.Pass {
			continue
		}
		w := fmt.Sprintf("output %q: %d of %d elements beyond tolerance, %.3g× it", o.Name, o.Mismatched, o.Elements, o.Ratio)
		if o.Float != nil {
			w += fmt.Sprintf(", max abs %.3g", o.Float.MaxAbs)
		}
		if o.Reason != "" {
			w += " (" + o.Reason + ")"
		}
		why = append(why, w)
	}
	if len(rep.Unmatched) > 0 {
		why = append(why, fmt.Sprintf("unmatched outputs %v", rep.Unmatched))
	}
	return result{c.name, disagree, strings.Join(why, "; ") + restampedNote}
}

// ortMaxOpset is the newest ai.onnx opset ONNX Runtime 1.30 loads; it
// refuses models stamped with a newer one (the ONNX 1.22 backend tests
// have opset 27 models).
const ortMaxOpset = 26

// ortModel is the file ONNX Runtime runs for the model at path: the file
// itself, or, when m is stamped with an ai.onnx opset newer than
// ortMaxOpset and every ai.onnx node (subgraphs included) has at
// ortMaxOpset the schema it has at m's opset, a copy stamped ortMaxOpset
// written under dir. Such a copy computes what the model computes; note
// then says so, for the messages.
func ortModel(path string, m *canonical.Model, dir string) (ortPath, note string, err error) {
	v := m.Opset("")
	if v <= ortMaxOpset {
		return path, "", nil
	}
	same := true
	err = canonical.Walk(m.Graph, func(_ *canonical.Graph, _ string, _ int, n *canonical.Node) error {
		if n.Domain != "" && n.Domain != "ai.onnx" {
			return nil
		}
		now, ok := onnxspec.Lookup("", n.OpType, int(v))
		old, okOld := onnxspec.Lookup("", n.OpType, ortMaxOpset)
		if !ok || !okOld || now.SinceVersion != old.SinceVersion {
			same = false
		}
		return nil
	})
	if err != nil || !same {
		return path, "", err
	}
	cp, err := canonical.Load(path, canonical.LoadOptions{})
	if err != nil {
		return "", "", err
	}
	defer cp.Close()
	cp.SetOpset("", ortMaxOpset)
	ortPath = filepath.Join(dir, strings.NewReplacer("/", "_", "\\", "_").Replace(filepath.ToSlash(path)))
	if err := canonical.Save(ortPath, cp, canonical.SaveOptions{}); err != nil {
		return "", "", err
	}
	return ortPath, fmt.Sprintf(" (ONNX Runtime ran a copy stamped opset %d: its ops are the same there as at %d)", ortMaxOpset, v), nil
}

// load reads the model and, when it has test_data_set_0, its inputs. Inputs
// that are sequences or optionals, and graph inputs or outputs that are
// not tensors, are an *ortError: runtimes/ort carries tensors only.
func load(c modelCase) (*canonical.Model, []*canonical.Tensor, error) {
	var m *canonical.Model
	var inputs []*canonical.Tensor
	if c.dir != "" {
		bc, err := backendtest.Load(c.dir)
		if err != nil {
			return nil, nil, err
		}
		m = bc.Model
		if len(bc.DataSets) > 0 {
			for i, v := range bc.DataSets[0].Inputs {
				if v.Tensor == nil {
					m.Close()
					return nil, nil, &ortError{fmt.Errorf("input %d is a sequence or an optional; runtimes/ort carries tensors only", i)}
				}
				inputs = append(inputs, v.Tensor)
			}
			if len(inputs) == 0 {
				inputs = []*canonical.Tensor{}
			}
		}
	} else {
		var err error
		if m, err = canonical.Load(c.path, canonical.LoadOptions{}); err != nil {
			return nil, nil, err
		}
	}
	for _, v := range append(verify.GraphInputs(m), m.Graph.Outputs...) {
		if v.Type != nil && v.Type.GetTensorType() == nil {
			m.Close()
			return nil, nil, &ortError{fmt.Errorf("%q is a %s; runtimes/ort carries tensors only", v.Name, canonical.TypeString(v.Type))}
		}
	}
	return m, inputs, nil
}

// oneLine is the first line of err's message.
func oneLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
