package tflite

import (
	"fmt"
)

// The operators converted over every subgraph conversion are bounded in
// proportion to the model: IF branches that each convert a large leaf
// subgraph, nested a few levels, would otherwise convert it thousands of
// times (maxSubgraphConversions counts subgraphs, not their size).
const (
	minOpBudget   = 1 << 16
	opBudgetRatio = 16
)

// opBudget is the operators all subgraph conversions of m may hold.
func opBudget(m *model) int {
	n := 0
	for _, g := range m.subgraphs {
		n += len(g.ops)
	}
	return max(minOpBudget, opBudgetRatio*n)
}

// chargeOps counts the operators of subgraph gi, about to be converted,
// or refuses.
func (c *converter) chargeOps(gi int32, what string) error {
	c.st.ops += len(c.m.subgraphs[gi].ops)
	if l := opBudget(c.m); c.st.ops > l {
		return fmt.Errorf("%s subgraph %d: converting the subgraphs takes more than %d operators for a model of this size (IF or WHILE subgraphs that fan out?)", what, gi, l)
	}
	return nil
}
