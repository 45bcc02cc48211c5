//go:build cgo

package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/onnxspec"
	"github.com/onnxconv/onnxconv/runtimes/ort"
)

var writeCoverage = flag.Bool("write-coverage", false, "write docs/opset-coverage.md from TestOpsetCoverage")

// outcome of one (model, target opset) pair.
type outcome int

const (
	equal outcome = iota
	refused
	wrong
	unrunnable // the runtime cannot load the converted model (e.g. opset newer than it knows)
)

type pairResult struct {
	to     int
	out    outcome
	reason string
	kind   string // of a refusal
	// execCase names the converted model's folder (backend-test layout)
	// that the executor runs; "" when nothing was converted.
	execCase string
	// exec is the executor's verdict: "pass", "fail", or "" (not run, or
	// the executor fails the source model too).
	exec string
}

// TestOpsetCoverage converts every backend node test model to every opset
// from 7 to 27, runs each result on ONNX Runtime with the test's inputs and
// compares with the test's expected outputs (rtol 1e-3, atol 1e-7 as the
// ONNX backend runner). Sources that ONNX Runtime itself cannot run or gets
// wrong are left out. It fails when any conversion silently changes the
// results, or when the share of expressible pairs that convert and stay
// equal drops below the recorded floor.
func TestOpsetCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("long: converts ~1,700 models to 21 opsets")
	}
	lib := testpaths.ORT(t)
	rt, err := ort.Open(lib, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Every case of the four suites; names are "suite/case" relative to root.
	root := filepath.Join(sharedDir(t), "onnx-v1.22", "backend-tests")
	var cases []string
	for _, suite := range []string{"node", "simple", "pytorch-converted", "pytorch-operator"} {
		entries, err := os.ReadDir(filepath.Join(root, suite))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			cases = append(cases, suite+"/"+e.Name())
		}
	}
	tmp := t.TempDir()
	type caseResult struct {
		name    string
		skipped bool
		pairs   []pairResult
	}
	// Two workers: ONNX Runtime sessions run single-threaded.
	jobs := make(chan string)
	done := make(chan caseResult)
	pairsDir := filepath.Join(tmp, "pairs")
	if err := os.MkdirAll(pairsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for w := 0; w < 2; w++ {
		go func() {
			for name := range jobs {
				done <- caseResult{name: name, pairs: coverCase(t, rt, filepath.Join(root, name), pairsDir)}
			}
		}()
	}
	go func() {
		for _, c := range cases {
			jobs <- c
		}
		close(jobs)
	}()
	results := map[string][]pairResult{}
	var sources []string
	counts := map[outcome]int{}
	kinds := map[string]int{}
	for range cases {
		r := <-done
		if r.pairs == nil {
			continue
		}
		sources = append(sources, r.name)
		results[r.name] = r.pairs
		for _, pr := range r.pairs {
			counts[pr.out]++
			if pr.out == refused {
				kinds[pr.kind]++
			}
			if pr.out == wrong {
				t.Errorf("%s -> opset %d converts to a wrong result: %s", r.name, pr.to, pr.reason)
			}
		}
	}
	// The same converted models on onnxconv's own executor.
	execStatus := runExecutor(t, pairsDir)
	var execPass, execFail int
	var execFails []string
	for _, name := range sources {
		if execStatus[strings.ReplaceAll(name, "/", "__")+"__src"] != "pass" {
			continue // the executor cannot check this model
		}
		for i, pr := range results[name] {
			if pr.execCase == "" {
				continue
			}
			st := execStatus[pr.execCase]
			results[name][i].exec = st
			if st == "pass" {
				execPass++
			} else {
				execFail++
				execFails = append(execFails, pr.execCase)
			}
		}
	}
	t.Logf("executor: %d converted pairs pass, %d fail (of sources it passes); e.g. %v", execPass, execFail, execFails)
	expressible := counts[equal] + counts[wrong] + kinds[KindNeedsShapes] + kinds[KindNoAdapter]
	rate := float64(counts[equal]) / float64(max(expressible, 1))
	t.Logf("%d source models; pairs: %d equal, %d wrong, refused %d (%d not expressible, %d need shapes, %d no adapter), %d not loadable by ONNX Runtime; %.2f%% of expressible pairs equal",
		len(sources), counts[equal], counts[wrong], counts[refused], kinds[KindNotExpressible], kinds[KindNeedsShapes], kinds[KindNoAdapter], counts[unrunnable], 100*rate)
	// Floor measured on 2026-11-22; raise it as adapters are added.
	const floor = 0.99
	if rate < floor {
		t.Errorf("%.4f of expressible pairs convert and stay equal, below the floor %.2f", rate, floor)
	}
	if *writeCoverage {
		if err := writeCoverageDoc(filepath.Join(repoRoot(t), "docs", "opset-coverage.md"), sources, results, counts, kinds, rate, execPass, execFail); err != nil {
			t.Fatal(err)
		}
	}
}

// coverCase converts one backend test model to every opset; nil when ONNX
// Runtime cannot check the source itself.
func coverCase(t *testing.T, rt *ort.Runtime, dir, tmp string) []pairResult {
	ins, want, err := readDataSet(filepath.Join(dir, "test_data_set_0"))
	if err != nil {
		return nil // sequence or optional data: not a tensor test
	}
	got, err := rt.Run(filepath.Join(dir, "model.onnx"), ins)
	if err != nil || compareOutputs(got, want) != nil {
		return nil
	}
	src, err := readModel(filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Errorf("%s: %v", dir, err)
		return nil
	}
	from := int(src.Opset(""))
	if from == 0 {
		return nil
	}
	// The source itself, run by the executor beside the conversions.
	srcModel, err := layoutCase(filepath.Join(tmp, filepath.Base(filepath.Dir(dir))+"__"+filepath.Base(dir)+"__src"), dir)
	if err == nil {
		err = os.Symlink(filepath.Join(dir, "model.onnx"), srcModel)
	}
	if err != nil {
		t.Errorf("%s: %v", dir, err)
		return nil
	}
	seen := map[string]pairResult{}
	pairs := []pairResult{}
	for to := 7; to <= 27; to++ {
		if to != from {
			pairs = append(pairs, convertAndRun(t, rt, filepath.Join(dir, "model.onnx"), to, ins, want, seen, tmp))
		}
	}
	return pairs
}

// convertAndRun converts the model at path to opset to and runs it.
// Targets that leave the same graph with the same operator versions in
// force compute the same thing: seen keeps one result per such key.
func convertAndRun(t *testing.T, rt *ort.Runtime, path string, to int, ins, want []*onnxpb.TensorProto, seen map[string]pairResult, tmp string) pairResult {
	pr := pairResult{to: to}
	m, err := readModel(path)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		pr.out, pr.reason = unrunnable, err.Error()
		return pr
	}
	_, err = Convert(m, Options{To: to})
	var be *BlockedError
	if errors.As(err, &be) {
		pr.out, pr.reason, pr.kind = refused, be.Blockers[0].Reason, be.Blockers[0].Kind
		for _, b := range be.Blockers {
			if b.Kind == KindNotExpressible {
				// One node the target cannot express makes the pair inexpressible.
				pr.reason, pr.kind = b.Reason, b.Kind
			}
		}
		return pr
	}
	key := ""
	if err == nil {
		key, err = runKey(m)
	}
	if err != nil {
		t.Errorf("%s -> %d: %v", path, to, err)
		pr.out, pr.reason = wrong, err.Error()
		return pr
	}
	if prev, ok := seen[key]; ok {
		prev.to = to
		return prev
	}
	pr.execCase = fmt.Sprintf("%s__%s__%d", filepath.Base(filepath.Dir(filepath.Dir(path))), filepath.Base(filepath.Dir(path)), to)
	out, err := layoutCase(filepath.Join(tmp, pr.execCase), filepath.Dir(path))
	if err == nil {
		err = canonical.Save(out, m, canonical.SaveOptions{})
	}
	if err != nil {
		t.Errorf("%s -> %d: saving: %v", path, to, err)
		pr.out, pr.reason = wrong, err.Error()
		return pr
	}
	got, err := rt.Run(out, ins)
	switch {
	case err != nil:
		pr.out, pr.reason = unrunnable, firstLine(err.Error())
	case compareOutputs(got, want) != nil:
		pr.out, pr.reason = wrong, compareOutputs(got, want).Error()
	default:
		pr.out = equal
	}
	seen[key] = pr
	return pr
}

// layoutCase makes dir a backend-test case folder whose test data sets
// are those of src (symlinked); it returns where model.onnx goes.
func layoutCase(dir, src string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	sets, err := filepath.Glob(filepath.Join(src, "test_data_set_*"))
	if err != nil {
		return "", err
	}
	for _, s := range sets {
		abs, err := filepath.Abs(s)
		if err != nil {
			return "", err
		}
		if err := os.Symlink(abs, filepath.Join(dir, filepath.Base(s))); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, "model.onnx"), nil
}

// runExecutor runs `onnxconv test --json` over the case folders under
// root and returns each case's status by folder name.
func runExecutor(t *testing.T, root string) map[string]string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "onnxconv")
	build := exec.Command("go", "build", "-o", bin, "./cmd/onnxconv")
	build.Dir = repoRoot(t)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building onnxconv: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "test", "--json", "--jobs", "2", root)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("onnxconv test: %v\n%s", err, stderr.String())
		}
	}
	var res struct {
		Results []struct {
			Name, Status string
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("decoding onnxconv test --json: %v", err)
	}
	out := map[string]string{}
	for _, r := range res.Results {
		out[r.Name] = r.Status
	}
	return out
}

// runKey identifies what a converted model computes: its graph and the
// schema version in force for each node.
func runKey(m *canonical.Model) (string, error) {
	p, err := m.ToProto()
	if err != nil {
		return "", err
	}
	g, err := proto.MarshalOptions{Deterministic: true}.Marshal(p.GetGraph())
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.Write(g)
	var walk func(g *canonical.Graph)
	walk = func(g *canonical.Graph) {
		for _, n := range g.Nodes {
			if s, ok := onnxspec.Lookup(n.Domain, n.OpType, int(m.Opset(n.Domain))); ok {
				fmt.Fprintf(&b, "|%s-%d", s.Name, s.SinceVersion)
			}
			for _, sg := range n.Subgraphs() {
				walk(sg)
			}
		}
	}
	walk(m.Graph)
	return b.String(), nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

func writeCoverageDoc(path string, sources []string, results map[string][]pairResult, counts map[outcome]int, kinds map[string]int, rate float64, execPass, execFail int) error {
	var b strings.Builder
	b.WriteString("# Opset conversion coverage\n\n")
	b.WriteString("Generated by `go test ./opset/convert -run TestOpsetCoverage -args -write-coverage`: every ONNX 1.22 backend test model (node, simple, pytorch-converted, pytorch-operator) that ONNX Runtime 1.30 runs correctly, converted to every ai.onnx opset 7..27, run on ONNX Runtime and compared with the test's expected outputs.\n\n")
	fmt.Fprintf(&b, "- source models: %d\n- equal: %d\n- wrong: %d\n- refused (with reason): %d — not expressible in the target %d, expressible once shapes are known %d, expressible but no adapter yet %d\n- converted but not loadable by ONNX Runtime 1.30 (opset or type newer than it supports): %d\n- **%.2f%% of the expressible pairs convert and stay equal** (equal / (equal + wrong + refused-but-expressible))\n\n",
		len(sources), counts[equal], counts[wrong], counts[refused], kinds[KindNotExpressible], kinds[KindNeedsShapes], kinds[KindNoAdapter], counts[unrunnable], 100*rate)
	fmt.Fprintf(&b, "The converted models were also run on onnxconv's executor (for the sources it passes itself): %d pass, %d fail; failures are marked `e` after the cell.\n\n", execPass, execFail)
	b.WriteString("Legend: `=` equal, `r` refused (not expressible), `S` refused (needs shapes), `A` refused (no adapter yet), `X` wrong, `-` ONNX Runtime cannot load the result, blank: the source opset.\n\n")
	b.WriteString("| model |")
	for to := 7; to <= 27; to++ {
		fmt.Fprintf(&b, " %d |", to)
	}
	b.WriteString("\n|---|")
	for to := 7; to <= 27; to++ {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	sort.Strings(sources)
	reasons := map[string]int{}
	for _, s := range sources {
		fmt.Fprintf(&b, "| %s |", s)
		byTo := map[int]pairResult{}
		for _, pr := range results[s] {
			byTo[pr.to] = pr
		}
		for to := 7; to <= 27; to++ {
			pr, ok := byTo[to]
			if !ok {
				b.WriteString("  |")
				continue
			}
			switch pr.out {
			case equal:
				if pr.exec == "fail" {
					b.WriteString(" =e |")
				} else {
					b.WriteString(" = |")
				}
			case refused:
				switch pr.kind {
				case KindNeedsShapes:
					b.WriteString(" S |")
				case KindNoAdapter:
					b.WriteString(" A |")
				default:
					b.WriteString(" r |")
				}
				reasons["["+pr.kind+"] "+pr.reason]++
			case wrong:
				b.WriteString(" X |")
			case unrunnable:
				b.WriteString(" - |")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## Refusal reasons\n\n| count | reason |\n|---|---|\n")
	type kv struct {
		k string
		v int
	}
	var rs []kv
	for k, v := range reasons {
		rs = append(rs, kv{k, v})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].v > rs[j].v || (rs[i].v == rs[j].v && rs[i].k < rs[j].k) })
	for _, r := range rs {
		fmt.Fprintf(&b, "| %d | %s |\n", r.v, strings.ReplaceAll(r.k, "|", "\\|"))
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
