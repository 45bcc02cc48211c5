package convert

import (
	"errors"
	"fmt"
	"testing"

	"github.com/onnxconv/onnxconv/canonical/unsupported"
)

// A conversion blocked by two different ops is, through errors.As, the one
// unsupported-op shape naming both (Stage StageConvert, the target opset),
// every blocker counted.
func TestBlockedIsUnsupportedOps(t *testing.T) {
	be := &BlockedError{From: 20, To: 7, Blockers: []Blocker{
		{Graph: "main", Node: "g1", OpType: "Gelu", Step: "Gelu 20 -> opset 7", Reason: "needs Erf", Fix: "target opset 9 or later"},
		{Graph: "main", Node: "t", OpType: "Trilu", Step: "Trilu 14 -> opset 7", Reason: "uses Where"},
		{Graph: "main", Node: "g2", OpType: "Gelu", Step: "Gelu 20 -> opset 7", Reason: "needs Erf"},
		{Graph: "main", Node: "l", OpType: "LinearClassifier", Domain: "ai.onnx.ml", Step: "ml 1", Reason: "r"},
	}}
	var ue *unsupported.OpsError
	if !errors.As(fmt.Errorf("opset: %w", be), &ue) {
		t.Fatalf("a *BlockedError is no *unsupported.OpsError")
	}
	ops := ue.ByOp()
	g := ops["Gelu"]
	if len(ops) != 3 || g.Node != "g1" || g.Count != 2 || g.Version != 7 || g.Reason != "Gelu 20 -> opset 7: needs Erf; target opset 9 or later" ||
		ops["Trilu"].Node != "t" || ops["LinearClassifier"].Version != 0 || ue.Stage != unsupported.StageConvert || ue.Nodes() != len(be.Blockers) {
		t.Errorf("ops %+v (stage %q)", ue.Ops, ue.Stage)
	}
	if (&BlockedError{From: 20, To: 7}).Unwrap() != nil {
		t.Error("no blockers unwrap to an error")
	}
}
