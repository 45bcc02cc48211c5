package onnx

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/plugins/sdk"
)

func fixture(parts ...string) string {
	return filepath.Join(append([]string{"..", "..", "fixtures"}, parts...)...)
}

func head(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b[:min(len(b), 4096)]
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		path string
		ok   bool
		conf float32
	}{
		{fixture("models", "transformer_block_opset21", "model.onnx"), true, 0.9},
		{fixture("models", "mlp_opset9", "model.onnx"), true, 0.9},
		{fixture("tflite", "cnn.tflite"), false, 0},
		{fixture("tflite", "qcnn.tflite"), false, 0},
		{fixture("xgboost", "binary_logistic.json"), false, 0},
		{fixture("xgboost", "binary_logistic.ubj"), false, 0},
	} {
		h := head(t, tc.path)
		ok, conf := Detect(tc.path, h)
		if ok != tc.ok || conf != tc.conf {
			t.Errorf("%s: Detect = %v %.2f, want %v %.2f", tc.path, ok, conf, tc.ok, tc.conf)
		}
		if magic := sdk.MatchMagic(h, Magic()); magic != tc.ok {
			t.Errorf("%s: magic match %v, want %v", tc.path, magic, tc.ok)
		}
	}
	// Garbage named .onnx: the extension only, below an importer's magic.
	if ok, conf := Detect("x.onnx", []byte{0x0a, 0xff}); !ok || conf != 0.4 {
		t.Errorf("garbage .onnx: %v %.2f, want true 0.4", ok, conf)
	}
	// An IR version out of range is not a model.
	if ok, _ := Detect("x.bin", []byte{0x08, 0x63, 0x3a, 0x02, 0x0a, 0x00}); ok {
		t.Error("IR version 99 accepted")
	}
	if ok, _ := Detect("x.bin", []byte{0x08, 0x07, 0x3a, 0x02, 0x0a, 0x00}); !ok {
		t.Error("IR 7 with a graph field rejected")
	}
}

func TestImportFile(t *testing.T) {
	dir := t.TempDir()
	in := fixture("models", "mlp_opset9", "model.onnx")
	out := filepath.Join(dir, "out.onnx")
	if err := ImportFile(context.Background(), in, out, nil); err != nil {
		t.Fatal(err)
	}
	load := func(p string) *onnxpb.ModelProto {
		m, err := canonical.Load(p, canonical.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		mp, err := m.ToProtoInline()
		if err != nil {
			t.Fatal(err)
		}
		return proto.Clone(mp).(*onnxpb.ModelProto)
	}
	a, b := load(in), load(out)
	if !proto.Equal(a, b) {
		t.Fatal("imported model differs from the input")
	}
	if a.GetOpsetImport()[0].GetVersion() != 9 || len(b.GetGraph().GetNode()) == 0 {
		t.Fatalf("opset %d, %d nodes", b.GetOpsetImport()[0].GetVersion(), len(b.GetGraph().GetNode()))
	}

	// Text in, binary out.
	txt := filepath.Join(dir, "m.onnxtxt")
	if err := os.WriteFile(txt, []byte(`<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) { y = Relu(x) }`), 0o644); err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(dir, "t.onnx")
	if err := ImportFile(context.Background(), txt, out2, nil); err != nil {
		t.Fatal(err)
	}
	mp := load(out2)
	if mp.GetIrVersion() != 8 || mp.GetGraph().GetNode()[0].GetOpType() != "Relu" {
		t.Fatalf("text import: IR %d, nodes %v", mp.GetIrVersion(), mp.GetGraph().GetNode())
	}

	// Errors name the file; nothing is written.
	bad := filepath.Join(dir, "bad.onnx")
	if err := os.WriteFile(bad, []byte{0x0a, 0xff}, 0o644); err != nil {
		t.Fatal(err)
	}
	out3 := filepath.Join(dir, "never.onnx")
	err := ImportFile(context.Background(), bad, out3, nil)
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("corrupt input: %v", err)
	}
	if _, err := os.Stat(out3); !os.IsNotExist(err) {
		t.Fatal("output written for a corrupt input")
	}
	if err := ImportFile(context.Background(), in, out3, map[string]string{"x": "1"}); err == nil || !strings.Contains(err.Error(), "unknown option") {
		t.Fatalf("unknown option: %v", err)
	}
}
