//go:build cgo

package main

import (
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/onnxconv/onnxconv/executor/kernels"
)

// The machine's layout figures for --scaling: blocks of a mobile net (an
// expansion, a 1×1 convolution from c to m channels with ReLU; a k×k
// depthwise convolution with ReLU; a projection, a 1×1 convolution back
// to c), each chained (a block's output is the next one's input), on one
// thread and on n, in two activation layouts:
//   - NCHW, as the executor runs NCHW blocks: the expansion deferred into the
//     depthwise step's parallel call over blocks of channels (Defer,
//     Conv2DAfter; fuse_expanddw.go), then the projection
//     (Conv2DPackedAct), which reads planes the other thread wrote;
//   - NHWC: PointwiseNHWC and DepthwiseNHWC, every step split by pixels
//     (rows), so that a thread reads what it wrote but for the depthwise
//     step's halo rows.
// docs/threads.md ("What is left") has the figures of the machine
// measured.

// mobileBlock is one block's geometry: side hw, c channels in and out, m
// expanded, a k×k depthwise convolution.
type mobileBlock struct{ hw, c, m, k int }

// mobileBlocks are MobileNet-v3-small's blocks at 28², 14² and 7² (its
// stride-1 blocks' shapes, without their squeeze-and-excitation).
var mobileBlocks = []mobileBlock{{28, 24, 88, 3}, {14, 40, 240, 5}, {7, 96, 576, 5}}

func (b mobileBlock) String() string {
	return fmt.Sprintf("%d² %d→%d→%d %d×%d", b.hw, b.c, b.m, b.c, b.k, b.k)
}

// blockChain returns block b in NCHW (nhwc false) or NHWC as a chain of
// its steps over three buffers, and the buffer that holds the block's
// input and output. Both layouts start from the same tensor and weights:
// they compute the same blocks.
func blockChain(b mobileBlock, nhwc bool) (*chain, []float32, error) {
	px := b.hw * b.hw
	in, mid, mid2 := probeFill(b.c*px, 3), make([]float32, b.m*px), make([]float32, b.m*px)
	conv := func(c, m, k, groups int) kernels.Conv2D {
		return kernels.Conv2D{N: 1, C: c, H: b.hw, W: b.hw, M: m, KH: k, KW: k, SH: 1, SW: 1, DH: 1, DW: 1,
			PT: k / 2, PL: k / 2, PB: k / 2, PR: k / 2, Groups: groups}
	}
	expand, dw, project := conv(b.c, b.m, 1, 1), conv(b.m, b.m, b.k, b.m), conv(b.m, b.c, 1, 1)
	ew, eb := probeFill(b.m*b.c, 5), probeFill(b.m, 6)
	dww, dwb := probeFill(b.m*b.k*b.k, 7), probeFill(b.m, 8)
	pw, pb := probeFill(b.c*b.m, 9), probeFill(b.c, 10)
	relu := kernels.ActRelu
	if !nhwc {
		ep, err := kernels.PackConvWeights(expand, ew)
		if err != nil {
			return nil, nil, fmt.Errorf("layout probe: %w", err)
		}
		pp, err := kernels.PackConvWeights(project, pw)
		if err != nil {
			return nil, nil, fmt.Errorf("layout probe: %w", err)
		}
		inf := float32(math.Inf(1))
		return &chain{steps: []func(*kernels.Context) error{
			func(x *kernels.Context) error {
				d, ok := x.Defer(expand, in, ew, ep, eb, mid, relu, nil)
				if !ok {
					if err := x.Conv2DPackedAct(expand, in, ew, ep, eb, mid, relu, nil); err != nil {
						return err
					}
					return x.Conv2DPackedClip(dw, mid, dww, nil, dwb, mid2, 0, inf, nil)
				}
				return x.Conv2DAfter(&d, dw, mid, dww, dwb, mid2, 0, inf, nil)
			},
			func(x *kernels.Context) error {
				return x.Conv2DPackedAct(project, mid2, pw, pp, pb, in, kernels.ActNone, nil)
			},
		}}, in, nil
	}
	planes := in
	in = make([]float32, len(planes))
	for c := range b.c {
		for p := range px {
			in[p*b.c+c] = planes[c*px+p]
		}
	}
	ep, err := kernels.PackPointwise(b.c, b.m, ew)
	if err != nil {
		return nil, nil, fmt.Errorf("layout probe: %w", err)
	}
	dp, err := kernels.PackDepthwise(dw, dww)
	if err != nil {
		return nil, nil, fmt.Errorf("layout probe: %w", err)
	}
	pp, err := kernels.PackPointwise(b.m, b.c, pw)
	if err != nil {
		return nil, nil, fmt.Errorf("layout probe: %w", err)
	}
	return &chain{steps: []func(*kernels.Context) error{
		func(x *kernels.Context) error { return x.PointwiseNHWC(1, px, b.c, b.m, in, ep, eb, mid, relu, nil) },
		func(x *kernels.Context) error { return x.DepthwiseNHWC(dw, mid, dp, dwb, mid2, relu, nil) },
		func(x *kernels.Context) error {
			return x.PointwiseNHWC(1, px, b.m, b.c, mid2, pp, pb, in, kernels.ActNone, nil)
		},
	}}, in, nil
}

// layoutFigures is one layout's block on one thread (the p50 of a
// block's time) and its speed-up at n threads.
type layoutFigures struct {
	one     time.Duration
	speedUp float64
}

// machineLayouts returns block b's figures in NCHW and in NHWC at n
// threads (n ≤ 1: the one-thread times and speed-ups of 1).
func machineLayouts(b mobileBlock, n int) (nchw, nhwc layoutFigures, err error) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(n, runtime.GOMAXPROCS(0))))
	one, all := kernels.NewContext(1), kernels.NewContext(max(n, 1))
	defer all.Close()
	var r [2]layoutFigures
	for i, layout := range []bool{false, true} {
		c, _, err := blockChain(b, layout)
		if err != nil {
			return nchw, nhwc, err
		}
		for _, x := range []*kernels.Context{one, all} {
			if _, err := c.run(x); err != nil {
				return nchw, nhwc, err
			}
		}
		var ones []time.Duration
		r[i].speedUp, err = turnRatio(func() (time.Duration, time.Duration, error) {
			t1, err := c.run(one)
			if err != nil {
				return 0, 0, err
			}
			ones = append(ones, t1)
			if n <= 1 {
				return t1, t1, nil
			}
			tn, err := c.run(all)
			return t1, tn, err
		}, 1)
		if err != nil {
			return nchw, nhwc, err
		}
		r[i].one = sorted(ones)[len(ones)/2] / chainRounds
	}
	return r[0], r[1], nil
}
