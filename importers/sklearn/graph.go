package sklearn

import (
	"encoding/binary"
	"fmt"
	"math"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// graph collects the nodes and constants of the ONNX graph; names are
// made unique with a counter.
type graph struct {
	nodes []*onnxpb.NodeProto
	inits []*onnxpb.TensorProto
	n     int
	// prefix names the current pipeline step ("step1_").
	prefix string
	// ml is set when a node of ai.onnx.ml is used.
	ml bool
	// err is the first error met while emitting.
	err error
}

// fail records the first error met while emitting.
func (g *graph) fail(err error) {
	if g.err == nil {
		g.err = err
	}
}

func (g *graph) name(base string) string {
	g.n++
	return fmt.Sprintf("%s%s_%d", g.prefix, base, g.n)
}

// op adds a node with one output and returns the output's name.
func (g *graph) op(opType string, in []string, attrs ...*onnxpb.AttributeProto) string {
	out := g.name(opType)
	g.nodes = append(g.nodes, &onnxpb.NodeProto{OpType: proto.String(opType), Name: proto.String(out), Input: in, Output: []string{out}, Attribute: attrs})
	return out
}

// opTo adds a node whose output is named out.
func (g *graph) opTo(out, opType string, in []string, attrs ...*onnxpb.AttributeProto) {
	g.nodes = append(g.nodes, &onnxpb.NodeProto{OpType: proto.String(opType), Name: proto.String(g.name(opType)), Input: in, Output: []string{out}, Attribute: attrs})
}

func dt(t onnxpb.TensorProto_DataType) *int32 { v := int32(t); return &v }

// double adds a DOUBLE constant of the given dims.
func (g *graph) double(base string, dims []int64, v []float64) string {
	raw := make([]byte, 8*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(f))
	}
	name := g.name(base)
	g.inits = append(g.inits, &onnxpb.TensorProto{Name: proto.String(name), Dims: dims, DataType: dt(onnxpb.TensorProto_DOUBLE), RawData: raw})
	return name
}

func (g *graph) scalar(v float64) string { return g.double("c", nil, []float64{v}) }

// row adds a [1, len(v)] constant, broadcast over the rows.
func (g *graph) row(base string, v []float64) string {
	return g.double(base, []int64{1, int64(len(v))}, v)
}

// matrix adds m as a [r, c] constant.
func (g *graph) matrix(base string, m *mat) string {
	return g.double(base, []int64{int64(m.r), int64(m.c)}, m.d)
}

func (g *graph) int64s(base string, dims []int64, v []int64) string {
	name := g.name(base)
	g.inits = append(g.inits, &onnxpb.TensorProto{Name: proto.String(name), Dims: dims, DataType: dt(onnxpb.TensorProto_INT64), Int64Data: v})
	return name
}

func attrType(t onnxpb.AttributeProto_AttributeType) *onnxpb.AttributeProto_AttributeType {
	return &t
}

func aInt(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: attrType(onnxpb.AttributeProto_INT), I: proto.Int64(v)}
}

func aInts(name string, v ...int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: attrType(onnxpb.AttributeProto_INTS), Ints: v}
}

func aFloat(name string, v float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: attrType(onnxpb.AttributeProto_FLOAT), F: proto.Float32(v)}
}

// affine is x w + b (w [F,K], b [K] or nil).
func (g *graph) affine(x string, w *mat, b []float64) string {
	y := g.op("MatMul", []string{x, g.matrix("W", w)})
	if b != nil {
		y = g.op("Add", []string{y, g.row("B", b)})
	}
	return y
}

// sumRows is ReduceSum over axis 1, keeping it ([N,1]).
func (g *graph) sumRows(x string) string {
	return g.op("ReduceSum", []string{x, g.int64s("axes", []int64{1}, []int64{1})}, aInt("keepdims", 1))
}

// pick is classes[idx] for int64 indices idx of any shape.
func (g *graph) pick(classes []int64, idx string) string {
	return g.op("Gather", []string{g.int64s("classes", []int64{int64(len(classes))}, classes), idx}, aInt("axis", 0))
}

// labelArgmax is classes[argmax(scores, axis 1)], [N].
func (g *graph) labelArgmax(classes []int64, scores string) string {
	return g.pick(classes, g.op("ArgMax", []string{scores}, aInt("axis", 1), aInt("keepdims", 0)))
}

// labelPositive is classes[scores > thr] for scores [N,1], as [N].
func (g *graph) labelPositive(classes []int64, scores string, thr float64) string {
	gt := g.op("Greater", []string{scores, g.scalar(thr)})
	idx := g.op("Cast", []string{gt}, aInt("to", int64(onnxpb.TensorProto_INT64)))
	return g.flatten(g.pick(classes, idx))
}

// flatten reshapes to [N].
func (g *graph) flatten(x string) string {
	return g.op("Reshape", []string{x, g.int64s("shape", []int64{1}, []int64{-1})})
}

// twoColumns is [1-p, p] for p [N,1].
func (g *graph) twoColumns(p string) string {
	q := g.op("Sub", []string{g.scalar(1), p})
	return g.op("Concat", []string{q, p}, aInt("axis", 1))
}

// nodeProto is a node with the given outputs.
func nodeProto(opType, name string, in, out []string, attrs ...*onnxpb.AttributeProto) *onnxpb.NodeProto {
	return &onnxpb.NodeProto{OpType: proto.String(opType), Name: proto.String(name), Input: in, Output: out, Attribute: attrs}
}
