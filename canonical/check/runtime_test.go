package check

import (
	"encoding/binary"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

func (b *builder) init(name string, dt canonical.DataType, dims []int64, raw []byte) *canonical.Value {
	v, err := b.g.AddInitializer(canonical.NewTensor(name, dt, dims, raw))
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

// TestDuplicateNodeNames: ONNX Runtime refuses a graph with two nodes of
// one name ("two nodes with same node name"), as CatBoost CTR models
// converted before the fix had.
func TestDuplicateNodeNames(t *testing.T) {
	b := newModel(t, 13)
	x := b.input("x", canonical.Float, 2)
	n1 := b.node(b.g, "Relu", []*canonical.Value{x}, []string{"y1"})
	n2 := b.node(b.g, "Neg", []*canonical.Value{n1.Output(0)}, []string{"y2"})
	n2.Name = n1.Name
	b.g.Outputs = append(b.g.Outputs, n2.Output(0))
	expect(t, b.m, "Neg", "node name", `"n_Relu"`, "node[0]")
}

// TestTypeVariableAcrossInputs: LayerNormalization binds X, Scale and B
// to one T; float32 X with float16 Scale (an fp16 conversion that kept
// the node in float32 but not its weights) is refused by ONNX Runtime.
func TestTypeVariableAcrossInputs(t *testing.T) {
	b := newModel(t, 17)
	x := b.input("x", canonical.Float, 2, 4)
	s := b.init("scale", canonical.Float16, []int64{4}, make([]byte, 8))
	n := b.node(b.g, "LayerNormalization", []*canonical.Value{x, s}, []string{"y"})
	b.g.Outputs = append(b.g.Outputs, n.Output(0))
	expect(t, b.m, "LayerNormalization", "type parameter T", "float16", "scale")
}

// TestQuantizeLinearZeroPoint: QuantizeLinear's zero point is int8 or
// uint8 (more types from opset 19/21), never int32 (a TFLite int32 zero
// point copied onto it), and at opset 10 scale and zero point are scalars.
func TestQuantizeLinearZeroPoint(t *testing.T) {
	b := newModel(t, 13)
	x := b.input("x", canonical.Float, 2)
	sc := b.init("s", canonical.Float, nil, binary.LittleEndian.AppendUint32(nil, 0x3c000000))
	zp := b.init("zp", canonical.Int32, nil, make([]byte, 4))
	n := b.node(b.g, "QuantizeLinear", []*canonical.Value{x, sc, zp}, []string{"q"})
	b.g.Outputs = append(b.g.Outputs, n.Output(0))
	expect(t, b.m, "QuantizeLinear", "int32")

	b = newModel(t, 10)
	x = b.input("x", canonical.Float, 2)
	sc = b.init("s", canonical.Float, []int64{2}, make([]byte, 8))
	zp = b.init("zp", canonical.Uint8, []int64{2}, make([]byte, 2))
	n = b.node(b.g, "QuantizeLinear", []*canonical.Value{x, sc, zp}, []string{"q"})
	b.g.Outputs = append(b.g.Outputs, n.Output(0))
	expect(t, b.m, "QuantizeLinear", "scalar", "opset 13")

	b = newModel(t, 13)
	x = b.input("x", canonical.Uint8, 2)
	sc = b.init("s", canonical.Float, nil, make([]byte, 4))
	zp = b.init("zp", canonical.Int8, nil, make([]byte, 1))
	n = b.node(b.g, "DequantizeLinear", []*canonical.Value{x, sc, zp}, []string{"d"})
	b.g.Outputs = append(b.g.Outputs, n.Output(0))
	expect(t, b.m, "DequantizeLinear", "type parameter T")
}
