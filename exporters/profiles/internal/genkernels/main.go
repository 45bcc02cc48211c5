// Command genkernels writes a Go kernel table (exporters/profiles) from
// the CPUExecutionProvider section of ONNX Runtime's docs/OperatorKernels.md,
// which ONNX Runtime generates from its registered kernels
// (tools/python/gen_opkernel_doc.py). Only the ai.onnx and ai.onnx.ml
// domains are kept, and only tensor types.
//
// The document is read from a file (-in) or from a git clone of
// github.com/microsoft/onnxruntime at a tag or commit (-repo, -rev), so
// that a table names exactly what it was made from:
//
//	go run ./internal/genkernels -repo ~/src/onnxruntime -rev v1.13.1 -table ort113 -release 1.13.1 -out kernels_ort113_gen.go
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

func main() {
	in := flag.String("in", "", "OperatorKernels.md to read")
	repo := flag.String("repo", "", "git clone of microsoft/onnxruntime to read docs/OperatorKernels.md from (with -rev)")
	rev := flag.String("rev", "", "tag or commit of -repo")
	table := flag.String("table", "", "table name (ort113): the function is kernels<NAME upper-cased>")
	release := flag.String("release", "", "ONNX Runtime release the document belongs to")
	source := flag.String("source", "", "URL of the document (default: GitHub URL of -rev)")
	out := flag.String("out", "", "Go file to write")
	flag.Parse()
	if err := run(*in, *repo, *rev, *table, *release, *source, *out); err != nil {
		fmt.Fprintln(os.Stderr, "genkernels:", err)
		os.Exit(1)
	}
}

func run(in, repo, rev, table, release, source, out string) error {
	if table == "" || release == "" || out == "" {
		return errors.New("-table, -release and -out are required")
	}
	var doc []byte
	var err error
	switch {
	case in != "":
		doc, err = os.ReadFile(in)
	case repo != "" && rev != "":
		doc, err = exec.Command("git", "-C", repo, "show", rev+":docs/OperatorKernels.md").Output()
		if source == "" {
			source = "https://github.com/microsoft/onnxruntime/blob/" + rev + "/docs/OperatorKernels.md"
		}
	default:
		return errors.New("give -in FILE, or -repo DIR and -rev REV")
	}
	if err != nil {
		return fmt.Errorf("reading the kernel document: %w", err)
	}
	if source == "" {
		return errors.New("-source is required with -in")
	}
	rows, err := parse(doc)
	if err != nil {
		return err
	}
	src, err := render(rows, table, release, source)
	if err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}

type kvar struct {
	name  string
	types []string
}

type row struct {
	domain   string
	op       string
	from, to int
	vars     []kvar
}

var (
	domainRe = regexp.MustCompile(`^\|\*\*Operator Domain:\*\* \*([^*]+)\*\|`)
	varRe    = regexp.MustCompile(`\*\*([A-Za-z0-9_]+)\*\* = (.*)$`)
	tensorRe = regexp.MustCompile(`^tensor\(([a-z0-9]+)\)$`)
)

// parse reads the CPUExecutionProvider section.
func parse(doc []byte) ([]row, error) {
	lines := strings.Split(string(doc), "\n")
	start, end := -1, len(lines)
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if l == `<a name="cpuexecutionprovider"/>` {
			start = i
		} else if start >= 0 && strings.HasPrefix(l, `<a name="`) {
			end = i
			break
		}
	}
	if start < 0 {
		return nil, errors.New(`no CPUExecutionProvider section (<a name="cpuexecutionprovider"/>)`)
	}
	var rows []row
	domain, op := "", ""
	for i := start; i < end; i++ {
		l := strings.TrimSpace(lines[i])
		if m := domainRe.FindStringSubmatch(l); m != nil {
			domain, op = m[1], ""
			continue
		}
		if !strings.HasPrefix(l, "|") || domain == "" {
			continue
		}
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(l, "|"), "|"), "|")
		if len(cells) != 4 {
			continue
		}
		if name := strings.TrimSpace(cells[0]); name != "" {
			op = name
		}
		if op == "" || strings.TrimSpace(cells[2]) == "" {
			continue
		}
		from, to, err := parseVersion(strings.TrimSpace(cells[2]))
		if err != nil {
			return nil, fmt.Errorf("line %d (%s): %w", i+1, op, err)
		}
		if domain != "ai.onnx" && domain != "ai.onnx.ml" {
			continue
		}
		r := row{domain: domain, op: op, from: from, to: to}
		for _, part := range strings.Split(cells[3], "<br/>") {
			m := varRe.FindStringSubmatch(strings.TrimSpace(part))
			if m == nil {
				continue
			}
			v := kvar{name: m[1]}
			for _, t := range strings.Split(m[2], ",") {
				if tm := tensorRe.FindStringSubmatch(strings.TrimSpace(t)); tm != nil {
					v.types = append(v.types, tm[1])
				}
			}
			if len(v.types) > 0 {
				r.vars = append(r.vars, v)
			}
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, errors.New("the CPUExecutionProvider section has no ai.onnx kernels")
	}
	return rows, nil
}

// parseVersion reads "13+", "13" and "[6, 12]".
func parseVersion(s string) (from, to int, err error) {
	switch {
	case strings.HasSuffix(s, "+"):
		from, err = strconv.Atoi(strings.TrimSuffix(s, "+"))
	case strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]"):
		a, b, ok := strings.Cut(strings.Trim(s, "[]"), ",")
		if !ok {
			return 0, 0, fmt.Errorf("bad version range %q", s)
		}
		if from, err = strconv.Atoi(strings.TrimSpace(a)); err == nil {
			to, err = strconv.Atoi(strings.TrimSpace(b))
		}
	default:
		from, err = strconv.Atoi(s)
		to = from
	}
	if err != nil || from < 1 || (to != 0 && to < from) {
		return 0, 0, fmt.Errorf("bad version %q", s)
	}
	return from, to, nil
}

// typeConst is the name of the TypeSet constant of an ONNX type name.
func typeConst(t string) string { return "t" + strings.ToUpper(t[:1]) + t[1:] }

var known = map[string]bool{
	"float": true, "uint8": true, "int8": true, "uint16": true, "int16": true, "int32": true, "int64": true,
	"string": true, "bool": true, "float16": true, "double": true, "uint32": true, "uint64": true,
	"complex64": true, "complex128": true, "bfloat16": true, "float8e4m3fn": true, "float8e4m3fnuz": true,
	"float8e5m2": true, "float8e5m2fnuz": true, "uint4": true, "int4": true, "float4e2m1": true,
	"float8e8m0": true, "uint2": true, "int2": true,
}

func render(rows []row, table, release, source string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by genkernels from %s; DO NOT EDIT.\n\n", source)
	b.WriteString("package profiles\n\n")
	fn := "kernels" + strings.ToUpper(table)
	fmt.Fprintf(&b, "// %s is the CPUExecutionProvider kernel table of ONNX Runtime %s\n// (ai.onnx and ai.onnx.ml), from %s.\n", fn, release, source)
	fmt.Fprintf(&b, "func %s() *KernelTable {\n\treturn &KernelTable{Name: %q, Release: %q, Source: %q, Kernels: []Kernel{\n", fn, table, release, source)
	dom := func(d string) string {
		if d == "ai.onnx" {
			return ""
		}
		return d
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "\t\t{Domain: %q, Op: %q, From: %d, To: %d", dom(r.domain), r.op, r.from, r.to)
		if len(r.vars) > 0 {
			b.WriteString(", Vars: []KernelVar{")
			for i, v := range r.vars {
				if i > 0 {
					b.WriteString(", ")
				}
				ts := append([]string(nil), v.types...)
				sort.Strings(ts)
				var cs []string
				for _, t := range ts {
					if !known[t] {
						return nil, fmt.Errorf("%s: unknown type tensor(%s)", r.op, t)
					}
					cs = append(cs, typeConst(t))
				}
				fmt.Fprintf(&b, "{%q, %s}", v.name, strings.Join(cs, " | "))
			}
			b.WriteString("}")
		}
		b.WriteString("},\n")
	}
	b.WriteString("\t}}\n}\n")
	return format.Source(b.Bytes())
}
