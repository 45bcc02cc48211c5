package verify

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// symType is a tensor type whose dims are ints (known) or strings
// (dim_param).
func symType(dt canonical.DataType, dims ...any) *onnxpb.TypeProto {
	shape := &onnxpb.TensorShapeProto{}
	for _, d := range dims {
		dim := &onnxpb.TensorShapeProto_Dimension{}
		switch x := d.(type) {
		case int:
			dim.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(x)}
		case string:
			dim.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: x}
		}
		shape.Dim = append(shape.Dim, dim)
	}
	return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(dt)), Shape: shape}}}
}

// embeddingModel: out = Gather(emb[7,3], ids[batch,5]) + x[batch,5,3],
// with a bool input flag[batch] feeding Not.
func embeddingModel(t *testing.T) *canonical.Model {
	t.Helper()
	g := canonical.NewGraph("emb")
	ids, err := g.AddInput("ids", symType(canonical.Int64, "batch", 5))
	if err != nil {
		t.Fatal(err)
	}
	x, _ := g.AddInput("x", symType(canonical.Float, "batch", 5, 3))
	flag, _ := g.AddInput("flag", symType(canonical.Bool, "batch"))
	emb, err := g.AddInitializer(f32("emb", []int64{7, 3}, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21))
	if err != nil {
		t.Fatal(err)
	}
	ga, err := g.AddNode("gather", "", "Gather", []*canonical.Value{emb, ids}, []string{"looked_up"}, canonical.IntAttr("axis", 0))
	if err != nil {
		t.Fatal(err)
	}
	add, err := g.AddNode("add", "", "Add", []*canonical.Value{ga.Outputs[0], x}, []string{"out"})
	if err != nil {
		t.Fatal(err)
	}
	not, err := g.AddNode("not", "", "Not", []*canonical.Value{flag}, []string{"nflag"})
	if err != nil {
		t.Fatal(err)
	}
	add.Outputs[0].Type = symType(canonical.Float, "batch", 5, 3)
	not.Outputs[0].Type = symType(canonical.Bool, "batch")
	g.Outputs = []*canonical.Value{add.Outputs[0], not.Outputs[0]}
	return &canonical.Model{IRVersion: 8, OpsetImports: []canonical.OpsetID{{Domain: "", Version: 17}}, Graph: g}
}

func TestGenerateInputs(t *testing.T) {
	m := embeddingModel(t)
	if _, err := GenerateInputs(m, GenOptions{}, 0); err == nil || !strings.Contains(err.Error(), "--dim batch=N") {
		t.Fatalf("unset symbolic dim: %v", err)
	}
	opts := GenOptions{Seed: 42, Dims: map[string]int64{"batch": 64}}
	in, err := GenerateInputs(m, opts, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := in[0].Dims; len(got) != 2 || got[0] != 64 || got[1] != 5 {
		t.Fatalf("ids dims %v", got)
	}
	// Gather indices stay inside the 7 rows of emb and use all of them.
	raw, _ := in[0].Bytes()
	seen := map[int64]bool{}
	for i := 0; i < len(raw); i += 8 {
		v := int64(binary.LittleEndian.Uint64(raw[i:]))
		if v < 0 || v >= 7 {
			t.Fatalf("index %d outside [0, 7)", v)
		}
		seen[v] = true
	}
	if len(seen) != 7 {
		t.Errorf("320 indices cover %d of 7 rows", len(seen))
	}
	// Bools are 0 or 1, both present.
	fb, _ := in[2].Bytes()
	var ones int
	for _, b := range fb {
		if b > 1 {
			t.Fatalf("bool byte %d", b)
		}
		ones += int(b)
	}
	if ones == 0 || ones == len(fb) {
		t.Errorf("%d of %d bools set", ones, len(fb))
	}
	// Deterministic by seed and sample.
	again, _ := GenerateInputs(m, opts, 0)
	other, _ := GenerateInputs(m, opts, 1)
	reseeded, _ := GenerateInputs(m, GenOptions{Seed: 43, Dims: opts.Dims}, 0)
	b0, _ := in[1].Bytes()
	b1, _ := again[1].Bytes()
	b2, _ := other[1].Bytes()
	b3, _ := reseeded[1].Bytes()
	if !bytes.Equal(b0, b1) || bytes.Equal(b0, b2) || bytes.Equal(b0, b3) {
		t.Errorf("same seed equal %v, other sample differs %v, other seed differs %v", bytes.Equal(b0, b1), !bytes.Equal(b0, b2), !bytes.Equal(b0, b3))
	}
	// The generated inputs run: a model compared with itself is
	// equivalent, bool output compared exactly.
	rep, err := Compare(context.Background(), ModelSide("a", m), ModelSide("b", m), Options{Gen: opts, Samples: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Equivalent || len(rep.Outputs) != 2 || rep.Outputs[1].Kind != "bool" || rep.Outputs[1].Exact.Equal != 128 {
		t.Fatalf("self compare: %s; outputs %+v", rep.Summary, rep.Outputs)
	}
}

func TestUniformInputs(t *testing.T) {
	m := embeddingModel(t)
	in, err := GenerateInputs(m, GenOptions{Distribution: "uniform", Dims: map[string]int64{"batch": 10}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := in[1].Bytes()
	vals := f32s(raw)
	for _, v := range vals {
		if v < -1 || v >= 1 {
			t.Fatalf("uniform value %v outside [-1, 1)", v)
		}
	}
}

func f32s(raw []byte) []float32 {
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

func float32frombits(b uint32) float32 { return math.Float32frombits(b) }

// reluModel is y = Relu(x) with x, y of element type dt and shape [n].
func reluModel(t *testing.T, dt canonical.DataType, n int) *canonical.Model {
	t.Helper()
	g := canonical.NewGraph("relu")
	x, err := g.AddInput("x", symType(dt, n))
	if err != nil {
		t.Fatal(err)
	}
	r, err := g.AddNode("relu", "", "Relu", []*canonical.Value{x}, []string{"y"})
	if err != nil {
		t.Fatal(err)
	}
	r.Outputs[0].Type = symType(dt, n)
	g.Outputs = []*canonical.Value{r.Outputs[0]}
	return &canonical.Model{IRVersion: 8, OpsetImports: []canonical.OpsetID{{Domain: "", Version: 17}}, Graph: g}
}

func TestFloat16Candidate(t *testing.T) {
	// B takes and returns fp16: the fp32 inputs are converted for it and
	// the fp16 profile applies.
	a, b := reluModel(t, canonical.Float, 256), reluModel(t, canonical.Float16, 256)
	rep, err := Compare(context.Background(), ModelSide("fp32", a), ModelSide("fp16", b), Options{Gen: GenOptions{Seed: 2}})
	if err != nil {
		t.Fatal(err)
	}
	o := rep.Outputs[0]
	if !rep.Equivalent || o.Tolerance.Profile != "fp16" || o.BDType != "float16" {
		t.Fatalf("fp32 vs fp16 relu: %s, profile %s, b dtype %s", rep.Summary, o.Tolerance.Profile, o.BDType)
	}
	// Rounding to half: relative error at most 2^-11, and it is not zero.
	if o.Float.MaxRel > 1.0/2048 || o.Float.MaxAbs == 0 {
		t.Errorf("max_rel %g max_abs %g, want (0, 2^-11] rounding error", o.Float.MaxRel, o.Float.MaxAbs)
	}
	// Under the fp32 tolerance the same pair is not equivalent.
	rtol, atol := 1e-4, 1e-5
	rep, err = Compare(context.Background(), ModelSide("fp32", a), ModelSide("fp16", b), Options{Gen: GenOptions{Seed: 2}, RTol: &rtol, ATol: &atol})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Equivalent {
		t.Error("fp16 rounding passed fp32 tolerances")
	}
}

func TestByOrder(t *testing.T) {
	a := reluModel(t, canonical.Float, 8)
	g := canonical.NewGraph("renamed")
	x, _ := g.AddInput("input", symType(canonical.Float, 8))
	n, err := g.AddNode("relu", "", "Relu", []*canonical.Value{x}, []string{"z"})
	if err != nil {
		t.Fatal(err)
	}
	n.Outputs[0].Type = symType(canonical.Float, 8)
	g.Outputs = n.Outputs
	b := &canonical.Model{IRVersion: 8, OpsetImports: []canonical.OpsetID{{Domain: "", Version: 17}}, Graph: g}
	rep, err := Compare(context.Background(), ModelSide("a", a), ModelSide("b", b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Equivalent || len(rep.Unmatched) != 1 || rep.Unmatched[0] != "y" || len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "--by-order") {
		t.Errorf("by name: equivalent %v unmatched %v notes %v", rep.Equivalent, rep.Unmatched, rep.Notes)
	}
	rep, err = Compare(context.Background(), ModelSide("a", a), ModelSide("b", b), Options{ByOrder: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Equivalent || rep.Outputs[0].BName != "z" || rep.Outputs[0].Float.MaxAbs != 0 {
		t.Errorf("by order: %s %+v", rep.Summary, rep.Outputs)
	}
}

func TestGenerateInputsRange(t *testing.T) {
	g := canonical.NewGraph("g")
	if _, err := g.AddInput("audio", canonical.TensorType(canonical.Float, []int64{4, 100})); err != nil {
		t.Fatal(err)
	}
	if _, err := g.AddInput("pixels", canonical.TensorType(canonical.Uint8, []int64{3, 50})); err != nil {
		t.Fatal(err)
	}
	m := &canonical.Model{Graph: g}
	ins, err := GenerateInputs(m, GenOptions{Ranges: map[string]Range{"audio": {-0.5, 0.5}, "*": {10, 300}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := ins[0].Float64s()
	for _, x := range a {
		if x < -0.5 || x >= 0.5 {
			t.Fatalf("audio value %g outside [-0.5, 0.5)", x)
		}
	}
	p, _ := ins[1].Int64s()
	seenHigh := false
	for _, x := range p {
		if x < 10 || x > 255 {
			t.Fatalf("uint8 value %d outside [10, 255]", x)
		}
		seenHigh = seenHigh || x > 200
	}
	if !seenHigh {
		t.Error("no value above 200 in 150 draws from [10, 255]")
	}
	if _, err := GenerateInputs(m, GenOptions{Ranges: map[string]Range{"audio": {1, 0}}}, 0); err == nil {
		t.Error("an empty range was accepted")
	}
}

// TestFloatIndexInput: a float input the graph casts to an index (a Keras
// Embedding's input, as TF.js exports it) is generated as whole numbers
// within the embedding's rows: TF.js refuses negative or fractional ids.
func TestFloatIndexInput(t *testing.T) {
	g := canonical.NewGraph("emb")
	ids, err := g.AddInput("ids", symType(canonical.Float, "batch", 5))
	if err != nil {
		t.Fatal(err)
	}
	emb, err := g.AddInitializer(f32("emb", []int64{7, 1}, 1, 2, 3, 4, 5, 6, 7))
	if err != nil {
		t.Fatal(err)
	}
	c, err := g.AddNode("cast", "", "Cast", []*canonical.Value{ids}, []string{"ids_i"}, canonical.IntAttr("to", int64(canonical.Int64)))
	if err != nil {
		t.Fatal(err)
	}
	ga, err := g.AddNode("gather", "", "Gather", []*canonical.Value{emb, c.Outputs[0]}, []string{"y"})
	if err != nil {
		t.Fatal(err)
	}
	g.Outputs = []*canonical.Value{ga.Outputs[0]}
	m := &canonical.Model{IRVersion: 8, OpsetImports: []canonical.OpsetID{{Domain: "", Version: 17}}, Graph: g}
	in, err := GenerateInputs(m, GenOptions{Dims: map[string]int64{"batch": 40}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[float32]bool{}
	for _, x := range f32s(mustRaw(t, in[0])) {
		if x != float32(int(x)) || x < 0 || x >= 7 {
			t.Fatalf("generated id %v: want a whole number in [0, 7)", x)
		}
		seen[x] = true
	}
	if len(seen) < 3 {
		t.Errorf("only %d distinct ids in 200", len(seen))
	}
}

func mustRaw(t *testing.T, x *canonical.Tensor) []byte {
	t.Helper()
	b, err := x.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMinDimsWindow: a symbolic time axis read by a Conv with a kernel of
// 5 and dilation 2 needs at least 9 steps; the generated input has them.
func TestMinDimsWindow(t *testing.T) {
	g := canonical.NewGraph("conv")
	x, err := g.AddInput("audio", symType(canonical.Float, 1, 1, "time"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := g.AddInitializer(f32("w", []int64{1, 1, 5}, 1, 1, 1, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	c, err := g.AddNode("conv", "", "Conv", []*canonical.Value{x, w}, []string{"y"}, canonical.IntsAttr("dilations", 2))
	if err != nil {
		t.Fatal(err)
	}
	g.Outputs = []*canonical.Value{c.Outputs[0]}
	m := &canonical.Model{IRVersion: 8, OpsetImports: []canonical.OpsetID{{Domain: "", Version: 17}}, Graph: g}
	if got := MinDims(m)["time"]; got != 9 {
		t.Errorf("MinDims[time] = %d, want 9 ((5-1)*2+1)", got)
	}
	if got := FillDims(m, nil)["time"]; got != 9 {
		t.Errorf("FillDims[time] = %d, want 9", got)
	}
}
