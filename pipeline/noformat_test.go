package pipeline

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/exporters"
	onnximp "github.com/onnxconv/onnxconv/importers/onnx"
)

// formatNames are the names of the built-in formats besides ONNX (the
// canonical form pipeline works in): the importers', exporters' and
// runtimes' names, formats, targets and the extensions that name one
// format, as their registries describe them; not the executor, which
// verification runs on, nor an extension that names no one format (one
// that several importers read, and .pb and .txt: any protobuf, ONNX's
// tensors and models too, and any text).
func formatNames(t *testing.T) []string {
	t.Helper()
	env := builtins()
	var names []string
	claims := map[string]int{".pb": 2, ".txt": 2}
	for _, imp := range env.Importers.All() {
		d := imp.Describe()
		for _, e := range d.Extensions {
			claims[e]++
			if d.Name == onnximp.Name {
				claims[e]++
			}
		}
	}
	for _, imp := range env.Importers.All() {
		d := imp.Describe()
		if d.Name == onnximp.Name {
			continue
		}
		names = append(names, d.Name, d.FormatName())
		for _, e := range d.Extensions {
			if claims[e] == 1 {
				names = append(names, e)
			}
		}
	}
	for _, exp := range env.Exporters.All() {
		d := exp.Describe()
		if d.Format == exporters.FormatONNX {
			continue
		}
		names = append(names, d.Name, d.Format)
		names = append(names, d.Extensions...)
		names = append(names, d.Targets...)
	}
	for _, rt := range env.Runtimes.Names() {
		if rt != "executor" {
			names = append(names, rt)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// TestPipelineNamesNoFormat reads pipeline's own (non-test) code: no
// string it holds and no name it declares or uses names a format, a
// runtime or an exporter target of the built-ins. The formats come in the
// caller's Env (docs/architecture.md); the import rule of
// internal/archtest keeps the packages out, this test their names. It
// first shows that it catches what pipeline had (TFLiteFile,
// "onnxruntime").
func TestPipelineNamesNoFormat(t *testing.T) {
	names := formatNames(t)
	if len(names) < 10 {
		t.Fatalf("the built-ins name %d formats: %v", len(names), names)
	}
	fset := token.NewFileSet()
	planted, err := parser.ParseFile(fset, "planted.go", `package pipeline
const TFLiteFile = 2
var runtime = "onnxruntime"
`, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	if got := namedFormats(t, fset, planted, names); len(got) != 2 {
		t.Fatalf("planted TFLiteFile and \"onnxruntime\": found %v", got)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, e := range namedFormats(t, fset, af, names) {
			t.Errorf("%s: take it from the Env's registries", e)
		}
	}
	if checked < 10 {
		t.Fatalf("read %d files of pipeline", checked)
	}
}

// namedFormats lists where f's string literals and identifiers name one of
// names as a word (an identifier's words: TFLiteFile is "TFLite File").
func namedFormats(t *testing.T, fset *token.FileSet, f *ast.File, names []string) []string {
	t.Helper()
	pats := make([]*regexp.Regexp, len(names))
	for i, name := range names {
		pats[i] = regexp.MustCompile(`(^|[^a-z0-9])` + regexp.QuoteMeta(strings.ToLower(name)) + `($|[^a-z0-9])`)
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		var s string
		switch v := n.(type) {
		case *ast.BasicLit:
			if v.Kind != token.STRING {
				return true
			}
			var err error
			if s, err = strconv.Unquote(v.Value); err != nil {
				t.Fatalf("%s: %v", fset.Position(v.Pos()), err)
			}
		case *ast.Ident:
			s = splitWords(v.Name)
		default:
			return true
		}
		s = strings.ToLower(s)
		for i, p := range pats {
			if p.MatchString(s) {
				found = append(found, fmt.Sprintf("%s: %q names the format %q", fset.Position(n.Pos()), s, names[i]))
			}
		}
		return true
	})
	return found
}

// splitWords puts a space before every capital that starts a word of an
// identifier (TFLiteFile -> "TFLite File"), so that a format is matched
// as a word.
func splitWords(id string) string {
	var b strings.Builder
	r := []rune(id)
	for i, c := range r {
		upper := c >= 'A' && c <= 'Z'
		if i > 0 && upper && (r[i-1] < 'A' || r[i-1] > 'Z') {
			b.WriteByte(' ')
		}
		b.WriteRune(c)
	}
	return b.String()
}
