package tfops

import (
	"fmt"
	"sort"
	"strings"
)

// Training and debugging leftovers in inference graphs: dropout applied in
// training mode (a mask drawn from RandomUniform) becomes the identity it
// is at inference; Assert, CheckNumerics and summary ops, which no output
// reads, are dropped. Each rewrite is reported through Options.Warn.

// debugOps are ops that only check or record values.
var debugOps = map[string]bool{
	"Assert": true, "CheckNumerics": true, "ScalarSummary": true, "HistogramSummary": true, "ImageSummary": true,
	"AudioSummary": true, "TensorSummary": true, "TensorSummaryV2": true, "MergeSummary": true, "WriteSummary": true,
	"AudioSummaryV2": true, "WriteScalarSummary": true, "WriteHistogramSummary": true, "WriteImageSummary": true,
}

// randomMask reports whether tensor key k is a dropout mask: Floor(keep +
// U), Cast(GreaterEqual(U, rate)) or GreaterEqual(U, rate), U derived
// from a RandomUniform through at most a few Mul/Add/Sub nodes.
func randomMask(nodes map[string]*Node, k string) bool {
	fromRandom := func(k string) bool {
		for range 6 {
			nm, _ := splitKey(k)
			n := nodes[nm]
			if n == nil {
				return false
			}
			switch n.Op {
			case "RandomUniform":
				return true
			case "Mul", "Add", "AddV2", "Sub":
				ok := false
				for _, in := range n.Inputs {
					if ik, isData := tensorKey(in); isData {
						if m := nodes[strings.SplitN(ik, ":", 2)[0]]; m != nil && m.Op != "Const" {
							k, ok = ik, true
							break
						}
					}
				}
				if !ok {
					return false
				}
			default:
				return false
			}
		}
		return false
	}
	nm, _ := splitKey(k)
	n := nodes[nm]
	if n == nil {
		return false
	}
	switch n.Op {
	case "Cast":
		if len(n.Inputs) == 0 {
			return false
		}
		ik, _ := tensorKey(n.Inputs[0])
		return randomMask(nodes, ik)
	case "Floor", "GreaterEqual", "Greater":
		for _, in := range n.Inputs {
			if ik, ok := tensorKey(in); ok && fromRandom(ik) {
				return true
			}
		}
	}
	return false
}

// dropDropout rewrites each training-mode dropout, Mul(scaled, mask)
// with scaled = x / keep (RealDiv, Div) or x · 1/keep (Mul), to
// Identity(x); it returns the rewritten nodes (a copy when any is) and
// the names of the dropouts.
func dropDropout(nodes []Node) ([]Node, []string) {
	byName := make(map[string]*Node, len(nodes))
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	var out []Node
	var names []string
	for i := range nodes {
		n := &nodes[i]
		if n.Op != "Mul" || len(n.Inputs) < 2 {
			continue
		}
		a, okA := tensorKey(n.Inputs[0])
		b, okB := tensorKey(n.Inputs[1])
		if !okA || !okB {
			continue
		}
		scaled, mask := a, b
		if !randomMask(byName, mask) {
			scaled, mask = b, a
			if !randomMask(byName, mask) {
				continue
			}
		}
		snm, _ := splitKey(scaled)
		s := byName[snm]
		if s == nil || (s.Op != "RealDiv" && s.Op != "Div" && s.Op != "Mul") || len(s.Inputs) < 2 {
			continue
		}
		x := s.Inputs[0]
		if s.Op == "Mul" {
			if k, ok := tensorKey(x); ok {
				if xn, _ := splitKey(k); byName[xn] != nil && byName[xn].Op == "Const" {
					x = s.Inputs[1]
				}
			}
		}
		if out == nil {
			out = append([]Node(nil), nodes...)
		}
		out[i] = Node{Name: n.Name, Op: "Identity", Inputs: []string{x}, Attrs: map[string]Attr{"T": n.Attrs["T"]}}
		names = append(names, n.Name)
	}
	if out == nil {
		return nodes, nil
	}
	return out, names
}

// leftoverWarnings describes the training and debugging leftovers of g.
func leftoverWarnings(file string, nodes []Node, dropouts []string) []string {
	var warns []string
	if len(dropouts) > 0 {
		warns = append(warns, fmt.Sprintf("%s: %d dropout(s) in training mode (a random mask) converted to the identity they are at inference: %s", file, len(dropouts), list(dropouts)))
	}
	var dbg, pwd []string
	for _, n := range nodes {
		if debugOps[n.Op] {
			dbg = append(dbg, n.Name+" ("+n.Op+")")
		}
		if n.Op == "PlaceholderWithDefault" {
			pwd = append(pwd, n.Name)
		}
	}
	if len(dbg) > 0 {
		warns = append(warns, fmt.Sprintf("%s: %d assertion or summary node(s) removed (no output reads them): %s", file, len(dbg), list(dbg)))
	}
	if len(pwd) > 0 {
		warns = append(warns, fmt.Sprintf("%s: PlaceholderWithDefault node(s) %s take their default value; name them with -O inputs=NAME:0 to feed them", file, list(pwd)))
	}
	return warns
}

func list(names []string) string {
	s := append([]string(nil), names...)
	sort.Strings(s)
	if len(s) > 8 {
		s = append(s[:8], fmt.Sprintf("and %d more", len(s)-8))
	}
	return strings.Join(s, ", ")
}
