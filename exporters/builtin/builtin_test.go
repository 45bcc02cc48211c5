package builtin

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/exporters"
	"github.com/onnxconv/onnxconv/exporters/adapt"
	"github.com/onnxconv/onnxconv/exporters/profiles"
)

// The registry finds the exporter of a target or of an output file, and
// refuses a target whose exporter writes another kind of file.
func TestFind(t *testing.T) {
	r := Registry()
	for _, c := range []struct {
		out, target, exp, gotTarget string
		usage                       bool
	}{
		{"m.onnx", "", "", "", false},
		{"m.tflite", "", "tflite", "tflite", false},
		{"m.TFLITE", "tflite-float16", "tflite", "tflite-float16", false},
		{"m.onnx", "onnxruntime-1.15", "onnx", "onnxruntime-1.15", false},
		{"m.onnx", "tflite", "", "", true},
		{"m.tflite", "onnxruntime-1.15", "", "", true},
		{"m.onnx", "no-such-target", "", "", false},
	} {
		e, target, err := r.Find(c.out, c.target)
		var ue *exporters.UsageError
		if c.usage != errors.As(err, &ue) || (!c.usage && err != nil) {
			t.Errorf("Find(%q, %q): error %v", c.out, c.target, err)
			continue
		}
		name := ""
		if e != nil {
			name = e.Describe().Name
		}
		if name != c.exp || target != c.gotTarget {
			t.Errorf("Find(%q, %q) = %q, %q; want %q, %q", c.out, c.target, name, target, c.exp, c.gotTarget)
		}
	}
}

// The TFLite exporter returns the file, its layout and its runtime; the
// ONNX exporter a model, with the adaptation's facts; a model the target
// cannot take is an *exporters.UnfitError.
func TestExport(t *testing.T) {
	m, err := canonical.Load(filepath.Join("..", "..", "fixtures", "models", "resnet_small", "model.onnx"), canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	r := Registry()
	e, target, err := r.Find("m.tflite", "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Export(context.Background(), m, target, exporters.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Bytes) < 8 || string(res.Bytes[4:8]) != "TFL3" || res.Runtime != "tflite" || len(res.Inputs) != 1 || len(res.Outputs) != 1 || len(res.Applied) == 0 {
		t.Errorf("tflite result: %d bytes, runtime %q, inputs %+v, outputs %+v, applied %q", len(res.Bytes), res.Runtime, res.Inputs, res.Outputs, res.Applied)
	}
	if p := res.Inputs[0].Perm; len(p) != 4 || p[1] != 2 || p[3] != 1 {
		t.Errorf("the image input is not NHWC in the file: perm %v", p)
	}
	e, target, err = r.Find("m.onnx", "onnxruntime-1.15")
	if err != nil {
		t.Fatal(err)
	}
	res, err = e.Export(context.Background(), m, target, exporters.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Model.Close()
	if res.Model == nil || res.Model.Opset("") > 19 || res.Summary == "" {
		t.Errorf("onnx result: opset %d, summary %q", res.Model.Opset(""), res.Summary)
	}
	if _, err := e.Export(context.Background(), m, target, exporters.Options{Opset: 6}); err == nil {
		t.Error("opset 6 for onnxruntime-1.15 accepted")
	}
}

// The ONNX exporter's description, built from one decoding of the
// profiles, is the one built by asking profiles.Names and profiles.Get
// per name (how it was built before), and names at least one fusing
// target.
func TestONNXDescribe(t *testing.T) {
	got := onnxExporter{}.Describe()
	names, err := profiles.Names()
	if err != nil {
		t.Fatal(err)
	}
	fuse := map[string]int{}
	for _, n := range names {
		if p, err := profiles.Get(n); err == nil && adapt.ContribOpset(p) > 0 {
			fuse[n] = adapt.ContribOpset(p)
		}
	}
	want := exporters.Description{Name: "onnx", Format: exporters.FormatONNX, Targets: names, FuseOpsets: fuse}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Describe() =\n%+v\nwant\n%+v", got, want)
	}
	if len(fuse) == 0 {
		t.Errorf("no target fuses contrib operators: %+v", got)
	}
}
