package executor

import (
	"context"
	"path/filepath"
	"testing"
)

// TestFuseStepTimes records the steps of a fixture model's replays: the
// first run (the build) and the runs while stopped are not timed, every
// node of the graph is named in exactly one step, and the fused chains
// are steps of their kind.
func TestFuseStepTimes(t *testing.T) {
	dir := filepath.Join("..", "fixtures", "models", "resnet_small")
	m, ins := loadModelDir(t, dir)
	times := &StepTimes{}
	ex, err := New(m, Options{Threads: 1, StepTimes: times})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	times.Start()
	run := func() {
		t.Helper()
		if _, err := ex.Run(context.Background(), ins); err != nil {
			t.Fatal(err)
		}
	}
	run() // builds the plan: not timed
	if n := len(times.Steps()); n != 0 {
		t.Fatalf("the first run recorded %d steps", n)
	}
	run()
	run()
	times.Stop()
	run()
	steps := times.Steps()
	if len(steps) == 0 {
		t.Fatal("no steps recorded")
	}
	seen := map[string]int{}
	fused := 0
	for _, st := range steps {
		if len(st.Times) != 2 {
			t.Errorf("step %v: %d times, want 2", st.Nodes, len(st.Times))
		}
		if len(st.Nodes) != len(st.Ops) {
			t.Errorf("step %v: ops %v", st.Nodes, st.Ops)
		}
		if st.Kind == "fused" {
			fused++
		}
		for _, n := range st.Nodes {
			seen[n]++
		}
	}
	if fused == 0 {
		t.Error("no fused step")
	}
	for _, n := range m.Graph.Nodes {
		if seen[n.Name] > 1 {
			t.Errorf("node %s in %d steps", n.Name, seen[n.Name])
		}
	}
	times.Reset()
	if len(times.Steps()) != 0 {
		t.Error("Reset kept steps")
	}
}
