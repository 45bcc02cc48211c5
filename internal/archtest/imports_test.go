package archtest

import (
	"bufio"
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/onnxconv/onnxconv/"

// A rule keeps a set of packages from depending on another set, directly
// or through any chain of imports (as `go list -deps` lists them).
type rule struct {
	// name says what the rule keeps, as docs/architecture.md states it.
	name string
	// from tells the packages the rule constrains; to, what they must not
	// reach.
	from, to func(pkg string) bool
	// fix says what to do instead, for the error.
	fix string
	// known are the imports ("plugins -> importers") through which the
	// rule is still broken, each with why and what removes it: the walk
	// does not follow them, and one that no longer happens fails the
	// test, to be dropped.
	known map[string]string
	// breaks is an import that violates the rule (the one this
	// repository had before the rule, where there was one): the test adds
	// it to the real graph, straight and through a relay, and the rule
	// must report it.
	breaks [2]string
}

// rules are the layering rules of docs/architecture.md that the compiler
// does not enforce.
var rules = []rule{
	{
		name:   "pipeline names no format",
		from:   is("pipeline"),
		to:     func(p string) bool { return format(p) || registry(p) },
		fix:    "reach formats through importers.Importer, exporters.Exporter and runtimes.Runtime; the callers build the Env (builtinenv)",
		breaks: [2]string{"pipeline", "importers/tflite"},
	},
	{
		name:   "exporters and runtimes are below no importer",
		from:   func(p string) bool { return under(p, "exporters") || under(p, "runtimes") },
		to:     within("importers"),
		fix:    "move what both roles need below them (formats/, options, canonical/unsupported)",
		breaks: [2]string{"exporters/tflite", "importers/tflite"},
	},
	{
		name:   "formats/ is below the roles",
		from:   func(p string) bool { return under(p, "formats") },
		to:     anyOf(within("importers"), within("exporters"), within("runtimes"), within("pipeline")),
		fix:    "formats/ is shared by the roles and sits below them: move what it needs from them down, as fsys did",
		breaks: [2]string{"formats/keras", "importers/keras"},
	},
	{
		name:   "canonical is below the version converter",
		from:   within("canonical"),
		to:     within("opset"),
		fix:    "what canonical needs of the operator schemas lives in the leaf onnxspec",
		breaks: [2]string{"canonical/check", "opset/convert"},
	},
	{
		name:   "the executor is below verify",
		from:   within("executor"),
		to:     within("verify"),
		fix:    "a tool that drives the executor through verify's loaders sits under verify/ (verify/backendtest/cmd/runcase)",
		breaks: [2]string{"executor", "verify/backendtest"},
	},
	{
		name:   "a role's test helper imports no registry of built-ins",
		from:   helper,
		to:     registry,
		fix:    "the registry imports every format of its role, whose tests import the helper: take the registry (or the importer) from the caller",
		breaks: [2]string{"importers/trees/treetest", "importers/builtin"},
	},
	{
		name:   "the leaves import nothing of the module but leaves",
		from:   leaf,
		to:     func(p string) bool { return !leaf(p) },
		fix:    "a leaf is imported from every floor: move the helper it needs down into a leaf (internal/bytesize, say)",
		breaks: [2]string{"fsys", "canonical"},
	},
}

// neutral are the packages under importers/, exporters/ and runtimes/
// that name no format: the registries of built-ins and the shared
// target machinery.
var neutral = map[string]bool{
	"importers/builtin":  true,
	"exporters/builtin":  true,
	"runtimes/builtin":   true,
	"exporters/adapt":    true,
	"exporters/profiles": true,
}

// leaves are the packages at the ground floor besides internal/...: every
// other floor may import them, and they import only each other.
var leaves = map[string]bool{
	"onnxspec": true,
	"fsys":     true,
	"options":  true,
	"version":  true,
}

func is(root string) func(string) bool { return func(p string) bool { return p == root } }

// within tells whether a package is root or below it.
func within(root string) func(string) bool {
	return func(p string) bool { return p == root || under(p, root) }
}

func anyOf(fs ...func(string) bool) func(string) bool {
	return func(p string) bool {
		return slices.ContainsFunc(fs, func(f func(string) bool) bool { return f(p) })
	}
}

// under tells whether pkg is a package below root ("importers/tflite" is
// under "importers"; "importers" itself is not).
func under(pkg, root string) bool { return strings.HasPrefix(pkg, root+"/") }

// format tells whether pkg is a format-specific package of importers/,
// exporters/ or runtimes/.
func format(pkg string) bool {
	for _, root := range []string{"importers", "exporters", "runtimes"} {
		if under(pkg, root) && !neutral[pkg] {
			return true
		}
	}
	return false
}

// registry tells whether pkg is a registry of built-ins
// (importers/builtin, exporters/builtin, runtimes/builtin), which imports
// every format of its role.
func registry(pkg string) bool {
	for _, root := range []string{"importers", "exporters", "runtimes"} {
		if pkg == root+"/builtin" {
			return true
		}
	}
	return false
}

// helper tells whether pkg is a test helper of a role: a package under
// importers/, exporters/ or runtimes/ whose name ends in "test"
// (importers/importertest, importers/trees/treetest).
func helper(pkg string) bool {
	return (under(pkg, "importers") || under(pkg, "exporters") || under(pkg, "runtimes")) &&
		strings.HasSuffix(filepath.Base(pkg), "test")
}

// leaf tells whether pkg is on the ground floor: a leaf or internal/....
func leaf(pkg string) bool { return leaves[pkg] || under(pkg, "internal") }

// imports lists the direct imports (inside the module) of every package,
// by path relative to the module, from `go list`.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
	}
	m := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], module) {
			continue
		}
		pkg := strings.TrimPrefix(f[0], module)
		m[pkg] = nil
		for _, imp := range f[1:] {
			if rel, ok := strings.CutPrefix(imp, module); ok {
				m[pkg] = append(m[pkg], rel)
			}
		}
	}
	if len(m) < 10 {
		t.Fatalf("go list found %d packages", len(m))
	}
	return m
}

// violations lists, for every package the rule constrains, each package
// it must not reach that it does reach, as the chain of imports that gets
// there ("canonical/check -> opset/convert"). The walk stops at a
// forbidden package, so one violation is told once per constrained
// package, and it does not follow the rule's known imports: crossed
// lists those it met.
func (r rule) violations(g map[string][]string) (out []string, crossed map[string]bool) {
	crossed = map[string]bool{}
	pkgs := make([]string, 0, len(g))
	for pkg := range g {
		pkgs = append(pkgs, pkg)
	}
	slices.Sort(pkgs)
	for _, pkg := range pkgs {
		if !r.from(pkg) {
			continue
		}
		from := map[string]string{pkg: ""}
		queue := []string{pkg}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			for _, imp := range g[p] {
				if _, ok := r.known[p+" -> "+imp]; ok {
					crossed[p+" -> "+imp] = true
					continue
				}
				if _, ok := from[imp]; ok {
					continue
				}
				from[imp] = p
				if r.to(imp) {
					chain := []string{imp}
					for q := p; q != ""; q = from[q] {
						chain = append([]string{q}, chain...)
					}
					out = append(out, strings.Join(chain, " -> "))
					continue
				}
				queue = append(queue, imp)
			}
		}
	}
	return out, crossed
}

// TestImportGraph checks every rule on the module's import graph.
func TestImportGraph(t *testing.T) {
	g := imports(t)
	for _, r := range rules {
		n := 0
		for pkg := range g {
			if r.from(pkg) {
				n++
			}
		}
		if n == 0 {
			t.Errorf("%s: no package of the module is constrained: the rule has gone stale", r.name)
		}
		bad, crossed := r.violations(g)
		for _, v := range bad {
			t.Errorf("%s: %s; %s", r.name, v, r.fix)
		}
		for edge, why := range r.known {
			if crossed[edge] {
				t.Logf("%s: known crossing %s (%s)", r.name, edge, why)
			} else {
				t.Errorf("%s: the known crossing %s no longer happens: drop it from the rule", r.name, edge)
			}
		}
	}
}

// TestRulesCatch adds to the real graph the import that breaks each rule,
// once straight and once through a package that no rule forbids, and
// checks that the rule reports it: a rule that matches nothing, or that
// sees only direct imports, fails here.
func TestRulesCatch(t *testing.T) {
	g := imports(t)
	const relay = "internal/archtest/relay"
	for _, r := range rules {
		a, b := r.breaks[0], r.breaks[1]
		for _, via := range [][]string{{a, b}, {a, relay, b}} {
			h := make(map[string][]string, len(g)+2)
			for pkg, imps := range g {
				h[pkg] = slices.Clone(imps)
			}
			for i := 0; i+1 < len(via); i++ {
				h[via[i]] = append(h[via[i]], via[i+1])
			}
			if _, ok := h[b]; !ok {
				h[b] = nil
			}
			want := strings.Join(via, " -> ")
			if got, _ := r.violations(h); !slices.Contains(got, want) {
				t.Errorf("%s: adding %s, the rule reports %q, want %q among them", r.name, want, got, want)
			}
		}
	}
}
