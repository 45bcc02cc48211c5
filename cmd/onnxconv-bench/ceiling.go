//go:build cgo

package main

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/onnxconv/onnxconv/executor/kernels"
)

// The machine's ceiling for --scaling: how much of n threads' throughput
// the machine gives work that shares nothing. n copies of the executor's
// own SGEMM micro-kernel loop (a 64×64×64 product whose operands stay in
// each core's L1 and L2, on a one-thread Context each) run at once,
// against one copy alone, taking turns. On a machine whose CPUs are
// whole cores this is n; on a virtual machine whose virtual CPUs share
// physical cores, or whose host runs other guests, it is less, and a
// model scales past it only where n cores' caches hold what one core's
// cannot. docs/threads.md ("Measuring") and docs/speed.md ("Eighth wave,
// twelfth session") have the figures of the machine measured.

// ceilingSize is the side of the probe's product: 3·64² floats, 48 KiB,
// stay in a core's L2 (and mostly its L1), so the probe measures the
// cores, not the memory.
const ceilingSize = 64

// ceilingProducts is the products one copy computes per measurement
// (about 9 ms on one core of the machine measured).
const ceilingProducts = 1000

// ceilingTurns is how many times the one-copy and n-copy measurements
// take turns before and after the models' runs; the ceiling is the
// ratio of their p50s (throughputRatio).
const ceilingTurns = 9

// machineCeiling returns the throughput of n concurrent copies of the
// probe over one copy's (1 for n ≤ 1), from ceilingTurns turns.
func machineCeiling(n int) (float64, error) {
	if n <= 1 {
		return 1, nil
	}
	return turnRatio(func() (time.Duration, time.Duration, error) { return ceilingTurn(n) }, n)
}

// turnRatio takes ceilingTurns turns of turn (one thread's wall time,
// then n threads') and returns throughputRatio of them for n copies of
// the work (n = 1 when the threads share one copy: a speed-up).
func turnRatio(turn func() (one, all time.Duration, err error), n int) (float64, error) {
	one := make([]time.Duration, 0, ceilingTurns)
	all := make([]time.Duration, 0, ceilingTurns)
	for range ceilingTurns {
		d1, dn, err := turn()
		if err != nil {
			return 0, err
		}
		one, all = append(one, d1), append(all, dn)
	}
	return throughputRatio(one, all, n), nil
}

// ceilingTurn times one copy of the probe alone, then n copies at once
// (GOMAXPROCS at least n meanwhile).
func ceilingTurn(n int) (one, all time.Duration, err error) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(n, runtime.GOMAXPROCS(0))))
	if one, err = runCopies(1); err != nil {
		return 0, 0, err
	}
	all, err = runCopies(n)
	return one, all, err
}

// throughputRatio is n copies' throughput over one's from their wall
// times: n · p50(one) / p50(all), the p50 taken as the timed runs' is
// (the upper middle of an even count); 0 when either is empty or zero.
func throughputRatio(one, all []time.Duration, n int) float64 {
	if len(one) == 0 || len(all) == 0 {
		return 0
	}
	m1, mn := sorted(one)[len(one)/2], sorted(all)[len(all)/2]
	if m1 <= 0 || mn <= 0 {
		return 0
	}
	return float64(n) * float64(m1) / float64(mn)
}

// runCopies runs n copies of the probe at once, each on a goroutine
// locked to its OS thread, and returns the wall time until all are done.
func runCopies(n int) (time.Duration, error) {
	const s = ceilingSize
	errs := make([]error, n)
	var ready, wg sync.WaitGroup
	start := make(chan struct{})
	ready.Add(n)
	wg.Add(n)
	for i := range n {
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			x := kernels.NewContext(1)
			a, b, c := make([]float32, s*s), make([]float32, s*s), make([]float32, s*s)
			for j := range a {
				a[j], b[j] = float32(j%7)/7, float32(j%5)/5
			}
			ready.Done()
			<-start
			for range ceilingProducts {
				if err := x.Sgemm(false, false, s, s, s, 1, a, s, b, s, 0, c, s); err != nil {
					errs[i] = fmt.Errorf("machine ceiling probe: %w", err)
					return
				}
			}
		}()
	}
	ready.Wait()
	t := time.Now()
	close(start)
	wg.Wait()
	d := time.Since(t)
	for _, err := range errs {
		if err != nil {
			return 0, err
		}
	}
	return d, nil
}

// printCeilings prints the machine's ceiling (machineCeiling), its
// exchange figures (machineExchange), once its transfer figures
// (machineTransfer) and its layout figures
// (machineLayouts) at each thread count of counts after
// the first, measured when says (before or
// after the models' runs: on a shared host it moves while they run).
func printCeilings(counts []int, when string) error {
	for _, n := range counts[1:] {
		c, err := machineCeiling(n)
		if err != nil {
			return err
		}
		fmt.Printf("machine ceiling at %d threads, %s: %d copies of a %d×%d×%d SGEMM sharing nothing run %.2f× one copy's throughput (what the machine gives threads that share nothing; ceiling.go)\n",
			n, when, n, ceilingSize, ceilingSize, ceilingSize, c)
		own, ex, err := machineExchange(n)
		if err != nil {
			return err
		}
		fmt.Printf("machine exchange at %d threads, %s: chains of small convolution steps at %d² run %.2f× as fast as on one thread when each step reads what its own thread wrote (depthwise), %.2f× when each reads what all threads wrote (1×1; exchange.go)\n",
			n, when, exchangeHW, own, ex)
		if n == counts[1] && runtime.GOMAXPROCS(0) >= 2 {
			f := machineTransfer()
			fmt.Printf("machine transfer between 2 threads, %s: a cache line goes to the other thread and back in %.0f ns; %d KB another thread just wrote are read at %.1f GB/s, %.1f GB/s when the reader wrote them (transfer.go)\n",
				when, float64(f.roundTrip.Nanoseconds()), transferBytes>>10, f.remote, f.self)
		}
		for _, b := range mobileBlocks {
			nchw, nhwc, err := machineLayouts(b, n)
			if err != nil {
				return err
			}
			fmt.Printf("machine layouts at %d threads, %s: a mobile block (%v, ReLU) takes %.1f µs on one thread and runs %.2f× as fast on %d in NCHW (the expansion inside the depthwise step, as the executor runs NCHW blocks), %.1f µs and %.2f× in NHWC (as it runs NHWC regions; layouts.go)\n",
				n, when, b, float64(nchw.one)/1e3, nchw.speedUp, n, float64(nhwc.one)/1e3, nhwc.speedUp)
		}
	}
	return nil
}
