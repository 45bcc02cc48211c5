//go:build cgo

package main

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/executor/kernels"
)

func TestThroughputRatio(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	for _, tc := range []struct {
		one, all []time.Duration
		n        int
		want     float64
	}{
		// Whole cores: two copies take as long as one.
		{ms(10, 11, 9), ms(10, 10, 12), 2, 2},
		// Shared cores: two copies take twice as long (medians 10, 20).
		{ms(10, 30, 9), ms(20, 19, 21), 2, 1},
		// Even counts take the upper middle, as the timed runs' p50.
		{ms(8, 12), ms(10, 10), 2, 2.4},
		{nil, ms(1), 2, 0},
		{ms(0), ms(1), 2, 0},
	} {
		if got := throughputRatio(tc.one, tc.all, tc.n); got != tc.want {
			t.Errorf("throughputRatio(%v, %v, %d) = %v, want %v", tc.one, tc.all, tc.n, got, tc.want)
		}
	}
}

// TestMachineCeiling runs the probe: it fails when the probe errs or
// times nothing (a ratio of 0) or gives a ratio no machine could (two
// copies far above twice one's throughput, or below a third of one's).
// It cannot tell copies run at once from copies run in turn (both are
// plausible on a loaded machine); TestThroughputRatio checks the ratio.
func TestMachineCeiling(t *testing.T) {
	if c, err := machineCeiling(1); err != nil || c != 1 {
		t.Fatalf("machineCeiling(1) = %v, %v; want 1", c, err)
	}
	c, err := machineCeiling(2)
	if err != nil {
		t.Fatal(err)
	}
	if c <= 0.3 || c > 2.5 {
		t.Errorf("machineCeiling(2) = %.2f, want within (0.3, 2.5]", c)
	}
}

// TestMachineExchange runs the exchange probes: it fails when a probe
// errs or gives a speed-up no machine could (above the thread count, or
// below a fifth of one thread's speed).
func TestMachineExchange(t *testing.T) {
	if own, ex, err := machineExchange(1); err != nil || own != 1 || ex != 1 {
		t.Fatalf("machineExchange(1) = %v, %v, %v; want 1, 1", own, ex, err)
	}
	own, ex, err := machineExchange(2)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("machineExchange(2) = %.2f, %.2f", own, ex)
	for _, x := range []float64{own, ex} {
		if x <= 0.2 || x > 2.5 {
			t.Errorf("machineExchange(2) = %.2f, %.2f; want each within (0.2, 2.5]", own, ex)
		}
	}
}

// TestMachineLayouts checks that both layouts' blocks run and give
// plausible figures (the figures are wall-time properties of the
// machine), and that the two layouts compute the same blocks: after the
// same rounds, NHWC's buffer is NCHW's transposed, within rounding.
func TestMachineLayouts(t *testing.T) {
	for _, b := range mobileBlocks {
		nchw, nhwc, err := machineLayouts(b, 2)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("machineLayouts(%v, 2): NCHW %v %.2f×, NHWC %v %.2f×", b, nchw.one, nchw.speedUp, nhwc.one, nhwc.speedUp)
		for _, f := range []layoutFigures{nchw, nhwc} {
			if f.one <= 0 || f.speedUp <= 0.2 || f.speedUp > 2.5 {
				t.Errorf("machineLayouts(%v, 2) = %+v, %+v; want positive times, speed-ups within (0.2, 2.5]", b, nchw, nhwc)
			}
		}
		var bufs [2][]float32
		for i, layout := range []bool{false, true} {
			c, buf, err := blockChain(b, layout)
			if err != nil {
				t.Fatal(err)
			}
			x := kernels.NewContext(2)
			for range 3 {
				for _, s := range c.steps {
					if err := s(x); err != nil {
						t.Fatal(err)
					}
				}
			}
			x.Close()
			bufs[i] = buf
		}
		px := b.hw * b.hw
		for c := range b.c {
			for p := range px {
				u, v := bufs[0][c*px+p], bufs[1][p*b.c+c]
				if math.Abs(float64(u-v)) > 1e-4*(1+math.Abs(float64(u))) {
					t.Fatalf("%v after 3 blocks, channel %d pixel %d: NCHW %v, NHWC %v", b, c, p, u, v)
				}
			}
		}
	}
}

// TestMachineTransfer runs the transfer probe (two spinning threads: it
// needs two CPUs) and checks that its figures are ones a machine could
// give: a round trip of a cache line over 10 ns and under a millisecond
// on average, and read rates above 0.1 GB/s.
func TestMachineTransfer(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two CPUs")
	}
	f := machineTransfer()
	t.Logf("machineTransfer() = round trip %v, %.1f GB/s from the other thread, %.1f GB/s from its own", f.roundTrip, f.remote, f.self)
	if f.roundTrip <= 10*time.Nanosecond || f.roundTrip >= time.Millisecond || f.remote <= 0.1 || f.self <= 0.1 {
		t.Errorf("machineTransfer() = %+v: not a machine's figures", f)
	}
}
