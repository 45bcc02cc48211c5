package tflite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	rt "github.com/onnxconv/onnxconv/runtimes/tflite"
)

// TestLargeModels exports the torch exports of ResNet-50 and
// MobileNet-v3-small (fixtures/models/make_large_models.py DIR) to float32
// TFLite and compares the interpreter with the ONNX source on the
// executor. Only with ONNXCONV_LARGE_MODELS=DIR; TFLITE_LARGE_TABLE=FILE
// writes the Markdown rows of docs/tflite-export.md.
func TestLargeModels(t *testing.T) {
	dir := os.Getenv("ONNXCONV_LARGE_MODELS")
	if dir == "" {
		t.Skip("set ONNXCONV_LARGE_MODELS=DIR (made by fixtures/models/make_large_models.py DIR)")
	}
	env := tfliteEnv(t)
	var rows []string
	for _, name := range []string{"resnet50", "mobilenet_v3_small"} {
		t.Run(name, func(t *testing.T) {
			md := filepath.Join(dir, name)
			m, err := canonical.Load(filepath.Join(md, "model.onnx"), canonical.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			in, err := canonical.ReadTensorFile(filepath.Join(md, "test_data_set_0", "input_0.pb"))
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			want := runExec(t, m, []*canonical.Tensor{in})[0]
			tExec := time.Since(t0)
			t0 = time.Now()
			res, err := Export(context.Background(), m, Options{})
			if err != nil {
				t.Fatal(err)
			}
			tExport := time.Since(t0)
			rep := res.Report
			t.Logf("%s", rep.Summary())
			path := filepath.Join(t.TempDir(), name+".tflite")
			if err := os.WriteFile(path, res.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			t0 = time.Now()
			got, err := rt.Run(context.Background(), env, path, []*onnxpb.TensorProto{protoOf(t, toLayout(t, in, rep.Inputs[0].Perm), rep.Inputs[0].Name)}, 1)
			if err != nil {
				t.Fatal(err)
			}
			tRun := time.Since(t0)
			g, err := canonical.TensorFromProto(got.Outputs[0])
			if err != nil {
				t.Fatal(err)
			}
			e := maxRel(t, floatsOf(t, g), floatsOf(t, toLayout(t, want, rep.Outputs[0].Perm)))
			var torchErr string
			if ref, err := canonical.ReadTensorFile(filepath.Join(md, "test_data_set_0", "output_0.pb")); err == nil {
				torchErr = fmt.Sprintf("%.2g", maxRel(t, floatsOf(t, g), floatsOf(t, toLayout(t, ref, rep.Outputs[0].Perm))))
			}
			t.Logf("max error %.3g relative to the largest output (vs torch %s); export %v, interpreter %v, executor %v", e, torchErr, tExport, tRun, tExec)
			if e > 1e-4 {
				t.Errorf("max relative error %.3g > 1e-4", e)
			}
			rows = append(rows, fmt.Sprintf("| %s | %d | %s | %d | %d (%d) | %.2g | %s | %.1f s | %.1f s | %d |",
				name, rep.Nodes, opsLine(rep.Ops), rep.TransposesIn, rep.TransposesOut, rep.LayoutTransposes, e, torchErr,
				tExport.Seconds(), tRun.Seconds(), len(res.Data)))
		})
	}
	if p := os.Getenv("TFLITE_LARGE_TABLE"); p != "" {
		head := "| model | ONNX nodes | TFLite ops | Transposes in ONNX | TRANSPOSE in TFLite (layout) | max rel. error vs executor | vs torch | export | interpreter run | bytes |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
		_ = os.WriteFile(p, []byte(head+strings.Join(rows, "\n")+"\n"), 0o644)
	}
}
