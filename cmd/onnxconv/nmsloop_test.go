package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestNMSLoopConvertsAndVerifies: issue 40's "generated inputs" class, a
// detector whose post-processing runs NonMaxSuppressionV5 and then a TF1
// while loop over the kept boxes. A plain convert (generated inputs) ends
// EQUIVALENT against TF.js, with the loop run over kept detections (the
// detections output has rows), in the executor and in ONNX Runtime.
func TestNMSLoopConvertsAndVerifies(t *testing.T) {
	testpaths.Node(t, "@tensorflow/tfjs")
	in := filepath.Join(repoDir(t), "fixtures", "tfjs", "graph_tf1_nms_loop", "model.json")
	code, stdout, stderr := execCmd(t, "convert", in, filepath.Join(t.TempDir(), "out.onnx"))
	if code != 0 || strings.Count(stdout, ": EQUIVALENT") < 1 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	rows := regexp.MustCompile(`detections\s+float \[([0-9]+) 4\]`).FindStringSubmatch(stdout)
	if rows == nil || rows[1] == "0" {
		t.Errorf("the loop ran over no detection: %q\n%s", rows, stdout)
	}
}
