package torchscript

import (
	"encoding/binary"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	fts "github.com/onnxconv/onnxconv/formats/torchscript"
)

// BatchError is a model whose graph cannot be given a dynamic batch size
// (-O dynamic_batch=true): what depends on the batch size otherwise than
// as a size.
type BatchError struct {
	File   string
	Detail string
}

func (e *BatchError) Error() string {
	return fmt.Sprintf("%s: the batch size cannot be made dynamic: %s; convert without dynamic_batch (the batch of -O shapes is then fixed)", e.File, e.Detail)
}

// convertDynamicBatch converts the method twice, with the first dim of
// every tensor input at B and at B+1, and keeps the graph when the two
// differ only in int64 constants that hold B (or a multiple of it) where
// the other holds B+1: those become computed from the first input's batch
// size, and the inputs' and outputs' batch dims become "N". Anything
// else that differs (a float constant, a node, an attribute) is a
// *BatchError.
func convertDynamicBatch(a *fts.Archive, o Options) (*canonical.Model, []string, error) {
	if len(o.Shapes) == 0 {
		return nil, nil, &BatchError{File: a.File, Detail: "the method has no tensor input"}
	}
	b1 := o.Shapes[0]
	if len(b1) == 0 {
		return nil, nil, &BatchError{File: a.File, Detail: "the first input is 0-d"}
	}
	B1 := b1[0]
	o2 := o
	o2.Shapes = nil
	for _, s := range o.Shapes {
		if len(s) == 0 || s[0] != B1 {
			return nil, nil, &BatchError{File: a.File, Detail: "every tensor input must start with the same batch dim"}
		}
		t := slices.Clone(s)
		t[0]++
		o2.Shapes = append(o2.Shapes, t)
	}
	m1, warns, err := convertStatic(a, o)
	if err != nil {
		return nil, nil, err
	}
	m2, _, err := convertStatic(a, o2)
	if err != nil {
		return nil, nil, err
	}
	// The two graphs are compared in their encoded form; m1 is then
	// edited in place.
	p1, err := m1.ToProto()
	if err != nil {
		return nil, nil, err
	}
	p2, err := m2.ToProto()
	if err != nil {
		return nil, nil, err
	}
	g1, g2 := p1.Graph, p2.Graph
	bad := func(format string, args ...any) error {
		return &BatchError{File: a.File, Detail: fmt.Sprintf(format, args...)}
	}
	if len(g1.Node) != len(g2.Node) || len(g1.Initializer) != len(g2.Initializer) || len(g1.Input) != len(g2.Input) {
		return nil, nil, bad("the graph's structure changes with the batch size")
	}
	for i := range g1.Node {
		if !proto.Equal(g1.Node[i], g2.Node[i]) {
			return nil, nil, bad("node %s changes with the batch size", g1.Node[i].GetName())
		}
	}
	if len(g1.Input) > len(o.Shapes) {
		return nil, nil, bad("the module has state inputs")
	}
	var changed []batchConst
	for i, t1 := range g1.Initializer {
		t2 := g2.Initializer[i]
		if t1.GetName() != t2.GetName() || !slices.Equal(t1.Dims, t2.Dims) || t1.GetDataType() != t2.GetDataType() {
			return nil, nil, bad("constant %s changes with the batch size", t1.GetName())
		}
		if string(t1.RawData) == string(t2.RawData) {
			continue
		}
		if canonical.DataType(t1.GetDataType()) != canonical.Int64 || len(t1.RawData) != len(t2.RawData) || len(t1.RawData)%8 != 0 {
			return nil, nil, bad("constant %s (%s) changes with the batch size", t1.GetName(), canonical.DataType(t1.GetDataType()))
		}
		n := len(t1.RawData) / 8
		base := make([]int64, n)
		k := make([]int64, n)
		for j := 0; j < n; j++ {
			v1 := int64(binary.LittleEndian.Uint64(t1.RawData[8*j:]))
			v2 := int64(binary.LittleEndian.Uint64(t2.RawData[8*j:]))
			switch {
			case v1 == v2:
				base[j] = v1
			case v1%B1 == 0 && v1/B1 == v2-v1 && v2-v1 != 0:
				k[j] = v1 / B1 // v = k·batch
			default:
				return nil, nil, bad("constant %s holds %d at batch %d and %d at batch %d", t1.GetName(), v1, B1, v2, B1+1)
			}
		}
		changed = append(changed, batchConst{name: t1.GetName(), dims: t1.Dims, k: k, base: base})
	}
	if err := computeFromBatch(m1, changed); err != nil {
		return nil, nil, err
	}
	g := m1.Graph
	for _, vs := range [][]*canonical.Value{g.Inputs, g.Outputs} {
		for _, v := range vs {
			dt, dims, hasShape, ok := canonical.TensorTypeOf(v.Type)
			if ok && hasShape && len(dims) > 0 && dims[0].Known && dims[0].Value == B1 {
				dims[0] = canonical.Dim{Param: "N"}
				v.Type = canonical.TensorTypeDims(dt, dims)
			}
		}
	}
	return m1, warns, nil
}

// batchConst is an int64 constant that becomes k·batch + base.
type batchConst struct {
	name          string
	dims, k, base []int64
}

// computeFromBatch replaces each constant of cs (an initializer of m's
// main graph) by nodes computing k·batch + base, the batch being the first
// dim of the first graph input; the nodes come first in the graph.
func computeFromBatch(m *canonical.Model, cs []batchConst) error {
	if len(cs) == 0 {
		return nil
	}
	g := m.Graph
	e := build.On(g, canonical.NewNamer(m), "batch")
	shape := e.Op("Shape", []*canonical.Value{g.Inputs[0]})
	batch := e.Op("Gather", []*canonical.Value{shape, e.Int64s(nil, 0)}, canonical.IntAttr("axis", 0))
	for _, c := range cs {
		old := g.Lookup(c.name)
		if old == nil || old.Const == nil {
			return fmt.Errorf("constant %s: not an initializer of the main graph", c.name)
		}
		e.Base = c.name
		prod := e.Op("Mul", []*canonical.Value{batch, e.Const("k", canonical.Int64Tensor("", c.dims, c.k))})
		sum := e.Op("Add", []*canonical.Value{prod, e.Const("base", canonical.Int64Tensor("", c.dims, c.base))})
		if err := e.Err(); err != nil {
			return err
		}
		sum.Type = old.Type
		g.ReplaceAllUsesWith(old, sum)
		g.RemoveInitializer(old)
		if err := g.RenameValue(sum, c.name); err != nil {
			return err
		}
	}
	if err := e.Err(); err != nil {
		return err
	}
	added := e.Added
	var first *canonical.Node
	for _, n := range g.Nodes {
		if !slices.Contains(added, n) {
			first = n
			break
		}
	}
	g.MoveNodes(added, first)
	return nil
}
