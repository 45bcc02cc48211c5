package reduce

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/fsys"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/verify"
)

func TestMain(m *testing.M) {
	os.Exit(testpaths.Main(m, "verify/reduce"))
}

// chain builds an MLP of blocks MatMul -> Add -> Tanh (3 nodes a block)
// and returns it with the names of the blocks' weights.
func chain(t *testing.T, blocks, width int) (*canonical.Model, []string) {
	t.Helper()
	b := build.New(17)
	cur := "x"
	var weights []string
	for i := range blocks {
		w := make([]float32, width*width)
		for k := range w {
			w[k] = float32((k*7+i*3)%11-5) / float32(width)
		}
		bias := make([]float32, width)
		for k := range bias {
			bias[k] = float32((k+i)%5-2) / 10
		}
		wn := b.F32("w", []int64{int64(width), int64(width)}, w)
		weights = append(weights, wn)
		cur = b.Op("MatMul", "mm", []string{cur, wn})
		cur = b.Op("Add", "add", []string{cur, b.F32("b", []int64{int64(width)}, bias)})
		if i == blocks-1 {
			cur = b.OpTo("Tanh", "y", []string{cur})
		} else {
			cur = b.Op("Tanh", "tanh", []string{cur})
		}
	}
	m, err := b.Model("chain", []build.Info{build.TensorInfo("x", canonical.Float, []int64{2, int64(width)}, false)},
		[]build.Info{build.TensorInfo("y", canonical.Float, []int64{2, int64(width)}, false)})
	if err != nil {
		t.Fatal(err)
	}
	return m, weights
}

// planted returns Sides whose A runs a candidate on the executor and
// whose B runs a copy of it on the executor with one element of the
// initializer named weight changed (when the candidate has it): a planted
// bug on B's side.
func planted(t *testing.T, weight string) Sides {
	return func(path string, m *canonical.Model) (*verify.Side, *verify.Side, func() error, error) {
		bm, err := m.Clone()
		if err != nil {
			return nil, nil, nil, err
		}
		if v := bm.Graph.Lookup(weight); v != nil && v.Const != nil {
			f, err := v.Const.Float32s()
			if err != nil {
				return nil, nil, nil, err
			}
			f = append([]float32(nil), f...)
			f[3] += 2
			v.Const = canonical.Float32Tensor(v.Name, v.Const.Dims, f)
		}
		return verify.ModelSide(path, m), verify.ModelSide(path+" (planted)", bm), bm.Close, nil
	}
}

// TestReducePlantedWeight: in a 105-node MLP whose B side has one weight
// of block 30 changed, reduce keeps only the MatMul that reads it (the
// values it reads cut from A's run), which still diverges; the bundle
// replays: its model on its stored inputs gives its stored outputs on
// each side, and SHA256SUMS holds.
func TestReducePlantedWeight(t *testing.T) {
	m, weights := chain(t, 35, 8)
	defer m.Close()
	in, err := verify.GenerateInputs(m, verify.GenOptions{Seed: 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	sides := planted(t, weights[30])
	res, err := Reduce(context.Background(), m, Options{Sides: sides, Input: in, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if res.NodesBefore != 105 || res.Mode != Diverges {
		t.Fatalf("nodes before %d, mode %q; want 105, diverges", res.NodesBefore, res.Mode)
	}
	if len(res.Nodes) > 5 {
		t.Fatalf("reduced to %d nodes, want <= 5: %+v", len(res.Nodes), res.Nodes)
	}
	if len(res.Nodes) != 1 || res.Nodes[0].OpType != "MatMul" || res.Nodes[0].Index != 30*3 {
		t.Errorf("kept %+v, want the MatMul of block 30 (node 90)", res.Nodes)
	}
	if res.Full.Bisect == nil || res.Full.Bisect.First == nil || res.Full.Bisect.First.Index != 90 {
		t.Errorf("bisection of the whole model: %+v", res.Full.Bisect)
	}
	// The cut: the MatMul reads the output of block 29's Tanh, as the
	// whole model computes it.
	ex, err := executor.New(m, executor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	tanh29 := m.Graph.Nodes[89].Outputs[0].Name
	mm30 := m.Graph.Nodes[90].Outputs[0].Name
	want, err := ex.RunCapture(context.Background(), in, []string{tanh29, mm30})
	if err != nil {
		t.Fatal(err)
	}
	if ins := verify.GraphInputs(res.Model); len(ins) != 1 || ins[0].Name != tanh29 {
		t.Fatalf("inputs of the reduced model: %v, want %s", ins, tanh29)
	}
	sameTensor(t, "cut input", res.Inputs[0], want[tanh29])
	sameTensor(t, "A's output", res.Outputs[0][0], want[mm30])

	dir := filepath.Join(t.TempDir(), "bundle")
	b := Bundle{Command: []string{"test"}, Tool: "onnxconv test", Source: "chain.onnx", Sides: [2]string{"the executor", "the executor, one weight changed"},
		Replay: []Replay{{Command: "onnxconv verify model.onnx test_data_set_0", Shows: "exits 1"}}}
	if err := Write(dir, res, b); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, res, b); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("writing over a bundle: %v, want a refusal", err)
	}
	checkSums(t, dir)
	var man Manifest
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &man); err != nil {
		t.Fatal(err)
	}
	if man.Mode != Diverges || len(man.Nodes) != 1 || man.Source.Nodes != 105 || len(man.Comparison) != 1 || man.Comparison[0].Pass {
		t.Errorf("manifest: %s", data)
	}
	readme, err := os.ReadFile(filepath.Join(dir, ReadmeFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "onnxconv verify model.onnx test_data_set_0") || !strings.Contains(string(readme), "MatMul") {
		t.Errorf("README:\n%s", readme)
	}
	// Replay: the bundle's model on the bundle's inputs, on each side,
	// gives the bundle's outputs, and the sides still diverge.
	bm, err := canonical.Load(filepath.Join(dir, ModelFile), canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer bm.Close()
	x, err := canonical.ReadTensorFile(filepath.Join(dir, DataDir, "input_0.pb"))
	if err != nil {
		t.Fatal(err)
	}
	a, bs, done, err := sides(filepath.Join(dir, ModelFile), bm)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	for i, s := range []*verify.Side{a, bs} {
		out, err := runSide(context.Background(), s, []*canonical.Tensor{x}, &verify.Options{})
		if err != nil {
			t.Fatal(err)
		}
		stored := filepath.Join(dir, DataDir, "output_0.pb")
		if i == 1 {
			stored = filepath.Join(dir, CandidateDir, "output_0.pb")
		}
		st, err := canonical.ReadTensorFile(stored)
		if err != nil {
			t.Fatal(err)
		}
		sameTensor(t, stored, out[0], st)
	}
	rep, err := verify.Compare(context.Background(), a, bs, verify.Options{Inputs: [][]*canonical.Tensor{{x}}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Equivalent {
		t.Error("the bundle does not diverge on replay")
	}
}

// TestReduceAgree: sides that agree leave nothing to reduce.
func TestReduceAgree(t *testing.T) {
	m, _ := chain(t, 2, 4)
	defer m.Close()
	in, err := verify.GenerateInputs(m, verify.GenOptions{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Reduce(context.Background(), m, Options{Sides: planted(t, "no such weight"), Input: in})
	if err == nil || !strings.Contains(err.Error(), ErrAgree.Error()) {
		t.Errorf("got %v, want ErrAgree", err)
	}
}

// sameTensor fails t unless got and want hold the same bytes and dims.
func sameTensor(t *testing.T, what string, got, want *canonical.Tensor) {
	t.Helper()
	g, err := got.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	w, err := want.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Dims, want.Dims) || !bytes.Equal(g, w) {
		t.Fatalf("%s: %v %v, want %v %v", what, got.Dims, g, want.Dims, w)
	}
}

// checkSums checks every line of the bundle's SHA256SUMS and that it
// lists every file.
func checkSums(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", sc.Text())
		}
		got, err := fsys.SHA256File(filepath.Join(dir, name))
		if err != nil || got != sum {
			t.Errorf("%s: sha256 %s, listed %s (%v)", name, got, sum, err)
		}
		listed[name] = true
	}
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel = filepath.ToSlash(rel); rel != SumsFile && !listed[rel] {
			t.Errorf("%s is not in SHA256SUMS", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReduceFails: B's copy of the model has one node turned into an op
// that no runtime has, so the executor refuses every candidate holding
// it; reduce searches the whole graph (no bisection without two runs)
// and keeps that node alone, which B still refuses while A runs it.
func TestReduceFails(t *testing.T) {
	m, _ := chain(t, 35, 4)
	defer m.Close()
	in, err := verify.GenerateInputs(m, verify.GenOptions{Seed: 2}, 0)
	if err != nil {
		t.Fatal(err)
	}
	broken := m.Graph.Nodes[64].Outputs[0].Name
	sides := func(path string, m *canonical.Model) (*verify.Side, *verify.Side, func() error, error) {
		bm, err := m.Clone()
		if err != nil {
			return nil, nil, nil, err
		}
		for _, n := range bm.Graph.Nodes {
			if len(n.Outputs) > 0 && n.Outputs[0].Name == broken {
				n.OpType = "NoSuchOp"
			}
		}
		return verify.ModelSide(path, m), verify.ModelSide(path, bm), bm.Close, nil
	}
	res, err := Reduce(context.Background(), m, Options{Sides: sides, Input: in, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if res.Mode != Fails || res.Failing != 1 || !strings.Contains(res.Error, "NoSuchOp") {
		t.Errorf("mode %q, failing %d, error %q", res.Mode, res.Failing, res.Error)
	}
	if len(res.Nodes) != 1 || res.Nodes[0].Index != 64 {
		t.Errorf("kept %+v, want node 64 alone", res.Nodes)
	}
	if res.Outputs[1] != nil || len(res.Outputs[0]) != 1 {
		t.Errorf("outputs: %v", res.Outputs)
	}
	t.Logf("%d candidates", res.Tests)
}

// TestReduceGrowingError: B's copy adds 1000.001 where A adds 1000,
// within tolerance at the Add; the Sub of 1000 that follows is the first
// node beyond it, but alone (fed with A's values) it agrees. The search
// then adds back, of the 101 nodes it depends on, only the Add: 2 nodes.
func TestReduceGrowingError(t *testing.T) {
	b := build.New(17)
	cur := "x"
	for range 50 {
		cur = b.Op("Tanh", "tanh", []string{cur})
		cur = b.Op("Add", "add", []string{cur, b.Scalar("c", 0.25)})
	}
	w := b.F32("w", []int64{1}, []float32{1000})
	cur = b.Op("Add", "big", []string{cur, w})
	cur = b.Op("Sub", "back", []string{cur, b.Scalar("k", 1000)})
	for range 10 {
		cur = b.Op("Mul", "mul", []string{cur, b.Scalar("f", 1)})
	}
	cur = b.OpTo("Neg", "y", []string{cur})
	m, err := b.Model("grow", []build.Info{build.TensorInfo("x", canonical.Float, []int64{3}, false)},
		[]build.Info{build.TensorInfo("y", canonical.Float, []int64{3}, false)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	in, err := verify.GenerateInputs(m, verify.GenOptions{Seed: 3}, 0)
	if err != nil {
		t.Fatal(err)
	}
	sides := func(path string, m *canonical.Model) (*verify.Side, *verify.Side, func() error, error) {
		bm, err := m.Clone()
		if err != nil {
			return nil, nil, nil, err
		}
		if v := bm.Graph.Lookup(w); v != nil && v.Const != nil {
			v.Const = canonical.Float32Tensor(w, []int64{1}, []float32{1000.001})
		}
		return verify.ModelSide(path, m), verify.ModelSide(path, bm), bm.Close, nil
	}
	res, err := Reduce(context.Background(), m, Options{Sides: sides, Input: in, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if res.NodesBefore != 113 || res.Full.Bisect.First.Index != 101 {
		t.Fatalf("%d nodes, first diverging node %d; want 113, 101", res.NodesBefore, res.Full.Bisect.First.Index)
	}
	if len(res.Nodes) != 2 || res.Nodes[0].Index != 100 || res.Nodes[1].Index != 101 {
		t.Errorf("kept %+v, want nodes 100 (Add) and 101 (Sub)", res.Nodes)
	}
	if res.Report.Equivalent {
		t.Error("the reduced model does not diverge")
	}
	t.Logf("%d candidates", res.Tests)
}

// TestExtractOuterValue: cutting at an If whose branches read a value of
// the main graph (an outer value, no input of the If) makes that value a
// graph input read inside the branches, and the cut model computes on
// the executor what the whole model computes there.
func TestExtractOuterValue(t *testing.T) {
	b := build.New(17)
	r := b.Op("Relu", "r", []string{"x"})
	s := b.Op("Sin", "s", []string{r})
	cond := b.Op("Greater", "cond", []string{b.Op("ReduceSum", "sum", []string{s}), b.Scalar("zero", 0)})
	then, els := b.Sub(), b.Sub()
	then.OpTo("Neg", "t_out", []string{r})
	els.OpTo("Exp", "e_out", []string{s})
	info := func(n string) []build.Info {
		return []build.Info{build.TensorInfo(n, canonical.Float, []int64{4}, false)}
	}
	b.Node("If", []string{cond}, []string{"y"},
		canonical.GraphAttr("then_branch", then.Graph("then", nil, info("t_out"))),
		canonical.GraphAttr("else_branch", els.Graph("else", nil, info("e_out"))))
	m, err := b.Model("outer", info("x"), info("y"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	in := []*canonical.Tensor{canonical.Float32Tensor("x", []int64{4}, []float32{-1, 0.5, 2, 3})}
	ex, err := executor.New(m, executor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	ref, err := ex.RunCapture(context.Background(), in, []string{r, s, cond, "y"})
	if err != nil {
		t.Fatal(err)
	}
	ifNode := m.Graph.Nodes[len(m.Graph.Nodes)-1]
	c := plan(m.Graph, map[*canonical.Node]bool{ifNode: true}, nil)
	if len(c.inputs) != 3 || len(c.outputs) != 1 || c.outputs[0].Name != "y" {
		t.Fatalf("plan: inputs %v, outputs %v; want cond, r, s and y", c.inputs, c.outputs)
	}
	sub, err := extract(m, c, ref)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if len(sub.Graph.Nodes) != 1 || len(sub.Graph.Initializers) != 0 {
		t.Errorf("cut model: %d nodes, %d initializers; want 1, 0", len(sub.Graph.Nodes), len(sub.Graph.Initializers))
	}
	var feed []*canonical.Tensor
	for _, v := range verify.GraphInputs(sub) {
		feed = append(feed, ref[v.Name])
	}
	sx, err := executor.New(sub, executor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sx.Close()
	out, err := sx.Run(context.Background(), feed)
	if err != nil {
		t.Fatal(err)
	}
	sameTensor(t, "y", out[0], ref["y"])
}
