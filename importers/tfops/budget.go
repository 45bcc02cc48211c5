package tfops

import (
	"fmt"
)

// Expansion work: the function-body nodes one conversion converts, over
// every call of every If, While and PartitionedCall. Depth limits alone
// let branches that call the same functions twice per level expand
// 2^depth times from a small file; this bounds the width too, in
// proportion to the graph and its library.
const (
	minWork   = 1 << 14
	workRatio = 64
)

// work is the expansion budget one Convert shares with every function
// body it converts.
type work struct {
	left, limit int
}

func newWork(g *Graph) *work {
	size := len(g.Nodes)
	for _, f := range g.Functions {
		if f != nil {
			size += len(f.Nodes)
		}
	}
	l := max(minWork, workRatio*size)
	return &work{left: l, limit: l}
}

// take charges the n nodes of function name, or refuses.
func (w *work) take(name string, n int) error {
	if w == nil {
		return nil
	}
	w.left -= n
	if w.left < 0 {
		return fmt.Errorf("function %q: converting the function bodies takes more than %d nodes for a graph and library this size (branches or calls that fan out exponentially?)", name, w.limit)
	}
	return nil
}
