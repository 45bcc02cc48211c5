package tflite

import (
	"encoding/binary"
	"fmt"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
	"math"
	"path/filepath"
	"testing"
)

// The int8 models of tflite-micro convert, with the expected structure.
func TestInt8Models(t *testing.T) {
	cases := []struct {
		file  string
		ops   map[string]int
		input string
		out   string
	}{
		// int8 FULLY_CONNECTED computed exactly (exact8.go): one Gemm on
		// the input's 4-bit pieces each, the requantization rounded, the
		// RELU a clamp of the integers; int8 in and out, no QDQ left
		{"hello_world_int8.tflite", map[string]int{"Gemm": 3, "Round": 3, "Relu": 0, "QuantizeLinear": 0},
			"serving_default_dense_input:0", "StatefulPartitionedCall:0"},
		// the int8 CONV_2D computed exactly (exact8.go): one Conv on the
		// input's 4-bit pieces, one on ones for the zero point's term, its
		// RELU a clamp of the integers
		{"micro_speech_quantized.tflite", map[string]int{"Conv": 2, "Gemm": 1, "Softmax": 1, "Round": 1, "Relu": 0}, "", ""},
		{"trained_lstm_int8.tflite", map[string]int{"Gemm": 1 + 2*28, "Softmax": 1, "Sigmoid": 28 * 3, "Clip": 28 + 1, "LSTM": 0}, // + the final FULLY_CONNECTED's clamp
			"serving_default_fixed_input:0", "StatefulPartitionedCall:0"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			mp := convert(t, filepath.Join(sharedDir, "models", tc.file), Options{})
			got := opCounts(mp)
			for op, n := range tc.ops {
				if got[op] != n {
					t.Errorf("%s: %d nodes, want %d (all: %v)", op, got[op], n, got)
				}
			}
			g := mp.GetGraph()
			if len(g.GetInput()) != 1 || len(g.GetOutput()) != 1 {
				t.Fatalf("inputs %d outputs %d, want 1 and 1", len(g.GetInput()), len(g.GetOutput()))
			}
			if tc.input != "" && g.GetInput()[0].GetName() != tc.input {
				t.Errorf("input name %q, want %q", g.GetInput()[0].GetName(), tc.input)
			}
			if tc.out != "" && g.GetOutput()[0].GetName() != tc.out {
				t.Errorf("output name %q, want %q", g.GetOutput()[0].GetName(), tc.out)
			}
			if got["DequantizeLinear"] == 0 && got["Round"] == 0 {
				t.Errorf("neither DequantizeLinear nor an integer requantization in a quantized model")
			}
		})
	}
}

// seanetReference computes a seanet int16 CONV_2D (VALID) in integer
// arithmetic from the model itself: exact rescales the int64 accumulator with
// the real multiplier in float64; tflm with the TFLite Micro reference
// kernel's MultiplyByQuantizedMultiplier for int64 accumulators, which
// rounds the multiplier to 15 bits.
func seanetReference(t *testing.T, data []byte, x []int64) (exact, tflm []int64) {
	t.Helper()
	m, err := readModel(data)
	if err != nil {
		t.Fatal(err)
	}
	g := m.subgraphs[0]
	o := g.ops[0]
	opt, err := options[fb.Conv2DOptions](o, fb.BuiltinOptionsConv2DOptions)
	if err != nil || opt.Padding() != fb.PaddingVALID || opt.DilationHFactor() != 1 || opt.DilationWFactor() != 1 {
		t.Fatalf("reference handles VALID undilated CONV_2D only (%v)", err)
	}
	xt, wt, bt, yt := g.tensors[o.inputs[0]], g.tensors[o.inputs[1]], g.tensors[o.inputs[2]], g.tensors[o.outputs[0]]
	sh, sw := int(opt.StrideH()), int(opt.StrideW())
	W, C := int(xt.shape[2]), int(xt.shape[3])
	O, KH, KW := int(wt.shape[0]), int(wt.shape[1]), int(wt.shape[2])
	OH, OW := int(yt.shape[1]), int(yt.shape[2])
	clamp := func(v int64) int64 { return max(-32768, min(32767, v)) }
	for oy := 0; oy < OH; oy++ {
		for ox := 0; ox < OW; ox++ {
			for oc := 0; oc < O; oc++ {
				acc := int64(binary.LittleEndian.Uint64(bt.data[8*oc:]))
				for ky := 0; ky < KH; ky++ {
					for kx := 0; kx < KW; kx++ {
						for ic := 0; ic < C; ic++ {
							acc += x[((oy*sh+ky)*W+ox*sw+kx)*C+ic] * int64(int8(wt.data[((oc*KH+ky)*KW+kx)*C+ic]))
						}
					}
				}
				ms := float64(xt.q.scale[0]) * float64(wt.q.scale[oc]) / float64(yt.q.scale[0])
				exact = append(exact, clamp(int64(math.Round(float64(acc)*ms))))
				fr, e := math.Frexp(ms)
				q := int64(math.Round(fr * (1 << 31)))
				if q == 1<<31 {
					q, e = q/2, e+1
				}
				reduced := int64(0x7FFF)
				if q < 0x7FFF0000 {
					reduced = (q + 1<<15) >> 16
				}
				shift := 15 - e
				tflm = append(tflm, clamp((acc*reduced+1<<(shift-1))>>shift))
			}
		}
	}
	return exact, tflm
}

func stepDiff(a, b []int64) (maxd int64, off int) {
	for j := range a {
		d := a[j] - b[j]
		if d < 0 {
			d = -d
		}
		maxd = max(maxd, d)
		if d != 0 {
			off++
		}
	}
	return maxd, off
}

// The seanet int16 Conv models against the outputs of the TFLite Micro
// reference kernels. The golden files are reproduced exactly by integer
// arithmetic with TFLM's 15-bit requantization multiplier, and so is the
// ONNX graph, which builds that integer requantization (exact16.go); the
// real-valued multiplier ("exact") is within one step of both.
func TestSeanetConvGolden(t *testing.T) {
	rt := openORT(t)
	for i := 1; i <= 9; i++ {
		name := fmt.Sprintf("conv%d", i)
		t.Run(name, func(t *testing.T) {
			data := readFile(t, filepath.Join(sharedDir, "seanet", name+".tflite"))
			mp, err := importProto(data, Options{})
			if err != nil {
				t.Fatal(err)
			}
			in := readCSVInts(t, filepath.Join(sharedDir, "seanet", name+"_input0_int16.csv"))
			want := readCSVInts(t, filepath.Join(sharedDir, "seanet", name+"_golden_int16.csv"))
			exact, tflm := seanetReference(t, data, in)
			if d, off := stepDiff(tflm, want); d != 0 {
				t.Fatalf("integer reference with TFLM rounding is %d values off the golden file (max %d)", off, d)
			}
			g := mp.GetGraph()
			out := runModel(t, rt, mp, []*onnxpb.TensorProto{int16Tensor(g.GetInput()[0].GetName(), inputDims(mp, 0), in)})
			got := tensorInt16s(t, out[0])
			if len(got) != len(want) {
				t.Fatalf("%d outputs, want %d", len(got), len(want))
			}
			dg, offg := stepDiff(got, want)
			de, offe := stepDiff(got, exact)
			t.Logf("%s: %d values; vs golden %d differ (max %d step); vs exact-multiplier integer math %d differ (max %d)", name, len(got), offg, dg, offe, de)
			if dg != 0 || de > 1 {
				t.Errorf("%d values differ from golden (max %d steps), want 0 (exact integer requantization); max %d steps from exact, want <= 1", offg, dg, de)
			}
		})
	}
}

func int8Tensor(name string, dims []int64, v []int64) *onnxpb.TensorProto {
	b := make([]byte, len(v))
	for i, x := range v {
		b[i] = byte(int8(x))
	}
	return tensorProto(name, onnxpb.TensorProto_INT8, dims, b)
}

func tensorInt8s(t testing.TB, tp *onnxpb.TensorProto) []int64 {
	t.Helper()
	if onnxpb.TensorProto_DataType(tp.GetDataType()) != onnxpb.TensorProto_INT8 {
		t.Fatalf("output %s is %v, want INT8", tp.GetName(), onnxpb.TensorProto_DataType(tp.GetDataType()))
	}
	out := make([]int64, len(tp.GetRawData()))
	for i, b := range tp.GetRawData() {
		out[i] = int64(int8(b))
	}
	return out
}

// hello_world_int8 was trained to approximate sin(x) on [0, 2π]: the
// converted QDQ graph must still do so.
func TestHelloWorldSine(t *testing.T) {
	rt := openORT(t)
	mp := convert(t, filepath.Join(sharedDir, "models", "hello_world_int8.tflite"), Options{})
	const inScale, inZP, outScale, outZP = 0.024480115622282028, -128, 0.008290527202188969, 5
	worst := 0.0
	for i := 0; i < 24; i++ {
		x := float64(i) * 2 * math.Pi / 24
		q := int64(math.Round(x/inScale)) + inZP
		out := runModel(t, rt, mp, []*onnxpb.TensorProto{int8Tensor("serving_default_dense_input:0", []int64{1, 1}, []int64{q})})
		y := float64(tensorInt8s(t, out[0])[0]-outZP) * outScale
		xq := float64(q-inZP) * inScale
		worst = math.Max(worst, math.Abs(y-math.Sin(xq)))
	}
	t.Logf("max |y - sin(x)| over 24 points: %.3f", worst)
	if worst > 0.2 {
		t.Errorf("max |y - sin(x)| = %.3f, want <= 0.2", worst)
	}
}

// The other int8 models and the int16 TransposeConv models load and run on
// ONNX Runtime with the shapes TFLite declares; their softmax outputs sum
// to one.
func TestQuantizedModelsRun(t *testing.T) {
	rt := openORT(t)
	for _, tc := range []struct {
		path    string
		softmax bool
	}{
		{"models/micro_speech_quantized.tflite", true},
		{"models/trained_lstm_int8.tflite", true},
		{"seanet/transpose_conv1.tflite", false},
		{"seanet/transpose_conv4.tflite", false},
	} {
		t.Run(tc.path, func(t *testing.T) {
			mp := convert(t, filepath.Join(sharedDir, tc.path), Options{})
			var inputs []*onnxpb.TensorProto
			for i, in := range mp.GetGraph().GetInput() {
				tt := in.GetType().GetTensorType()
				dims := inputDims(mp, i)
				n := 1
				for _, d := range dims {
					n *= int(d)
				}
				vals := make([]int64, n)
				for j := range vals {
					vals[j] = int64((j*37)%200 - 100)
				}
				switch onnxpb.TensorProto_DataType(tt.GetElemType()) {
				case onnxpb.TensorProto_INT8:
					inputs = append(inputs, int8Tensor(in.GetName(), dims, vals))
				case onnxpb.TensorProto_UINT8:
					b := make([]byte, n)
					for j := range b {
						b[j] = byte(vals[j] + 100)
					}
					inputs = append(inputs, tensorProto(in.GetName(), onnxpb.TensorProto_UINT8, dims, b))
				case onnxpb.TensorProto_INT16:
					inputs = append(inputs, int16Tensor(in.GetName(), dims, vals))
				case onnxpb.TensorProto_INT32: // TransposeConv output_shape
					b := make([]byte, 4*n)
					inputs = append(inputs, tensorProto(in.GetName(), onnxpb.TensorProto_INT32, dims, b))
				default:
					t.Fatalf("input %s of type %d", in.GetName(), tt.GetElemType())
				}
			}
			out := runModel(t, rt, mp, inputs)
			want := mp.GetGraph().GetOutput()[0].GetType().GetTensorType().GetShape().GetDim()
			if len(out[0].GetDims()) != len(want) {
				t.Fatalf("output dims %v, declared %v", out[0].GetDims(), want)
			}
			for i, d := range want {
				if out[0].GetDims()[i] != d.GetDimValue() {
					t.Fatalf("output dims %v, declared %v", out[0].GetDims(), want)
				}
			}
			if tc.softmax {
				var q []int64
				var scale float64
				var zp int64
				switch onnxpb.TensorProto_DataType(out[0].GetDataType()) {
				case onnxpb.TensorProto_INT8:
					q, scale, zp = tensorInt8s(t, out[0]), 1.0/256, -128
				case onnxpb.TensorProto_UINT8:
					for _, b := range out[0].GetRawData() {
						q = append(q, int64(b))
					}
					scale, zp = 1.0/256, 0
				}
				sum := 0.0
				for _, v := range q {
					sum += float64(v-zp) * scale
				}
				t.Logf("softmax output sums to %.4f", sum)
				if math.Abs(sum-1) > 0.05 {
					t.Errorf("softmax output sums to %.4f", sum)
				}
			}
		})
	}
}
