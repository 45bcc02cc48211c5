//go:build cgo

package ort

import (
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/verify"
)

// TestMinDimsThroughReshapeORT: a symbolic time axis that reaches a
// convolution or pooling window through Unsqueeze, Reshape (folding or
// splitting axes) or Transpose gets, in the generated inputs
// (verify.FillDims), exactly the least size ONNX Runtime runs: the graph
// runs at that size, and one step below ONNX Runtime refuses it or (a
// pooling window longer than its input) computes an empty output.
func TestMinDimsThroughReshapeORT(t *testing.T) {
	rt := openForTest(t)
	i64 := func(name string, v ...int64) *canonical.Tensor {
		var raw []byte
		for _, x := range v {
			raw = binary.LittleEndian.AppendUint64(raw, uint64(x))
		}
		return canonical.NewTensor(name, canonical.Int64, []int64{int64(len(v))}, raw)
	}
	ones := func(name string, dims ...int64) *canonical.Tensor {
		n := int64(1)
		for _, d := range dims {
			n *= d
		}
		var raw []byte
		for range n {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(0.5))
		}
		return canonical.NewTensor(name, canonical.Float, dims, raw)
	}
	type build func(g *canonical.Graph, x *canonical.Value) (*canonical.Value, error)
	cases := []struct {
		name  string
		shape []any // ints and the symbolic "T"
		want  int64
		body  build
	}{
		{"unsqueeze_conv", []any{1, "T"}, 7, func(g *canonical.Graph, x *canonical.Value) (*canonical.Value, error) {
			ax, _ := g.AddInitializer(i64("axes", 1))
			u, err := g.AddNode("unsq", "", "Unsqueeze", []*canonical.Value{x, ax}, []string{"u"})
			if err != nil {
				return nil, err
			}
			w, _ := g.AddInitializer(ones("w", 2, 1, 9))
			c, err := g.AddNode("conv", "", "Conv", []*canonical.Value{u.Outputs[0], w}, []string{"y"}, canonical.IntsAttr("pads", 1, 1))
			return c.Outputs[0], err
		}},
		{"reshape_fold_maxpool", []any{1, "T", 3}, 4, func(g *canonical.Graph, x *canonical.Value) (*canonical.Value, error) {
			s, _ := g.AddInitializer(i64("shape", 1, 1, -1))
			r, err := g.AddNode("reshape", "", "Reshape", []*canonical.Value{x, s}, []string{"r"})
			if err != nil {
				return nil, err
			}
			p, err := g.AddNode("pool", "", "MaxPool", []*canonical.Value{r.Outputs[0]}, []string{"y"}, canonical.IntsAttr("kernel_shape", 10))
			return p.Outputs[0], err
		}},
		{"reshape_split_avgpool", []any{1, "T"}, 10, func(g *canonical.Graph, x *canonical.Value) (*canonical.Value, error) {
			s, _ := g.AddInitializer(i64("shape", 1, 2, -1))
			r, err := g.AddNode("reshape", "", "Reshape", []*canonical.Value{x, s}, []string{"r"})
			if err != nil {
				return nil, err
			}
			p, err := g.AddNode("pool", "", "AveragePool", []*canonical.Value{r.Outputs[0]}, []string{"y"}, canonical.IntsAttr("kernel_shape", 5))
			return p.Outputs[0], err
		}},
		{"transpose_relu_conv", []any{1, "T", 4}, 11, func(g *canonical.Graph, x *canonical.Value) (*canonical.Value, error) {
			tr, err := g.AddNode("nhwc_to_nchw", "", "Transpose", []*canonical.Value{x}, []string{"t"}, canonical.IntsAttr("perm", 0, 2, 1))
			if err != nil {
				return nil, err
			}
			r, err := g.AddNode("relu", "", "Relu", []*canonical.Value{tr.Outputs[0]}, []string{"r"})
			if err != nil {
				return nil, err
			}
			w, _ := g.AddInitializer(ones("w", 3, 4, 6))
			c, err := g.AddNode("conv", "", "Conv", []*canonical.Value{r.Outputs[0], w}, []string{"y"}, canonical.IntsAttr("dilations", 2))
			return c.Outputs[0], err
		}},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := canonical.NewGraph(c.name)
			dims := make([]int64, len(c.shape))
			typ := canonical.TensorType(canonical.Float, make([]int64, len(c.shape)))
			for i, d := range c.shape {
				dim := typ.GetTensorType().GetShape().GetDim()[i]
				switch v := d.(type) {
				case int:
					dims[i] = int64(v)
					dim.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(v)}
				case string:
					dims[i] = -1
					dim.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: v}
				}
			}
			x, err := g.AddInput("x", typ)
			if err != nil {
				t.Fatal(err)
			}
			y, err := c.body(g, x)
			if err != nil {
				t.Fatal(err)
			}
			y.Type = canonical.TensorType(canonical.Float, nil)
			y.Type.GetTensorType().Shape = nil
			g.Outputs = []*canonical.Value{y}
			m := &canonical.Model{IRVersion: 8, Graph: g}
			m.SetOpset("", 17)
			got := verify.FillDims(m, nil)["T"]
			if got != c.want {
				t.Errorf("generated T = %d, want %d", got, c.want)
			}
			path := filepath.Join(dir, c.name+".onnx")
			if err := canonical.Save(path, m, canonical.SaveOptions{}); err != nil {
				t.Fatal(err)
			}
			run := func(T int64) ([]*onnxpb.TensorProto, error) {
				d := append([]int64(nil), dims...)
				n := int64(1)
				for i := range d {
					if d[i] < 0 {
						d[i] = T
					}
					n *= d[i]
				}
				in := &onnxpb.TensorProto{Name: new("x"), DataType: new(int32(onnxpb.TensorProto_FLOAT)), Dims: d, RawData: make([]byte, 4*n)}
				return rt.Run(path, []*onnxpb.TensorProto{in})
			}
			empty := func(outs []*onnxpb.TensorProto) bool {
				for _, o := range outs {
					for _, d := range o.GetDims() {
						if d == 0 {
							return true
						}
					}
				}
				return false
			}
			if outs, err := run(got); err != nil || empty(outs) {
				t.Errorf("ONNX Runtime at T = %d, the generated size: error %v, outputs %v", got, err, outs)
			}
			switch outs, err := run(got - 1); {
			case err != nil:
				t.Logf("T = %d runs; T = %d: %s", got, got-1, firstLine(fmt.Sprint(err)))
			case empty(outs):
				t.Logf("T = %d runs; T = %d gives an empty output %v", got, got-1, outs[0].GetDims())
			default:
				t.Errorf("ONNX Runtime runs T = %d to a non-empty output: the generated %d is not the least", got-1, got)
			}
		})
	}
}

func firstLine(s string) string {
	for i := range len(s) {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	if len(s) > 160 {
		return s[:160]
	}
	return s
}
