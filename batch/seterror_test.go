package batch

import (
	"errors"
	"fmt"
	"testing"

	"github.com/onnxconv/onnxconv/canonical/unsupported"
	"github.com/onnxconv/onnxconv/pipeline"
)

// setError classifies through the one unsupported-op shape, whatever step
// made it: a blocked conversion is "blocked" with its node count, any
// other stage "unsupported"; pipeline kinds classify the rest.
func TestSetErrorUnsupported(t *testing.T) {
	blocked := &unsupported.OpsError{Stage: unsupported.StageConvert}
	blocked.Add("Gelu", "g1", "")
	blocked.Add("Gelu", "g2", "")
	blocked.Add("Trilu", "t", "")
	imported := &unsupported.OpsError{Format: "tflite"}
	imported.Add("CUSTOM:FancyOp", "a", "")
	for _, c := range []struct {
		err      error
		status   Status
		kind     string
		blockers int
	}{
		{&pipeline.Error{Kind: pipeline.KindInvalid, Err: fmt.Errorf("opset: %w", blocked)}, StatusFail, "blocked", 3},
		{&pipeline.Error{Kind: pipeline.KindInput, Err: fmt.Errorf("import: %w", imported)}, StatusFail, "unsupported", 0},
		{&pipeline.Error{Kind: pipeline.KindUsage, Err: errors.New("bad flag")}, StatusError, "usage", 0},
	} {
		var rec Record
		setError(&rec, c.err)
		if rec.Status != c.status || rec.Kind != c.kind || rec.Figures.Blockers != c.blockers || rec.Message != c.err.Error() {
			t.Errorf("%v: %s/%s blockers %d, want %s/%s %d", c.err, rec.Status, rec.Kind, rec.Figures.Blockers, c.status, c.kind, c.blockers)
		}
	}
}
