package backendtest

import (
	"strings"
	"testing"
)

func TestTextLines(t *testing.T) {
	if got := (Result{Name: "test_add", Status: Pass}).Line(); got != "PASS  test_add" {
		t.Errorf("pass line %q", got)
	}
	got := (Result{Name: "test_x", Status: Fail, Reason: "a\nb" + strings.Repeat("c", 400)}).Line()
	if want := "FAIL  test_x: a b" + strings.Repeat("c", 297) + "..."; got != want {
		t.Errorf("fail line %q", got)
	}
	if got := (Totals{Passed: 3, Failed: 1, Skipped: 2}).String(); got != "3 passed, 1 failed, 2 skipped" {
		t.Errorf("totals %q", got)
	}
	if got := MarkdownCommand([]string{"/work/shared/onnx/node", "cases"}); got != "onnxconv test --markdown docs/conformance.md ../shared/onnx/node cases" {
		t.Errorf("command %q", got)
	}
}
