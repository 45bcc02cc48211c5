package importers

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestUnsupportedOpsErrorListsEveryOp(t *testing.T) {
	var e UnsupportedOpsError
	if e.Err() != nil {
		t.Fatal("an empty list is no error")
	}
	e.Format, e.File = "tfjs", "model.json"
	e.Add("FloorDiv", "div_1", "")
	e.Add("AddN", "add_n", "")
	e.Add("AddN", "add_n_2", "")
	err := fmt.Errorf("import: %w", e.Err())
	var got *UnsupportedOpsError
	if !errors.As(err, &got) || len(got.Ops) != 2 {
		t.Fatalf("errors.As: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"model.json", "2 tfjs operators", `AddN (node "add_n" and 1 more)`, `FloorDiv (node "div_1")`} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Index(msg, "AddN") > strings.Index(msg, "FloorDiv") {
		t.Errorf("ops not sorted: %q", msg)
	}
}
