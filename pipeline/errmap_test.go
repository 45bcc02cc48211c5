package pipeline

import (
	"context"
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes/node"
	"github.com/onnxconv/onnxconv/runtimes/ortnode"
)

// plantInResult converts the transformer block to opset 17 and scales the
// weight of the n-th MatMul of the result by 1.5: the planted bug. It
// returns the planted file and the node's name.
func plantInResult(t *testing.T, n int) (string, string) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "block17.onnx")
	if _, err := Opset(context.Background(), blockModel, out, Options{Env: builtins(), Opset: 17}); err != nil {
		t.Fatal(err)
	}
	m, err := canonical.Load(out, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	order, err := m.Graph.TopoSort()
	if err != nil {
		t.Fatal(err)
	}
	var node string
	for _, nd := range order {
		if nd.OpType != "MatMul" || nd.Inputs[1].Const == nil {
			continue
		}
		if n--; n > 0 {
			continue
		}
		w := nd.Inputs[1].Const
		raw, err := w.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		scaled := make([]byte, len(raw))
		for i := 0; i+4 <= len(raw); i += 4 {
			binary.LittleEndian.PutUint32(scaled[i:], math.Float32bits(1.5*math.Float32frombits(binary.LittleEndian.Uint32(raw[i:]))))
		}
		w.SetBytes(scaled)
		node = nd.Name
		break
	}
	if node == "" {
		t.Fatal("the block has too few MatMul nodes with a constant weight")
	}
	planted := filepath.Join(dir, "planted.onnx")
	if err := canonical.Save(planted, m, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	return planted, node
}

// An opset conversion (21 -> 17) whose result has one MatMul weight
// changed: --map ranks that MatMul first, on the executor against the
// executor and on ONNX Runtime (the source) against the executor (the
// result).
func TestMapPlantedOpsetConversion(t *testing.T) {
	planted, want := plantInResult(t, 2)
	for _, rts := range [][]string{nil, {"onnxruntime", "executor"}} {
		name := "executor-executor"
		if rts != nil {
			name = "onnxruntime-executor"
		}
		t.Run(name, func(t *testing.T) {
			if rts != nil {
				_, modules := testpaths.Node(t, ortnode.Package)
				t.Setenv(node.EnvNodeModules, modules)
			}
			rep, err := Verify(context.Background(), blockModel, planted, CompareOptions{
				VerifyOptions: VerifyOptions{Samples: 1, Map: true}, Runtimes: rts, Env: builtins()})
			if err != nil {
				t.Fatal(err)
			}
			m := rep.Map
			if m == nil {
				t.Fatalf("no map: %q", rep.Notes)
			}
			if rep.Equivalent {
				t.Errorf("the planted weight left the result equivalent: %s", rep.Summary)
			}
			first := m.Nodes[m.Ranked[0]]
			if first.Node != want || !first.Jump {
				t.Fatalf("ranked first %s (%s, jump %v), want %s: %s", first.Node, first.OpType, first.Jump, want, m.Summary())
			}
			if m.Compared < 20 {
				t.Errorf("%d nodes compared (%d without a counterpart): the names of the converted graph were not matched", m.Compared, m.Unmatched)
			}
			t.Logf("%s; %d compared, %d unmatched; A %s", m.Summary(), m.Compared, m.Unmatched, rep.A.ComputedBy)
		})
	}
}
