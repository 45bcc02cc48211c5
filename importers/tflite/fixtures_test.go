package tflite

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// readNpy reads a little-endian float32 C-order .npy file.
func readNpy(t testing.TB, path string) ([]int64, []float32) {
	t.Helper()
	b := readFile(t, path)
	if len(b) < 10 || !bytes.Equal(b[:6], []byte("\x93NUMPY")) {
		t.Fatalf("%s: not an .npy file", path)
	}
	var hlen, off int
	if b[6] == 1 {
		hlen, off = int(binary.LittleEndian.Uint16(b[8:])), 10
	} else {
		hlen, off = int(binary.LittleEndian.Uint32(b[8:])), 12
	}
	header := string(b[off : off+hlen])
	if !strings.Contains(header, "'descr': '<f4'") || strings.Contains(header, "'fortran_order': True") {
		t.Fatalf("%s: unsupported header %s", path, header)
	}
	m := regexp.MustCompile(`'shape': \(([^)]*)\)`).FindStringSubmatch(header)
	if m == nil {
		t.Fatalf("%s: no shape in %s", path, header)
	}
	var dims []int64
	for _, f := range strings.Split(m[1], ",") {
		if f = strings.TrimSpace(f); f != "" {
			d, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			dims = append(dims, d)
		}
	}
	data := b[off+hlen:]
	out := make([]float32, len(data)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return dims, out
}

func fixture(name string) string { return filepath.Join(fixtureDir, name) }

// compareFloats checks |got-want| <= atol + rtol*|want| element-wise.
func compareFloats(t testing.TB, what string, got, want []float32, rtol, atol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	worst, at := 0.0, -1
	for i := range got {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if math.IsNaN(float64(got[i])) || d > atol+rtol*math.Abs(float64(want[i])) {
			t.Errorf("%s[%d] = %g, want %g", what, i, got[i], want[i])
			if t.Failed() && i > 20 {
				return
			}
		}
		if d > worst {
			worst, at = d, i
		}
	}
	t.Logf("%s: %d values, max |diff| %.3g (at %d)", what, len(got), worst, at)
}

var fixtureModels = []string{"cnn", "ops", "lstm", "lstm_cifg_clip", "tconv", "misc", "more", "cnn_dynamic"}

// Every float fixture converted and run on ONNX Runtime matches the numpy
// reference of the TFLite semantics, in both layouts.
func TestFixturesNumeric(t *testing.T) {
	rt := openORT(t)
	variants := []Options{{}, {KeepNHWC: true}, {Opset: 13}, {Opset: 17}}
	for _, name := range fixtureModels {
		for _, opts := range variants {
			t.Run(fmt.Sprintf("%s/opset=%d,KeepNHWC=%v", name, opts.Opset, opts.KeepNHWC), func(t *testing.T) {
				mp := convert(t, fixture(name+".tflite"), opts)
				g := mp.GetGraph()
				var inputs []*onnxpb.TensorProto
				for i, in := range g.GetInput() {
					dims, data := readNpy(t, fixture(fmt.Sprintf("%s.input_%d.npy", name, i)))
					inputs = append(inputs, floatTensor(in.GetName(), dims, data))
				}
				outs := runModel(t, rt, mp, inputs)
				if len(outs) != len(g.GetOutput()) {
					t.Fatalf("%d outputs, want %d", len(outs), len(g.GetOutput()))
				}
				for i, o := range outs {
					dims, want := readNpy(t, fixture(fmt.Sprintf("%s.output_%d.npy", name, i)))
					if fmt.Sprint(dims) != fmt.Sprint(o.GetDims()) {
						t.Errorf("output %d %s: shape %v, want %v", i, o.GetName(), o.GetDims(), dims)
					}
					compareFloats(t, o.GetName(), tensorFloats(t, o), want, 1e-4, 1e-5)
				}
			})
		}
	}
}

func hasValue(mp *onnxpb.ModelProto, name string) bool {
	g := mp.GetGraph()
	for _, n := range g.GetNode() {
		for _, o := range n.GetOutput() {
			if o == name {
				return true
			}
		}
	}
	for _, v := range g.GetInput() {
		if v.GetName() == name {
			return true
		}
	}
	for _, v := range g.GetInitializer() {
		if v.GetName() == name {
			return true
		}
	}
	return false
}

func TestFixturesStructure(t *testing.T) {
	cases := []struct {
		name       string
		ops        map[string]int
		transposes int // with the NCHW interior
		keepNHWC   int // with KeepNHWC
		names      []string
	}{
		{"cnn", map[string]int{"Conv": 2, "MaxPool": 1, "Gemm": 1, "Softmax": 1, "Relu": 1, "Clip": 1, "Reshape": 1}, 1, 6,
			[]string{"input", "conv/Relu", "dw/Relu6", "pool/MaxPool", "fc/BiasAdd", "Identity"}},
		{"ops", map[string]int{"Conv": 1, "Sub": 1, "Mul": 2, "Div": 1, "Concat": 1, "Pad": 1, "AveragePool": 1,
			"Resize": 2, "ReduceMean": 1, "Slice": 1, "Gather": 1, "Reshape": 1, "Unsqueeze": 1, "Sigmoid": 1,
			"Squeeze": 1, "Tanh": 1, "Relu": 1, "QuantizeLinear": 1, "DequantizeLinear": 1, "Identity": 2}, 3, 0,
			[]string{"a", "b", "concat", "pad", "avgpool", "bilinear", "nearest", "mean", "transpose", "gather", "reshape", "quantized", "dequantized"}},
		{"lstm", map[string]int{"LSTM": 1}, 2, 0, []string{"input", "lstm/output"}},
		{"lstm_cifg_clip", map[string]int{"LSTM": 0, "Sigmoid": 10, "Clip": 5}, 0, 0, []string{"input", "lstm/output"}},
		{"tconv", map[string]int{"ConvTranspose": 2}, 3, 0, []string{"input", "conv_transpose", "conv_transpose_valid"}},
		// 1 at the input, 20 at the NCHW outputs (graph outputs stay NHWC),
		// 1 where REDUCE_MAX and FULLY_CONNECTED read the conv result NHWC.
		{"misc", map[string]int{"Conv": 1, "Resize": 4, "DepthToSpace": 1, "SpaceToDepth": 1, "ReduceMax": 1, "ReduceSum": 1}, 22, 0,
			[]string{"x", "dilated_conv", "leaky_relu", "l2_pool", "nearest_half"}},
		// 1 at the input, 2 for BATCH_MATMUL adj_x/adj_y, 10 at NCHW outputs;
		// none for RESHAPE/SQUEEZE of the [1,1,1,8] global pool.
		{"more", map[string]int{"Split": 3, "PRelu": 1, "ArgMax": 1, "Tile": 1, "Where": 1, "Sum": 1, "MatMul": 2}, 13, 0,
			[]string{"x", "y", "z", "conv", "split_0", "splitv_2", "positive", "unpack_2", "argmin", "pool_reshape", "pool_squeeze"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mp := convert(t, fixture(tc.name+".tflite"), Options{})
			got := opCounts(mp)
			for op, n := range tc.ops {
				if got[op] != n {
					t.Errorf("%s: %d nodes, want %d (all: %v)", op, got[op], n, got)
				}
			}
			if got["Transpose"] != tc.transposes {
				t.Errorf("%d Transposes, want %d (all: %v)", got["Transpose"], tc.transposes, got)
			}
			for _, n := range tc.names {
				if !hasValue(mp, n) {
					t.Errorf("no value named %q", n)
				}
			}
			if tc.keepNHWC > 0 {
				keep := convert(t, fixture(tc.name+".tflite"), Options{KeepNHWC: true})
				if n := opCounts(keep)["Transpose"]; n != tc.keepNHWC {
					t.Errorf("KeepNHWC: %d Transposes, want %d", n, tc.keepNHWC)
				}
			}
			// Graph I/O stays NHWC with the TFLite shapes.
			for _, in := range mp.GetGraph().GetInput() {
				if in.GetName() == "input" && tc.name == "cnn" {
					if d := inputDims(mp, 0); fmt.Sprint(d) != "[1 8 8 3]" {
						t.Errorf("input dims %v, want NHWC [1 8 8 3]", d)
					}
				}
			}
		})
	}
}

// shape_signature -1 becomes a symbolic batch dimension (the numeric test
// runs cnn_dynamic with batch 3).
func TestDynamicBatch(t *testing.T) {
	mp := convert(t, fixture("cnn_dynamic.tflite"), Options{})
	g := mp.GetGraph()
	for _, vi := range []*onnxpb.ValueInfoProto{g.GetInput()[0], g.GetOutput()[0]} {
		d := vi.GetType().GetTensorType().GetShape().GetDim()
		if d[0].GetDimParam() != "batch" || d[1].GetDimValue() == 0 {
			t.Errorf("%s dims %v, want batch symbolic and the rest fixed", vi.GetName(), d)
		}
	}
}

func TestMetadata(t *testing.T) {
	mp := convert(t, fixture("cnn.tflite"), Options{})
	if mp.GetDocString() != "onnxconv fixture: tiny CNN" {
		t.Errorf("doc string %q", mp.GetDocString())
	}
	if mp.GetModelVersion() != 3 {
		t.Errorf("model version %d, want the TFLite schema version 3", mp.GetModelVersion())
	}
	meta := map[string]string{}
	for _, p := range mp.GetMetadataProps() {
		meta[p.GetKey()] = p.GetValue()
	}
	if meta["tflite.metadata.min_runtime_version"] != "1.5.0" {
		t.Errorf("metadata %v", meta)
	}
	if mp.GetOpsetImport()[0].GetVersion() != DefaultOpset || mp.GetIrVersion() != 10 {
		t.Errorf("opset %d IR %d", mp.GetOpsetImport()[0].GetVersion(), mp.GetIrVersion())
	}
	if _, err := os.Stat(fixture("gen.py")); err != nil {
		t.Errorf("generator script missing: %v", err)
	}
}

// The int8 fixture against integer TFLite arithmetic (numpy, double
// multiplier): at most one quantization step apart.
func TestQuantizedFixture(t *testing.T) {
	rt := openORT(t)
	mp := convert(t, fixture("qcnn.tflite"), Options{})
	dims, x := readNpy(t, fixture("qcnn.input_0.npy"))
	outs := runModel(t, rt, mp, []*onnxpb.TensorProto{floatTensor("input", dims, x)})
	for i, step := range []float64{0.08, 0.05} {
		_, want := readNpy(t, fixture(fmt.Sprintf("qcnn.output_%d.npy", i)))
		got := tensorFloats(t, outs[i])
		if len(got) != len(want) {
			t.Fatalf("output %d: %d values, want %d", i, len(got), len(want))
		}
		off := 0
		for j := range got {
			d := math.Abs(float64(got[j])-float64(want[j])) / step
			if d > 1.001 {
				t.Errorf("%s[%d] = %g, want %g (%.2f steps)", outs[i].GetName(), j, got[j], want[j], d)
			}
			if d > 0.001 {
				off++
			}
		}
		t.Logf("%s: %d values, %d one step off", outs[i].GetName(), len(got), off)
	}
	ops := opCounts(mp)
	// Reshape and Concatenation move int8 values directly, and the Conv
	// (one Conv on the input's 4-bit pieces, one on ones for the zero
	// point) and the FC compute in integers (exact8.go): the only
	// QuantizeLinear is the input's.
	if ops["QuantizeLinear"] != 1 || ops["Transpose"] != 2 || ops["Conv"] != 2 || ops["Gemm"] != 1 {
		t.Errorf("ops %v", ops)
	}
	reads := false
	for _, n := range mp.GetGraph().GetNode() {
		reads = reads || n.GetOpType() == "Concat" && n.GetInput()[0] == "flatten"
	}
	if !reads {
		t.Errorf("no Concat reads the int8 tensor flatten")
	}
}

func BenchmarkImport(b *testing.B) {
	for _, path := range []string{fixture("cnn.tflite"), fixture("misc.tflite"), filepath.Join(sharedDir, "models", "trained_lstm_int8.tflite")} {
		data := readFile(b, path)
		b.Run(filepath.Base(path), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				if _, err := Import(data, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
