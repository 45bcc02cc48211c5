package tfjs_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/tfjs"
)

// A graph model with several ops the mapping lacks fails once, listing
// every one of them (with the node count of each and the reason ONNX has
// none), not just the first it meets.
func TestEveryMissingOpListed(t *testing.T) {
	js := graphHead + `
		{"name":"a","op":"StringToHashBucketFast","input":["x"]},
		{"name":"b","op":"FancyOp","input":["a"]},
		{"name":"c","op":"FancyOp","input":["b"]},
		{"name":"d","op":"Relu","input":["c"]},
		{"name":"e","op":"OtherOp","input":["d"]}]},"weightsManifest":[]}`
	p := writeModel(t, js, nil)
	_, err := tfjs.New().Import(context.Background(), p, nil)
	var ue *importers.UnsupportedOpsError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v (%T), want an *importers.UnsupportedOpsError", err, err)
	}
	if ue.Format != "tfjs" || len(ue.Ops) != 3 {
		t.Errorf("format %q, ops %+v", ue.Format, ue.Ops)
	}
	msg := err.Error()
	for _, want := range []string{"3 tfjs operators not supported", "FancyOp", "and 1 more", "OtherOp", "StringToHashBucketFast", "no operator", "formats tfjs --ops"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	t.Logf("%v", err)
}
