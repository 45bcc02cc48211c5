package executor

import (
	"context"
	"math"
	"path/filepath"
	"testing"
)

// nhwcSteps counts the Conv steps of p whose output the plan keeps
// channels last.
func nhwcSteps(p *plan) int {
	n := 0
	var visit func(st step)
	visit = func(st step) {
		switch st := st.(type) {
		case *hostStep:
			if st.nhwc {
				n++
			}
		case *fusedStep:
			for _, h := range st.steps {
				visit(h)
			}
		case *expandDwStep:
			visit(st.expand)
			visit(st.dw)
		case *concatStep:
			for _, s := range st.parts {
				visit(s)
			}
			visit(st.concat)
		}
	}
	for _, st := range p.steps {
		visit(st)
	}
	return n
}

// TestNHWCPlan runs the MobileNet-v2 fixture (inverted-residual blocks of
// 1×1 and depthwise convolutions, ReLU6, residual Adds) on 1 and 2
// threads: its plan keeps the blocks' convolutions channels last
// (markNHWC), and every run — the build in NCHW, the replays in NHWC —
// matches the outputs torch computed, bit for bit the same on every run
// and thread count.
func TestNHWCPlan(t *testing.T) {
	dir := filepath.Join("..", "fixtures", "models", "mobilenet_small")
	m, ins := loadModelDir(t, dir)
	want := floats(t, readTensorFile(t, filepath.Join(dir, "test_data_set_0", "output_0.pb")))
	var first []float32
	for _, threads := range []int{1, 2} {
		ex, err := New(m, Options{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		for run := range 3 {
			outs, err := ex.Run(context.Background(), ins)
			if err != nil {
				t.Fatal(err)
			}
			got := floats(t, outs[0])
			if len(got) != len(want) {
				t.Fatalf("%d outputs, want %d", len(got), len(want))
			}
			for i := range want {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-4+1e-3*math.Abs(float64(want[i])) {
					t.Fatalf("%d threads, run %d: output[%d] = %g, torch computed %g", threads, run, i, got[i], want[i])
				}
			}
			if first == nil {
				first = got
				continue
			}
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(first[i]) {
					t.Fatalf("%d threads, run %d: output[%d] = %g, the first run gave %g", threads, run, i, got[i], first[i])
				}
			}
		}
		var marked int
		for _, p := range ex.plans {
			marked += nhwcSteps(p)
		}
		ex.Close()
		// 17 blocks: the first's depthwise convolution and projection,
		// each other's expansion, depthwise convolution and projection
		// (2 + 16·3); the stem (a 3×3 convolution of stride 2) and the
		// last 1×1 convolution (read by GlobalAveragePool) stay NCHW.
		if marked != 50 {
			t.Errorf("%d threads: %d Conv steps kept channels last, want the blocks' 50", threads, marked)
		}
	}
}
