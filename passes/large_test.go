//go:build cgo

package passes

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/tensortest"
	"github.com/onnxconv/onnxconv/verify"
)

// largeModelsEnv names the folder that fixtures/models/make_large_models.py
// wrote; TestLargeModels runs only when it is set.
const largeModelsEnv = "ONNXCONV_LARGE_MODELS"

// argmax returns the index of the largest element of each row of an
// [N, C] tensor.
func argmax(t *testing.T, x *canonical.Tensor) []int {
	t.Helper()
	f, err := x.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	c := int(x.Dims[len(x.Dims)-1])
	var out []int
	for r := 0; r+c <= len(f); r += c {
		best := 0
		for i := 1; i < c; i++ {
			if f[r+i] > f[r+best] {
				best = i
			}
		}
		out = append(out, best)
	}
	return out
}

// top1 is the share of held samples on which a and b pick the same class
// of their first output.
func top1(t *testing.T, a, b [][]*canonical.Tensor) float64 {
	t.Helper()
	same, all := 0, 0
	for s := range a {
		x, y := argmax(t, a[s][0]), argmax(t, b[s][0])
		for i := range x {
			all++
			if x[i] == y[i] {
				same++
			}
		}
	}
	return float64(same) / float64(all)
}

// TestLargeModels reproduces the large-model table of docs/optimize.md on
// the torch exports of make_large_models.py (ResNet-50, MobileNet-v3-small,
// a 6-layer transformer encoder):
//
//	/usr/bin/python3 fixtures/models/make_large_models.py /tmp/large
//	ONNXCONV_LARGE_MODELS=/tmp/large go test ./passes -run LargeModels -v -timeout 60m
//
// Per model: nodes before, after optimize and after ONNX Runtime's basic
// level; the optimized model's max relative error against the input on the
// executor and on ONNX Runtime (both must stay within 1e-5 relative, 1e-6
// absolute floor); fp16 (kept I/O types) and static per-channel int8 (32
// calibration samples) with their top-1 agreement with float on 16 held
// samples for the CNNs, max abs error otherwise.
func TestLargeModels(t *testing.T) {
	dir := os.Getenv(largeModelsEnv)
	if dir == "" {
		t.Skipf("set %s=DIR (made by fixtures/models/make_large_models.py DIR) to run", largeModelsEnv)
	}
	rt := openORT(t)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		cnn  bool
	}{{"resnet50", true}, {"mobilenet_v3_small", true}, {"transformer_encoder", false}} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name, "model.onnx")
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("%s=%s lacks %s: %v (make it with fixtures/models/make_large_models.py DIR)", largeModelsEnv, dir, c.name, err)
			}
			m, err := canonical.Load(path, canonical.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			var in, out []string
			for _, v := range verify.GraphInputs(m) {
				in = append(in, v.Name)
			}
			for _, v := range m.Graph.Outputs {
				out = append(out, v.Name)
			}

			// optimize
			start := time.Now()
			res, rep, err := Run(ctx, m, Builtin(), RunOptions{Check: &Check{Samples: 1}})
			if err != nil {
				t.Fatal(err)
			}
			defer res.Close()
			for _, p := range rep.RolledBack() {
				t.Logf("rolled back %s: %s", p.Name, p.Reason)
			}
			basic := ortBasic(t, path, in, out)
			t.Logf("onnxconv optimize (%s): %s", time.Since(start).Round(time.Second), rep.After.OpsString())
			t.Logf("ORT basic: %s", basic.OpsString())
			opt := save(t, res, "opt.onnx")
			x := samples(t, m, 100, 1)[0]
			ya := runORT(t, rt, path, x)
			yb := runORT(t, rt, opt, x)
			ea, err := RunModel(ctx, m, [][]*canonical.Tensor{x}, "")
			if err != nil {
				t.Fatal(err)
			}
			eb, err := RunModel(ctx, res, [][]*canonical.Tensor{x}, "")
			if err != nil {
				t.Fatal(err)
			}
			// Relative to the output's largest magnitude: per element,
			// outputs near 0 (after a LayerNormalization) turn float32
			// rounding into large ratios.
			var ortAbs, ortRel, exAbs, exRel float64
			for i := range ya {
				d := tensortest.Compare(t, yb[i], ya[i])
				ortAbs, ortRel = max(ortAbs, d.Abs), max(ortRel, d.Rel())
				d = tensortest.Compare(t, eb[0][i], ea[0][i])
				exAbs, exRel = max(exAbs, d.Abs), max(exRel, d.Rel())
			}
			if ortRel > 1e-5 || exRel > 1e-5 {
				t.Errorf("optimized vs input, relative to the output's scale: executor %g, ONNX Runtime %g (max abs %g, %g)", exRel, ortRel, exAbs, ortAbs)
			}
			if rep.After.Nodes > basic.Nodes {
				t.Errorf("optimize leaves %d nodes, ONNX Runtime basic %d", rep.After.Nodes, basic.Nodes)
			}
			t.Logf("per-element max rel on the executor %.2g (max abs %.2g)", rep.MaxRel, rep.MaxAbs)
			t.Logf("| %s | %d | %d | %d | %.2g (%.2g) | %.2g (%.2g) |", c.name, rep.Before.Nodes, rep.After.Nodes, basic.Nodes, exRel, exAbs, ortRel, ortAbs)

			// fp16 and int8 on held samples.
			held := samples(t, m, 1000, 16)
			if !c.cnn {
				held = held[:4]
			}
			ref, err := RunModel(ctx, m, held, "")
			if err != nil {
				t.Fatal(err)
			}
			start = time.Now()
			f16, frep, err := Float16(ctx, m, FP16Options{KeepIOTypes: true, Check: &Check{Samples: 1}})
			if err != nil {
				t.Fatal(err)
			}
			defer f16.Close()
			if !frep.Equivalent {
				// Logged rather than failed, so the table's other rows
				// are still measured (docs/optimize.md).
				t.Logf("fp16 NOT within the fp16 profile after %d rounds: %s", frep.Rounds, frep.Final.Summary)
			}
			yf, err := RunModel(ctx, f16, held, "")
			if err != nil {
				t.Fatal(err)
			}
			fTop := -1.0
			if c.cnn {
				fTop = top1(t, ref, yf)
			}
			t.Logf("fp16 (%s, %d rounds): %d converted, %d blocked, %d kept; bytes %d -> %d; max abs %.3g rel %.3g; top-1 %.4g",
				time.Since(start).Round(time.Second), frep.Rounds, frep.Converted, frep.Blocked, len(frep.Kept), frep.Before.Bytes, frep.After.Bytes, frep.MaxAbs, frep.MaxRel, fTop)

			start = time.Now()
			q, qrep, err := Quantize(ctx, m, QuantOptions{Mode: Static, PerChannel: true, Calibration: samples(t, m, 0, 32), Held: held})
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			qp := save(t, q, "q.onnx")
			yq := runORT(t, rt, qp, held[0])
			qAbs, _ := maxDiff(t, ref[0][0], yq[0])
			t.Logf("int8 static per-channel (%s): %d quantized; bytes %d -> %d; top-1 %.4g; max abs %.3g mean abs %.3g (ONNX Runtime vs float: max abs %.3g)",
				time.Since(start).Round(time.Second), qrep.Quantized, qrep.Before.Bytes, qrep.After.Bytes, qrep.Top1, qrep.MaxAbs, qrep.MeanAbs, qAbs)
		})
	}
}
