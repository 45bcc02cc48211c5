package unsupported

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestOpsErrorListsEveryOp(t *testing.T) {
	var e OpsError
	if e.Err() != nil {
		t.Fatal("an empty list is no error")
	}
	e.Format, e.File = "tfjs", "model.json"
	e.Add("FloorDiv", "div_1", "")
	e.Add("AddN", "add_n", "")
	e.Add("AddN", "add_n_2", "")
	e.AddOp(Op{Op: "Gelu", Domain: "com.microsoft", Version: 1, Node: "g", Reason: "no kernel"})
	err := fmt.Errorf("import: %w", e.Err())
	var got *OpsError
	if !errors.As(err, &got) || len(got.Ops) != 3 || got.Nodes() != 4 || got.ByOp()["AddN"].Count != 2 || got.ByOp()["Gelu"].Domain != "com.microsoft" {
		t.Fatalf("errors.As: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"model.json", "3 tfjs operators", `AddN (node "add_n" and 1 more)`, `FloorDiv (node "div_1")`,
		`com.microsoft.Gelu (opset 1) (node "g"): no kernel`} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Index(msg, "AddN") > strings.Index(msg, "FloorDiv") {
		t.Errorf("ops not sorted: %q", msg)
	}
}

// Parts that are no operator stay one entry per problem.
func TestOpsErrorModelProblems(t *testing.T) {
	e := OpsError{Format: "catboost", Hint: "retrain without them"}
	e.AddOp(Op{Reason: "text features"})
	e.AddOp(Op{Reason: "embedding features"})
	e.AddOp(Op{Reason: "text features"})
	if len(e.Ops) != 2 || e.Nodes() != 3 {
		t.Fatalf("ops %+v", e.Ops)
	}
	if msg := e.Error(); !strings.Contains(msg, "\n  text features") || !strings.HasSuffix(msg, "\nretrain without them") {
		t.Errorf("message %q", msg)
	}
}
