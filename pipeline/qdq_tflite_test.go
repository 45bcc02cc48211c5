package pipeline

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/passes"
	"github.com/onnxconv/onnxconv/verify"
)

// A QDQ model converted to tflite-int8 keeps its own scales: the export
// says so and the report does not claim a calibration, which the float
// model's export to tflite-int8 does.
func TestQDQToTFLiteInt8NotCalibrated(t *testing.T) {
	m, err := canonical.Load("../fixtures/models/resnet_small/model.onnx", canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var calib [][]*canonical.Tensor
	for s := range 4 {
		in, err := verify.GenerateInputs(m, verify.GenOptions{}, s)
		if err != nil {
			t.Fatal(err)
		}
		calib = append(calib, in)
	}
	q, _, err := passes.Quantize(context.Background(), m, passes.QuantOptions{Mode: passes.Static, Calibration: calib, PerChannel: true, Held: [][]*canonical.Tensor{}})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	dir := t.TempDir()
	qdq := filepath.Join(dir, "qdq.onnx")
	if err := canonical.Save(qdq, q, canonical.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in         string
		calibrated bool
	}{{qdq, false}, {"../fixtures/models/resnet_small/model.onnx", true}} {
		res, err := Convert(context.Background(), tc.in, filepath.Join(dir, filepath.Base(tc.in)+".tflite"), Options{Env: builtins(), Target: "tflite-int8"})
		if err != nil {
			t.Fatal(err)
		}
		said := slices.ContainsFunc(res.Conversion.Applied, func(s string) bool { return strings.Contains(s, "calibrated on") })
		own := slices.ContainsFunc(res.Conversion.Applied, func(s string) bool { return strings.Contains(s, "the model's own quantization") })
		if said != tc.calibrated || own == tc.calibrated {
			t.Errorf("%s: applied %q: want calibrated %v", tc.in, res.Conversion.Applied, tc.calibrated)
		}
	}
}
