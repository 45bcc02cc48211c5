// Package onnxb is the small ONNX graph builder shared by importers/tfops
// (TF ops) and importers/keraslayers (Keras layers): fresh unique names,
// nodes, initializers, attributes, and the final ModelProto. A Builder is
// used by one goroutine; it holds no global state.
package onnxb

import (
	"encoding/binary"
	"fmt"
	"math"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/version"
)

// DefaultOpset is the ai.onnx opset the builders emit unless told.
const DefaultOpset = 17

// Builder accumulates an ONNX graph.
type Builder struct {
	Opset int
	Nodes []*onnxpb.NodeProto
	Inits []*onnxpb.TensorProto
	names *canonical.Namer
	// root is the builder of the main graph when this one builds a
	// subgraph (see Sub): initializers go there.
	root *Builder
}

// New returns an empty builder for opset (0: DefaultOpset).
func New(opset int) *Builder {
	if opset <= 0 {
		opset = DefaultOpset
	}
	return &Builder{Opset: opset, names: canonical.NewNamer(nil)}
}

// Reserve marks names as taken (graph inputs and outputs).
func (b *Builder) Reserve(names ...string) { b.names.Reserve(names...) }

// Fresh returns an unused name based on base, and reserves it.
func (b *Builder) Fresh(base string) string {
	if base == "" {
		base = "v"
	}
	return b.names.Fresh(base)
}

// Node appends a node whose outputs are out (names already chosen); its
// name is out[0].
func (b *Builder) Node(op string, in, out []string, attrs ...*onnxpb.AttributeProto) {
	n := &onnxpb.NodeProto{OpType: proto.String(op), Input: in, Output: out, Attribute: attrs}
	if len(out) > 0 {
		n.Name = proto.String(out[0])
	}
	b.Nodes = append(b.Nodes, n)
}

// Op appends a one-output node and returns its output, a fresh name
// based on base.
func (b *Builder) Op(op, base string, in []string, attrs ...*onnxpb.AttributeProto) string {
	y := b.Fresh(base)
	b.Node(op, in, []string{y}, attrs...)
	return y
}

// OpTo appends a one-output node writing to the given output name.
func (b *Builder) OpTo(op, out string, in []string, attrs ...*onnxpb.AttributeProto) string {
	b.Node(op, in, []string{out}, attrs...)
	return out
}

// Init adds an initializer of raw little-endian bytes under a fresh name
// based on base and returns the name.
func (b *Builder) Init(base string, dt canonical.DataType, dims []int64, raw []byte) string {
	name := b.Fresh(base)
	r := b
	if b.root != nil {
		r = b.root
	}
	r.Inits = append(r.Inits, &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(dt)),
		Dims: append([]int64{}, dims...), RawData: raw})
	return name
}

// Tensor adds t as an initializer under a fresh name based on base.
func (b *Builder) Tensor(base string, t *canonical.Tensor) (string, error) {
	raw, err := t.Bytes()
	if err != nil {
		return "", err
	}
	return b.Init(base, t.DataType, t.Dims, raw), nil
}

// F32 adds a float32 initializer.
func (b *Builder) F32(base string, dims []int64, v []float32) string {
	return b.Init(base, canonical.Float, dims, F32Bytes(v))
}

// I64 adds an int64 initializer.
func (b *Builder) I64(base string, dims []int64, v []int64) string {
	raw := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(x))
	}
	return b.Init(base, canonical.Int64, dims, raw)
}

// Ints adds a 1-D int64 initializer.
func (b *Builder) Ints(base string, v ...int64) string {
	return b.I64(base, []int64{int64(len(v))}, v)
}

// Scalar adds a float32 scalar initializer.
func (b *Builder) Scalar(base string, v float32) string { return b.F32(base, nil, []float32{v}) }

// Transpose appends a Transpose of x by perm.
func (b *Builder) Transpose(x string, perm []int64, base string) string {
	return b.Op("Transpose", base, []string{x}, Ints("perm", perm))
}

// Sub returns a builder for a subgraph (the body of an If or a Loop): it
// shares b's names (ONNX names are unique across a model and its
// subgraphs) and puts its initializers in the main graph, where the
// subgraph reads them from the outer scope. Its Nodes are its own.
func (b *Builder) Sub() *Builder {
	r := b
	if b.root != nil {
		r = b.root
	}
	return &Builder{Opset: b.Opset, names: b.names, root: r}
}

// Graph wraps the nodes of b (a Sub builder) into a subgraph with the
// given inputs and outputs.
func (b *Builder) Graph(name string, inputs, outputs []*onnxpb.ValueInfoProto) *onnxpb.GraphProto {
	return &onnxpb.GraphProto{Name: proto.String(name), Node: b.Nodes, Input: inputs, Output: outputs}
}

// GraphAttr is a GRAPH attribute (If's branches, Loop's body).
func GraphAttr(name string, g *onnxpb.GraphProto) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: g}
}

// Model wraps the graph into a ModelProto with the given inputs and
// outputs.
func (b *Builder) Model(graphName, doc string, inputs, outputs []*onnxpb.ValueInfoProto) *onnxpb.ModelProto {
	ir := int64(8)
	if b.Opset >= 19 {
		ir = 9
	}
	if b.Opset >= 21 {
		ir = 10
	}
	return &onnxpb.ModelProto{
		IrVersion:       proto.Int64(ir),
		ProducerName:    proto.String("onnxconv"),
		ProducerVersion: proto.String(version.Get().Short()),
		OpsetImport:     []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(int64(b.Opset))}},
		Graph: &onnxpb.GraphProto{Name: proto.String(graphName), DocString: optString(doc), Node: b.Nodes,
			Initializer: b.Inits, Input: inputs, Output: outputs},
	}
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return proto.String(s)
}

// ValueInfo describes a tensor value: dims < 0 are symbolic ("N" for the
// first axis, else "d<i>"); nil dims with unknownRank false is a scalar.
func ValueInfo(name string, dt canonical.DataType, dims []int64, unknownRank bool) *onnxpb.ValueInfoProto {
	tt := &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(dt))}
	if !unknownRank {
		sh := &onnxpb.TensorShapeProto{Dim: []*onnxpb.TensorShapeProto_Dimension{}}
		for i, d := range dims {
			if d >= 0 {
				sh.Dim = append(sh.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
			} else {
				p := fmt.Sprintf("d%d", i)
				if i == 0 {
					p = "N"
				}
				sh.Dim = append(sh.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: p}})
			}
		}
		tt.Shape = sh
	}
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: tt}}}
}

// Int is an INT attribute.
func Int(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

// Ints is an INTS attribute.
func Ints(name string, v []int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: append([]int64{}, v...)}
}

// Float is a FLOAT attribute.
func Float(name string, v float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(v)}
}

// Floats is a FLOATS attribute.
func Floats(name string, v []float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_FLOATS.Enum(), Floats: append([]float32{}, v...)}
}

// String is a STRING attribute.
func String(name, v string) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

// Strings is a STRINGS attribute.
func Strings(name string, v []string) *onnxpb.AttributeProto {
	a := &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRINGS.Enum()}
	for _, s := range v {
		a.Strings = append(a.Strings, []byte(s))
	}
	return a
}

// F32Bytes encodes v little-endian.
func F32Bytes(v []float32) []byte {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	return raw
}

// F32s decodes a float32 tensor (or converts float16, float64, int32,
// int64 ones) to float32s.
func F32s(t *canonical.Tensor) ([]float32, error) {
	raw, err := t.Bytes()
	if err != nil {
		return nil, err
	}
	n, err := t.NumElements()
	if err != nil {
		return nil, err
	}
	es := canonical.ElemBits(t.DataType) / 8
	if es <= 0 || int64(len(raw)) != n*int64(es) {
		return nil, fmt.Errorf("tensor %q: %d bytes of data for %d elements of %s", t.Name, len(raw), n, t.DataType)
	}
	out := make([]float32, n)
	for i := range out {
		switch t.DataType {
		case canonical.Float:
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		case canonical.Double:
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:])))
		case canonical.Int32:
			out[i] = float32(int32(binary.LittleEndian.Uint32(raw[4*i:])))
		case canonical.Int64:
			out[i] = float32(int64(binary.LittleEndian.Uint64(raw[8*i:])))
		case canonical.Float16:
			out[i] = F16ToF32(binary.LittleEndian.Uint16(raw[2*i:]))
		default:
			return nil, fmt.Errorf("tensor %q: %s where float32 was expected", t.Name, t.DataType)
		}
	}
	return out, nil
}

// I64s decodes an int32 or int64 tensor to int64s.
func I64s(t *canonical.Tensor) ([]int64, error) {
	raw, err := t.Bytes()
	if err != nil {
		return nil, err
	}
	n, err := t.NumElements()
	if err != nil {
		return nil, err
	}
	out := make([]int64, n)
	switch t.DataType {
	case canonical.Int32:
		if int64(len(raw)) != 4*n {
			return nil, fmt.Errorf("tensor %q: %d bytes for %d int32", t.Name, len(raw), n)
		}
		for i := range out {
			out[i] = int64(int32(binary.LittleEndian.Uint32(raw[4*i:])))
		}
	case canonical.Int64:
		if int64(len(raw)) != 8*n {
			return nil, fmt.Errorf("tensor %q: %d bytes for %d int64", t.Name, len(raw), n)
		}
		for i := range out {
			out[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
	default:
		return nil, fmt.Errorf("tensor %q: %s where an integer tensor was expected", t.Name, t.DataType)
	}
	return out, nil
}

// F16ToF32 converts IEEE half bits to float32.
func F16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := int32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		e := int32(-14)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		mant &= 0x3ff
		return math.Float32frombits(sign | uint32(e+127)<<23 | mant<<13)
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | mant<<13)
	}
	return math.Float32frombits(sign | uint32(exp-15+127)<<23 | mant<<13)
}

// Transpose2D returns the row-major [c,r] transpose of a [r,c] matrix.
func Transpose2D(v []float32, r, c int) []float32 {
	out := make([]float32, len(v))
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out[j*r+i] = v[i*c+j]
		}
	}
	return out
}
