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

// TestNMSLoopEmptySelection: the same detector on an all-zero image
// (--input-range image=0,0), on which NonMaxSuppression keeps no box
// (every score is sigmoid(0) = 0.5, the threshold 0.5 keeps none). TF.js
// returns empty outputs, and so does the result, in the executor (whose
// GoMLX segment panicked on the empty selection) and in ONNX Runtime
// (whose ConcatFromSequence refused the empty TensorArray before the
// mapping stacked it with a padding item): EQUIVALENT on both, the
// detections [0 4].
func TestNMSLoopEmptySelection(t *testing.T) {
	testpaths.Node(t, "@tensorflow/tfjs")
	in := filepath.Join(repoDir(t), "fixtures", "tfjs", "graph_tf1_nms_loop", "model.json")
	code, stdout, stderr := execCmd(t, "convert", in, filepath.Join(t.TempDir(), "out.onnx"), "--input-range", "image=0,0")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"verify against the source (tfjs",
		"verify against the source, the result run in ONNX Runtime: EQUIVALENT",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
	if n := strings.Count(stdout, ": EQUIVALENT"); n != 2 {
		t.Errorf("%d EQUIVALENT verdicts, want 2 (executor and ONNX Runtime)\n%s", n, stdout)
	}
	if n := len(regexp.MustCompile(`detections\s+float \[0 4\]`).FindAllString(stdout, -1)); n != 2 {
		t.Errorf("detections [0 4] on %d sides' lines, want 2\n%s", n, stdout)
	}
	if n := len(regexp.MustCompile(`nms\s+int32 \[0\]`).FindAllString(stdout, -1)); n != 2 {
		t.Errorf("an empty selection on %d lines, want 2\n%s", n, stdout)
	}
}
