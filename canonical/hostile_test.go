package canonical

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// hostileModel is test_constant (a real backend model) with an extra
// initializer "w" whose dims claim 2^60 floats (4 EiB) and that holds no
// data.
func hostileModel(t *testing.T) *onnxpb.ModelProto {
	t.Helper()
	p := backendDir(t, "test_constant")
	mp, _ := readProto(t, p)
	mp.Graph.Initializer = append([]*onnxpb.TensorProto{{
		Name: proto.String("w"), DataType: proto.Int32(int32(Float)), Dims: []int64{1 << 20, 1 << 20, 1 << 20},
	}}, mp.Graph.Initializer...)
	return mp
}

func backendDir(t *testing.T, name string) string {
	return repoRoot(t) + "/../shared/onnx-v1.22/backend-tests/node/" + name + "/model.onnx"
}

func TestValidateDatalessHugeInitializer(t *testing.T) {
	m, err := FromProto(hostileModel(t), "")
	if err != nil {
		t.Fatalf("FromProto: %v", err)
	}
	probs := Validate(m)
	want := `graph.initializer[0] "w": dims [1048576 1048576 1048576] of float claim 4.0 EiB of data but the tensor holds none`
	found := false
	for _, p := range probs {
		found = found || strings.HasPrefix(p.Error(), want)
	}
	if !found {
		t.Fatalf("Validate = %v, want a problem starting %q", probs, want)
	}
	// Reading the data is an error, not an allocation of 4 EiB (which
	// panicked in makeslice before).
	if _, err := m.Graph.Initializers[0].Const.Bytes(); err == nil || !strings.Contains(err.Error(), "holds 0 bytes") {
		t.Errorf("Bytes of the dataless tensor: %v", err)
	}
	if _, err := m.Graph.Initializers[0].Const.Float64s(); err == nil {
		t.Errorf("Float64s of the dataless tensor: no error")
	}
}

func TestValidateDatalessConstant(t *testing.T) {
	mp, _ := readProto(t, backendDir(t, "test_constant"))
	k := mp.Graph.Node[0]
	if k.GetOpType() != "Constant" {
		t.Fatalf("test_constant node 0 is %s", k.GetOpType())
	}
	v := k.Attribute[0].T
	v.RawData, v.FloatData = nil, nil
	m, err := FromProto(mp, "")
	if err != nil {
		t.Fatal(err)
	}
	probs := Validate(m)
	if len(probs) != 1 || !strings.Contains(probs[0].Path, `.attribute "value".t`) || !strings.Contains(probs[0].Msg, "claim 100 B of data but the tensor holds none") {
		t.Errorf("Validate = %v", probs)
	}
	// An empty tensor without data is fine.
	v.Dims = []int64{0, 5}
	m, err = FromProto(mp, "")
	if err != nil {
		t.Fatal(err)
	}
	if probs := Validate(m); len(probs) != 0 {
		t.Errorf("empty tensor: %v", probs)
	}
}
