package torchscript

import (
	"encoding/binary"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	fts "github.com/onnxconv/onnxconv/formats/torchscript"
	"github.com/onnxconv/onnxconv/importers/tfops/onnxb"
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
func convertDynamicBatch(a *fts.Archive, o Options) (*onnxpb.ModelProto, []string, error) {
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
	g1, g2 := m1.Graph, m2.Graph
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
	b := onnxb.New(int(m1.OpsetImport[0].GetVersion()))
	reserveNames(b, g1)
	for _, t := range g1.Initializer {
		b.Reserve(t.GetName())
	}
	for _, v := range g1.Input {
		b.Reserve(v.GetName())
	}
	shape := b.Op("Shape", "batch_shape", []string{g1.Input[0].GetName()})
	batch := b.Op("Gather", "batch", []string{shape, b.I64("zero", nil, []int64{0})}, onnxb.Int("axis", 0))
	var keep []*onnxpb.TensorProto
	for i, t1 := range g1.Initializer {
		t2 := g2.Initializer[i]
		if t1.GetName() != t2.GetName() || !slices.Equal(t1.Dims, t2.Dims) || t1.GetDataType() != t2.GetDataType() {
			return nil, nil, bad("constant %s changes with the batch size", t1.GetName())
		}
		if string(t1.RawData) == string(t2.RawData) {
			keep = append(keep, t1)
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
		prod := b.Op("Mul", t1.GetName()+"_k", []string{batch, b.I64("k", t1.Dims, k)})
		b.OpTo("Add", t1.GetName(), []string{prod, b.I64("base", t1.Dims, base)})
	}
	g1.Initializer = append(keep, b.Inits...)
	g1.Node = append(b.Nodes, g1.Node...)
	for _, vs := range [][]*onnxpb.ValueInfoProto{g1.Input, g1.Output} {
		for _, v := range vs {
			sh := v.GetType().GetTensorType().GetShape()
			if sh != nil && len(sh.Dim) > 0 && sh.Dim[0].GetDimValue() == B1 {
				sh.Dim[0] = &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "N"}}
			}
		}
	}
	return m1, warns, nil
}

// reserveNames marks every value name of g and its subgraphs as taken.
func reserveNames(b *onnxb.Builder, g *onnxpb.GraphProto) {
	for _, n := range g.Node {
		b.Reserve(n.Output...)
		for _, at := range n.Attribute {
			if at.G != nil {
				reserveNames(b, at.G)
			}
			for _, sg := range at.Graphs {
				reserveNames(b, sg)
			}
		}
	}
	for _, v := range g.Input {
		b.Reserve(v.GetName())
	}
}
