package canonical

import (
	"path/filepath"
	"testing"
)

// TestSummarizeCountsConstants: the parameters of a Constant node count
// the same whether the tensor is inline or was moved to external data.
func TestSummarizeCountsConstants(t *testing.T) {
	m := loadBackend(t, "test_constant")
	var k *Node
	for _, n := range m.Graph.Nodes {
		if n.OpType == "Constant" {
			k = n
		}
	}
	if k == nil || k.Attr("value") == nil || k.Attr("value").T == nil {
		t.Fatal("test_constant has no Constant with a value tensor")
	}
	val := k.Attr("value").T
	// ONNX's test_constant: a 5x5 float tensor.
	if len(val.Dims) != 2 || val.Dims[0] != 5 || val.Dims[1] != 5 || val.DataType != Float {
		t.Fatalf("test_constant value is %v %v", val.DataType, val.Dims)
	}
	s := Summarize(m)
	if s.Parameters != 25 || s.ParameterBytes != 100 || s.ConstantTensors != 1 || s.Initializers != 0 {
		t.Errorf("inline: %d parameters, %d bytes, %d constants, %d initializers; want 25, 100, 1, 0",
			s.Parameters, s.ParameterBytes, s.ConstantTensors, s.Initializers)
	}
	out := filepath.Join(t.TempDir(), "model.onnx")
	if err := Save(out, m, SaveOptions{ExternalData: true, ExternalThreshold: 16}); err != nil {
		t.Fatal(err)
	}
	m2, err := Load(out, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	s2 := Summarize(m2)
	if s2.Parameters != s.Parameters || s2.ParameterBytes != s.ParameterBytes || len(s2.ExternalFiles) != 1 {
		t.Errorf("external: %d parameters, %d bytes, %d files; want %d, %d, 1", s2.Parameters, s2.ParameterBytes, len(s2.ExternalFiles), s.Parameters, s.ParameterBytes)
	}
}
