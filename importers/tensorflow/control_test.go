package tensorflow

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/formats/tensorflow/tfpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	tfjsrt "github.com/onnxconv/onnxconv/runtimes/tfjs"
)

func typeAttr(dt tfpb.DataType) *tfpb.AttrValue {
	return &tfpb.AttrValue{Value: &tfpb.AttrValue_Type{Type: dt}}
}

func typesAttr(dts ...tfpb.DataType) *tfpb.AttrValue {
	return &tfpb.AttrValue{Value: &tfpb.AttrValue_List{List: &tfpb.AttrValue_ListValue{Type: dts}}}
}

func funcAttr(name string) *tfpb.AttrValue {
	return &tfpb.AttrValue{Value: &tfpb.AttrValue_Func{Func: &tfpb.NameAttrList{Name: name}}}
}

func opNode(name, op string, attrs map[string]*tfpb.AttrValue, inputs ...string) *tfpb.NodeDef {
	return &tfpb.NodeDef{Name: name, Op: op, Input: inputs, Attr: attrs}
}

func constNode(name string, dt tfpb.DataType, dims []int64, f []float32, i []int32) *tfpb.NodeDef {
	sh := &tfpb.TensorShapeProto{}
	for _, d := range dims {
		sh.Dim = append(sh.Dim, &tfpb.TensorShapeProto_Dim{Size: d})
	}
	return opNode(name, "Const", map[string]*tfpb.AttrValue{"dtype": typeAttr(dt),
		"value": {Value: &tfpb.AttrValue_Tensor{Tensor: &tfpb.TensorProto{Dtype: dt, TensorShape: sh, FloatVal: f, IntVal: i}}}})
}

func args(names ...any) []*tfpb.OpDef_ArgDef {
	var out []*tfpb.OpDef_ArgDef
	for k := 0; k+1 < len(names); k += 2 {
		out = append(out, &tfpb.OpDef_ArgDef{Name: names[k].(string), Type: names[k+1].(tfpb.DataType)})
	}
	return out
}

// whileGraphDef is a frozen GraphDef with a function library, as TF2
// writes one for
//
//	i, acc = 0, x
//	while i < 3: i, acc = i + 1, tanh(acc @ W) + 0.5 * acc
//	y = relu(acc) if sum(acc) > 0 else -acc
//
// (W and the limit are loop variables the body passes on; the half is a
// Const of the body, the body's nodes read "node:out_arg:0").
func whileGraphDef() *tfpb.GraphDef {
	const (
		F = tfpb.DataType_DT_FLOAT
		I = tfpb.DataType_DT_INT32
		B = tfpb.DataType_DT_BOOL
	)
	tF, tI := map[string]*tfpb.AttrValue{"T": typeAttr(F)}, map[string]*tfpb.AttrValue{"T": typeAttr(I)}
	w := make([]float32, 9)
	for k := range w {
		w[k] = float32(math.Cos(float64(k)*0.9) * 0.7)
	}
	cond := &tfpb.FunctionDef{
		Signature: &tfpb.OpDef{Name: "loop_cond", InputArg: args("i", I, "acc", F, "limit", I, "w", F), OutputArg: args("output_0", B)},
		NodeDef: []*tfpb.NodeDef{
			opNode("less", "Less", tI, "i", "limit"),
			opNode("out", "Identity", map[string]*tfpb.AttrValue{"T": typeAttr(B)}, "less:z:0"),
		},
		Ret: map[string]string{"output_0": "out:output:0"},
	}
	body := &tfpb.FunctionDef{
		Signature: &tfpb.OpDef{Name: "loop_body", InputArg: args("i", I, "acc", F, "limit", I, "w", F),
			OutputArg: args("output_0", I, "output_1", F, "output_2", I, "output_3", F)},
		NodeDef: []*tfpb.NodeDef{
			constNode("loop_body/one", I, nil, nil, []int32{1}),
			constNode("loop_body/half", F, nil, []float32{0.5}, nil),
			opNode("next_i", "AddV2", tI, "i", "loop_body/one:output:0"),
			opNode("mm", "MatMul", map[string]*tfpb.AttrValue{"T": typeAttr(F), "transpose_a": {Value: &tfpb.AttrValue_B{}}, "transpose_b": {Value: &tfpb.AttrValue_B{}}}, "acc", "w"),
			opNode("th", "Tanh", tF, "mm:product:0"),
			opNode("half", "Mul", tF, "acc", "loop_body/half:output:0"),
			opNode("next_acc", "AddV2", tF, "th:y:0", "half:z:0"),
			opNode("out_i", "Identity", tI, "next_i:z:0"),
			opNode("out_acc", "Identity", tF, "next_acc:z:0"),
			opNode("out_limit", "Identity", tI, "limit"),
			opNode("out_w", "Identity", tF, "w"),
		},
		Ret: map[string]string{"output_0": "out_i:output:0", "output_1": "out_acc:output:0", "output_2": "out_limit:output:0", "output_3": "out_w:output:0"},
	}
	then := &tfpb.FunctionDef{
		Signature: &tfpb.OpDef{Name: "pos_branch", InputArg: args("a", F), OutputArg: args("output_0", F)},
		NodeDef:   []*tfpb.NodeDef{opNode("relu", "Relu", tF, "a"), opNode("out", "Identity", tF, "relu:activations:0")},
		Ret:       map[string]string{"output_0": "out:output:0"},
	}
	els := &tfpb.FunctionDef{
		Signature: &tfpb.OpDef{Name: "neg_branch", InputArg: args("a", F), OutputArg: args("output_0", F)},
		NodeDef:   []*tfpb.NodeDef{opNode("neg", "Neg", tF, "a"), opNode("out", "Identity", tF, "neg:y:0")},
		Ret:       map[string]string{"output_0": "out:output:0"},
	}
	x := opNode("x", "Placeholder", map[string]*tfpb.AttrValue{"dtype": typeAttr(F), "shape": {Value: &tfpb.AttrValue_Shape{Shape: &tfpb.TensorShapeProto{
		Dim: []*tfpb.TensorShapeProto_Dim{{Size: -1}, {Size: 3}}}}}})
	return &tfpb.GraphDef{
		Node: []*tfpb.NodeDef{
			x,
			constNode("i0", I, nil, nil, []int32{0}),
			constNode("limit", I, nil, nil, []int32{3}),
			constNode("W", F, []int64{3, 3}, w, nil),
			opNode("loop", "StatelessWhile", map[string]*tfpb.AttrValue{"T": typesAttr(I, F, I, F), "cond": funcAttr("loop_cond"), "body": funcAttr("loop_body")},
				"i0", "x", "limit", "W"),
			constNode("axes", I, []int64{2}, nil, []int32{0, 1}),
			opNode("sum", "Sum", map[string]*tfpb.AttrValue{"T": typeAttr(F), "Tidx": typeAttr(I), "keep_dims": {Value: &tfpb.AttrValue_B{}}}, "loop:1", "axes"),
			constNode("zero", F, nil, []float32{0}, nil),
			opNode("positive", "Greater", tF, "sum", "zero"),
			opNode("branch", "StatelessIf", map[string]*tfpb.AttrValue{"Tcond": typeAttr(B), "Tin": typesAttr(F), "Tout": typesAttr(F),
				"then_branch": funcAttr("pos_branch"), "else_branch": funcAttr("neg_branch")}, "positive", "loop:1"),
			opNode("y", "Identity", tF, "branch"),
			opNode("count", "Identity", tI, "loop"),
		},
		Library: &tfpb.FunctionDefLibrary{Function: []*tfpb.FunctionDef{cond, body, then, els}},
	}
}

// A GraphDef .pb with a StatelessWhile and a StatelessIf (serialised from
// the generated tfpb types) imports as ONNX Loop and If and computes what
// TF.js 4.22.0 computes running the same GraphDef as a graph model
// (executeAsync), within 1e-5.
func TestWhileGraphDefMatchesTFJS(t *testing.T) {
	node, modules := testpaths.Node(t, "@tensorflow/tfjs")
	env := tfjsrt.Env{Node: node, Modules: modules}
	b, err := proto.Marshal(whileGraphDef())
	if err != nil {
		t.Fatal(err)
	}
	pb := filepath.Join(t.TempDir(), "while.pb")
	if err := os.WriteFile(pb, b, 0o644); err != nil {
		t.Fatal(err)
	}
	mp, err := ImportFile(context.Background(), pb, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]int{}
	for _, n := range mp.Graph.Nodes {
		ops[n.OpType]++
	}
	if ops["Loop"] != 1 || ops["If"] != 1 {
		t.Errorf("ops %v: want one Loop and one If", ops)
	}
	js := pb
	for _, v := range [][]float32{{0.3, -0.2, 0.9, 1.5, 0.01, -0.7}, {-2, -1, -0.5, -3, 0.2, -1}} {
		x := f32("x", []int64{2, 3}, v...)
		got := run(t, pb, nil, x)
		tp, err := canonical.TensorToProto(x)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		res, err := tfjsrt.Run(ctx, env, js, []*onnxpb.TensorProto{tp})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if res.Method != "executeAsync" {
			t.Errorf("TF.js ran the model with %s, want executeAsync", res.Method)
		}
		if len(res.Outputs) != len(got) {
			t.Fatalf("%d outputs, TF.js %d", len(got), len(res.Outputs))
		}
		for i, o := range got {
			want, err := canonical.TensorFromProto(res.Outputs[i])
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(o.Dims) != fmt.Sprint(want.Dims) {
				t.Errorf("output %d: shape %v, TF.js %v", i, o.Dims, want.Dims)
				continue
			}
			g, w := floats(t, o), floats(t, want)
			for j := range w {
				if d := math.Abs(g[j] - w[j]); d > 1e-5*(1+math.Abs(w[j])) || math.IsNaN(g[j]) {
					t.Errorf("output %d[%d] = %g, TF.js %g", i, j, g[j], w[j])
				}
			}
			t.Logf("output %d (%s) = %v, TF.js %v", i, res.Outputs[i].GetName(), g, w)
		}
	}
}

// tf1LoopGraphDef is the GraphDef tf.while_loop (control flow v1) writes
// for: i, acc = 0, x; while i < 3: i, acc = i + 1, tanh(acc @ W).
func tf1LoopGraphDef() *tfpb.GraphDef {
	const (
		F = tfpb.DataType_DT_FLOAT
		I = tfpb.DataType_DT_INT32
	)
	w := make([]float32, 9)
	for k := range w {
		w[k] = float32(math.Sin(float64(k)*1.1) * 0.9)
	}
	enter := func(name, in string, dt tfpb.DataType, constant bool) *tfpb.NodeDef {
		return opNode(name, "Enter", map[string]*tfpb.AttrValue{"T": typeAttr(dt), "is_constant": {Value: &tfpb.AttrValue_B{B: constant}},
			"frame_name": {Value: &tfpb.AttrValue_S{S: []byte("while/while_context")}}}, in)
	}
	t := func(dt tfpb.DataType) map[string]*tfpb.AttrValue {
		return map[string]*tfpb.AttrValue{"T": typeAttr(dt)}
	}
	one := constNode("while/add/y", I, nil, nil, []int32{1})
	one.Input = []string{"^while/Identity"}
	x := opNode("x", "Placeholder", map[string]*tfpb.AttrValue{"dtype": typeAttr(F), "shape": {Value: &tfpb.AttrValue_Shape{Shape: &tfpb.TensorShapeProto{
		Dim: []*tfpb.TensorShapeProto_Dim{{Size: -1}, {Size: 3}}}}}})
	return &tfpb.GraphDef{Node: []*tfpb.NodeDef{
		x,
		constNode("i0", I, nil, nil, []int32{0}),
		constNode("limit", I, nil, nil, []int32{3}),
		constNode("W", F, []int64{3, 3}, w, nil),
		enter("while/Enter", "i0", I, false),
		enter("while/Enter_1", "x", F, false),
		enter("while/Enter_2", "W", F, true),
		enter("while/Enter_3", "limit", I, true),
		opNode("while/Merge", "Merge", t(I), "while/Enter", "while/NextIteration"),
		opNode("while/Merge_1", "Merge", t(F), "while/Enter_1", "while/NextIteration_1"),
		opNode("while/Less", "Less", t(I), "while/Merge", "while/Enter_3"),
		opNode("while/LoopCond", "LoopCond", nil, "while/Less"),
		opNode("while/Switch", "Switch", t(I), "while/Merge", "while/LoopCond"),
		opNode("while/Switch_1", "Switch", t(F), "while/Merge_1", "while/LoopCond"),
		opNode("while/Identity", "Identity", t(I), "while/Switch:1"),
		opNode("while/Identity_1", "Identity", t(F), "while/Switch_1:1"),
		one,
		opNode("while/add", "AddV2", t(I), "while/Identity", "while/add/y"),
		opNode("while/MatMul", "MatMul", map[string]*tfpb.AttrValue{"T": typeAttr(F), "transpose_a": {Value: &tfpb.AttrValue_B{}}, "transpose_b": {Value: &tfpb.AttrValue_B{}}}, "while/Identity_1", "while/Enter_2"),
		opNode("while/Tanh", "Tanh", t(F), "while/MatMul"),
		opNode("while/NextIteration", "NextIteration", t(I), "while/add"),
		opNode("while/NextIteration_1", "NextIteration", t(F), "while/Tanh"),
		opNode("while/Exit", "Exit", t(I), "while/Switch"),
		opNode("while/Exit_1", "Exit", t(F), "while/Switch_1"),
		opNode("y", "Identity", t(F), "while/Exit_1"),
		opNode("count", "Identity", t(I), "while/Exit"),
	}}
}

// A TF1 counted while loop (Enter/Merge/Switch/LoopCond/NextIteration/
// Exit) is recovered into one ONNX Loop and computes what TF.js 4.22.0
// computes running the same GraphDef, within 1e-5.
func TestTF1WhileLoopMatchesTFJS(t *testing.T) {
	node, modules := testpaths.Node(t, "@tensorflow/tfjs")
	env := tfjsrt.Env{Node: node, Modules: modules}
	b, err := proto.Marshal(tf1LoopGraphDef())
	if err != nil {
		t.Fatal(err)
	}
	pb := filepath.Join(t.TempDir(), "tf1_while.pb")
	if err := os.WriteFile(pb, b, 0o644); err != nil {
		t.Fatal(err)
	}
	mp, err := ImportFile(context.Background(), pb, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]int{}
	for _, n := range mp.Graph.Nodes {
		ops[n.OpType]++
	}
	if ops["Loop"] != 1 {
		t.Errorf("ops %v: want one Loop", ops)
	}
	x := f32("x", []int64{2, 3}, 0.3, -0.2, 0.9, 1.5, 0.01, -0.7)
	got := run(t, pb, nil, x)
	tp, err := canonical.TensorToProto(x)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := tfjsrt.Run(ctx, env, pb, []*onnxpb.TensorProto{tp})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Outputs) != len(got) {
		t.Fatalf("%d outputs, TF.js %d", len(got), len(res.Outputs))
	}
	for i, o := range got {
		want, err := canonical.TensorFromProto(res.Outputs[i])
		if err != nil {
			t.Fatal(err)
		}
		g, w := floats(t, o), floats(t, want)
		if fmt.Sprint(o.Dims) != fmt.Sprint(want.Dims) {
			t.Fatalf("output %d: shape %v, TF.js %v", i, o.Dims, want.Dims)
		}
		for j := range w {
			if d := math.Abs(g[j] - w[j]); d > 1e-5*(1+math.Abs(w[j])) || math.IsNaN(g[j]) {
				t.Errorf("output %d[%d] = %g, TF.js %g", i, j, g[j], w[j])
			}
		}
		t.Logf("output %d (%s) = %v, TF.js %v (%s)", i, res.Outputs[i].GetName(), g, w, res.Method)
	}
}
