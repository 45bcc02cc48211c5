package main

import (
	"fmt"
	"strings"
	"testing"
)

// excerpt is the layout of docs/OperatorKernels.md (rows of ONNX Runtime
// 1.13.1's table; the CUDA section must be ignored).
const excerpt = `## Operators implemented by CPUExecutionProvider

<a name="cpuexecutionprovider"/>

| Op Name | Parameters | OpSet Version | Types Supported |
|---------|------------|---------------|-----------------|
|**Operator Domain:** *ai.onnx*||||
|Abs|*in* X:**T**<br> *out* Y:**T**|13+|**T** = tensor(double), tensor(float)|
|||[6, 12]|**T** = tensor(float)|
|And|*in* A:**T**<br> *in* B:**T**<br> *out* C:**T1**|7+|**T** = tensor(bool)<br/> **T1** = tensor(bool)|
|ConcatFromSequence|*in* input_sequence:**S**<br> *out* concat_result:**T**|11+|**S** = seq(tensor(float))|
|Where|*in* condition:**B**<br> *in* X:**T**<br> *in* Y:**T**<br> *out* output:**T**|16+|**T** = tensor(double), tensor(uint8)|
|||13|**T** = tensor(float)|
|**Operator Domain:** *com.microsoft*||||
|Attention|*in* input:**T**|1+|**T** = tensor(float)|
| |
| |
<a name="cudaexecutionprovider"/>
|**Operator Domain:** *ai.onnx*||||
|Abs|*in* X:**T**<br> *out* Y:**T**|13+|**T** = tensor(float16)|
`

func TestParse(t *testing.T) {
	rows, err := parse([]byte(excerpt))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		s := fmt.Sprintf("%s %s %d..%d", r.domain, r.op, r.from, r.to)
		for _, v := range r.vars {
			s += " " + v.name + "=" + strings.Join(v.types, ",")
		}
		got = append(got, s)
	}
	want := []string{
		"ai.onnx Abs 13..0 T=double,float",
		"ai.onnx Abs 6..12 T=float",
		"ai.onnx And 7..0 T=bool T1=bool",
		"ai.onnx ConcatFromSequence 11..0",
		"ai.onnx Where 16..0 T=double,uint8",
		"ai.onnx Where 13..13 T=float",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("parse:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	src, err := render(rows, "test", "1.13.1", "https://example/OperatorKernels.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"DO NOT EDIT", `{Domain: "", Op: "Where", From: 16, To: 0, Vars: []KernelVar{{"T", tDouble | tUint8}}}`, "func kernelsTEST()"} {
		if !strings.Contains(string(src), w) {
			t.Errorf("rendered table lacks %q:\n%s", w, src)
		}
	}
	if _, err := parse([]byte("no table")); err == nil {
		t.Error("a document without the CPU section parsed")
	}
	if _, err := parse([]byte(strings.Replace(excerpt, "[6, 12]", "[12, 6]", 1))); err == nil {
		t.Error("a reversed version range parsed")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(excerpt))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := parse(b)
		if err != nil {
			return
		}
		_, _ = render(rows, "fuzz", "0", "x")
	})
}
