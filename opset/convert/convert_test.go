package convert

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/onnxspec"
)

// sharedDir finds ../shared beside the repository.
func sharedDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(repoRoot(t), "..", "shared")
}

// repoRoot finds the folder holding go.mod.
func repoRoot(t testing.TB) string { return testpaths.RepoRoot(t) }

func loadModel(t testing.TB, path string) *canonical.Model {
	t.Helper()
	m, err := readModel(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// readModel reads a model without memory-mapping it, so tests may convert
// many copies.
func readModel(path string) (*canonical.Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var mp onnxpb.ModelProto
	if err := proto.Unmarshal(data, &mp); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m, err := canonical.FromProto(&mp, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// checkAtOpset asserts that every ai.onnx node of g exists, undeprecated,
// at opset to.
func checkAtOpset(t *testing.T, name string, g *canonical.Graph, to int) {
	t.Helper()
	for _, n := range g.Nodes {
		if n.Domain == "" || n.Domain == "ai.onnx" {
			s, ok := onnxspec.Lookup("", n.OpType, to)
			if !ok || s.Deprecated {
				t.Errorf("%s: node %s does not exist at opset %d after conversion", name, n, to)
			}
		}
		for _, sg := range n.Subgraphs() {
			checkAtOpset(t, name, sg, to)
		}
	}
}

// TestConvertBackendModels converts every node test model to a spread of
// opsets and checks that each result only uses ops of the target and keeps
// the graph's outputs, and that refusals carry reasons.
func TestConvertBackendModels(t *testing.T) {
	root := filepath.Join(sharedDir(t), "onnx-v1.22", "backend-tests", "node")
	cases, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	targets := []int{7, 9, 11, 13, 17, 21, 27}
	var converted, refused, total int
	reasons := map[string]int{}
	for _, c := range cases {
		path := filepath.Join(root, c.Name(), "model.onnx")
		for _, to := range targets {
			m := loadModel(t, path)
			outs := len(m.Graph.Outputs)
			total++
			_, err := Convert(m, Options{To: to})
			var be *BlockedError
			switch {
			case errors.As(err, &be):
				refused++
				for _, b := range be.Blockers {
					if b.Reason == "" {
						t.Errorf("%s -> %d: blocker without a reason: %+v", c.Name(), to, b)
					}
					reasons[b.OpType]++
				}
			case err != nil:
				t.Fatalf("%s -> %d: %v", c.Name(), to, err)
			default:
				converted++
				if got := m.Opset(""); got != int64(to) && m.Opset("") != 0 {
					t.Errorf("%s -> %d: opset_import says %d", c.Name(), to, got)
				}
				if len(m.Graph.Outputs) != outs {
					t.Errorf("%s -> %d: %d outputs, had %d", c.Name(), to, len(m.Graph.Outputs), outs)
				}
				checkAtOpset(t, c.Name(), m.Graph, to)
				if _, err := m.ToProto(); err != nil {
					t.Errorf("%s -> %d: writing the result: %v", c.Name(), to, err)
				}
			}
		}
	}
	type kv struct {
		k string
		v int
	}
	var top []kv
	for k, v := range reasons {
		top = append(top, kv{k, v})
	}
	sort.Slice(top, func(i, j int) bool { return top[i].v > top[j].v })
	if len(top) > 15 {
		top = top[:15]
	}
	t.Logf("%d pairs: %d converted, %d refused; most refused ops: %v", total, converted, refused, top)
	if converted == 0 {
		t.Fatal("nothing converted")
	}
}

// TestFunctionOpsMatchSpec checks functionOps against the "Function"
// tables of Operators.md (ai.onnx domain).
func TestFunctionOpsMatchSpec(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(sharedDir(t), "onnx-v1.22", "docs", "Operators.md"))
	if err != nil {
		t.Fatal(err)
	}
	spec := map[string]bool{}
	inFunctions := false
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "|**Function**|"):
			inFunctions = true
			continue
		case strings.HasPrefix(line, "|**Operator**|") || strings.HasPrefix(line, "### "):
			inFunctions = false
		}
		if !inFunctions || !strings.HasPrefix(line, "|<a href=\"#") {
			continue
		}
		name := strings.TrimPrefix(line, "|<a href=\"#")
		name = name[:strings.IndexByte(name, '"')]
		if strings.Contains(name, ".") {
			continue // other domains
		}
		spec[name] = true
	}
	if len(spec) < 30 {
		t.Fatalf("parsed only %d function ops from Operators.md", len(spec))
	}
	for op := range spec {
		if !functionOps[op] {
			t.Errorf("Operators.md defines %s as a function; functionOps lacks it", op)
		}
	}
	for op := range functionOps {
		if !spec[op] {
			t.Errorf("functionOps lists %s, which Operators.md does not define as a function", op)
		}
	}
}
