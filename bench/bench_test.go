package bench

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
)

// slowRunner stands in for a runtime: it returns the executor's stored
// outputs after a fixed delay.
type slowRunner struct {
	outs []*canonical.Tensor
}

func (r *slowRunner) Run(context.Context, []*canonical.Tensor) ([]*canonical.Tensor, error) {
	time.Sleep(200 * time.Microsecond)
	return r.outs, nil
}

func TestRunFixture(t *testing.T) {
	path := filepath.Join("..", "fixtures", "models", "mlp_opset9", "model.onnx")
	m, err := canonical.Load(path, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var first []*canonical.Tensor
	res, err := Run(context.Background(), path, m, Options{Reps: 7, Warmup: 1, Threads: 1,
		Check: func(side string, outs []*canonical.Tensor) error {
			if side == "executor" {
				first = outs
			}
			return nil
		}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Executor
	if s.Runs != 7 || s.Min <= 0 || s.Min > s.P50 || s.P50 > s.P90 || s.P90 > s.P99 || s.ThroughputRPS <= 0 {
		t.Fatalf("inconsistent stats %+v", s)
	}
	if res.Other != nil || first == nil {
		t.Fatalf("other side %v, executor outputs %v", res.Other, first)
	}

	res, err = Run(context.Background(), path, m, Options{Reps: 3, Runtime: "slow"}, &slowRunner{outs: first})
	if err != nil {
		t.Fatal(err)
	}
	if res.Other == nil || res.Other.P50 < 200*time.Microsecond || res.Ratio <= 0 || res.MaxAbsDiff != 0 {
		t.Fatalf("other side %+v, ratio %g, max abs diff %g", res.Other, res.Ratio, res.MaxAbsDiff)
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, []*Result{res, res}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mlp_opset9", "executor", "slow", "geometric mean"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}

	_, err = Run(context.Background(), path, m, Options{Reps: 0}, nil)
	var ue *UsageError
	if !errors.As(err, &ue) {
		t.Fatalf("reps 0: got %v, want a UsageError", err)
	}
}

func TestPercentiles(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i))
	}
	s := stats("x", ds, time.Second)
	if s.Min != 1 || s.P50 != 50 || s.P90 != 90 || s.P99 != 99 || s.Runs != 100 {
		t.Fatalf("%+v", s)
	}
	if g := GeoMean([]float64{2, 8}); g < 3.999 || g > 4.001 {
		t.Fatalf("GeoMean(2, 8) = %g", g)
	}
}

// TestTableSaysSlowPaths: a node that ran per element is printed under
// the table, with the model and the reason.
func TestTableSaysSlowPaths(t *testing.T) {
	var b strings.Builder
	r := &Result{Model: "/m/qcnn/model.onnx", Threads: 1, Kernel: "avx2", IntKernel: "avx2",
		SlowPaths: []string{`ConvInteger "c3d": not a 1-D or 2-D convolution`}}
	if err := WriteTable(&b, []*Result{r}); err != nil {
		t.Fatal(err)
	}
	if want := `qcnn: slow path (per element, no kernel): ConvInteger "c3d": not a 1-D or 2-D convolution`; !strings.Contains(b.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, b.String())
	}
}

// countRunner counts its runs and records when each started.
type countRunner struct {
	outs   []*canonical.Tensor
	starts []time.Time
}

func (r *countRunner) Run(context.Context, []*canonical.Tensor) ([]*canonical.Tensor, error) {
	r.starts = append(r.starts, time.Now())
	// Some CPU time a run (getrusage counts in µs or coarser): a run of
	// a few ns has none, and a CPU ratio of 0.
	for s := time.Now(); time.Since(s) < 2*time.Millisecond; {
	}
	return r.outs, nil
}

// TestRunSettleBlock: with Settle, each side's block of Block timed runs
// follows a pause and one untimed run; the last block may be shorter.
func TestRunSettleBlock(t *testing.T) {
	path := filepath.Join("..", "fixtures", "models", "mlp_opset9", "model.onnx")
	m, err := canonical.Load(path, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var first []*canonical.Tensor
	if _, err := Run(context.Background(), path, m, Options{Reps: 1, Threads: 1, Check: func(_ string, outs []*canonical.Tensor) error {
		first = outs
		return nil
	}}, nil); err != nil {
		t.Fatal(err)
	}
	settle := 3 * time.Millisecond
	r := &countRunner{outs: first}
	res, err := Run(context.Background(), path, m, Options{Reps: 7, Warmup: 2, Threads: 1, Settle: settle, Block: 3, Runtime: "count", OtherInProcess: true}, r)
	if err != nil {
		t.Fatal(err)
	}
	if res.Executor.Runs != 7 || res.Other == nil || res.Other.Runs != 7 || res.CPURatio <= 0 {
		t.Fatalf("executor %+v, other %+v, CPU ratio %g", res.Executor, res.Other, res.CPURatio)
	}
	// Check run + 1 more warm-up + 3 blocks (3, 3, 1) each after an untimed run.
	if got, want := len(r.starts), 1+1+3+7; got != want {
		t.Fatalf("other side ran %d times, want %d", got, want)
	}
	// Block starts (the untimed runs at 2, 6, 10) follow a pause of at
	// least settle since the runs before them (the executor's block in
	// between); the runs within a block follow each other at once.
	for _, i := range []int{2, 6, 10} {
		if d := r.starts[i].Sub(r.starts[i-1]); d < settle {
			t.Errorf("run %d: %v after the one before, want a pause of %v", i, d, settle)
		}
	}
	if _, err := Run(context.Background(), path, m, Options{Reps: 1, Settle: -1}, r); err == nil {
		t.Error("negative Settle: no error")
	}
}
