package convert

import (
	"errors"
	"fmt"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxtext"
	"github.com/onnxconv/onnxconv/canonical/unsupported"
)

// A conversion blocked by two different ops is, through errors.As, the one
// unsupported-op shape naming both (Stage StageConvert, the target opset).
func TestBlockedIsUnsupportedOps(t *testing.T) {
	mp, err := onnxtext.Parse("two.onnx", []byte(`<ir_version: 8, opset_import: ["" : 20]>
g (float[2,3] x) => (float[2,3] y, float[2,3] z) {
  [the_gelu] y = Gelu (x)
  [the_trilu] z = Trilu (x)
}`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := canonical.FromProto(mp, "")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	_, err = Convert(m, Options{To: 7})
	var be *BlockedError
	var ue *unsupported.OpsError
	if !errors.As(err, &be) || !errors.As(fmt.Errorf("opset: %w", err), &ue) {
		t.Fatalf("err = %v, want a *BlockedError that is an *unsupported.OpsError", err)
	}
	ops := map[string]unsupported.Op{}
	for _, o := range ue.Ops {
		ops[o.Op] = o
	}
	if len(ops) != 2 || ops["Gelu"].Node != "the_gelu" || ops["Trilu"].Node != "the_trilu" || ops["Gelu"].Version != 7 ||
		ue.Stage != unsupported.StageConvert || ue.Nodes() != len(be.Blockers) {
		t.Errorf("ops %+v (stage %q), want Gelu and Trilu at opset 7, one per blocker", ue.Ops, ue.Stage)
	}
}
