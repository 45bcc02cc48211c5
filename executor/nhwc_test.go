package executor

import (
	"context"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/executor/kernels"
)

// nhwcSteps counts the steps of p whose output the plan keeps channels
// last, by op: "Conv", "Slice", "shuffle" (fuseConcatTranspose); as
// "scaled Conv", the 1×1 convolutions that took a Mul by channel; and as
// "Slice view", the Slices that hand their reader a view
// (markSliceViews); as "shared conversion", the Convs that convert an
// NCHW input for all its readers (hostStep.shareIn).
func nhwcSteps(p *plan) map[string]int {
	n := map[string]int{}
	eachHostStep(p, func(st *hostStep) {
		if st.scale != nil {
			n["scaled Conv"]++ // any layout (fuse_scale.go)
		}
		if st.view {
			n["Slice view"]++
		}
		if st.shareIn {
			n["shared conversion"]++
		}
		switch {
		case !st.nhwc:
		case st.shuffle != nil:
			n["shuffle"]++
		default:
			n[st.n.OpType]++
		}
	})
	return n
}

// eachHostStep calls f on every host step of p, inside the fused,
// expansion → depthwise and Concat steps too.
func eachHostStep(p *plan, f func(*hostStep)) {
	var visit func(st step)
	visit = func(st step) {
		switch st := st.(type) {
		case *hostStep:
			f(st)
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
}

// TestNHWCPlan runs three fixtures on 1 and 2 threads: the MobileNet-v2
// one (inverted-residual blocks of 1×1 and depthwise convolutions, ReLU6,
// residual Adds), the MobileNet-v3 one (blocks with a squeeze-and-
// excitation: GlobalAveragePool, 1×1 products, a Mul by channel) and the
// ShuffleNet-v2 one (units of a Slice of half the channels, 1×1 and
// depthwise convolutions, a channel shuffle). Each plan
// keeps the blocks' steps channels last (markNHWC; ShuffleNet's Slices
// as views, markSliceViews), and every run — the
// build in NCHW, the replays in NHWC — matches the outputs torch
// computed, bit for bit the same on every run and thread count.
func TestNHWCPlan(t *testing.T) {
	// ConvNHWC's kernels (AVX-512, not a forced micro-kernel) take the
	// stems and RegNet's grouped convolutions; without them those stay
	// NCHW (want without them: plain).
	dense := kernels.ConvNHWCFits(kernels.Conv2D{C: 3, M: 16, KH: 3, KW: 3, Groups: 1})
	for _, tc := range []struct {
		name        string
		want, plain map[string]int
		why         string
	}{
		// 17 blocks: the first's depthwise convolution and projection,
		// each other's expansion, depthwise convolution and projection
		// (2 + 16·3), the last 1×1 convolution (GlobalAveragePool
		// pools its output as stored) and the stem (a 3×3 convolution of
		// stride 2, reading the NCHW input as it is).
		{"mobilenet_small", map[string]int{"Conv": 52}, map[string]int{"Conv": 51}, "the stem, the blocks' 50 convolutions and the last"},
		// Every convolution but the 9 squeeze-and-excitations' two 1×1
		// products on one pixel (the same memory in either layout:
		// NCHW): the stem, the 11 blocks' (2 + 2·3 + 8·3) and the
		// last. The pools pool channels last, and each projection after
		// a squeeze-and-excitation took its Mul by channel
		// (fuseScaleConv) and multiplies as it reads.
		{"mobilenet_v3_se", map[string]int{"Conv": 34, "scaled Conv": 9}, map[string]int{"Conv": 33, "scaled Conv": 9}, "34 convolutions channels last, 9 of them scaled"},
		// 8 units: 3 of stride 2 (a depthwise convolution and a 1×1 one
		// on one branch, 1×1, depthwise, 1×1 on the other: 5 each), 5 of
		// stride 1 (two Slices, 3 convolutions each), each unit's
		// shuffle, and the last 1×1 convolution (ReduceMean pools its
		// output over the pixels as stored); the stem, read by a max
		// pool, stays NCHW. Every Slice hands its reader a view: one
		// half to the unit's first 1×1 convolution, the other to the
		// shuffle. The max pool's output, read by the first unit's two
		// branches, is converted once (hostStep.shareIn on both).
		{"shufflenet_small", map[string]int{"Conv": 31, "Slice": 10, "shuffle": 8, "Slice view": 10, "shared conversion": 2}, nil, "the units' 30 convolutions, 10 Slices (views) and 8 shuffles, and the last convolution; the first unit's input converted once"},
		// 5 blocks: each one's 1×1, grouped 3×3 (ConvNHWC) and 1×1
		// convolutions, the 3 stages' first blocks' 1×1 shortcuts (two
		// of stride 2: PointwiseNHWCSubsampled) and the stem. Without
		// ConvNHWC the grouped convolutions cut every region short.
		{"regnet_small", map[string]int{"Conv": 19}, map[string]int{}, "the stem, the blocks' 15 convolutions and 3 shortcuts"},
	} {
		if !dense && tc.plain != nil {
			tc.want, tc.why = tc.plain, "without ConvNHWC: "+fmt.Sprint(tc.plain)
		}
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join("..", "fixtures", "models", tc.name)
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
				marked := map[string]int{}
				for _, p := range ex.plans {
					for k, n := range nhwcSteps(p) {
						marked[k] += n
					}
				}
				ex.Close()
				if !maps.Equal(marked, tc.want) {
					t.Errorf("%d threads: steps kept channels last %v, want %s", threads, marked, tc.why)
				}
			}
		})
	}
}

// TestScaleConvNCHW runs the squeeze-and-excitation fixture's plan with
// every step in NCHW (hostStep.nhwc cleared after the build): each
// projection that took its Mul by channel (fuseScaleConv) then runs the
// Mul first (lctx.scaledInput), and the outputs are the bits of the
// channels-last runs, within torch's tolerance.
func TestScaleConvNCHW(t *testing.T) {
	dir := filepath.Join("..", "fixtures", "models", "mobilenet_v3_se")
	m, ins := loadModelDir(t, dir)
	want := floats(t, readTensorFile(t, filepath.Join(dir, "test_data_set_0", "output_0.pb")))
	ex, err := New(m, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	run := func() []float32 {
		t.Helper()
		outs, err := ex.Run(context.Background(), ins)
		if err != nil {
			t.Fatal(err)
		}
		return floats(t, outs[0])
	}
	run()
	nhwc := run()
	scaled := 0
	for _, p := range ex.plans {
		eachHostStep(p, func(st *hostStep) {
			st.nhwc = false
			if st.scale != nil {
				scaled++
			}
		})
	}
	if scaled != 9 {
		t.Fatalf("%d projections took their Mul by channel, want 9", scaled)
	}
	for range 2 {
		got := run()
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-4+1e-3*math.Abs(float64(want[i])) {
				t.Fatalf("NCHW: output[%d] = %g, torch computed %g", i, got[i], want[i])
			}
			if math.Float32bits(got[i]) != math.Float32bits(nhwc[i]) {
				t.Fatalf("NCHW: output[%d] = %g, channels last %g", i, got[i], nhwc[i])
			}
		}
	}
}
