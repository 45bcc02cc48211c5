package archtest

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/onnxconv/onnxconv/"

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

// known are the upward imports still left, each with the issue that
// removes it. A new upward import fails the test; an entry that no longer
// happens is logged, to be dropped.
var known = map[string]string{}

// imports lists the direct imports (inside the module) of every package,
// by path relative to the module, from `go list`.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
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

// TestImportGraph checks the layering: pipeline names no format (it
// depends on no importers/<format>, exporters/<format> or
// runtimes/<format> package, not even through the registries of
// built-ins: its callers assemble the Env, with builtinenv); no
// exporters/* or runtimes/* package imports importers or an importers/*
// package;
// formats/... imports no importers, exporters, runtimes or pipeline
// package; canonical/... depends on nothing of opset/convert.
func TestImportGraph(t *testing.T) {
	g := imports(t)
	seen := map[string]bool{}
	for _, imp := range g["pipeline"] {
		if format(imp) {
			t.Errorf("pipeline imports %s: reach formats through importers.Importer, exporters.Exporter and runtimes.Runtime (Env)", imp)
		}
	}
	pipelineNamesNoFormat(t, g)
	for pkg, imps := range g {
		if !under(pkg, "exporters") && !under(pkg, "runtimes") {
			continue
		}
		for _, imp := range imps {
			// importers itself counts too: what an exporter shares with
			// the importers (the option specs, the unsupported-op error)
			// lives below both (options, canonical/unsupported).
			if imp != "importers" && !under(imp, "importers") {
				continue
			}
			edge := pkg + " -> " + imp
			if why, ok := known[edge]; ok {
				seen[edge] = true
				t.Logf("known upward import %s (%s)", edge, why)
				continue
			}
			t.Errorf("%s: an exporter or runtime imports an importer package; move what both need below the roles (formats/)", edge)
		}
	}
	// formats/... is below the roles: it imports no importer, exporter,
	// runtime or pipeline package (what it needs from them moves down, as
	// fsys did).
	for pkg, imps := range g {
		if !under(pkg, "formats") {
			continue
		}
		for _, imp := range imps {
			for _, root := range []string{"importers", "exporters", "runtimes", "pipeline"} {
				if imp == root || under(imp, root) {
					t.Errorf("%s -> %s: a format package imports a role package; formats/ is shared by the roles and sits below them", pkg, imp)
				}
			}
		}
	}
	for edge := range known {
		if !seen[edge] {
			t.Logf("%s no longer happens: drop it from known", edge)
		}
	}
	// canonical/... must not depend on the version converter, even
	// indirectly.
	var walk func(pkg string, path []string)
	visited := map[string]bool{}
	walk = func(pkg string, path []string) {
		if visited[pkg] {
			return
		}
		visited[pkg] = true
		for _, imp := range g[pkg] {
			if imp == "opset/convert" || under(imp, "opset/convert") {
				t.Errorf("%s imports %s (via %s)", path[0], imp, strings.Join(append(path, imp), " -> "))
				continue
			}
			walk(imp, append(path, imp))
		}
	}
	for pkg := range g {
		if pkg == "canonical" || under(pkg, "canonical") {
			visited = map[string]bool{}
			walk(pkg, []string{pkg})
		}
	}
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

// pipelineNamesNoFormat fails for every format package and registry of
// built-ins that pipeline depends on, directly or not, with the chain of
// imports that reaches it (as `go list -deps ./pipeline` would list it).
func pipelineNamesNoFormat(t *testing.T, g map[string][]string) {
	t.Helper()
	from := map[string]string{"pipeline": ""}
	queue := []string{"pipeline"}
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		for _, imp := range g[pkg] {
			if _, ok := from[imp]; ok {
				continue
			}
			from[imp] = pkg
			if format(imp) || registry(imp) {
				chain := []string{imp}
				for p := pkg; p != ""; p = from[p] {
					chain = append([]string{p}, chain...)
				}
				t.Errorf("pipeline depends on %s (%s): it names no format; the callers build the Env (builtinenv)", imp, strings.Join(chain, " -> "))
				continue
			}
			queue = append(queue, imp)
		}
	}
	if len(from) < 5 {
		t.Errorf("pipeline has %d dependencies in the module: the walk is broken", len(from)-1)
	}
}
