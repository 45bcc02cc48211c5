package xgboost

import (
	"fmt"
	"strconv"
)

// checkNumTrees compares the tree count gbtree_model_param.num_trees
// claims (a decimal string, as xgboost writes it, or a number) with the
// trees the model holds: a file that claims a billion trees and holds one
// is refused, not converted as if the claim did not exist.
func checkNumTrees(mv *value, p path, n int) error {
	param := mv.get("gbtree_model_param")
	if param == nil {
		return nil
	}
	nt := param.get("num_trees")
	if nt == nil {
		return nil
	}
	var claim int64
	switch nt.kind {
	case kString:
		v, err := strconv.ParseInt(nt.str, 10, 64)
		if err != nil {
			return fmt.Errorf("%s.gbtree_model_param.num_trees: %q is not a whole number", p, nt.str)
		}
		claim = v
	case kNumber:
		claim = int64(nt.num)
		if float64(claim) != nt.num {
			return fmt.Errorf("%s.gbtree_model_param.num_trees: %v is not a whole number", p, nt.num)
		}
	default:
		return fmt.Errorf("%s.gbtree_model_param.num_trees: expected a number, found %s", p, nt.kind)
	}
	if claim != int64(n) {
		return fmt.Errorf("%s.gbtree_model_param.num_trees says %d trees, the model holds %d (truncated or edited file)", p, claim, n)
	}
	return nil
}

// checkSegments refuses categorical split segments that overlap: xgboost
// writes each node's categories once, so the segments together hold at
// most the categories array; overlapping ones would let a small file
// expand to a copy of the whole array per node.
func checkSegments(p path, sizes []int64, cats int) error {
	var total int64
	for _, s := range sizes {
		total += s
		if total > int64(cats) {
			return fmt.Errorf("%s: the category segments together hold %d or more categories, which exceeds categories (%d): xgboost writes each node's set once, these overlap", p, total, cats)
		}
	}
	return nil
}

// ubjValueBudget bounds the elements of untyped UBJSON containers a file
// of size bytes may hold: each costs the file one byte (a null) but the
// parser a whole value, so a flood of nulls would take a hundred times
// the file in memory. xgboost writes its arrays typed ("$d#"), so a real
// model holds a few values per tree.
func ubjValueBudget(size int) int { return 1<<16 + size/8 }

// countValue counts one more element of an untyped container, or refuses.
func (p *ubjParser) countValue() error {
	p.values++
	if l := ubjValueBudget(len(p.b)); p.values > l {
		return p.errf("more than %d values in untyped containers for a %d-byte file (xgboost writes typed arrays; a flood of nulls?)", l, len(p.b))
	}
	return nil
}
