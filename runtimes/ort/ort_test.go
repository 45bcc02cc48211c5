//go:build cgo

package ort

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// Backend node tests covering the ops named in the brief and every element
// type the bridge converts (float16/bfloat16 and bool outputs, int and uint
// widths, scalar outputs, strings).
var nodeCases = []string{
	"test_add",
	"test_conv_with_strides_padding",
	"test_gemm_default_no_bias",
	"test_softmax_axis_0",
	"test_cast_FLOAT_to_FLOAT16",
	"test_cast_FLOAT16_to_FLOAT",
	"test_cast_FLOAT_to_BFLOAT16",
	"test_cast_FLOAT_to_DOUBLE",
	"test_cast_FLOAT_to_FLOAT8E4M3FN",
	"test_cast_FLOAT8E5M2_to_FLOAT",
	"test_equal_bcast",
	"test_not_2d",
	"test_size_example",
	"test_argmax_default_axis_example",
	"test_bitshift_right_uint32",
	"test_bitshift_left_uint64",
	"test_mod_mixed_sign_int8",
	"test_mod_mixed_sign_int16",
	"test_string_concat",
	"test_equal_string",
}

func TestBackendNodeCases(t *testing.T) {
	rt := openForTest(t)
	dir := nodeTestDir(t)
	for _, name := range nodeCases {
		t.Run(name, func(t *testing.T) {
			ins, want := readDataSet(t, filepath.Join(dir, name, "test_data_set_0"))
			got, err := rt.Run(filepath.Join(dir, name, "model.onnx"), ins)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d outputs, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i].GetName() != want[i].GetName() {
					t.Errorf("output %d named %q, want %q", i, got[i].GetName(), want[i].GetName())
				}
				maxAbs, _, bad := diffStats(t, got[i], want[i], 1e-3, 1e-7)
				if bad > 0 {
					t.Errorf("output %q: %d values out of tolerance (max abs diff %g)", want[i].GetName(), bad, maxAbs)
				}
			}
		})
	}
}

// TestKnownValues checks real numbers, not only agreement with files: Add of
// two given tensors, inputs bound by position (names cleared).
func TestKnownValues(t *testing.T) {
	rt := openForTest(t)
	model := filepath.Join(nodeTestDir(t), "test_add", "model.onnx")
	s, err := rt.NewSession(model, WithIntraOpThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if in := s.Inputs(); len(in) != 2 || in[0].Name != "x" || in[1].Name != "y" ||
		in[0].DataType != onnxpb.TensorProto_FLOAT || len(in[0].Dims) != 3 {
		t.Fatalf("inputs %+v", in)
	}
	mk := func(f func(i int) float32) *onnxpb.TensorProto {
		v := make([]float32, 60)
		for i := range v {
			v[i] = f(i)
		}
		return &onnxpb.TensorProto{DataType: ptr(int32(onnxpb.TensorProto_FLOAT)), Dims: []int64{3, 4, 5}, FloatData: v}
	}
	x := mk(func(i int) float32 { return float32(i) * 0.5 })
	y := mk(func(i int) float32 { return 100 - float32(i) })
	for run := 0; run < 2; run++ { // a session runs repeatedly
		out, err := s.Run([]*onnxpb.TensorProto{x, y})
		if err != nil {
			t.Fatal(err)
		}
		d := decode(t, out[0])
		if out[0].GetName() != "sum" || len(d.f) != 60 {
			t.Fatalf("output %q with %d values", out[0].GetName(), len(d.f))
		}
		for i, v := range d.f {
			if want := 100 - 0.5*float64(i); v != want {
				t.Fatalf("sum[%d] = %g, want %g", i, v, want)
			}
		}
	}
	// Binding errors: a name given twice, an unknown name, a missing input,
	// data that does not fill the shape.
	x.Name, y.Name = ptr("y"), ptr("y")
	if _, err := s.Run([]*onnxpb.TensorProto{x, y}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Fatalf("duplicate input name: err = %v", err)
	}
	x.Name = ptr("nope")
	if _, err := s.Run([]*onnxpb.TensorProto{x, y}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("unknown input name: err = %v", err)
	}
	if _, err := s.Run([]*onnxpb.TensorProto{x}); err == nil {
		t.Fatal("one input of two: no error")
	}
	bad := mk(func(int) float32 { return 1 })
	bad.FloatData = bad.FloatData[:59]
	if _, err := s.Run([]*onnxpb.TensorProto{bad, y}); err == nil || !strings.Contains(err.Error(), "needs 60") {
		t.Fatalf("short data: err = %v", err)
	}
}

// TestNamedInputsReordered binds inputs by name when given out of order:
// Sub is not commutative, so swapping would show.
func TestNamedInputsReordered(t *testing.T) {
	rt := openForTest(t)
	dir := filepath.Join(nodeTestDir(t), "test_sub")
	ins, want := readDataSet(t, filepath.Join(dir, "test_data_set_0"))
	if len(ins) != 2 || ins[0].GetName() == "" {
		t.Fatalf("test_sub inputs: %d", len(ins))
	}
	got, err := rt.Run(filepath.Join(dir, "model.onnx"), []*onnxpb.TensorProto{ins[1], ins[0]})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, bad := diffStats(t, got[0], want[0], 0, 0); bad != 0 {
		t.Fatalf("%d values differ", bad)
	}
}

func TestOpenIdempotent(t *testing.T) {
	rt := openForTest(t)
	p, err := FindLibrary()
	if err != nil {
		t.Fatal(err)
	}
	rt2, err := Open(p, 2)
	if err != nil {
		t.Fatalf("second Open: %v", err)
	}
	if err := rt2.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rt.Version(), "1.") {
		t.Fatalf("version %q", rt.Version())
	}
	// A different library cannot join the process-global environment.
	other := filepath.Join(t.TempDir(), "libonnxruntime.so")
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(other, 1); err == nil || !strings.Contains(err.Error(), "already uses") {
		t.Fatalf("Open other library: err = %v", err)
	}
}

func TestFindLibraryEnv(t *testing.T) {
	t.Setenv(LibraryEnv, filepath.Join(t.TempDir(), "missing.so"))
	_, err := FindLibrary()
	if !errors.Is(err, ErrLibraryNotFound) || !strings.Contains(err.Error(), LibraryEnv) {
		t.Fatalf("err = %v", err)
	}
	f := filepath.Join(t.TempDir(), "lib.so")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(LibraryEnv, f)
	if p, err := FindLibrary(); err != nil || p != f {
		t.Fatalf("FindLibrary = %q, %v; want %q", p, err, f)
	}
}

func TestTensorBytesTypedFields(t *testing.T) {
	cases := []struct {
		tp   *onnxpb.TensorProto
		want []byte
	}{
		{&onnxpb.TensorProto{DataType: ptr(int32(onnxpb.TensorProto_FLOAT)), Dims: []int64{2}, FloatData: []float32{1, -2}},
			[]byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}},
		{&onnxpb.TensorProto{DataType: ptr(int32(onnxpb.TensorProto_INT16)), Dims: []int64{2}, Int32Data: []int32{-1, 258}},
			[]byte{0xff, 0xff, 2, 1}},
		{&onnxpb.TensorProto{DataType: ptr(int32(onnxpb.TensorProto_FLOAT16)), Dims: []int64{1}, Int32Data: []int32{0x3c00}},
			[]byte{0x00, 0x3c}},
		{&onnxpb.TensorProto{DataType: ptr(int32(onnxpb.TensorProto_UINT32)), Dims: []int64{1}, Uint64Data: []uint64{0x01020304}},
			[]byte{4, 3, 2, 1}},
		{&onnxpb.TensorProto{DataType: ptr(int32(onnxpb.TensorProto_BOOL)), Dims: []int64{3}, Int32Data: []int32{1, 0, 1}},
			[]byte{1, 0, 1}},
		{&onnxpb.TensorProto{DataType: ptr(int32(onnxpb.TensorProto_INT64)), Dims: []int64{}, Int64Data: []int64{-2}},
			[]byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
	}
	for _, c := range cases {
		dt := onnxpb.TensorProto_DataType(c.tp.GetDataType())
		n, _ := numElements(c.tp.GetDims())
		got, err := tensorBytes(c.tp, dt, n)
		if err != nil || string(got) != string(c.want) {
			t.Errorf("%s: got %v, %v; want %v", dt, got, err, c.want)
		}
	}
	if _, err := numElements([]int64{1 << 30, 1 << 30, 1 << 30}); err == nil {
		t.Error("numElements: no overflow error")
	}
	if _, err := numElements([]int64{2, -1}); err == nil {
		t.Error("numElements: no negative-dim error")
	}
	if h := halfToFloat(0xc000); h != -2 || !math.IsInf(halfToFloat(0x7c00), 1) {
		t.Errorf("halfToFloat: %g", h)
	}
}

// tensorVI declares a tensor value; dims nil means no shape (unknown rank),
// a dim < 0 is symbolic ("N").
func tensorVI(name string, dt onnxpb.TensorProto_DataType, dims []int64) *onnxpb.ValueInfoProto {
	tt := &onnxpb.TypeProto_Tensor{ElemType: ptr(int32(dt))}
	if dims != nil {
		tt.Shape = &onnxpb.TensorShapeProto{}
		for _, d := range dims {
			dim := &onnxpb.TensorShapeProto_Dimension{}
			if d < 0 {
				dim.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "N"}
			} else {
				dim.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}
			}
			tt.Shape.Dim = append(tt.Shape.Dim, dim)
		}
	}
	return &onnxpb.ValueInfoProto{Name: ptr(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: tt}}}
}

// TestOutputAllocation covers the outputs onnxruntime_go cannot take back
// from ONNX Runtime by itself: float16 with a symbolic dim and with no
// declared shape (two-pass run), a declared scalar, and a float output of
// unknown rank.
func TestOutputAllocation(t *testing.T) {
	rt := openForTest(t)
	node := func(op string, in, out string, attrs ...*onnxpb.AttributeProto) *onnxpb.NodeProto {
		return &onnxpb.NodeProto{OpType: ptr(op), Input: []string{in}, Output: []string{out}, Attribute: attrs}
	}
	intAttr := func(name string, v int64) *onnxpb.AttributeProto {
		return &onnxpb.AttributeProto{Name: ptr(name), Type: onnxpb.AttributeProto_INT.Enum(), I: ptr(v)}
	}
	m := &onnxpb.ModelProto{
		IrVersion:   ptr(int64(8)),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: ptr(""), Version: ptr(int64(13))}},
		Graph: &onnxpb.GraphProto{
			Name: ptr("alloc"),
			Node: []*onnxpb.NodeProto{
				node("Cast", "x", "h", intAttr("to", int64(onnxpb.TensorProto_FLOAT16))),
				node("Identity", "h", "h2"),
				node("ReduceSum", "x", "s", intAttr("keepdims", 0)),
				node("Neg", "x", "x2"),
			},
			Input: []*onnxpb.ValueInfoProto{tensorVI("x", onnxpb.TensorProto_FLOAT, []int64{-1})},
			Output: []*onnxpb.ValueInfoProto{
				tensorVI("h", onnxpb.TensorProto_FLOAT16, []int64{-1}),
				tensorVI("h2", onnxpb.TensorProto_FLOAT16, nil),
				tensorVI("s", onnxpb.TensorProto_FLOAT, []int64{}),
				tensorVI("x2", onnxpb.TensorProto_FLOAT, nil),
			},
		},
	}
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "alloc.onnx")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := rt.NewSession(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, n := range []int{5, 3} { // the shape changes between runs
		xs := []float32{1.5, -2, 0.25, 65504, 3}[:n]
		out, err := s.Run([]*onnxpb.TensorProto{{DataType: ptr(int32(onnxpb.TensorProto_FLOAT)), Dims: []int64{int64(n)}, FloatData: xs}})
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for _, x := range xs {
			sum += float64(x)
		}
		for i, name := range []string{"h", "h2", "s", "x2"} {
			d := decode(t, out[i])
			if out[i].GetName() != name {
				t.Fatalf("output %d named %q", i, out[i].GetName())
			}
			switch name {
			case "s":
				if len(d.dims) != 0 || len(d.f) != 1 || d.f[0] != sum {
					t.Fatalf("n=%d s: dims %v values %v, want scalar %g", n, d.dims, d.f, sum)
				}
			default:
				if len(d.dims) != 1 || d.dims[0] != int64(n) || len(d.f) != n {
					t.Fatalf("n=%d %s: dims %v, %d values", n, name, d.dims, len(d.f))
				}
				for j, x := range xs {
					want := float64(x) // all exact in float16
					if name == "x2" {
						want = -want
					}
					if d.f[j] != want {
						t.Fatalf("n=%d %s[%d] = %g, want %g", n, name, j, d.f[j], want)
					}
				}
			}
		}
	}
}

// TestConcurrentRuns runs one session from several goroutines; every run
// must give the stored outputs.
func TestConcurrentRuns(t *testing.T) {
	rt := openForTest(t)
	dir := filepath.Join(nodeTestDir(t), "test_conv_with_strides_padding")
	ins, want := readDataSet(t, filepath.Join(dir, "test_data_set_0"))
	s, err := rt.NewSession(filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	errs := make(chan error, 4)
	outs := make(chan *onnxpb.TensorProto, 4*10)
	for g := 0; g < 4; g++ {
		go func() {
			for i := 0; i < 10; i++ {
				got, err := s.Run(ins)
				if err != nil {
					errs <- err
					return
				}
				outs <- got[0]
			}
			errs <- nil
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	close(outs)
	n := 0
	for got := range outs {
		if _, _, bad := diffStats(t, got, want[0], 1e-3, 1e-7); bad != 0 {
			t.Fatalf("run %d: %d values out of tolerance", n, bad)
		}
		n++
	}
	if n != 40 {
		t.Fatalf("%d results, want 40", n)
	}
}
