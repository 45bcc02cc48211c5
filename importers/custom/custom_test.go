package custom

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

func write(t *testing.T, m *onnxpb.ModelProto) string {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "defs.onnx")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func fn(domain, name string) *onnxpb.FunctionProto {
	return &onnxpb.FunctionProto{Name: proto.String(name), Domain: proto.String(domain), Input: []string{"x"}, Output: []string{"y"},
		Node:        []*onnxpb.NodeProto{{OpType: proto.String("Neg"), Input: []string{"x"}, Output: []string{"y"}}},
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(17)}}}
}

// The fixture's definition loads and attaches once, with its domain; bad
// files are refused with an error naming the file and the fix.
func TestLoadAndAttach(t *testing.T) {
	s, err := Load("../../fixtures/custom/multiply_beta.onnx")
	if err != nil {
		t.Fatal(err)
	}
	if s.Lookup("MultiplyBeta") == nil || s.Lookup("Other") != nil || (*Set)(nil).Lookup("MultiplyBeta") != nil {
		t.Fatalf("lookup: %v", s.Names())
	}
	f1, err := s.Call("MultiplyBeta", nil)
	if err != nil {
		t.Fatal(err)
	}
	if f2, _ := s.Call("MultiplyBeta", []*canonical.Attribute{canonical.IntAttr("unused", 1)}); f2 != f1 {
		t.Errorf("a function without attributes is not specialized")
	}
	m := &canonical.Model{Graph: &canonical.Graph{}}
	m.SetOpset("", 17)
	if err := s.Attach(m); err != nil {
		t.Fatal(err)
	}
	if len(m.Functions) != 1 || m.Opset("custom") != 1 {
		t.Fatalf("%d functions, opset custom %d", len(m.Functions), m.Opset("custom"))
	}
	m13 := &canonical.Model{Graph: &canonical.Graph{}}
	m13.SetOpset("", 13)
	if err := s.Attach(m13); err == nil || !strings.Contains(err.Error(), "opset 13") {
		t.Errorf("opset mismatch: %v", err)
	}
	// A function with an attribute is specialized per value: the
	// reference in its body becomes the value, the default when none.
	st, err := Load("../../fixtures/custom/scaled_tanh.onnx")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := st.Call("ScaledTanh", []*canonical.Attribute{canonical.FloatAttr("alpha", 1.5)})
	b, _ := st.Call("ScaledTanh", []*canonical.Attribute{canonical.FloatAttr("alpha", 1.5)})
	d, _ := st.Call("ScaledTanh", nil)
	if a == nil || a != b || d == a || len(st.used) != 2 {
		t.Fatalf("specializations %v %v %v, %d used", a, b, d, len(st.used))
	}
	for f, want := range map[*canonical.Function]float32{a: 1.5, d: 1} {
		c := f.Body.Nodes[1]
		if c.OpType != "Constant" || len(c.Attributes) != 1 || c.Attributes[0].RefAttrName != "" || c.Attributes[0].F != want || len(f.Attributes)+len(f.AttributeDefaults) != 0 {
			t.Errorf("%s: Constant %+v, want value_float %g", f.Name, c.Attributes, want)
		}
	}
	for _, tc := range []struct {
		m    *onnxpb.ModelProto
		want string
	}{
		{&onnxpb.ModelProto{IrVersion: proto.Int64(8)}, "holds no function"},
		{&onnxpb.ModelProto{IrVersion: proto.Int64(8), Functions: []*onnxpb.FunctionProto{fn("", "A")}}, "ai.onnx domain"},
		{&onnxpb.ModelProto{IrVersion: proto.Int64(8), Functions: []*onnxpb.FunctionProto{fn("c", "A"), fn("c", "A")}}, "two functions"},
	} {
		p := write(t, tc.m)
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", tc.want, err)
		}
	}
	if _, err := Load("../../fixtures/custom/multiply_beta.json"); err == nil || !strings.Contains(err.Error(), "not an ONNX model file") {
		t.Errorf("a JSON file: %v", err)
	}
}
