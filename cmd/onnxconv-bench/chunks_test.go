//go:build cgo

package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/executor/kernels"
)

// TestChunkTables: steps summed by their busiest call site and by ops;
// extra = serial + chunks − one thread, split = inline − one thread,
// cores = the rest; mismatched plans refused.
func TestChunkTables(t *testing.T) {
	us := time.Microsecond
	step := func(label string, cpu, caller, chunks time.Duration, sites map[string]kernels.SiteCost) kernels.StepCost {
		return kernels.StepCost{Label: label, Runs: 2, CPU: cpu, Caller: caller, Calls: len(sites) * 2, Chunks: chunks, Sites: sites}
	}
	one := []kernels.StepCost{step("fused Conv+Relu", 200*us, 0, 0, nil), step("host Concat", 20*us, 0, 0, nil)}
	par := []kernels.StepCost{
		step("fused Conv+Relu", 150*us, 130*us, 260*us, map[string]kernels.SiteCost{
			"kernels.(*Context).gemm:158":       {Calls: 2, Chunks: 4, Time: 200 * us},
			"kernels.(*Context).packShared:257": {Calls: 2, Chunks: 6, Time: 60 * us}}),
		step("host Concat", 24*us, 0, 0, nil),
	}
	inl := []kernels.StepCost{
		step("fused Conv+Relu", 250*us, 230*us, 220*us, nil),
		step("host Concat", 22*us, 0, 0, nil),
	}
	var b bytes.Buffer
	if err := chunkTables(&b, "m", 2, one, par, inl); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// Conv+Relu per run: one thread 0.100, serial 0.010, chunks 0.130,
	// extra +0.040, split (0.010+0.110−0.100) +0.020, cores +0.020.
	for _, want := range []string{
		"kernels.(*Context).gemm:158      1        0.100      0.010      0.130    +0.040    +0.020    +0.020      2       5",
		"(serial)      1        0.010      0.012      0.000    +0.002    +0.001    +0.001      0       0",
		"total      2        0.110      0.022      0.130    +0.042    +0.021    +0.021      2       5",
		"fused Conv+Relu      1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if err := chunkTables(&b, "m", 2, one, par[:1], inl); err == nil {
		t.Error("steps of different plans accepted")
	}
	bad := append([]kernels.StepCost(nil), inl...)
	bad[1].Label = "host Add"
	if err := chunkTables(&b, "m", 2, one, par, bad); err == nil {
		t.Error("steps with different labels accepted")
	}
}
