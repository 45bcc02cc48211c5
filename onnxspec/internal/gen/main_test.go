package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func docsDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "onnx-main-1.23dev", "docs")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

// TestGeneratedUpToDate regenerates schemas_gen.go in memory and compares it
// with the committed file.
func TestGeneratedUpToDate(t *testing.T) {
	got, err := generate(docsDir(t))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../schemas_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("schemas_gen.go is stale: run go generate ./onnxspec")
	}
	if n := bytes.Count(got, []byte("SinceVersion:")); n != 642 {
		t.Errorf("generated %d schemas, want 642", n)
	}
}

func TestParseChangelogSnippet(t *testing.T) {
	doc := `# ai.onnx.ml
## Version 3 of the 'ai.onnx.ml' operator set
### <a name="ai.onnx.ml.Foo-3"></a>**ai.onnx.ml.Foo-3**</a>

  Foo does <b>things</b> with Tensor<T>.

  More text.

#### Version

This version of the operator has been available since version 3 of the 'ai.onnx.ml' operator set.

#### Attributes

<dl>
<dt><tt>k</tt> : list of ints (default is ['1', '-2'])</dt>
<dd>multi
line</dd>
<dt><tt>m</tt> : graph (required)</dt>
<dd>body</dd>
</dl>

#### Inputs (3 - &#8734;)

<dl>
<dt><tt>a</tt> (non-differentiable) : tensor(int64)</dt>
<dd>x</dd>
<dt><tt>b</tt> (optional) : T</dt>
<dd>x</dd>
<dt><tt>c</tt> (variadic, heterogeneous) : T</dt>
<dd>x</dd>
</dl>

#### Outputs

<dl>
<dt><tt>y</tt> (differentiable) : T</dt>
<dd>x</dd>
</dl>

#### Type Constraints

<dl>
<dt><tt>T</tt> : map(int64, string), seq(map(string, float))</dt>
<dd>Maps &amp; sequences.</dd>
</dl>
`
	max := map[string]int{}
	ops, err := parseChangelog(strings.NewReader(doc), max)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 1 || max["ai.onnx.ml"] != 3 {
		t.Fatalf("ops = %d, max = %v", len(ops), max)
	}
	op := ops[0]
	if op.Domain != "ai.onnx.ml" || op.Name != "Foo" || op.Since != 3 || op.Summary != "Foo does things with Tensor<T>." {
		t.Errorf("op = %+v", op)
	}
	if op.MinIn != 3 || op.MaxIn != math.MaxInt32 || op.MinOut != 1 || op.MaxOut != 1 {
		t.Errorf("arity %d..%d, %d..%d", op.MinIn, op.MaxIn, op.MinOut, op.MaxOut)
	}
	wantIn := []param{
		{Name: "a", Type: "tensor(int64)", Option: "Single", MinArity: 1, Homogeneous: true, Diff: "NonDifferentiable"},
		{Name: "b", Type: "T", Option: "Optional", Homogeneous: true, Diff: "DiffUnknown"},
		{Name: "c", Type: "T", Option: "Variadic", MinArity: 1, Homogeneous: false, Diff: "DiffUnknown"},
	}
	if !reflect.DeepEqual(op.Inputs, wantIn) {
		t.Errorf("inputs = %+v", op.Inputs)
	}
	if want := []string{"map(int64, string)", "seq(map(string, float))"}; !reflect.DeepEqual(op.Constraints[0].Allowed, want) || op.Constraints[0].Description != "Maps & sequences." {
		t.Errorf("constraint = %+v", op.Constraints[0])
	}
	if a := op.Attrs[0]; a.Type != "AttrInts" || a.Default != "['1', '-2']" || a.Description != "multi line" {
		t.Errorf("attr k = %+v", a)
	}
	if d, err := defaults(op.Attrs[0]); err != nil || d != "DefaultParsed: true, DefaultInts: []int64{1, -2}," {
		t.Errorf("defaults(k) = %q, %v", d, err)
	}
	if a := op.Attrs[1]; a.Type != "AttrGraph" || !a.Required || a.HasDefault {
		t.Errorf("attr m = %+v", a)
	}
}

func TestParseErrors(t *testing.T) {
	for name, doc := range map[string]string{
		"since mismatch": "# ai.onnx (default)\n### <a name=\"A-2\"></a>**A-2**</a>\n#### Version\nThis version of the operator has been available since version 3 of the default ONNX operator set.\n",
		"bad range":      "# ai.onnx (default)\n### <a name=\"A-2\"></a>**A-2**</a>\n#### Inputs (1 - 3)\n<dl>\n<dt><tt>x</tt> : T</dt>\n</dl>\n#### Type Constraints\n<dl>\n<dt><tt>T</tt> : tensor(float)</dt>\n</dl>\n",
		"unknown tag":    "# ai.onnx (default)\n### <a name=\"A-2\"></a>**A-2**</a>\n#### Inputs\n<dl>\n<dt><tt>x</tt> (sometimes) : tensor(float)</dt>\n</dl>\n",
		"no constraint":  "# ai.onnx (default)\n### <a name=\"A-2\"></a>**A-2**</a>\n#### Inputs\n<dl>\n<dt><tt>x</tt> : T</dt>\n</dl>\n",
		"bad section":    "# ai.onnx (default)\n### <a name=\"A-2\"></a>**A-2**</a>\n#### Examples\n",
		"wrong domain":   "# ai.onnx.ml\n### <a name=\"A-2\"></a>**A-2**</a>\n",
	} {
		if _, err := parseChangelog(strings.NewReader(doc), map[string]int{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestParseFloat(t *testing.T) {
	cases := []struct {
		text, desc string
		want       float64
	}{
		{"1.0", "", 1},
		{"(3.402823e+38)", "", math.MaxFloat32},
		{"(-3.402823e+38)", "", -math.MaxFloat32},
		{"1.67326", "Coefficient of SELU default to 1.67326319217681884765625 (i.e., float32 approximation", 1.67326319217681884765625},
		{"1.6732", "Coefficient of SELU default to 1.6732.", 1.6732},
		{"0.5", "default to 0.25", 0.5}, // description disagrees: keep the default
	}
	for _, c := range cases {
		got, err := parseFloat(c.text, c.desc)
		if err != nil || got != c.want {
			t.Errorf("parseFloat(%q) = %v, %v; want %v", c.text, got, err, c.want)
		}
	}
	if _, err := parseFloat("abc", ""); err == nil {
		t.Error("parseFloat(abc) should fail")
	}
	if got := floatLit(math.Copysign(0, -1)); got != "float32(math.Copysign(0, -1))" {
		t.Errorf("floatLit(-0) = %s", got)
	}
}
