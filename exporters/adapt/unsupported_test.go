package adapt

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxtext"
	"github.com/onnxconv/onnxconv/canonical/unsupported"
)

// A model with two different ops that opset 7 cannot express: the error
// names both at once, in the one unsupported-op shape (errors.As).
func TestUnsupportedNamesEveryOp(t *testing.T) {
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
	_, err = Adapt(m, mustProfile(t, "onnx-opset7"), Options{})
	var ue *unsupported.OpsError
	if !errors.As(fmt.Errorf("export: %w", err), &ue) {
		t.Fatalf("err = %v, want an *unsupported.OpsError", err)
	}
	ops := ue.ByOp()
	if len(ops) != 2 || ops["Gelu"].Node != "the_gelu" || ops["Trilu"].Node != "the_trilu" || ue.Stage != unsupported.StageTarget || ue.Format != "onnx-opset7" {
		t.Fatalf("ops %+v (stage %q, format %q), want Gelu and Trilu with their nodes", ue.Ops, ue.Stage, ue.Format)
	}
	for _, want := range []string{"Gelu", "Trilu"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not name %s", err, want)
		}
	}
}
