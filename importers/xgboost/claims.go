package xgboost

import (
	"fmt"
	"strconv"
)

// checkNumTrees compares the tree count gbtree_model_param.num_trees
// claims with the trees the model holds: a file that claims a billion
// trees and holds one is refused, not converted as if the claim did not
// exist.
func checkNumTrees(mv *value, p path, n int) error {
	claim, ok, err := treeParam(mv, p, "num_trees")
	if err != nil || !ok {
		return err
	}
	if claim != int64(n) {
		return fmt.Errorf("%s.gbtree_model_param.num_trees says %d trees, the model holds %d (truncated or edited file)", p, claim, n)
	}
	return nil
}

// numParallelTree is gbtree_model_param.num_parallel_tree (trees per
// output group in one boosting round), 1 when the model leaves it out.
func numParallelTree(mv *value, p path) (int, error) {
	v, ok, err := treeParam(mv, p, "num_parallel_tree")
	if err != nil || !ok {
		return 1, err
	}
	if v < 1 || v > maxTargets {
		return 0, fmt.Errorf("%s.gbtree_model_param.num_parallel_tree %d out of range [1, %d]", p, v, maxTargets)
	}
	return int(v), nil
}

// treeParam reads gbtree_model_param.KEY, a whole number written as a
// decimal string (as xgboost does) or a number; ok is false when absent.
func treeParam(mv *value, p path, key string) (v int64, ok bool, err error) {
	param := mv.get("gbtree_model_param")
	if param == nil {
		return 0, false, nil
	}
	nt := param.get(key)
	if nt == nil {
		return 0, false, nil
	}
	switch nt.kind {
	case kString:
		v, err := strconv.ParseInt(nt.str, 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("%s.gbtree_model_param.%s: %q is not a whole number", p, key, nt.str)
		}
		return v, true, nil
	case kNumber:
		v = int64(nt.num)
		if float64(v) != nt.num {
			return 0, false, fmt.Errorf("%s.gbtree_model_param.%s: %v is not a whole number", p, key, nt.num)
		}
		return v, true, nil
	default:
		return 0, false, fmt.Errorf("%s.gbtree_model_param.%s: expected a number, found %s", p, key, nt.kind)
	}
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
