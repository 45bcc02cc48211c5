package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// BenchmarkConvStems times the stems of the CNN families (3 input
// channels on 224×224, packed weights, a bias and Relu; all on convRows):
// SqueezeNet 1.1's 3×3/2 → 64 (no pads), GoogLeNet's 7×7/2 → 64 and the
// mobile nets' 3×3/2 → 16, 24, 32 (pads 1). "hot": the same output every
// call; "y-cold": one of 4 outputs in turn (out of L2 when it comes
// round again); "swept": a 32 MiB sweep between calls. Reports the least
// and median µs of the calls, each timed alone. docs/speed.md (eighth
// wave, stem convolutions in the model).
func BenchmarkConvStems(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	sweep := make([]float32, 8<<20)
	stems := []struct {
		name string
		p    Conv2D
	}{
		{"squeezenet_3x3s2_64", Conv2D{N: 1, C: 3, H: 224, W: 224, M: 64, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, Groups: 1}},
		{"googlenet_7x7s2_64", Conv2D{N: 1, C: 3, H: 224, W: 224, M: 64, KH: 7, KW: 7, SH: 2, SW: 2, DH: 1, DW: 1, PT: 3, PL: 3, PB: 3, PR: 3, Groups: 1}},
		{"mobile_3x3s2_16", Conv2D{N: 1, C: 3, H: 224, W: 224, M: 16, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1}},
		{"mobile_3x3s2_24", Conv2D{N: 1, C: 3, H: 224, W: 224, M: 24, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1}},
		{"mobile_3x3s2_32", Conv2D{N: 1, C: 3, H: 224, W: 224, M: 32, KH: 3, KW: 3, SH: 2, SW: 2, DH: 1, DW: 1, PT: 1, PL: 1, PB: 1, PR: 1, Groups: 1}},
	}
	for _, st := range stems {
		p := st.p
		oh, ow := p.Out()
		x, w, bias := randSlice(r, p.C*p.H*p.W), randSlice(r, p.M*p.C*p.KH*p.KW), randSlice(r, p.M)
		pw, err := PackConvWeights(p, w)
		if err != nil {
			b.Fatal(err)
		}
		var ys [4][]float32
		for i := range ys {
			ys[i] = make([]float32, p.M*oh*ow)
		}
		for _, mode := range []string{"hot", "y-cold", "swept"} {
			b.Run(fmt.Sprintf("%s/%s", st.name, mode), func(b *testing.B) {
				ctx := NewContext(1)
				defer ctx.Close()
				var ts []time.Duration
				for i := 0; i < b.N; i++ {
					y := ys[0]
					switch mode {
					case "y-cold":
						y = ys[i%4]
					case "swept":
						for j := 0; j < len(sweep); j += 16 {
							sweep[j]++
						}
					}
					t0 := time.Now()
					if err := ctx.Conv2DPackedAct(p, x, nil, pw, bias, y, ActRelu, nil); err != nil {
						b.Fatal(err)
					}
					ts = append(ts, time.Since(t0))
				}
				slices.Sort(ts)
				b.ReportMetric(float64(ts[0])/1e3, "min-µs")
				b.ReportMetric(float64(ts[len(ts)/2])/1e3, "p50-µs")
				b.ReportMetric(float64(2*p.C*p.KH*p.KW*p.M*oh*ow)/float64(ts[0]), "GFLOPS-min")
			})
		}
	}
}
