package passes

import (
	"strings"
	"testing"
)

func TestReportsWriteText(t *testing.T) {
	var b strings.Builder
	r := &Report{Before: Stats{Nodes: 9, Bytes: 400}, After: Stats{Nodes: 5, Bytes: 300}, MaxAbs: 1e-7, MaxRel: 2e-6,
		Passes: []PassReport{{Name: "fold-constants"}, {Name: "fuse-gelu", RolledBack: true, Reason: "output y changed"}}}
	if err := r.WriteText(&b, "in.onnx", "out.onnx"); err != nil {
		t.Fatal(err)
	}
	f := &FP16Report{Type: "float16", Converted: 4, Blocked: 1, Before: Stats{Bytes: 400}, After: Stats{Bytes: 200}, MaxAbs: -1,
		Kept: []KeptNode{{Node: "sm", OpType: "Softmax", Reason: "overflows"}}}
	if err := f.WriteKept(&b); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteText(&b, "in.onnx", "h.onnx"); err != nil {
		t.Fatal(err)
	}
	q := &QuantReport{Mode: Dynamic, Quantized: 3, Before: Stats{Bytes: 4096}, After: Stats{Bytes: 1024}, Top1: 0.5, MaxAbs: 0.01, MeanAbs: 0.002}
	if err := q.WriteText(&b, "q.onnx"); err != nil {
		t.Fatal(err)
	}
	want := `out.onnx: nodes 9 -> 5, initializer bytes 400 -> 300
verified against in.onnx: max abs error 1e-07, max rel error 2e-06
rolled back fuse-gelu: output y changed
kept in float32: sm (Softmax): overflows
h.onnx: float16, 4 nodes converted, 1 blocked, 1 kept by the fallback; initializer bytes 400 -> 200
q.onnx: dynamic int8 QDQ, 3 nodes quantized; initializer bytes 4.0 KiB -> 1.0 KiB
top-1 agreement with the float model: 50.00%
max abs error 0.01, mean abs error 0.002
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestWriteList(t *testing.T) {
	var b strings.Builder
	if err := WriteList(&b); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\n"); n != len(Builtin()) || !strings.HasPrefix(b.String(), "  "+Builtin()[0].Name) {
		t.Errorf("list of %d lines:\n%s", n, b.String())
	}
}
