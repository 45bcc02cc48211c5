package tflite

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/importers"
	optspec "github.com/onnxconv/onnxconv/options"
	"github.com/onnxconv/onnxconv/version"
)

func TestDetectDescribe(t *testing.T) {
	imp := New()
	b := readFile(t, fixture("cnn.tflite"))
	if c := imp.Detect("x.bin", b[:16]); c != 1 {
		t.Errorf("Detect(cnn.tflite) = %v, want 1", c)
	}
	if c := imp.Detect("x.tflite", []byte("\x08\x00\x00\x00ONNXxxxx")); c != 0 {
		t.Errorf("Detect(wrong identifier) = %v, want 0", c)
	}
	if imp.Detect("model.TFLITE", nil) != 0.5 || imp.Detect("model.onnx", nil) != 0 {
		t.Errorf("Detect by extension wrong")
	}
	d := imp.Describe()
	if d.Name != "tflite" || len(d.Extensions) != 1 || d.Extensions[0] != ".tflite" || string(d.Magic[0].Bytes) != "TFL3" || d.Magic[0].Offset != 4 {
		t.Errorf("Describe() = %+v", d)
	}
	if got := strings.Join(optspec.Names(d.Options), ","); got != "opset,keep_nhwc,subgraph,int8_kernels,custom" {
		t.Errorf("options %s", got)
	}
	o, err := ParseOptions(map[string]string{"opset": "17", "keep_nhwc": "true", "subgraph": "0"})
	if err != nil || o.Opset != 17 || !o.KeepNHWC {
		t.Errorf("ParseOptions = %+v, %v", o, err)
	}
}

func TestOptionErrors(t *testing.T) {
	for _, c := range []struct {
		opts     map[string]string
		key      string
		badValue bool
	}{
		{map[string]string{"layout": "x"}, "layout", false},
		{map[string]string{"opset": "x"}, "opset", true},
		{map[string]string{"opset": "99"}, "opset", true},
		{map[string]string{"opset": "12"}, "opset", true},
		{map[string]string{"keep_nhwc": "maybe"}, "keep_nhwc", true},
		{map[string]string{"subgraph": "-1"}, "subgraph", true},
		{map[string]string{"int8_kernels": "gpu"}, "int8_kernels", true},
		// Keys are checked in sorted order: the first error is stable.
		{map[string]string{"zz": "1", "aa": "1"}, "aa", false},
	} {
		_, err := ParseOptions(c.opts)
		var oe *importers.OptionError
		if !errors.As(err, &oe) || oe.Importer != "tflite" || oe.Key != c.key || (oe.Err != nil) != c.badValue {
			t.Errorf("ParseOptions(%v) = %v (%#v)", c.opts, err, oe)
			continue
		}
		if !c.badValue && strings.Join(oe.Known, ",") != "opset,keep_nhwc,subgraph,int8_kernels,custom" {
			t.Errorf("Known = %v", oe.Known)
		}
		// Import through the interface reports the same, before reading.
		_, err = New().Import(context.Background(), filepath.Join(t.TempDir(), "missing.tflite"), c.opts)
		if !errors.As(err, &oe) || oe.Key != c.key {
			t.Errorf("Import with %v: %v", c.opts, err)
		}
	}
}

func TestImportInterface(t *testing.T) {
	ctx := context.Background()
	path := fixture("cnn.tflite")
	res, err := New().Import(ctx, path, importers.Options{"opset": "17"})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Model.Close()
	m := res.Model
	if m.Opset("") != 17 || len(m.Graph.Nodes) == 0 || m.Graph.Inputs[0].Name != inputName(t, path) {
		t.Errorf("opset %d, %d nodes, inputs %v", m.Opset(""), len(m.Graph.Nodes), m.Graph.Inputs)
	}
	if m.ProducerName != "onnxconv" || m.ProducerVersion != version.Get().Short() || m.ProducerVersion == "" {
		t.Errorf("producer %q %q, want onnxconv %q", m.ProducerName, m.ProducerVersion, version.Get().Short())
	}
	// Same graph as the byte-level Import.
	mp := convert(t, path, Options{Opset: 17})
	if len(mp.GetGraph().GetNode()) != len(m.Graph.Nodes) {
		t.Errorf("%d nodes through the interface, %d from Import", len(m.Graph.Nodes), len(mp.GetGraph().GetNode()))
	}

	dir := t.TempDir()
	var nr *importers.NotRegularError
	if _, err := New().Import(ctx, dir, nil); !errors.As(err, &nr) || !strings.Contains(err.Error(), dir) {
		t.Errorf("a folder: %v", err)
	}
	missing := filepath.Join(dir, "nope.tflite")
	if _, err := New().Import(ctx, missing, nil); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("a missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.tflite")
	if err := os.WriteFile(bad, []byte("\x08\x00\x00\x00TFL3\xff\xff"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New().Import(ctx, bad, nil); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a corrupt file: %v", err)
	}
}

// inputName is the name of the first input of the TFLite model at path,
// from the byte-level importer.
func inputName(t *testing.T, path string) string {
	mp := convert(t, path, Options{})
	return mp.GetGraph().GetInput()[0].GetName()
}
