package archtest

import (
	"strings"
	"testing"
)

// floors are the floors of docs/architecture.md, from the ground up: a
// package stands on the floor of the longest prefix listed (a folder, or
// one package as importers/builtin), and imports only packages on its own
// floor or below.
var floors = [][]string{
	1:  {"onnxspec", "options", "version", "internal"},
	2:  {"canonical", "fsys"},
	3:  {"executor", "formats", "opset"},
	4:  {"verify", "importers"},
	5:  {"plugins", "passes", "bench"},
	6:  {"exporters", "runtimes", "importers/builtin"},
	7:  {"pipeline"},
	8:  {"builtinenv"},
	9:  {"batch"},
	10: {"serve"},
	11: {"cmd", "examples"},
}

// floorOf returns the floor of pkg, 0 when no prefix of floors holds it.
func floorOf(pkg string) int {
	floor, longest := 0, -1
	for f, prefixes := range floors {
		for _, p := range prefixes {
			if (pkg == p || strings.HasPrefix(pkg, p+"/")) && len(p) > longest {
				floor, longest = f, len(p)
			}
		}
	}
	return floor
}

// TestFloors checks that every package of the module stands on a floor
// and imports nothing on a higher one: then no chain of imports climbs
// either.
func TestFloors(t *testing.T) {
	g := imports(t)
	for pkg, imps := range g {
		f := floorOf(pkg)
		if f == 0 {
			t.Errorf("%s stands on no floor: add it to floors and to docs/architecture.md", pkg)
			continue
		}
		for _, imp := range imps {
			if fi := floorOf(imp); fi > f {
				t.Errorf("%s (floor %d) imports %s (floor %d): an arrow up; move what it needs down", pkg, f, imp, fi)
			}
		}
	}
}

// TestFloorsCatch checks that the floors see an arrow up: imports the
// repository had before onnxspec and verify/backendtest/cmd/runcase (fsys
// -> canonical stays on one floor: the leaves rule forbids it).
func TestFloorsCatch(t *testing.T) {
	for _, e := range [][2]string{{"canonical/check", "opset/convert"}, {"executor/cmd/runcase", "verify/backendtest"}, {"runtimes/tflite", "pipeline"}} {
		if floorOf(e[1]) <= floorOf(e[0]) {
			t.Errorf("%s -> %s: floors %d -> %d, not an arrow up", e[0], e[1], floorOf(e[0]), floorOf(e[1]))
		}
	}
}
