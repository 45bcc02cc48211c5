package verify

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

func fixture(name string) string {
	return filepath.Join("..", "fixtures", "models", name)
}

func loadFixture(t *testing.T, name string) *canonical.Model {
	t.Helper()
	m, err := canonical.Load(filepath.Join(fixture(name), "model.onnx"), canonical.LoadOptions{})
	if err != nil {
		t.Fatalf("loading %s: %v", name, err)
	}
	return m
}

func TestSelfEquivalent(t *testing.T) {
	for _, name := range []string{"mlp_opset17", "transformer_block_opset21"} {
		t.Run(name, func(t *testing.T) {
			m := loadFixture(t, name)
			rep, err := Compare(context.Background(), ModelSide("a", m), ModelSide("b", m), Options{Samples: 2, Gen: GenOptions{Seed: 7}})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Equivalent {
				t.Fatalf("not equivalent: %s", rep.Summary)
			}
			if len(rep.Outputs) != 1 {
				t.Fatalf("got %d outputs, want 1", len(rep.Outputs))
			}
			o := rep.Outputs[0]
			f := o.Float
			if f.MaxAbs != 0 || f.MaxRel != 0 || f.RMSE != 0 || f.MaxULP != 0 || o.Mismatched != 0 {
				t.Errorf("metrics not zero: %+v", f)
			}
			if math.Abs(f.Cosine-1) > 1e-12 {
				t.Errorf("cosine %v, want 1", f.Cosine)
			}
			if d := o.Drift; d == nil || math.Abs(d.Slope-1) > 1e-9 || math.Abs(d.Intercept) > 1e-9 || math.Abs(d.R2-1) > 1e-9 {
				t.Errorf("drift %+v, want slope 1 intercept 0 r2 1", o.Drift)
			}
		})
	}
}

func TestStoredOutputs(t *testing.T) {
	// The executor against the torch outputs stored with the fixture.
	for _, name := range []string{"mlp_opset9", "transformer_block_opset21"} {
		t.Run(name, func(t *testing.T) {
			m := loadFixture(t, name)
			dir := filepath.Join(fixture(name), "test_data_set_0")
			in, err := tensorio.LoadSet(dir, "input", names(GraphInputs(m)))
			if err != nil {
				t.Fatal(err)
			}
			want, err := tensorio.LoadSet(dir, "output", names(m.Graph.Outputs))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Compare(context.Background(), ModelSide("model", m), &Side{Name: dir, Expected: [][]*canonical.Tensor{want}},
				Options{Inputs: [][]*canonical.Tensor{in}})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s max_abs %.3g max_ulp %.0f", name, rep.Summary, rep.Outputs[0].Float.MaxAbs, rep.Outputs[0].Float.MaxULP)
			if !rep.Equivalent {
				t.Fatalf("executor vs stored torch outputs: %s", rep.Summary)
			}
		})
	}
}

// scaledCopy loads fixture name and multiplies the float32 initializer
// init by f.
func scaledCopy(t *testing.T, name, init string, f float32) *canonical.Model {
	t.Helper()
	m := loadFixture(t, name)
	v := m.Graph.Lookup(init)
	if v == nil || v.Const == nil {
		t.Fatalf("%s has no initializer %q", name, init)
	}
	raw, err := v.Const.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, len(raw))
	for i := 0; i+4 <= len(raw); i += 4 {
		x := math.Float32frombits(binary.LittleEndian.Uint32(raw[i:]))
		binary.LittleEndian.PutUint32(out[i:], math.Float32bits(x*f))
	}
	v.Const.SetBytes(out)
	return m
}

func TestScaledInitializer(t *testing.T) {
	ref := loadFixture(t, "mlp_opset17")
	cases := []struct {
		init, node       string
		slopeLo, slopeHi float64
	}{
		// Scaling the last layer's weight scales the output (minus the
		// bias) by 1.01: the fit's slope is close to 1.01.
		{"4.weight", "/4/Gemm", 1.007, 1.010},
		// A hidden layer: ReLU and the later biases damp the effect.
		{"2.weight", "/2/Gemm", 1.006, 1.011},
	}
	for _, c := range cases {
		t.Run(c.init, func(t *testing.T) {
			cand := scaledCopy(t, "mlp_opset17", c.init, 1.01)
			rep, err := Compare(context.Background(), ModelSide("ref", ref), ModelSide("scaled", cand),
				Options{Samples: 3, Gen: GenOptions{Seed: 1}, Bisect: true})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Equivalent {
				t.Fatalf("scaled %s: reported equivalent: %s", c.init, rep.Summary)
			}
			o := rep.Outputs[0]
			d := o.Drift
			t.Logf("%s: max_abs %.4g max_rel %.4g cosine %.8f slope %.5f intercept %.3g r2 %.6f", c.init,
				o.Float.MaxAbs, o.Float.MaxRel, o.Float.Cosine, d.Slope, d.Intercept, d.R2)
			if d.Slope < c.slopeLo || d.Slope > c.slopeHi {
				t.Errorf("drift slope %.5f, want in [%v, %v]", d.Slope, c.slopeLo, c.slopeHi)
			}
			if d.R2 < 0.999 {
				t.Errorf("drift r2 %.6f: a pure scale error should fit a line", d.R2)
			}
			if o.Float.MaxAbs < 1e-4 || o.Mismatched == 0 {
				t.Errorf("max_abs %.3g, mismatched %d: the scaling should show", o.Float.MaxAbs, o.Mismatched)
			}
			b := rep.Bisect
			if b == nil || b.First == nil {
				t.Fatalf("bisect found no divergent node: %+v", b)
			}
			if b.First.Node != c.node || b.First.OpType != "Gemm" {
				t.Errorf("first divergent node %q (%s), want %q (Gemm)", b.First.Node, b.First.OpType, c.node)
			}
			var initStatus string
			for _, in := range b.First.Inputs {
				if in.Name == c.init {
					initStatus = in.Status
					if in.Kind != "initializer" {
						t.Errorf("input %s kind %q, want initializer", in.Name, in.Kind)
					}
				} else if in.Status != "match" {
					t.Errorf("input %s status %q, want match", in.Name, in.Status)
				}
			}
			if initStatus != "differs" {
				t.Errorf("initializer %s status %q, want differs", c.init, initStatus)
			}
			// Every node before the divergent one was checked and matched.
			for _, s := range b.Path[:len(b.Path)-1] {
				if s.Status != "match" {
					t.Errorf("node %s before the divergence: %s", s.Node, s.Status)
				}
			}
			if got := b.Path[len(b.Path)-1]; got.Node != c.node || got.Status != "diverged" {
				t.Errorf("last path step %+v", got)
			}
		})
	}
}

func TestOpsetVariantsEquivalent(t *testing.T) {
	a, b := loadFixture(t, "mlp_opset9"), loadFixture(t, "mlp_opset17")
	rep, err := Compare(context.Background(), ModelSide("opset9", a), ModelSide("opset17", b),
		Options{Samples: 4, Gen: GenOptions{Seed: 3, Distribution: "uniform"}, Bisect: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Equivalent {
		t.Fatalf("opset 9 vs 17: %s", rep.Summary)
	}
	o := rep.Outputs[0]
	if o.Float.MaxAbs > 1e-6 || o.Mismatched != 0 || o.Elements != 4*4*10 {
		t.Errorf("max_abs %.3g mismatched %d elements %d", o.Float.MaxAbs, o.Mismatched, o.Elements)
	}
	if c := o.Classifier; c == nil || c.Top1 != 1 || c.Top5 == nil || *c.Top5 != 1 || c.Rows != 16 || c.Classes != 10 {
		t.Errorf("classifier metrics %+v", o.Classifier)
	}
	if rep.Bisect == nil || rep.Bisect.First != nil || rep.Bisect.NodesChecked != 5 {
		t.Errorf("bisect %+v, want 5 nodes checked and none divergent", rep.Bisect)
	}
}

// countingRunner wraps the executor to record capture batch sizes; it
// stands in for another runtime plugged in through the Runner interface.
type countingRunner struct {
	inner    CaptureRunner
	runs     int
	captures []int
}

func (c *countingRunner) Run(ctx context.Context, in []*canonical.Tensor) ([]*canonical.Tensor, error) {
	c.runs++
	return c.inner.Run(ctx, in)
}

func (c *countingRunner) RunCapture(ctx context.Context, in []*canonical.Tensor, names []string) (map[string]*canonical.Tensor, error) {
	c.captures = append(c.captures, len(names))
	return c.inner.RunCapture(ctx, in, names)
}

func TestBisectBatchesWithCustomRunner(t *testing.T) {
	ref := loadFixture(t, "mlp_opset17")
	cand := scaledCopy(t, "mlp_opset17", "4.weight", 1.01)
	ra, err := executor.New(ref, executor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ra.Close()
	rb, err := executor.New(cand, executor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Close()
	ca, cb := &countingRunner{inner: ra}, &countingRunner{inner: rb}
	rep, err := Compare(context.Background(), &Side{Name: "a", Model: ref, Runner: ca}, &Side{Name: "b", Model: cand, Runner: cb},
		Options{Samples: 2, Bisect: true, BisectBatch: 2})
	if err != nil {
		t.Fatal(err)
	}
	b := rep.Bisect
	// 5 nodes with one output each, 2 per batch: batches of 2, 2, 1, then
	// one capture of the divergent node's inputs that are not constants
	// and its output.
	if b.First == nil || b.First.Node != "/4/Gemm" || b.NodesChecked != 5 || b.Runs != 4 {
		t.Fatalf("bisect first %+v checked %d runs %d", b.First, b.NodesChecked, b.Runs)
	}
	want := []int{2, 2, 1, 2}
	if fmt.Sprint(ca.captures) != fmt.Sprint(want) || fmt.Sprint(cb.captures) != fmt.Sprint(want) || ca.runs != 2 || cb.runs != 2 {
		t.Errorf("captures A %v B %v runs %d %d; want %v and 2 runs each", ca.captures, cb.captures, ca.runs, cb.runs, want)
	}
	// A runner without RunCapture: the comparison works, bisection is
	// skipped with a note.
	plain := struct{ Runner }{ra}
	rep, err = Compare(context.Background(), &Side{Name: "a", Model: ref, Runner: plain}, &Side{Name: "b", Model: cand, Runner: rb},
		Options{Bisect: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Equivalent || rep.Bisect != nil || len(rep.Notes) != 1 {
		t.Errorf("plain runner: equivalent %v bisect %v notes %v", rep.Equivalent, rep.Bisect, rep.Notes)
	}
	// The error map with it compares what it can, the graph output (the
	// planted Gemm's), and says why not more.
	rep, err = Compare(context.Background(), &Side{Name: "a", Model: ref, Runner: plain}, &Side{Name: "b", Model: cand, Runner: rb},
		Options{Samples: 1, Map: true})
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Map
	if m == nil || m.Compared != 1 || m.Unmatched != 4 || m.Nodes[m.Ranked[0]].Node != "/4/Gemm" || m.Nodes[m.Ranked[0]].Status != "diverged" {
		t.Fatalf("outputs-only map %+v; notes %q", m, rep.Notes)
	}
	if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "compares only the graph outputs") {
		t.Errorf("notes %q", rep.Notes)
	}
}

func BenchmarkCompareTransformerBlock(b *testing.B) {
	m, err := canonical.Load(filepath.Join(fixture("transformer_block_opset21"), "model.onnx"), canonical.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	ra, err := executor.New(m, executor.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ra.Close()
	side := &Side{Name: "m", Model: m, Runner: ra}
	for b.Loop() {
		if _, err := Compare(context.Background(), side, side, Options{Samples: 4}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBisectTransformerBlock(b *testing.B) {
	m, err := canonical.Load(filepath.Join(fixture("transformer_block_opset21"), "model.onnx"), canonical.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	ra, err := executor.New(m, executor.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ra.Close()
	side := &Side{Name: "m", Model: m, Runner: ra}
	for b.Loop() {
		if _, err := Compare(context.Background(), side, side, Options{Bisect: true, BisectBatch: 16}); err != nil {
			b.Fatal(err)
		}
	}
}
