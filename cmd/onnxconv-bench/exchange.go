//go:build cgo

package main

import (
	"fmt"
	"runtime"
	"time"

	"github.com/onnxconv/onnxconv/executor/kernels"
)

// The machine's exchange figures for --scaling: how much faster n threads
// run a chain of small convolution steps than one thread does, the
// executor's own kernels on an n-thread Context held as a model run holds
// it, when
//   - each step reads only what its own thread wrote (own): 3×3
//     depthwise convolutions of 88 channels at 28², back and forth, each
//     split by channels the same way;
//   - each step reads all that the step before wrote (exchange): 1×1
//     convolutions 24 → 88 → 24 channels at 28², back and forth
//     (MobileNet-v3-small's 28² block without its depthwise step), each
//     split as the executor splits it, so that each thread reads the part
//     of its input that another thread wrote just before.
//
// Both chains' steps took about 20 µs on one thread of the machine
// measured, as many steps of the small nets do. Where moving cache lines between cores is cheap, both
// should speed up about as the ceiling's SGEMM copies do (ceiling.go); on
// the virtual machine of docs/threads.md ("Measuring", "What is left")
// the own chain ran 0.92–1.47× (median 1.30) and the exchange chain
// 0.72–0.97× (median 0.80): its steps ran slower on two threads than on
// one.

// exchangeHW is the chains' side (28² pixels); exchangeC and exchangeM
// are the exchange chain's channels, dwChannels the own chain's.
const (
	exchangeHW = 28
	exchangeC  = 24
	exchangeM  = 88
	dwChannels = 88
)

// chainRounds is the rounds of a chain's steps one measurement runs: 150
// step pairs of the exchange chains (about 6 ms on one thread of the
// machine measured), 150 blocks of the layout chains (layouts.go).
const chainRounds = 150

// chain is a probe's steps, each a kernel call from one of its buffers
// to another (a closure over them).
type chain struct {
	steps []func(x *kernels.Context) error
}

// probeFill is deterministic small values (the probe's sums stay finite;
// the biases keep them off the denormals).
func probeFill(n, seed int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32((i*seed)%17-8) / 64
	}
	return v
}

// convStep is the NCHW convolution p (packed weights, bias, act) from in
// to out, as the executor runs a Conv node.
func convStep(p kernels.Conv2D, act kernels.Act, in, out []float32, seed int) (func(*kernels.Context) error, error) {
	w := probeFill(p.M*p.C/p.Groups*p.KH*p.KW, seed)
	pw, err := kernels.PackConvWeights(p, w)
	if err != nil {
		return nil, fmt.Errorf("exchange probe: %w", err)
	}
	bias := probeFill(p.M, seed+1)
	return func(x *kernels.Context) error {
		return x.Conv2DPackedAct(p, in, w, pw, bias, out, act, nil)
	}, nil
}

// newChain is the chain of there (with ReLU, from buffer 0 to 1) and back
// (from 1 to 0), buffer 0 filled.
func newChain(there, back kernels.Conv2D) (*chain, error) {
	px := there.H * there.W
	b0, b1 := probeFill(there.C*px, 3), make([]float32, there.M*px)
	s0, err := convStep(there, kernels.ActRelu, b0, b1, 5)
	if err != nil {
		return nil, err
	}
	s1, err := convStep(back, kernels.ActNone, b1, b0, 7)
	if err != nil {
		return nil, err
	}
	return &chain{steps: []func(*kernels.Context) error{s0, s1}}, nil
}

// ownChain is the depthwise chain, exchangeChain the 1×1 chain.
func ownChain() (*chain, error) {
	p := kernels.Conv2D{N: 1, C: dwChannels, H: exchangeHW, W: exchangeHW, M: dwChannels, KH: 3, KW: 3, SH: 1, SW: 1,
		DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: dwChannels}
	return newChain(p, p)
}

// pointwise is a 1×1 convolution of the probes' side from c to m
// channels.
func pointwise(c, m int) kernels.Conv2D {
	return kernels.Conv2D{N: 1, C: c, H: exchangeHW, W: exchangeHW, M: m, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1}
}

func exchangeChain() (*chain, error) {
	return newChain(pointwise(exchangeC, exchangeM), pointwise(exchangeM, exchangeC))
}

// run times chainRounds rounds of c's steps on x, held as a model run
// holds it.
func (c *chain) run(x *kernels.Context) (time.Duration, error) {
	defer x.Hold()()
	t := time.Now()
	for range chainRounds {
		for _, s := range c.steps {
			if err := s(x); err != nil {
				return 0, err
			}
		}
	}
	return time.Since(t), nil
}

// machineExchange returns the own and exchange chains' speed-ups at n
// threads over one (1 and 1 for n ≤ 1): for each, the ratio of the p50s
// of ceilingTurns turns of one thread and n.
func machineExchange(n int) (own, exchange float64, err error) {
	if n <= 1 {
		return 1, 1, nil
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(n, runtime.GOMAXPROCS(0))))
	one, all := kernels.NewContext(1), kernels.NewContext(n)
	defer all.Close()
	var r [2]float64
	for i, mk := range []func() (*chain, error){ownChain, exchangeChain} {
		c, err := mk()
		if err != nil {
			return 0, 0, err
		}
		// One untimed turn each: the helpers start, the caches fill.
		for _, x := range []*kernels.Context{one, all} {
			if _, err := c.run(x); err != nil {
				return 0, 0, err
			}
		}
		// The same work at both counts: the ratio of one copy.
		if r[i], err = turnRatio(func() (time.Duration, time.Duration, error) {
			t1, err := c.run(one)
			if err != nil {
				return 0, 0, err
			}
			tn, err := c.run(all)
			return t1, tn, err
		}, 1); err != nil {
			return 0, 0, err
		}
	}
	return r[0], r[1], nil
}
