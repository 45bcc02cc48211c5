package onnx

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/formats/formatinfo"
	"github.com/onnxconv/onnxconv/importers"
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
	return b[:min(len(b), importers.HeadSize)]
}

func TestDetect(t *testing.T) {
	imp := New()
	for _, tc := range []struct {
		path string
		conf float32
	}{
		{fixture("models", "transformer_block_opset21", "model.onnx"), 0.9},
		{fixture("models", "mlp_opset9", "model.onnx"), 0.9},
		{fixture("tflite", "cnn.tflite"), 0},
		{fixture("tflite", "qcnn.tflite"), 0},
		{fixture("xgboost", "binary_logistic.json"), 0},
		{fixture("xgboost", "binary_logistic.ubj"), 0},
	} {
		h := head(t, tc.path)
		if conf := imp.Detect(tc.path, h); conf != tc.conf {
			t.Errorf("%s: Detect = %.2f, want %.2f", tc.path, conf, tc.conf)
		}
		if magic := formatinfo.MatchMagic(h, imp.Describe().Magic); magic != (tc.conf > 0) {
			t.Errorf("%s: magic match %v, want %v", tc.path, magic, tc.conf > 0)
		}
	}
	// Garbage named .onnx: the extension only, below an importer's magic.
	if conf := imp.Detect("x.onnx", []byte{0x0a, 0xff}); conf != 0.4 {
		t.Errorf("garbage .onnx: %.2f, want 0.4", conf)
	}
	if conf := imp.Detect("x.ONNXTXT", []byte("<ir_version: 8>")); conf != 0.9 {
		t.Errorf(".onnxtxt: %.2f, want 0.9", conf)
	}
	// An IR version out of range is not a model.
	if conf := imp.Detect("x.bin", []byte{0x08, 0x63, 0x3a, 0x02, 0x0a, 0x00}); conf != 0 {
		t.Errorf("IR version 99 accepted: %.2f", conf)
	}
	if conf := imp.Detect("x.bin", []byte{0x08, 0x07, 0x3a, 0x02, 0x0a, 0x00}); conf != 0.9 {
		t.Errorf("IR 7 with a graph field: %.2f, want 0.9", conf)
	}
	d := imp.Describe()
	if d.Name != "onnx" || d.FormatName() != "onnx" || strings.Join(d.Extensions, ",") != ".onnx,.onnxtxt" || len(d.Options) != 0 {
		t.Errorf("Describe = %+v", d)
	}
}

func TestImport(t *testing.T) {
	ctx := context.Background()
	imp := New()
	dir := t.TempDir()
	in := fixture("models", "mlp_opset9", "model.onnx")
	toProto := func(m *canonical.Model) *onnxpb.ModelProto {
		mp, err := m.ToProtoInline()
		if err != nil {
			t.Fatal(err)
		}
		return proto.Clone(mp).(*onnxpb.ModelProto)
	}
	res, err := imp.Import(ctx, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := toProto(res.Model)
	res.Model.Close()
	ref, err := canonical.Load(in, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := toProto(ref)
	ref.Close()
	if !proto.Equal(got, want) {
		t.Fatal("imported model differs from the input")
	}
	if got.GetOpsetImport()[0].GetVersion() != 9 || len(got.GetGraph().GetNode()) == 0 {
		t.Fatalf("opset %d, %d nodes", got.GetOpsetImport()[0].GetVersion(), len(got.GetGraph().GetNode()))
	}

	// Text.
	txt := filepath.Join(dir, "m.onnxtxt")
	if err := os.WriteFile(txt, []byte(`<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) { y = Relu(x) }`), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = imp.Import(ctx, txt, importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Model.IRVersion != 8 || res.Model.Graph.Nodes[0].OpType != "Relu" {
		t.Fatalf("text import: IR %d, nodes %v", res.Model.IRVersion, res.Model.Graph.Nodes)
	}
	res.Model.Close()

	// Errors name the file.
	bad := filepath.Join(dir, "bad.onnx")
	if err := os.WriteFile(bad, []byte{0x0a, 0xff}, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := imp.Import(ctx, bad, nil); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("corrupt input: %v", err)
	}
	var nr *importers.NotRegularError
	if _, err := imp.Import(ctx, dir, nil); !errors.As(err, &nr) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("a folder: %v", err)
	}
	missing := filepath.Join(dir, "missing.onnx")
	if _, err := imp.Import(ctx, missing, nil); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("a missing file: %v", err)
	}
	// Options: the onnx importer takes none.
	var oe *importers.OptionError
	if _, err := imp.Import(ctx, in, importers.Options{"x": "1"}); !errors.As(err, &oe) || oe.Importer != "onnx" || oe.Key != "x" {
		t.Fatalf("unknown option: %v", err)
	}
}

// An ONNX model with external data is read in place, the data beside it
// found and read (no inlining handoff).
func TestImportExternalData(t *testing.T) {
	dir := t.TempDir()
	ref, err := canonical.Load(fixture("models", "mlp_opset9", "model.onnx"), canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	path := filepath.Join(dir, "ext.onnx")
	if err := canonical.Save(path, ref, canonical.SaveOptions{ExternalData: true, ExternalThreshold: 1}); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) < 2 {
		t.Fatalf("no external data file written: %v", ents)
	}
	res, err := New().Import(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Model.Close()
	a, err := ref.ToProtoInline()
	if err != nil {
		t.Fatal(err)
	}
	a = proto.Clone(a).(*onnxpb.ModelProto)
	b, err := res.Model.ToProtoInline()
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(a, b) {
		t.Fatal("model with external data differs from the original once inlined")
	}
}
