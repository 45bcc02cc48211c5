// Command gen writes onnxspec/schemas_gen.go from the ONNX operator changelogs
// (docs/Changelog.md and docs/Changelog-ml.md of the ONNX release).
//
// It is run by `go generate` in the onnxspec folder:
//
//	go run ./internal/gen [-docs ../../shared/onnx-main-1.23dev/docs] [-o schemas_gen.go]
//
// The parser follows the layout written by onnx/defs/gen_doc.py: an
// operator version starts with `### <a name="Op-N">`, followed by its
// description, then "#### Version", "#### Attributes", "#### Inputs
// (min - max)", "#### Outputs (min - max)" and "#### Type Constraints"
// sections holding <dl> lists with one <dt> line per entry.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

func main() {
	docs := flag.String("docs", "../../shared/onnx-main-1.23dev/docs", "folder holding Changelog.md and Changelog-ml.md")
	out := flag.String("o", "schemas_gen.go", "output Go file")
	flag.Parse()
	if err := run(*docs, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(docs, out string) error {
	src, err := generate(docs)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".schemas_gen-*.go.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if _, err := tmp.Write(src); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return nil
}

// generate parses both changelogs under docs and returns the formatted Go
// source of schemas_gen.go.
func generate(docs string) ([]byte, error) {
	var all []*opSchema
	maxOpset := map[string]int{}
	for _, name := range []string{"Changelog.md", "Changelog-ml.md"} {
		path := filepath.Join(docs, name)
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("reading changelog: %w", err)
		}
		ops, err := parseChangelog(f, maxOpset)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		all = append(all, ops...)
	}
	if len(all) == 0 {
		return nil, errors.New("no operators found in the changelogs")
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.Domain != b.Domain {
			return a.Domain < b.Domain
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Since < b.Since
	})
	for i := 1; i < len(all); i++ {
		a, b := all[i-1], all[i]
		if a.Domain == b.Domain && a.Name == b.Name && a.Since == b.Since {
			return nil, fmt.Errorf("operator %s %s-%d is documented twice", a.Domain, a.Name, a.Since)
		}
	}
	return emit(all, maxOpset)
}

// Parsed form, independent of package onnxspec so that the generator runs
// even when schemas_gen.go is missing or stale.
type opSchema struct {
	Domain, Name string
	Since        int
	Deprecated   bool
	Experimental bool
	Summary      string
	Inputs       []param
	Outputs      []param
	Attrs        []attr
	Constraints  []constraint
	MinIn, MaxIn int
	MinOut       int
	MaxOut       int
	hasInRange   bool
	hasOutRange  bool
}

type param struct {
	Name, Type  string
	Option      string // "Single", "Optional", "Variadic"
	MinArity    int
	Homogeneous bool
	Diff        string // "DiffUnknown", "Differentiable", "NonDifferentiable"
}

type attr struct {
	Name, Type  string // Type is the Go constant name, e.g. "AttrInts"
	Required    bool
	Default     string
	HasDefault  bool
	Description string
}

type constraint struct {
	Param       string
	Allowed     []string
	Description string
}

const unbounded = math.MaxInt32

var (
	opRe       = regexp.MustCompile(`^### <a name="([^"]+)-(\d+)"></a>\*\*[^*]+\*\*( \(deprecated\))?</a>\s*$`)
	domainRe   = regexp.MustCompile(`^# (\S+)`)
	versionRe  = regexp.MustCompile(`^## Version (\d+) of `)
	sectionRe  = regexp.MustCompile(`^#### (Version|Attributes|Inputs|Outputs|Type Constraints)(?: \((\d+) - (\d+|&#8734;)\))?\s*$`)
	dtRe       = regexp.MustCompile(`^<dt><tt>([^<]+)</tt>(?: \(([^)]*)\))? : (.*)</dt>\s*$`)
	attrTypeRe = regexp.MustCompile(`^(list of [a-z_]+|[a-z_]+)(?: \((required|default is (.*))\))?$`)
	sinceRe    = regexp.MustCompile(`has been (available|deprecated) since version (\d+) of`)
	exactRe    = regexp.MustCompile(`default to (-?[0-9]+\.[0-9]+)`)
	tagRe      = regexp.MustCompile(`</?(?:br|b|i|a|p|sub|sup|tt|code|em|strong)\b[^>]*>`)
)

// parseChangelog reads one changelog. maxOpset collects, per domain, the
// highest "## Version N of ... operator set" header.
func parseChangelog(r io.Reader, maxOpset map[string]int) ([]*opSchema, error) {
	var (
		ops     []*opSchema
		cur     *opSchema
		domain  string
		section string // "" while in the description
		desc    []string
		lastAt  *attr       // attribute whose <dd> follows
		lastTC  *constraint // constraint whose <dd> follows
		inDD    bool
		ddText  []string
		lineNo  int
	)
	finishDD := func() {
		text := strings.TrimSpace(strings.Join(ddText, " "))
		text = strings.TrimSuffix(strings.TrimPrefix(text, "<dd>"), "</dd>")
		text = strings.Join(strings.Fields(html.UnescapeString(text)), " ")
		if lastAt != nil {
			lastAt.Description = text
		}
		if lastTC != nil {
			lastTC.Description = text
		}
		lastAt, lastTC, inDD, ddText = nil, nil, false, nil
	}
	finishOp := func() error {
		if cur == nil {
			return nil
		}
		if err := finalize(cur, desc); err != nil {
			return fmt.Errorf("operator %s-%d: %w", cur.Name, cur.Since, err)
		}
		ops = append(ops, cur)
		cur, desc, section = nil, nil, ""
		return nil
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if inDD {
			ddText = append(ddText, line)
			if strings.Contains(line, "</dd>") {
				finishDD()
			}
			continue
		}
		if strings.HasPrefix(line, "# ") {
			if err := finishOp(); err != nil {
				return nil, err
			}
			m := domainRe.FindStringSubmatch(line)
			domain = m[1]
			if domain == "ai.onnx" {
				domain = ""
			}
			continue
		}
		if m := versionRe.FindStringSubmatch(line); m != nil {
			if err := finishOp(); err != nil {
				return nil, err
			}
			v, _ := strconv.Atoi(m[1])
			if v > maxOpset[domain] {
				maxOpset[domain] = v
			}
			continue
		}
		if strings.HasPrefix(line, "### ") {
			if err := finishOp(); err != nil {
				return nil, err
			}
			m := opRe.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("line %d: unrecognized operator header %q", lineNo, line)
			}
			name := m[1]
			if domain != "" {
				if !strings.HasPrefix(name, domain+".") {
					return nil, fmt.Errorf("line %d: operator %q is not in domain %q", lineNo, name, domain)
				}
				name = strings.TrimPrefix(name, domain+".")
			}
			since, _ := strconv.Atoi(m[2])
			cur = &opSchema{Domain: domain, Name: name, Since: since, Deprecated: m[3] != ""}
			continue
		}
		if cur == nil {
			continue
		}
		if strings.HasPrefix(line, "#### ") {
			m := sectionRe.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("line %d: unrecognized section header %q", lineNo, line)
			}
			section = m[1]
			if m[2] != "" {
				lo, _ := strconv.Atoi(m[2])
				hi := unbounded
				if m[3] != "&#8734;" {
					hi, _ = strconv.Atoi(m[3])
				}
				switch section {
				case "Inputs":
					cur.MinIn, cur.MaxIn, cur.hasInRange = lo, hi, true
				case "Outputs":
					cur.MinOut, cur.MaxOut, cur.hasOutRange = lo, hi, true
				default:
					return nil, fmt.Errorf("line %d: unexpected range in %q", lineNo, line)
				}
			}
			continue
		}
		switch section {
		case "":
			desc = append(desc, line)
		case "Version":
			if strings.Contains(line, "No versioning maintained for experimental ops") {
				cur.Experimental = true
			}
			if m := sinceRe.FindStringSubmatch(line); m != nil {
				v, _ := strconv.Atoi(m[2])
				if v != cur.Since {
					return nil, fmt.Errorf("line %d: %s-%d says version %d", lineNo, cur.Name, cur.Since, v)
				}
				if (m[1] == "deprecated") != cur.Deprecated {
					return nil, fmt.Errorf("line %d: %s-%d: deprecation marks disagree", lineNo, cur.Name, cur.Since)
				}
			}
		case "Attributes", "Inputs", "Outputs", "Type Constraints":
			if strings.HasPrefix(line, "<dd>") {
				inDD = true
				ddText = []string{line}
				if strings.Contains(line, "</dd>") {
					finishDD()
				}
				continue
			}
			if !strings.HasPrefix(line, "<dt>") {
				continue
			}
			m := dtRe.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("line %d: unrecognized entry %q", lineNo, line)
			}
			name, tags, rest := m[1], m[2], m[3]
			var err error
			switch section {
			case "Attributes":
				var a attr
				a, err = parseAttr(name, tags, rest)
				cur.Attrs = append(cur.Attrs, a)
				lastAt = &cur.Attrs[len(cur.Attrs)-1]
			case "Inputs", "Outputs":
				var p param
				p, err = parseParam(name, tags, rest)
				if section == "Inputs" {
					cur.Inputs = append(cur.Inputs, p)
				} else {
					cur.Outputs = append(cur.Outputs, p)
				}
			case "Type Constraints":
				if tags != "" {
					err = fmt.Errorf("unexpected tags %q on a type constraint", tags)
				}
				cur.Constraints = append(cur.Constraints, constraint{Param: name, Allowed: splitTypes(rest)})
				lastTC = &cur.Constraints[len(cur.Constraints)-1]
			}
			if err != nil {
				return nil, fmt.Errorf("line %d: %s-%d: %w", lineNo, cur.Name, cur.Since, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading: %w", err)
	}
	if err := finishOp(); err != nil {
		return nil, err
	}
	return ops, nil
}

var attrTypes = map[string]string{
	"float": "AttrFloat", "int": "AttrInt", "string": "AttrString", "tensor": "AttrTensor",
	"graph": "AttrGraph", "sparse_tensor": "AttrSparseTensor", "type_proto": "AttrTypeProto",
	"list of floats": "AttrFloats", "list of ints": "AttrInts", "list of strings": "AttrStrings",
	"list of tensors": "AttrTensors", "list of graphs": "AttrGraphs",
	"list of sparse_tensors": "AttrSparseTensors", "list of type_protos": "AttrTypeProtos",
}

func parseAttr(name, tags, rest string) (attr, error) {
	if tags != "" {
		return attr{}, fmt.Errorf("attribute %s: unexpected tags %q", name, tags)
	}
	m := attrTypeRe.FindStringSubmatch(rest)
	if m == nil {
		return attr{}, fmt.Errorf("attribute %s: unrecognized type %q", name, rest)
	}
	t, ok := attrTypes[m[1]]
	if !ok {
		return attr{}, fmt.Errorf("attribute %s: unknown type %q", name, m[1])
	}
	a := attr{Name: name, Type: t, Required: m[2] == "required"}
	if strings.HasPrefix(m[2], "default is") {
		a.Default, a.HasDefault = m[3], true
	}
	return a, nil
}

func parseParam(name, tags, typ string) (param, error) {
	p := param{Name: name, Type: typ, Option: "Single", Homogeneous: true, Diff: "DiffUnknown"}
	if tags == "" {
		return p, nil
	}
	for _, t := range strings.Split(tags, ",") {
		switch strings.TrimSpace(t) {
		case "optional":
			p.Option = "Optional"
		case "variadic":
			p.Option = "Variadic"
		case "heterogeneous":
			p.Homogeneous = false
		case "differentiable":
			p.Diff = "Differentiable"
		case "non-differentiable":
			p.Diff = "NonDifferentiable"
		default:
			return p, fmt.Errorf("parameter %s: unknown tag %q", name, t)
		}
	}
	return p, nil
}

// splitTypes splits "map(int64, string), tensor(float)" at the top-level
// commas.
func splitTypes(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

// finalize derives arities and the summary and checks consistency.
func finalize(op *opSchema, desc []string) error {
	op.Summary = summarize(desc)
	if err := arity(op.Inputs, &op.MinIn, &op.MaxIn, op.hasInRange); err != nil {
		return fmt.Errorf("inputs: %w", err)
	}
	if err := arity(op.Outputs, &op.MinOut, &op.MaxOut, op.hasOutRange); err != nil {
		return fmt.Errorf("outputs: %w", err)
	}
	for _, p := range append(append([]param(nil), op.Inputs...), op.Outputs...) {
		if isTypeParam(p.Type) && !hasConstraint(op, p.Type) {
			return fmt.Errorf("parameter %s: type %q has no constraint", p.Name, p.Type)
		}
	}
	return nil
}

// isTypeParam reports whether a formal parameter's type string names a type
// parameter rather than a concrete type like "tensor(int64)" or "tensor".
func isTypeParam(t string) bool {
	return !strings.Contains(t, "(") && t != "tensor"
}

func hasConstraint(op *opSchema, name string) bool {
	for _, c := range op.Constraints {
		if c.Param == name {
			return true
		}
	}
	return false
}

// arity fills min/max from the parameter list (as OpSchema::Finalize does)
// and, when the spec printed a range, checks it and derives the MinArity of
// a trailing variadic parameter from it.
func arity(ps []param, lo, hi *int, hasRange bool) error {
	min, max := 0, 0
	for i := range ps {
		switch ps[i].Option {
		case "Single":
			max++
			min = max
			ps[i].MinArity = 1
		case "Optional":
			max++
		case "Variadic":
			if i != len(ps)-1 {
				return fmt.Errorf("variadic parameter %s is not the last", ps[i].Name)
			}
			if !hasRange {
				return fmt.Errorf("variadic parameter %s without a count range", ps[i].Name)
			}
			ps[i].MinArity = *lo - max
			if ps[i].MinArity < 0 {
				return fmt.Errorf("range %d - %d is below the %d fixed parameters", *lo, *hi, max)
			}
			min, max = *lo, unbounded
		}
	}
	if hasRange && (min != *lo || max != *hi) {
		return fmt.Errorf("range %d - %d disagrees with the parameters (%d - %d)", *lo, *hi, min, max)
	}
	*lo, *hi = min, max
	return nil
}

// summarize returns the first paragraph of the description, cut to about
// 240 characters at a sentence end.
func summarize(desc []string) string {
	var para []string
	for _, l := range desc {
		l = strings.TrimSpace(l)
		if l == "" {
			if len(para) > 0 {
				break
			}
			continue
		}
		para = append(para, l)
	}
	s := strings.Join(para, " ")
	s = html.UnescapeString(tagRe.ReplaceAllString(s, " "))
	s = strings.Join(strings.Fields(s), " ")
	const limit = 240
	if len(s) <= limit {
		return s
	}
	if i := strings.LastIndex(s[:limit], ". "); i > 40 {
		return s[:i+1]
	}
	cut := strings.LastIndex(s[:limit], " ")
	if cut < 0 {
		cut = limit
	}
	return s[:cut] + " ..."
}

// defaults returns the Go field assignments for an attribute's parsed
// default, or "" when the default is absent or not simple.
func defaults(a attr) (string, error) {
	if !a.HasDefault {
		return "", nil
	}
	v := a.Default
	switch a.Type {
	case "AttrInt":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "", fmt.Errorf("attribute %s: int default %q: %w", a.Name, v, err)
		}
		return fmt.Sprintf("DefaultParsed: true, DefaultInt: %d,", n), nil
	case "AttrFloat":
		f, err := parseFloat(v, a.Description)
		if err != nil {
			return "", fmt.Errorf("attribute %s: %w", a.Name, err)
		}
		return fmt.Sprintf("DefaultParsed: true, DefaultFloat: %s,", floatLit(f)), nil
	case "AttrString":
		return fmt.Sprintf("DefaultParsed: true, DefaultString: %q,", v), nil
	case "AttrInts", "AttrFloats", "AttrStrings":
		items, err := pyList(v)
		if err != nil {
			return "", fmt.Errorf("attribute %s: %w", a.Name, err)
		}
		var parts []string
		for _, it := range items {
			switch a.Type {
			case "AttrInts":
				n, err := strconv.ParseInt(it, 10, 64)
				if err != nil {
					return "", fmt.Errorf("attribute %s: ints default %q: %w", a.Name, v, err)
				}
				parts = append(parts, strconv.FormatInt(n, 10))
			case "AttrFloats":
				f, err := parseFloat(it, "")
				if err != nil {
					return "", fmt.Errorf("attribute %s: %w", a.Name, err)
				}
				parts = append(parts, floatLit(f))
			default:
				parts = append(parts, strconv.Quote(it))
			}
		}
		field := map[string]string{"AttrInts": "DefaultInts: []int64", "AttrFloats": "DefaultFloats: []float32", "AttrStrings": "DefaultStrings: []string"}[a.Type]
		return fmt.Sprintf("DefaultParsed: true, %s{%s},", field, strings.Join(parts, ", ")), nil
	}
	return "", nil
}

// parseFloat parses a float default as gen_doc.py prints it: rounded to 5
// decimals, or "(%e)" when long. Where the attribute description states
// the exact value ("default to 1.67326319217681884765625") and it rounds to
// the printed one, the exact value is used; "(±3.402823e+38)" is the
// printed form of ±FLT_MAX.
func parseFloat(v, desc string) (float64, error) {
	s := strings.TrimSuffix(strings.TrimPrefix(v, "("), ")")
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("float default %q: %w", v, err)
	}
	if math.Abs(f) >= 3.402823e38 && math.Abs(f) <= math.MaxFloat32*1.000001 {
		return math.Copysign(math.MaxFloat32, f), nil
	}
	if m := exactRe.FindStringSubmatch(desc); m != nil {
		if e, err := strconv.ParseFloat(m[1], 64); err == nil && math.Abs(math.Round(e*1e5)/1e5-f) < 1e-9 {
			return e, nil
		}
	}
	return f, nil
}

func floatLit(f float64) string {
	if f == math.MaxFloat32 {
		return "math.MaxFloat32"
	}
	if f == -math.MaxFloat32 {
		return "-math.MaxFloat32"
	}
	if f == 0 && math.Signbit(f) {
		return "float32(math.Copysign(0, -1))"
	}
	s := strconv.FormatFloat(float64(float32(f)), 'g', -1, 32)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// pyList parses a Python list repr of strings: ['0', '2', '3'].
func pyList(v string) ([]string, error) {
	s := strings.TrimSpace(v)
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return nil, fmt.Errorf("list default %q is not a list", v)
	}
	s = strings.TrimSpace(s[1 : len(s)-1])
	if s == "" {
		return nil, nil
	}
	var out []string
	for _, it := range strings.Split(s, ",") {
		it = strings.TrimSpace(it)
		if len(it) < 2 || (it[0] != '\'' && it[0] != '"') || it[len(it)-1] != it[0] {
			return nil, fmt.Errorf("list default %q: item %q is not quoted", v, it)
		}
		out = append(out, it[1:len(it)-1])
	}
	return out, nil
}

// emit writes the Go source.
func emit(ops []*opSchema, maxOpset map[string]int) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by onnxspec/internal/gen from the ONNX 1.22 Changelog.md and Changelog-ml.md. DO NOT EDIT.\n\n")
	b.WriteString("package onnxspec\n\n")
	usesMath := false
	// Shared type lists.
	lists := map[string]string{}
	var listOrder []string
	listVar := func(types []string) string {
		key := strings.Join(types, "\x00")
		if v, ok := lists[key]; ok {
			return v
		}
		v := fmt.Sprintf("tl%d", len(listOrder))
		lists[key] = v
		listOrder = append(listOrder, key)
		return v
	}
	var body bytes.Buffer
	body.WriteString("// schemaTable holds every operator version, sorted by domain, name and\n// since-version. It is read-only.\nvar schemaTable = []Schema{\n")
	for _, op := range ops {
		fmt.Fprintf(&body, "{Domain: %q, Name: %q, SinceVersion: %d,", op.Domain, op.Name, op.Since)
		if op.Deprecated {
			body.WriteString(" Deprecated: true,")
		}
		if op.Experimental {
			body.WriteString(" Experimental: true,")
		}
		fmt.Fprintf(&body, "\nSummary: %q,\n", op.Summary)
		writeParams(&body, "Inputs", op.Inputs)
		writeParams(&body, "Outputs", op.Outputs)
		if len(op.Attrs) > 0 {
			body.WriteString("Attributes: []Attribute{\n")
			for _, a := range op.Attrs {
				fmt.Fprintf(&body, "{Name: %q, Type: %s,", a.Name, a.Type)
				if a.Required {
					body.WriteString(" Required: true,")
				}
				if a.HasDefault {
					fmt.Fprintf(&body, " Default: %q, HasDefault: true,", a.Default)
				}
				d, err := defaults(a)
				if err != nil {
					return nil, fmt.Errorf("%s-%d: %w", op.Name, op.Since, err)
				}
				if strings.Contains(d, "math.") {
					usesMath = true
				}
				if d != "" {
					body.WriteString(" " + d)
				}
				body.WriteString("},\n")
			}
			body.WriteString("},\n")
		}
		if len(op.Constraints) > 0 {
			body.WriteString("TypeConstraints: []TypeConstraint{\n")
			for _, c := range op.Constraints {
				fmt.Fprintf(&body, "{Param: %q, Allowed: %s, Description: %q},\n", c.Param, listVar(c.Allowed), c.Description)
			}
			body.WriteString("},\n")
		}
		fmt.Fprintf(&body, "MinInputs: %s, MaxInputs: %s, MinOutputs: %s, MaxOutputs: %s},\n",
			count(op.MinIn), count(op.MaxIn), count(op.MinOut), count(op.MaxOut))
	}
	body.WriteString("}\n\n")

	if usesMath {
		b.WriteString("import \"math\"\n\n")
	}
	doms := make([]string, 0, len(maxOpset))
	for d := range maxOpset {
		doms = append(doms, d)
	}
	sort.Strings(doms)
	b.WriteString("// genMaxOpset is, per domain, the highest operator set version with a\n// \"## Version N\" section in the changelogs.\nvar genMaxOpset = map[string]int{\n")
	for _, d := range doms {
		fmt.Fprintf(&b, "%q: %d,\n", d, maxOpset[d])
	}
	b.WriteString("}\n\n")
	b.Write(body.Bytes())
	b.WriteString("// Type lists shared by the constraints of schemaTable.\nvar (\n")
	for _, key := range listOrder {
		types := strings.Split(key, "\x00")
		q := make([]string, len(types))
		for i, t := range types {
			q[i] = strconv.Quote(t)
		}
		fmt.Fprintf(&b, "%s = []string{%s}\n", lists[key], strings.Join(q, ", "))
	}
	b.WriteString(")\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("formatting generated code: %w", err)
	}
	return src, nil
}

func count(n int) string {
	if n == unbounded {
		return "Unbounded"
	}
	return strconv.Itoa(n)
}

func writeParams(b *bytes.Buffer, field string, ps []param) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintf(b, "%s: []FormalParameter{\n", field)
	for _, p := range ps {
		fmt.Fprintf(b, "{Name: %q, TypeStr: %q, Option: %s, MinArity: %d, Homogeneous: %t", p.Name, p.Type, p.Option, p.MinArity, p.Homogeneous)
		if p.Diff != "DiffUnknown" {
			fmt.Fprintf(b, ", Differentiability: %s", p.Diff)
		}
		b.WriteString("},\n")
	}
	b.WriteString("},\n")
}
