package tflite

import (
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/check"
)

// Every conversion passes the ONNX checker (schemas, types, scoping).
func TestChecker(t *testing.T) {
	var paths []string
	for _, n := range append(fixtureModels, "qcnn") {
		paths = append(paths, fixture(n+".tflite"))
	}
	for _, p := range []string{"models/hello_world_int8.tflite", "models/micro_speech_quantized.tflite",
		"models/trained_lstm_int8.tflite", "seanet/conv1.tflite", "seanet/transpose_conv1.tflite"} {
		paths = append(paths, filepath.Join(sharedDir, p))
	}
	for _, p := range paths {
		for _, opts := range []Options{{}, {Opset: 13, KeepNHWC: true}} {
			mp, err := importProto(readFile(t, p), opts)
			if err != nil {
				if opts.Opset == 13 && filepath.Base(filepath.Dir(p)) == "seanet" {
					continue // int16 needs opset 21
				}
				t.Fatalf("%s: %v", p, err)
			}
			m, err := canonical.FromProto(mp, "")
			if err != nil {
				t.Errorf("%s %+v: canonical: %v", filepath.Base(p), opts, err)
				continue
			}
			if probs := check.Check(m); len(probs) > 0 {
				t.Errorf("%s %+v: %d problems, first: %v", filepath.Base(p), opts, len(probs), probs[0])
			}
		}
	}
}
