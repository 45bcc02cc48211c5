//go:build cgo

package convert

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes/ort"
)

// TestExpandExtraConstInputs turns some graph inputs of backend tests into
// initializers (the constant case of the expansions), converts to old
// opsets and compares ONNX Runtime's outputs with the expected ones.
func TestExpandExtraConstInputs(t *testing.T) {
	lib := testpaths.ORT(t)
	rt, err := ort.Open(lib, 1)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		fixed []int // inputs made initializers
	}{
		{"test_range_float_type_positive_delta", []int{0, 1, 2}},
		{"test_range_int32_type_negative_delta", []int{0, 1, 2}},
		{"test_range_float_type_positive_delta", nil},
		{"test_range_int32_type_negative_delta", nil},
		{"test_hannwindow", []int{0}},
		{"test_hannwindow", nil},
		{"test_blackmanwindow_symmetric", nil},
		{"test_hannwindow_symmetric", []int{0}},
		{"test_hammingwindow", []int{0}},
		{"test_hammingwindow_symmetric", []int{0}},
		{"test_blackmanwindow", []int{0}},
		{"test_blackmanwindow_symmetric", []int{0}},
		{"test_center_crop_pad_crop", []int{1}},
		{"test_center_crop_pad_crop_and_pad", []int{1}},
		{"test_center_crop_pad_crop_axes_chw", []int{1}},
		{"test_center_crop_pad_crop_axes_hwc", []int{1}},
		{"test_center_crop_pad_crop_negative_axes_hwc", []int{1}},
		{"test_center_crop_pad_pad", []int{1}},
		{"test_affine_grid_2d", []int{1}},
		{"test_affine_grid_2d", nil},
		{"test_dynamicquantizelinear", nil},
		{"test_dynamicquantizelinear_max_adjusted", nil},
		{"test_dynamicquantizelinear_min_adjusted", nil},
		{"test_affine_grid_3d_align_corners", nil},
		{"test_affine_grid_2d_align_corners", []int{1}},
		{"test_affine_grid_3d", []int{1}},
		{"test_affine_grid_3d_align_corners", []int{1}},
	}
	root := filepath.Join(sharedDir(t), "onnx-v1.22", "backend-tests", "node")
	tmp := t.TempDir()
	converted := 0
	for _, c := range cases {
		dir := filepath.Join(root, c.name)
		ins, want, err := readDataSet(filepath.Join(dir, "test_data_set_0"))
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
		if err != nil {
			t.Fatal(err)
		}
		var mp onnxpb.ModelProto
		if err := proto.Unmarshal(data, &mp); err != nil {
			t.Fatal(err)
		}
		g := mp.GetGraph()
		fixed := map[int]bool{}
		for _, i := range c.fixed {
			fixed[i] = true
		}
		var keepIn []*onnxpb.ValueInfoProto
		var runIns []*onnxpb.TensorProto
		for i, in := range g.GetInput() {
			if fixed[i] {
				init := proto.Clone(ins[i]).(*onnxpb.TensorProto)
				init.Name = proto.String(in.GetName())
				g.Initializer = append(g.Initializer, init)
				continue
			}
			keepIn = append(keepIn, in)
			runIns = append(runIns, ins[i])
		}
		g.Input = keepIn
		if len(keepIn) == 0 {
			// ONNX Runtime's wrapper wants a graph input: pass one through.
			ft := onnxpb.TensorProto_FLOAT
			g.Input = append(g.Input, &onnxpb.ValueInfoProto{Name: proto.String("extra_in"), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(ft)), Shape: &onnxpb.TensorShapeProto{Dim: []*onnxpb.TensorShapeProto_Dimension{{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 1}}}}}}}})
			g.Output = append(g.Output, &onnxpb.ValueInfoProto{Name: proto.String("extra_out"), Type: g.Input[0].Type})
			g.Node = append(g.Node, &onnxpb.NodeProto{OpType: proto.String("Identity"), Input: []string{"extra_in"}, Output: []string{"extra_out"}})
			runIns = append(runIns, &onnxpb.TensorProto{Name: proto.String("extra_in"), DataType: proto.Int32(int32(ft)), Dims: []int64{1}, FloatData: []float32{0}})
		}
		for _, to := range []int{7, 9, 10, 12} {
			m, err := canonical.FromProto(proto.Clone(&mp).(*onnxpb.ModelProto), dir)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Convert(m, Options{To: to})
			var be *BlockedError
			if errors.As(err, &be) {
				t.Logf("%s -> %d: refused: %s", c.name, to, be.Blockers[0].Reason)
				continue
			}
			if err != nil {
				t.Errorf("%s -> %d: %v", c.name, to, err)
				continue
			}
			path := filepath.Join(tmp, fmt.Sprintf("%s_%d.onnx", c.name, to))
			if err := canonical.Save(path, m, canonical.SaveOptions{}); err != nil {
				t.Fatal(err)
			}
			got, err := rt.Run(path, runIns)
			if err != nil {
				t.Errorf("%s -> %d: run: %v", c.name, to, err)
				continue
			}
			if len(got) > len(want) {
				got = got[:len(want)]
			}
			if err := compareOutputs(got, want); err != nil {
				t.Errorf("%s -> %d: %v", c.name, to, err)
				continue
			}
			converted++
		}
	}
	if converted == 0 {
		t.Fatal("nothing converted")
	}
	t.Logf("%d pairs converted and equal", converted)
}

// TestDQLRoundsHalfToEven checks the Round emulation on ties against
// ONNX Runtime's DynamicQuantizeLinear-11.
func TestDQLRoundsHalfToEven(t *testing.T) {
	lib := testpaths.ORT(t)
	rt, err := ort.Open(lib, 1)
	if err != nil {
		t.Fatal(err)
	}
	ft := onnxpb.TensorProto_FLOAT
	typ := func(dt onnxpb.TensorProto_DataType, dims ...int64) *onnxpb.TypeProto {
		var ds []*onnxpb.TensorShapeProto_Dimension
		for _, d := range dims {
			ds = append(ds, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
		}
		return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(dt)), Shape: &onnxpb.TensorShapeProto{Dim: ds}}}}
	}
	// Both have scale 1, so x/scale and the zero point (127.5) are ties.
	sets := [][]float32{
		{0, 0.5, 1.5, 2.5, 3.5, 100.5, 253.5, 254.5, 255, 7},
		{-127.5, 127.5, 0.5, 1.5, -2.5, 3.5, 10, 20, 30, 40},
	}
	xs := sets[0]
	mp := &onnxpb.ModelProto{
		IrVersion:   proto.Int64(7),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(11)}},
		Graph: &onnxpb.GraphProto{
			Name:  proto.String("dql"),
			Input: []*onnxpb.ValueInfoProto{{Name: proto.String("x"), Type: typ(ft, int64(len(xs)))}},
			Output: []*onnxpb.ValueInfoProto{
				{Name: proto.String("y"), Type: typ(onnxpb.TensorProto_UINT8, int64(len(xs)))},
				{Name: proto.String("s"), Type: typ(ft)},
				{Name: proto.String("z"), Type: typ(onnxpb.TensorProto_UINT8)},
			},
			Node: []*onnxpb.NodeProto{{OpType: proto.String("DynamicQuantizeLinear"), Input: []string{"x"}, Output: []string{"y", "s", "z"}}},
		},
	}
	tmp := t.TempDir()
	run := func(to int, xs []float32) []*onnxpb.TensorProto {
		in := []*onnxpb.TensorProto{{Name: proto.String("x"), DataType: proto.Int32(int32(ft)), Dims: []int64{int64(len(xs))}, FloatData: xs}}
		m, err := canonical.FromProto(proto.Clone(mp).(*onnxpb.ModelProto), "")
		if err != nil {
			t.Fatal(err)
		}
		if to != 11 {
			if _, err := Convert(m, Options{To: to}); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(tmp, fmt.Sprintf("dql_%d.onnx", to))
		if err := canonical.Save(path, m, canonical.SaveOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := rt.Run(path, in)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for i, xs := range sets {
		want := run(11, xs)
		for _, to := range []int{7, 9, 10} {
			if err := compareOutputs(run(to, xs), want); err != nil {
				t.Errorf("set %d -> %d: %v", i, to, err)
			}
		}
	}
}
