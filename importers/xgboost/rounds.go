package xgboost

import (
	"fmt"
	"strconv"
	"strings"
)

// RoundsError is an iteration_range the model cannot give: outside its
// boosting rounds, or asked of a booster without rounds of trees.
type RoundsError struct {
	Begin, End, Rounds int
	Booster            string
}

func (e *RoundsError) Error() string {
	if e.Booster == "gblinear" {
		return fmt.Sprintf("iteration_range %d:%d: a gblinear model has no boosting rounds of trees (leave iteration_range out)", e.Begin, e.End)
	}
	return fmt.Sprintf("iteration_range %d:%d is outside the model's %d boosting rounds (use BEGIN:END with 0 <= BEGIN < END <= %d)", e.Begin, e.End, e.Rounds, e.Rounds)
}

// parseRounds reads iteration_range's "BEGIN:END" (xgboost's
// Booster.predict(iteration_range=(BEGIN, END)); END exclusive).
func parseRounds(v string) ([2]int, error) {
	b, e, ok := strings.Cut(v, ":")
	if !ok {
		return [2]int{}, fmt.Errorf("%q is not BEGIN:END (e.g. 0:10 for the first 10 boosting rounds)", v)
	}
	begin, err1 := strconv.Atoi(strings.TrimSpace(b))
	end, err2 := strconv.Atoi(strings.TrimSpace(e))
	if err1 != nil || err2 != nil || begin < 0 || end <= begin {
		return [2]int{}, fmt.Errorf("%q is not BEGIN:END with 0 <= BEGIN < END", v)
	}
	return [2]int{begin, end}, nil
}

// roundStarts is where each boosting round's trees start in m.trees,
// then len(m.trees): xgboost's iteration_indptr when the model stores it,
// else rounds of perRound trees (num_parallel_tree times the output
// groups, as xgboost counts them).
func roundStarts(indptr []int64, nTrees, perRound int) ([]int, error) {
	if indptr != nil {
		if len(indptr) == 0 || indptr[0] != 0 || indptr[len(indptr)-1] != int64(nTrees) {
			return nil, fmt.Errorf("iteration_indptr %v does not run from 0 to the %d trees", indptr, nTrees)
		}
		out := make([]int, len(indptr))
		for i, v := range indptr {
			if i > 0 && v < indptr[i-1] {
				return nil, fmt.Errorf("iteration_indptr %v decreases", indptr)
			}
			out[i] = int(v)
		}
		return out, nil
	}
	if perRound < 1 || nTrees%perRound != 0 {
		return nil, fmt.Errorf("%d trees are not whole boosting rounds of %d trees (num_parallel_tree times the output groups)", nTrees, perRound)
	}
	out := make([]int, 0, nTrees/perRound+1)
	for i := 0; i <= nTrees; i += perRound {
		out = append(out, i)
	}
	return out, nil
}

// keepRounds keeps the trees of boosting rounds [r[0], r[1]) ({0, 0}:
// all), as xgboost's iteration_range: the base score stays, dart trees
// keep their weight_drop.
func (m *model) keepRounds(r [2]int) error {
	if r == [2]int{} {
		return nil
	}
	if m.booster == "gblinear" {
		return &RoundsError{Begin: r[0], End: r[1], Booster: m.booster}
	}
	starts, err := roundStarts(m.indptr, len(m.trees), m.perRound)
	if err != nil {
		return fmt.Errorf("iteration_range: %w", err)
	}
	n := len(starts) - 1
	if r[0] < 0 || r[1] <= r[0] || r[1] > n {
		return &RoundsError{Begin: r[0], End: r[1], Rounds: n, Booster: m.booster}
	}
	m.trees = m.trees[starts[r[0]]:starts[r[1]]]
	m.indptr = nil
	return nil
}
