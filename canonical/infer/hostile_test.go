package infer

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/check"
)

// TestHostileAttributes corrupts the integer attributes of every node
// test model (huge, negative, out-of-range values) and checks that Infer
// neither panics nor fails: bad nodes become issues.
func TestHostileAttributes(t *testing.T) {
	root := backendDir(t, "node")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	bad := []int64{-1 << 40, -7, 0, 1 << 40, math.MaxInt64}
	for k, e := range entries {
		m, err := canonical.Load(filepath.Join(root, e.Name(), "model.onnx"), canonical.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		v := bad[k%len(bad)]
		var corrupt func(g *canonical.Graph)
		corrupt = func(g *canonical.Graph) {
			for _, n := range g.Nodes {
				for _, a := range n.Attributes {
					switch a.Type {
					case canonical.AttrInt:
						a.I = v
					case canonical.AttrInts:
						for i := range a.Ints {
							a.Ints[i] = v
						}
					}
				}
				for _, sg := range n.Subgraphs() {
					corrupt(sg)
				}
			}
		}
		corrupt(m.Graph)
		// Integer inputs get hostile values too (shapes, axes, counts).
		vals := map[string]*canonical.Tensor{}
		for _, in := range m.Graph.Inputs {
			dt, s, ok := tensorOf(in.Type)
			if !ok || dt != canonical.Int64 || !s.ranked || s.rank() > 1 {
				continue
			}
			n := int64(1)
			dims := []int64{}
			if s.rank() == 1 {
				if !s.dims[0].Known || s.dims[0].Value > 16 {
					continue
				}
				n = s.dims[0].Value
				dims = []int64{n}
			}
			raw := make([]byte, 8*n)
			for i := int64(0); i < n; i++ {
				binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
			}
			vals[in.Name] = canonical.NewTensor(in.Name, canonical.Int64, dims, raw)
		}
		if _, err := Infer(m, Options{SymbolicNames: true, InputValues: vals}); err != nil {
			t.Errorf("%s: %v", e.Name(), err)
		}
		for _, p := range check.Check(m) {
			if strings.Contains(p.Msg, "internal error") {
				t.Errorf("%s: check: %s", e.Name(), p)
			}
		}
	}
}
