package passes

import (
	"context"
	"math"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// ffnModel: x[2,3,4] -> MatMul W1[4,5] -> Add b1[5] -> Relu -> MatMul
// W2[5,6] -> Add b2[6] -> y[2,3,6], with a value_info entry for the Relu
// output.
func ffnModel(t *testing.T) *canonical.Model {
	t.Helper()
	m := &canonical.Model{IRVersion: 8, Graph: canonical.NewGraph("ffn")}
	m.SetOpset("", 17)
	g := m.Graph
	x, _ := g.AddInput("x", canonical.TensorType(canonical.Float, []int64{2, 3, 4}))
	mk := func(name string, dims []int64) *canonical.Value {
		n := int64(1)
		for _, d := range dims {
			n *= d
		}
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Sin(float64(i) + float64(len(name)))
		}
		tt := canonical.NumberTensor(name, canonical.Float, dims, v)
		val, err := g.AddInitializer(tt)
		if err != nil {
			t.Fatal(err)
		}
		return val
	}
	mm1, _ := g.AddNode("fc1", "", "MatMul", []*canonical.Value{x, mk("w1", []int64{4, 5})}, []string{"h"})
	a1, _ := g.AddNode("fc1_bias", "", "Add", []*canonical.Value{mm1.Output(0), mk("b1", []int64{5})}, []string{"hb"})
	r, _ := g.AddNode("relu", "", "Relu", []*canonical.Value{a1.Output(0)}, []string{"hr"})
	r.Output(0).Type = canonical.TensorType(canonical.Float, []int64{2, 3, 5})
	g.ValueInfo = append(g.ValueInfo, r.Output(0))
	mm2, _ := g.AddNode("fc2", "", "MatMul", []*canonical.Value{r.Output(0), mk("w2", []int64{5, 6})}, []string{"o"})
	a2, _ := g.AddNode("fc2_bias", "", "Add", []*canonical.Value{mm2.Output(0), mk("b2", []int64{6})}, []string{"y"})
	a2.Output(0).Type = canonical.TensorType(canonical.Float, []int64{2, 3, 6})
	g.Outputs = append(g.Outputs, a2.Output(0))
	return m
}

// A 3-D feed-forward block: both MatMul+Add become Gemm on the flattened
// input, the Reshape back after the first and the flatten before the
// second cancel around the Relu: Reshape, Gemm, Relu, Gemm, Reshape.
func TestFuseMatMulAdd3D(t *testing.T) {
	m := ffnModel(t)
	res, rep, err := Run(context.Background(), m, Builtin(), RunOptions{Check: &Check{Samples: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if len(rep.RolledBack()) > 0 {
		t.Fatalf("rolled back: %+v", rep.RolledBack())
	}
	if rep.After.Nodes != 5 || rep.After.Ops["Gemm"] != 2 || rep.After.Ops["Reshape"] != 2 || rep.After.Ops["Relu"] != 1 {
		t.Fatalf("nodes %d (%s), want Reshape, Gemm, Relu, Gemm, Reshape", rep.After.Nodes, rep.After.OpsString())
	}
	if rep.MaxRel > 1e-5 {
		t.Errorf("max rel error %g", rep.MaxRel)
	}
	if y := res.Graph.Outputs[0]; y.Name != "y" {
		t.Errorf("output renamed to %q", y.Name)
	}
}

// fp16 keeps the model's value_info, with the element types of the
// converted values changed to float16.
func TestFloat16KeepsValueInfo(t *testing.T) {
	m := ffnModel(t)
	res, rep, err := Float16(context.Background(), m, FP16Options{KeepIOTypes: true, Check: &Check{Samples: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if !rep.Equivalent {
		t.Fatalf("not within the fp16 profile: %s", rep.Final.Summary)
	}
	if len(res.Graph.ValueInfo) != 1 || res.Graph.ValueInfo[0].Name != "hr" {
		t.Fatalf("value_info %v, want [hr]", res.Graph.ValueInfo)
	}
	if dt := elemType(res.Graph.ValueInfo[0]); dt != canonical.Float16 {
		t.Errorf("value_info hr: element type %v, want float16", dt)
	}
	if dt := elemType(m.Graph.ValueInfo[0]); dt != canonical.Float {
		t.Errorf("the input model's value_info changed to %v", dt)
	}
}
