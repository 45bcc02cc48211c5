// Package unsupported holds the one error shape for a model that uses
// parts onnxconv cannot map: every operator (or other part) an importer,
// the version converter, an exporter, a target profile or a reference
// runtime cannot handle, named at once with its node, domain, version and
// the reason, so that a user sees how far a model is from converting.
//
// It is a leaf (it imports nothing of the project), so that importers,
// opset/convert, exporters and runtimes all return it and batch, serve
// and the command line classify it with errors.As without importing any
// of them. importers.UnsupportedOpsError is an alias of OpsError.
package unsupported

import (
	"fmt"
	"sort"
	"strings"
)

// Stage says which step could not map the parts.
type Stage string

// The stages. The zero Stage is StageImport.
const (
	StageImport  Stage = ""        // an importer reading a source format
	StageConvert Stage = "convert" // the version converter between opsets
	StageTarget  Stage = "target"  // fitting a model to a target runtime profile
	StageExport  Stage = "export"  // an exporter writing another format
	StageRun     Stage = "run"     // a reference runtime computing a model
)

// Op is one operator (or other part) of a model that cannot be mapped:
// its type, domain and version, the first node that uses it, how many
// nodes use it, and why.
type Op struct {
	// Op is the operator's type ("AddN", "CONV_3D", "aten::stft"), or
	// the kind of part that is not an operator ("text feature"); "" for
	// a problem of the model as a whole.
	Op string `json:"op,omitempty"`
	// Domain is the operator's domain ("" for the format's default or
	// ai.onnx, "com.microsoft").
	Domain string `json:"domain,omitempty"`
	// Version is the opset version concerned (the target's, when the
	// operator has no form there), 0 when it does not matter.
	Version int `json:"version,omitempty"`
	// Node names the first node of the model that uses Op.
	Node string `json:"node,omitempty"`
	// Count is how many nodes use Op (0 is read as 1).
	Count int `json:"count,omitempty"`
	// Reason says why it is not mapped, or what would map it; "" when
	// there is no mapping at all.
	Reason string `json:"reason,omitempty"`
}

// OpsError is the one error shape for a model that uses operators (or
// other parts) a step cannot map. It lists every such operator at once.
// Classify it with errors.As.
type OpsError struct {
	// Format is the format or target whose operators are missing
	// ("tfjs", "tflite", "torchscript", "tflite export").
	Format string `json:"format,omitempty"`
	// Stage is the step that could not map them.
	Stage Stage `json:"stage,omitempty"`
	// File is the model file, when known.
	File string `json:"file,omitempty"`
	// Ops are the unsupported operators, one entry per operator type
	// (domain and version).
	Ops []Op `json:"ops"`
	// Hint says once what the user can do about all of them, or "".
	Hint string `json:"hint,omitempty"`
}

// Add records one node that uses an unsupported op, merging it into the
// entry for its op type.
func (e *OpsError) Add(op, node, reason string) {
	e.AddOp(Op{Op: op, Node: node, Reason: reason})
}

// AddOp records o, merging it into the entry of the same op type, domain
// and version (the first node and reason stay).
func (e *OpsError) AddOp(o Op) {
	n := max(o.Count, 1)
	for i := range e.Ops {
		p := &e.Ops[i]
		if p.Op == o.Op && p.Domain == o.Domain && p.Version == o.Version && (o.Op != "" || p.Reason == o.Reason) {
			p.Count = max(p.Count, 1) + n
			return
		}
	}
	o.Count = n
	e.Ops = append(e.Ops, o)
}

// ByOp returns the entries by op type (the last of a type listed under
// several domains or versions).
func (e *OpsError) ByOp() map[string]Op {
	m := make(map[string]Op, len(e.Ops))
	for _, o := range e.Ops {
		m[o.Op] = o
	}
	return m
}

// Nodes is the number of nodes (or parts) listed.
func (e *OpsError) Nodes() int {
	n := 0
	for _, o := range e.Ops {
		n += max(o.Count, 1)
	}
	return n
}

// Err returns e when it lists any op and nil otherwise, so that a step
// can collect every unsupported node and end with `return errs.Err()`.
func (e *OpsError) Err() error {
	if e == nil || len(e.Ops) == 0 {
		return nil
	}
	return e
}

func (e *OpsError) Error() string {
	ops := append([]Op(nil), e.Ops...)
	sort.SliceStable(ops, func(i, j int) bool {
		if ops[i].Op != ops[j].Op {
			return ops[i].Op < ops[j].Op
		}
		return ops[i].Domain < ops[j].Domain
	})
	var b strings.Builder
	if e.File != "" {
		fmt.Fprintf(&b, "%s: ", e.File)
	}
	n := len(ops)
	plural := "s"
	if n == 1 {
		plural = ""
	}
	fmt.Fprintf(&b, "%d %s operator%s not supported:", n, e.Format, plural)
	for _, op := range ops {
		b.WriteString("\n  ")
		if op.Op == "" {
			if op.Node != "" {
				fmt.Fprintf(&b, "node %q: ", op.Node)
			}
			b.WriteString(op.Reason)
			continue
		}
		if op.Domain != "" {
			b.WriteString(op.Domain + ".")
		}
		b.WriteString(op.Op)
		if op.Version != 0 {
			fmt.Fprintf(&b, " (opset %d)", op.Version)
		}
		if op.Node != "" {
			fmt.Fprintf(&b, " (node %q", op.Node)
			if c := max(op.Count, 1); c > 1 {
				fmt.Fprintf(&b, " and %d more", c-1)
			}
			b.WriteString(")")
		}
		if op.Reason != "" {
			fmt.Fprintf(&b, ": %s", op.Reason)
		}
	}
	if e.Hint != "" {
		fmt.Fprintf(&b, "\n%s", e.Hint)
	}
	return b.String()
}
