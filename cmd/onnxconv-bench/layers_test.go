//go:build cgo

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/runtimes/ort"
)

// The sample is ONNX Runtime 1.30's profile of two runs of
// fixtures/models/detector_head at one thread (args cut to op_name and
// provider).
func readSample(t *testing.T) *ortProfile {
	t.Helper()
	f, err := os.Open("testdata/ort_profile_detector_head.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := parseORTProfile(f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseORTProfile(t *testing.T) {
	p := readSample(t)
	if len(p.Runs) != 2 || p.Runs[0] != 388*time.Microsecond || p.Runs[1] != 185*time.Microsecond {
		t.Errorf("runs %v, want [388µs 185µs]", p.Runs)
	}
	if len(p.Nodes) != 16 {
		t.Errorf("%d nodes, want 16", len(p.Nodes))
	}
	first := p.Nodes[0]
	if first.Name != "/feat/feat.1/Relu_output_0_nchwc" || first.Op != "Conv" ||
		len(first.Times) != 2 || first.Times[0] != 65*time.Microsecond || first.Times[1] != 11*time.Microsecond {
		t.Errorf("first node %+v", first)
	}
	for _, n := range p.Nodes {
		if len(n.Times) != 2 || n.Op == "" || strings.HasSuffix(n.Name, "_kernel_time") {
			t.Errorf("node %+v: want 2 runs, an op, the name without _kernel_time", n)
		}
	}
	p.dropFirst(1)
	if len(p.Runs) != 1 || len(first.Times) != 1 || first.Times[0] != 11*time.Microsecond {
		t.Errorf("after dropFirst(1): runs %v, first node %v", p.Runs, first.Times)
	}
	if _, err := parseORTProfile(strings.NewReader(`[{"cat":"Session","name":"model_run","dur":3}]`)); err == nil {
		t.Error("a profile without node events: no error")
	}
	if _, err := parseORTProfile(strings.NewReader(`{`)); err == nil {
		t.Error("bad JSON: no error")
	}
}

func TestMapLayers(t *testing.T) {
	p := readSample(t)
	us := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Microsecond)
		}
		return out
	}
	steps := []executor.StepTime{
		// A fused Conv+Relu: ORT's NCHWc Conv is named after the Relu's output.
		{Kind: "fused", Nodes: []string{"/feat/feat.0/Conv", "/feat/feat.1/Relu"}, Ops: []string{"Conv", "Relu"},
			Outputs: []string{"/feat/feat.0/Conv_output_0", "/feat/feat.1/Relu_output_0"}, Times: us(200, 100, 150)},
		// Mapped by node name.
		{Kind: "host", Nodes: []string{"/TopK"}, Ops: []string{"TopK"}, Outputs: []string{"/TopK_output_0"}, Times: us(1, 2, 3)},
		// No node: left out.
		{Kind: "guard", Times: us(0)},
		// A step ORT has no node for.
		{Kind: "host", Nodes: []string{"/Extra"}, Ops: []string{"Identity"}, Times: us(30)},
	}
	rows := mapLayers(steps, p)
	byFirst := map[string]layerRow{}
	unmapped := 0
	for _, r := range rows {
		if len(r.nodes) == 0 {
			unmapped++
			if len(r.ortNodes) != 1 {
				t.Errorf("unmapped row %+v: want one ORT node", r)
			}
			continue
		}
		byFirst[r.nodes[0]] = r
	}
	if len(byFirst) != 3 {
		t.Fatalf("%d step rows, want 3: %+v", len(byFirst), rows)
	}
	conv := byFirst["/feat/feat.0/Conv"]
	if conv.ours != (stat{min: 100 * time.Microsecond, med: 150 * time.Microsecond}) ||
		conv.ortT != (stat{min: 11 * time.Microsecond, med: 65 * time.Microsecond}) ||
		len(conv.ortNodes) != 1 || conv.ortOps[0] != "Conv" {
		t.Errorf("conv row %+v", conv)
	}
	if tk := byFirst["/TopK"]; len(tk.ortNodes) != 1 || tk.ortNodes[0] != "/TopK" {
		t.Errorf("TopK row %+v", tk)
	}
	if ex := byFirst["/Extra"]; len(ex.ortNodes) != 0 || ex.ortT != (stat{}) {
		t.Errorf("Extra row %+v", ex)
	}
	// 16 ORT nodes, 2 mapped.
	if unmapped != 14 {
		t.Errorf("%d unmapped ORT rows, want 14", unmapped)
	}
	for i := 1; i < len(rows); i++ {
		a, b := rows[i-1], rows[i]
		if a.ours.min-a.ortT.min < b.ours.min-b.ortT.min {
			t.Errorf("rows %d, %d not sorted by excess", i-1, i)
		}
	}
	if rows[0].nodes[0] != "/feat/feat.0/Conv" {
		t.Errorf("first row %+v, want the conv (largest excess)", rows[0])
	}
}

// TestMapLayersFusedNames: ONNX Runtime's fused nodes ("<first node>/<fusion>/…")
// count in the step holding that node; names with no such prefix stay rows of
// their own.
func TestMapLayersFusedNames(t *testing.T) {
	us := func(v int) []time.Duration { return []time.Duration{time.Duration(v) * time.Microsecond} }
	steps := []executor.StepTime{
		{Kind: "fused", Nodes: []string{"/l/MatMul", "/l/Add"}, Ops: []string{"MatMul", "Add"}, Times: us(50)},
		{Kind: "fused", Nodes: []string{"/l/MatMul_1", "/l/Softmax"}, Ops: []string{"MatMul", "Softmax"}, Times: us(30)},
	}
	prof := &ortProfile{Nodes: []*ortNodeTime{
		{Name: "/l/MatMul/MatMulAddFusion", Op: "Gemm", Times: us(40)},
		{Name: "/l/MatMul_1/MatmulTransposeFusion//MatMulScaleFusion/", Op: "FusedMatMul", Times: us(10)},
		{Name: "/l/Softmax", Op: "Softmax", Times: us(5)},
		{Name: "SkipLayerNormalization_token_7", Op: "SkipLayerNormalization", Times: us(9)},
		{Name: "/l/Other/Fusion", Op: "Gemm", Times: us(3)},
	}}
	got := map[string][]string{}
	for _, r := range mapLayers(steps, prof) {
		key := "-"
		if len(r.nodes) > 0 {
			key = r.nodes[0]
		}
		got[key] = append(got[key], r.ortNodes...)
	}
	want := map[string][]string{
		"/l/MatMul":   {"/l/MatMul/MatMulAddFusion"},
		"/l/MatMul_1": {"/l/MatMul_1/MatmulTransposeFusion//MatMulScaleFusion/", "/l/Softmax"},
		"-":           {"/l/Other/Fusion", "SkipLayerNormalization_token_7"},
	}
	slices.Sort(got["-"])
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("mapped %v, want %v", got, want)
	}
}

// TestLayersFixture runs the comparison on a fixture model: every ONNX
// Runtime node but the NCHWc reorders maps to a step of the executor.
func TestLayersFixture(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	rt, err := ort.OpenDefault(1)
	if err != nil {
		t.Skipf("no ONNX Runtime: %v", err)
	}
	defer rt.Close()
	for _, model := range []string{"detector_head", "resnet_small"} {
		dir := filepath.Join("..", "..", "fixtures", "models", model)
		cfg := config{threads: 1, warmup: 1, reps: 3, rtol: 1e-3, atol: 1e-4}
		res, err := layersModel(cfg, rt, dir)
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		steps := 0
		for _, r := range res.rows {
			if len(r.nodes) == 0 {
				if !strings.HasPrefix(r.ortOps[0], "Reorder") {
					t.Errorf("%s: ORT node %s (%s) mapped to no step", model, r.ortNodes[0], r.ortOps[0])
				}
				continue
			}
			steps++
			if r.ours.min <= 0 {
				t.Errorf("%s: step %v has no time", model, r.nodes)
			}
		}
		if steps == 0 || res.oursRun.min <= 0 || res.ortRun.min <= 0 {
			t.Errorf("%s: %d steps, runs %v / %v", model, steps, res.oursRun, res.ortRun)
		}
		var buf bytes.Buffer
		if err := writeLayers(&buf, model, res, 5); err != nil {
			t.Fatal(err)
		}
		if out := buf.String(); !strings.Contains(out, "whole runs") || !strings.Contains(out, "sum of all") {
			t.Errorf("%s: output\n%s", model, out)
		}
		t.Logf("%s", buf.String())
	}
}
