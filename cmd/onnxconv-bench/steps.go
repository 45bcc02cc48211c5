//go:build cgo

package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/onnxconv/onnxconv/executor"
)

// --scaling … --inline --steps N: where the threads' wall time goes, step
// by step. The timed runs of one thread, of each count above one and of
// its inline plan record each step's wall time (executor.StepTimes), and
// the N steps that lose most on the count's threads are printed: their
// median times, split (inline over one thread: the cut's own cost),
// efficiency (inline / threads over the count's time) and loss (the
// count's time less inline / threads: what the step costs beyond an even
// share of its cut work). Wall times need no thread clock, unlike
// --chunks' thread CPU times (docs/threads.md, "Measuring").

// stepRow is one plan step's median wall times.
type stepRow struct {
	label          string
	one, many, inl time.Duration
}

// loss is what the step takes on threads beyond an even share of its
// inline time.
func (r stepRow) loss(threads int) time.Duration {
	return r.many - r.inl/time.Duration(threads)
}

// stepRows matches the steps of one thread's, the count's and the inline
// plan's runs (the same plan: the same steps in the same order) and
// returns their medians, the largest loss first; an error when the plans
// differ.
func stepRows(one, many, inl []executor.StepTime, threads int) ([]stepRow, error) {
	if len(one) != len(many) || len(one) != len(inl) {
		return nil, fmt.Errorf("step times: %d, %d and %d steps recorded", len(one), len(many), len(inl))
	}
	rows := make([]stepRow, len(one))
	for i := range one {
		if !slices.Equal(one[i].Outputs, many[i].Outputs) || !slices.Equal(one[i].Outputs, inl[i].Outputs) {
			return nil, fmt.Errorf("step times: step %d writes %v, %v and %v", i, one[i].Outputs, many[i].Outputs, inl[i].Outputs)
		}
		label := one[i].Kind + " " + strings.Join(one[i].Ops, "+")
		if len(one[i].Outputs) > 0 {
			label += " " + one[i].Outputs[0]
		}
		rows[i] = stepRow{label: label, one: statOf(one[i].Times).med, many: statOf(many[i].Times).med, inl: statOf(inl[i].Times).med}
	}
	slices.SortStableFunc(rows, func(a, b stepRow) int { return int(b.loss(threads) - a.loss(threads)) })
	return rows, nil
}

// writeStepRows writes the top n rows (0: all) of one model's step table
// at threads, and the sums of every step's medians.
func writeStepRows(w io.Writer, model string, threads int, rows []stepRow, n int) {
	var one, many, inl time.Duration
	for _, r := range rows {
		one, many, inl = one+r.one, many+r.many, inl+r.inl
	}
	fmt.Fprintf(w, "%s at %d threads: steps' median wall µs per run (the largest loss first; loss = %d threads - inline / %d)\n", model, threads, threads, threads)
	fmt.Fprintf(w, "  1 thread\t%d threads\tinline\tsplit\tefficiency\tloss\tstep\t\n", threads)
	row := func(r stepRow) {
		split, eff := inlineRatios(r.one, r.many, r.inl, threads)
		fmt.Fprintf(w, "  %.1f\t%.1f\t%.1f\t%.2f\t%.2f\t%+.1f\t%s\t\n", usf(r.one), usf(r.many), usf(r.inl), split, eff, usf(r.loss(threads)), r.label)
	}
	for i, r := range rows {
		if n > 0 && i >= n {
			break
		}
		row(r)
	}
	row(stepRow{label: fmt.Sprintf("(sum of the %d steps)", len(rows)), one: one, many: many, inl: inl})
	for _, b := range stepBins(rows, one) {
		row(b)
	}
}

// stepBins sums rows by the size of their step on one thread (below
// 10 µs, 10–30, 30–60, 60–120, 120 µs and up), one row per
// class that has steps, labelled with its count, its share of one
// thread's total and its speed-up: how far steps of each size gain from
// the threads (on a virtual machine where a step's fork-join and the
// other core's data cost microseconds, the small steps gain least;
// docs/threads.md "What is left").
func stepBins(rows []stepRow, total time.Duration) []stepRow {
	us := time.Microsecond
	edges := []time.Duration{10 * us, 30 * us, 60 * us, 120 * us}
	bins := make([]stepRow, len(edges)+1)
	counts := make([]int, len(bins))
	for _, r := range rows {
		i, _ := slices.BinarySearch(edges, r.one+1)
		bins[i].one, bins[i].many, bins[i].inl = bins[i].one+r.one, bins[i].many+r.many, bins[i].inl+r.inl
		counts[i]++
	}
	var out []stepRow
	for i, b := range bins {
		if counts[i] == 0 {
			continue
		}
		size := "120 µs and up"
		switch {
		case i == 0:
			size = "under 10 µs"
		case i < len(edges):
			size = fmt.Sprintf("%d–%d µs", edges[i-1].Microseconds(), edges[i].Microseconds())
		}
		share, speedup := 0.0, 0.0
		if total > 0 {
			share = 100 * float64(b.one) / float64(total)
		}
		if b.many > 0 {
			speedup = float64(b.one) / float64(b.many)
		}
		n := fmt.Sprintf("the %d steps", counts[i])
		if counts[i] == 1 {
			n = "the 1 step"
		}
		b.label = fmt.Sprintf("(%s of %s on one thread: %.0f %% of its time, speed-up %.2f)", n, size, share, speedup)
		out = append(out, b)
	}
	return out
}

// inlineRatios returns split, inline over one thread's time (what
// cutting the work for threads costs with no second core), and
// efficiency, inline shared evenly by the threads over their time (1
// when running the chunks at once costs nothing beyond the cut); each 0
// where a time is unknown.
func inlineRatios(one, many, inl time.Duration, threads int) (split, eff float64) {
	if inl <= 0 {
		return 0, 0
	}
	if one > 0 {
		split = float64(inl) / float64(one)
	}
	if many > 0 {
		eff = float64(inl) / float64(threads) / float64(many)
	}
	return split, eff
}
