package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// BenchmarkPointwiseCold times the mobile nets' expand 1×1 convolutions
// (bias, ReLU6) with the caches as a model leaves them, against the same
// call on hot operands: "hot" the same input and output every call;
// "y-cold" a different output buffer each call (of 8, each out of L2 when
// it comes round again); "xy-cold" the input too; "swept" a 16 MiB sweep
// between calls (input, output and weights out of L1/L2); "x+4", "y+4",
// "xy+1" the input, the output or both 4 or 1 floats off 64-byte
// alignment. Reports the least and the median µs of the calls (each
// timed alone). docs/speed.md (eighth wave, per-node comparison): none
// of these comes near what the same layers take inside mobilenet_v2.
func BenchmarkPointwiseCold(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	sweep := make([]float32, 4<<20)
	for _, sh := range [][3]int{{112, 16, 96}, {56, 24, 144}, {28, 32, 192}, {14, 64, 384}, {14, 96, 576}, {7, 160, 960}} {
		hw, c, m := sh[0], sh[1], sh[2]
		p := Conv2D{N: 1, C: c, H: hw, W: hw, M: m, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, Groups: 1}
		w, bias := randSlice(r, m*c), randSlice(r, m)
		pw, err := PackConvWeights(p, w)
		if err != nil {
			b.Fatal(err)
		}
		var xs, ys [8][]float32
		for i := range xs {
			xs[i], ys[i] = randSlice(r, c*hw*hw+16), make([]float32, m*hw*hw+16)
		}
		for _, mode := range []string{"hot", "y-cold", "xy-cold", "swept", "x+4", "y+4", "xy+1"} {
			b.Run(fmt.Sprintf("%dx%d_%d_%d/%s", hw, hw, c, m, mode), func(b *testing.B) {
				ctx := NewContext(1)
				defer ctx.Close()
				var ts []time.Duration
				for i := 0; i < b.N; i++ {
					xi, yi := 0, 0
					switch mode {
					case "y-cold":
						yi = i % 8
					case "xy-cold":
						xi, yi = i%8, (i+3)%8
					case "swept":
						for j := range sweep {
							sweep[j]++
						}
					}
					xo, yo := 0, 0
					switch mode {
					case "x+4":
						xo = 4
					case "y+4":
						yo = 4
					case "xy+1":
						xo, yo = 1, 1
					}
					x, y := xs[xi][xo:xo+c*hw*hw], ys[yi][yo:yo+m*hw*hw]
					t0 := time.Now()
					if err := ctx.Conv2DPackedAct(p, x, nil, pw, bias, y, ActRelu6, nil); err != nil {
						b.Fatal(err)
					}
					ts = append(ts, time.Since(t0))
				}
				slices.Sort(ts)
				b.ReportMetric(float64(ts[0])/1e3, "min-µs")
				b.ReportMetric(float64(ts[len(ts)/2])/1e3, "p50-µs")
				b.ReportMetric(float64(2*c*m*hw*hw)/float64(ts[0]), "GFLOPS-min")
			})
		}
	}
}
