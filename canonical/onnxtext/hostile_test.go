package onnxtext

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestHostileDeepSubgraphs(t *testing.T) {
	// 200 nested If nodes, each holding the next graph.
	var b strings.Builder
	b.WriteString("g0 () => () {\n")
	for i := 1; i <= 200; i++ {
		b.WriteString("y = If (c) <then_branch: graph = g" + strconv.Itoa(i) + " () => () {\n")
	}
	for i := 1; i <= 200; i++ {
		b.WriteString("}>\n")
	}
	b.WriteString("}\n")
	_, err := Parse("deep.txt", []byte(b.String()))
	if err == nil {
		t.Fatal("200-deep subgraphs parsed, want a depth error")
	}
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "nested deeper than 64 levels") {
		t.Fatalf("error = %v, want a depth SyntaxError", err)
	}
	if se.Line != 65 {
		t.Errorf("depth error at line %d, want 65 (the 65th graph)", se.Line)
	}
}

// Exactly MaxDepth nested graphs parse, are expressible and round-trip;
// one more is refused by both Parse and Expressible.
func TestDepthBoundary(t *testing.T) {
	nested := func(levels int) string {
		var b strings.Builder
		b.WriteString("g1 () => () {\n")
		for i := 2; i <= levels; i++ {
			b.WriteString("y = If (c) <then_branch: graph = g" + strconv.Itoa(i) + " () => () {\n")
		}
		for i := 2; i <= levels; i++ {
			b.WriteString("}>\n")
		}
		b.WriteString("}\n")
		return b.String()
	}
	m, err := Parse("max.txt", []byte(nested(MaxDepth)))
	if err != nil {
		t.Fatalf("%d nested graphs: %v", MaxDepth, err)
	}
	roundTrip(t, m)
	if _, err := Parse("over.txt", []byte(nested(MaxDepth+1))); err == nil {
		t.Fatalf("%d nested graphs parsed", MaxDepth+1)
	}
	// Add one more level to the parsed model: Expressible must refuse it.
	m2 := mustParse(t, nested(MaxDepth))
	inner := m2.Graph
	for len(inner.Node) > 0 {
		inner = inner.Node[0].Attribute[0].G
	}
	leaf := mustParse(t, "x () => () { y = If (c) <then_branch: graph = z () => () {}> }")
	inner.Node = leaf.Graph.Node
	if err := Expressible(m2); err == nil || !strings.Contains(err.Error(), "nested deeper than") {
		t.Fatalf("Expressible on %d levels = %v, want a depth error", MaxDepth+1, err)
	}
	// A tensor constant in the deepest graph needs one level more.
	m3 := mustParse(t, nested(MaxDepth))
	inner = m3.Graph
	for len(inner.Node) > 0 {
		inner = inner.Node[0].Attribute[0].G
	}
	inner.Node = mustParse(t, "x () => () { y = Constant <value = float {1}> () }").Graph.Node
	if err := Expressible(m3); err == nil {
		t.Fatal("Expressible accepted a tensor constant beyond the depth limit")
	}
	text, err := Format(m3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse("m3", text); err == nil {
		t.Fatal("Parse accepted a tensor constant beyond the depth limit")
	}
}

func TestHostileDeepTypes(t *testing.T) {
	src := "g (" + strings.Repeat("seq(", 200) + "float" + strings.Repeat(")", 200) + " x) => () {}"
	_, err := Parse("deep.txt", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "type nested deeper than 64") {
		t.Fatalf("error = %v, want a type depth error", err)
	}
	// 63 levels of seq inside the graph (depth 1) fit exactly.
	src = "g (" + strings.Repeat("seq(", 62) + "float" + strings.Repeat(")", 62) + " x) => () {}"
	m, err := Parse("ok.txt", []byte(src))
	if err != nil {
		t.Fatalf("63 nested types: %v", err)
	}
	roundTrip(t, m)
}

func TestHostileInvalidUTF8(t *testing.T) {
	cases := map[string]string{
		"identifier": "g (float x\xff) => () {}",
		"string":     "g (float \"x\xc3\") => () {}",
		"attribute":  "g () => () { y = Op <s = \"\xed\xa0\x80\"> () }",
		"bare byte":  "\xfe",
	}
	for name, src := range cases {
		_, err := Parse("bad.txt", []byte(src))
		if err == nil || !strings.Contains(err.Error(), "UTF-8") {
			t.Errorf("%s: error = %v, want an invalid UTF-8 error", name, err)
		}
	}
}

func TestHostileNumbers(t *testing.T) {
	long := strings.Repeat("9", 1000)
	cases := []string{
		"<ir_version: " + long + "> g () => () {}",
		"g (float[" + long + "] x) => () {}",
		"g () => () <float[1] t = {1" + strings.Repeat("0", 600) + "}> {}",
		"g () => () { y = Op <a = 1e99999> () }",
	}
	for _, src := range cases {
		if _, err := Parse("num.txt", []byte(src)); err == nil {
			t.Errorf("Parse accepted an out-of-range number in %.60q", src)
		}
	}
}

func TestHostileTruncations(t *testing.T) {
	// Every prefix of a valid text must fail cleanly or parse, never panic.
	src := []byte(baseText)
	for i := 0; i < len(src); i++ {
		_, err := Parse("prefix", src[:i])
		if err != nil && strings.Contains(err.Error(), "internal parser error") {
			t.Fatalf("prefix %d: %v", i, err)
		}
	}
}

// The committed fuzz seeds are real texts: each one parses.
func TestFuzzSeedsParse(t *testing.T) {
	files, err := filepath.Glob("testdata/fuzz/FuzzParse/*")
	if err != nil || len(files) < 5 {
		t.Fatalf("seed corpus: %d files, %v", len(files), err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(string(data), "\n", 2)
		if len(lines) != 2 || lines[0] != "go test fuzz v1" {
			t.Fatalf("%s: not a fuzz corpus file", f)
		}
		body := strings.TrimSpace(lines[1])
		body = strings.TrimSuffix(strings.TrimPrefix(body, "[]byte("), ")")
		src, err := strconv.Unquote(body)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		m, err := Parse(filepath.Base(f), []byte(src))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		roundTrip(t, m)
	}
}
