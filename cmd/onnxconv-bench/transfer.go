//go:build cgo

package main

import (
	"runtime"
	"sync/atomic"
	"time"
)

// The machine's transfer figures for --scaling: what moving data between
// two threads costs, the cause behind the exchange chain's figure
// (exchange.go). Two goroutines, each locked to its thread and spinning
// (so that on two or more CPUs they run on two of them):
//   - round trip: one thread writes a cache line, the other waits for it
//     and writes another back, transferRounds times;
//   - read rates: one thread writes transferBytes, the other reads them
//     (each line then comes from the writer's cache), against the writer
//     reading what it just wrote itself.
//
// A step split over two threads reads its input in the second way
// whenever another thread wrote part of it (a 1×1 convolution after a
// step split by pixels or channels another way); at a few tens of KB a
// step, the difference between the two rates is the step's extra time.

// transferBytes is the block the read probe moves (a small step's
// activations: 64 KB is 16 channels of 32² floats); transferRounds the
// round trips of one measurement, transferBlocks its blocks read.
const (
	transferBytes  = 64 << 10
	transferRounds = 2000
	transferBlocks = 200
)

// transferFigures are machineTransfer's results.
type transferFigures struct {
	roundTrip    time.Duration // a cache line there and back
	remote, self float64       // GB/s read of a block another thread wrote, and of one the reader wrote
	sums         int64         // what the reads summed (kept so that they are done)
}

// paddedFlag is an atomic counter alone on its cache line.
type paddedFlag struct {
	_ [64]byte
	v atomic.Int64
	_ [56]byte
}

// machineTransfer measures the transfer figures between two threads.
func machineTransfer() transferFigures {
	var ping, pong paddedFlag
	var f transferFigures
	buf := make([]int64, transferBytes/8)
	done := make(chan struct{})
	var remote time.Duration
	var remoteSum int64
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for i := int64(1); i <= transferRounds; i++ {
			for ping.v.Load() != i {
			}
			pong.v.Store(i)
		}
		// Blocks: wait for block i, read it, say so.
		for i := int64(1); i <= transferBlocks; i++ {
			for ping.v.Load() != transferRounds+i {
			}
			t := time.Now()
			remoteSum += sumLines(buf)
			remote += time.Since(t)
			pong.v.Store(transferRounds + i)
		}
		close(done)
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t := time.Now()
	for i := int64(1); i <= transferRounds; i++ {
		ping.v.Store(i)
		for pong.v.Load() != i {
		}
	}
	f.roundTrip = time.Since(t) / transferRounds
	var self time.Duration
	for i := int64(1); i <= transferBlocks; i++ {
		for j := range buf {
			buf[j] = int64(j) + i
		}
		t := time.Now()
		f.sums += sumLines(buf)
		self += time.Since(t)
		for j := range buf {
			buf[j] = int64(j) - i
		}
		ping.v.Store(transferRounds + i)
		for pong.v.Load() != transferRounds+i {
		}
	}
	<-done
	f.sums += remoteSum
	rate := func(d time.Duration) float64 {
		return float64(transferBytes) * transferBlocks / d.Seconds() / 1e9
	}
	f.remote, f.self = rate(remote), rate(self)
	return f
}

// sumLines reads one value of each 64-byte line of b (so that every line
// is fetched) and returns their sum.
func sumLines(b []int64) int64 {
	var s int64
	for i := 0; i < len(b); i += 8 {
		s += b[i]
	}
	return s
}
