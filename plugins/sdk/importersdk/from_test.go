package importersdk

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/tflite"
	"github.com/onnxconv/onnxconv/plugins/sdk"
)

func TestFrom(t *testing.T) {
	imp := From(tflite.New(), "1.2")
	if err := (sdk.Plugin{Importer: imp}).Validate(); err != nil {
		t.Fatal(err)
	}
	ii, _ := sdk.Plugin{Importer: imp}.Info()
	if ii.Name != "tflite" || ii.Format != "tflite" || ii.Version != "1.2" || strings.Join(ii.Extensions, ",") != ".tflite" ||
		len(ii.Magic) != 1 || ii.Magic[0].Offset != 4 || string(ii.Magic[0].Bytes) != "TFL3" || ii.Summary == "" {
		t.Errorf("Info = %+v", ii)
	}
	// The whole description crosses: options and reference runtime too.
	if d := tflite.New().Describe(); !reflect.DeepEqual(ii.Options, d.Options) || ii.Runtime != d.Runtime || d.Runtime == "" || len(d.Options) == 0 {
		t.Errorf("options %+v, runtime %q; the importer's %+v, %q", ii.Options, ii.Runtime, d.Options, d.Runtime)
	}
	fixture := filepath.Join("..", "..", "..", "fixtures", "tflite", "cnn.tflite")
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if ok, c := imp.Detect(fixture, data[:64]); !ok || c != 1 {
		t.Errorf("Detect = %v %v", ok, c)
	}
	if ok, c := imp.Detect("x.json", []byte(`{"learner"`)); ok || c != 0 {
		t.Errorf("Detect(xgboost) = %v %v", ok, c)
	}

	// ImportFile writes the model; the served result is the in-process one.
	dir := t.TempDir()
	out := filepath.Join(dir, "out.onnx")
	if err := imp.ImportFile(context.Background(), fixture, out, map[string]string{"opset": "17"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(b, got); err != nil {
		t.Fatal(err)
	}
	want, err := tflite.Import(data, tflite.Options{Opset: 17})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.GetGraph().GetNode()) != len(want.Graph.Nodes) || got.GetOpsetImport()[0].GetVersion() != 17 ||
		got.GetProducerVersion() != want.ProducerVersion {
		t.Errorf("served: %d nodes opset %d; in process %d nodes", len(got.GetGraph().GetNode()), got.GetOpsetImport()[0].GetVersion(), len(want.Graph.Nodes))
	}
	if entries(t, dir) != "out.onnx" {
		t.Errorf("folder holds %s", entries(t, dir))
	}

	// In process the importer's errors keep their type; nothing is written.
	var oe *importers.OptionError
	err = imp.ImportFile(context.Background(), fixture, filepath.Join(dir, "x.onnx"), map[string]string{"layout": "x"})
	if !errors.As(err, &oe) || oe.Key != "layout" {
		t.Errorf("unknown option: %v", err)
	}
	// A failed write names the input, not the output path.
	missingDir := filepath.Join(dir, "no", "such", "folder")
	err = imp.ImportFile(context.Background(), fixture, filepath.Join(missingDir, "x.onnx"), nil)
	if err == nil || !strings.Contains(err.Error(), fixture) || strings.Contains(err.Error(), missingDir) {
		t.Errorf("write error: %v", err)
	}
	if entries(t, dir) != "out.onnx" {
		t.Errorf("folder holds %s", entries(t, dir))
	}
}

// entries lists the names in dir.
func entries(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	return strings.Join(names, ",")
}
