//go:build cgo

package main

import (
	"bytes"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/onnxconv/onnxconv/executor"
)

// TestStepRows: the three plans' steps matched in order, medians, the
// largest loss (the count's time less inline / threads) first, the sums
// and the sums by step size; plans that differ refused.
func TestStepRows(t *testing.T) {
	us := time.Microsecond
	st := func(out string, ts ...time.Duration) executor.StepTime {
		return executor.StepTime{Kind: "fused", Ops: []string{"Conv", "Relu"}, Outputs: []string{out}, Times: ts}
	}
	one := []executor.StepTime{st("a", 100*us, 90*us, 300*us), st("b", 40*us, 40*us, 40*us)}
	two := []executor.StepTime{st("a", 50*us, 55*us, 60*us), st("b", 40*us, 35*us, 45*us)}
	inl := []executor.StepTime{st("a", 110*us, 100*us, 105*us), st("b", 44*us, 44*us, 44*us)}
	rows, err := stepRows(one, two, inl, 2)
	if err != nil {
		t.Fatal(err)
	}
	// a: 100 / 55 / 105, loss 55 − 52.5 = 2.5; b: 40 / 40 / 44, loss 18.
	if len(rows) != 2 || rows[0].label != "fused Conv+Relu b" || rows[0].one != 40*us || rows[0].many != 40*us || rows[0].inl != 44*us ||
		rows[1].many != 55*us || rows[1].loss(2) != 2500*time.Nanosecond {
		t.Fatalf("rows %+v", rows)
	}
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 2, 0, 2, ' ', 0)
	writeStepRows(tw, "m", 2, rows, 1)
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	// b: split 44/40 = 1.10, efficiency 22/40 = 0.55.
	if f := strings.Fields(lines[2]); strings.Join(f[:6], " ") != "40.0 40.0 44.0 1.10 0.55 +18.0" {
		t.Errorf("top row %v", f)
	}
	if f := strings.Fields(lines[3]); strings.Join(f[:6], " ") != "140.0 95.0 149.0 1.06 0.78 +20.5" || !strings.Contains(lines[3], "(sum of the 2 steps)") {
		t.Errorf("sum row %v", f)
	}
	// By size: b (40 µs) then a (100 µs).
	if f := strings.Fields(lines[4]); strings.Join(f[:6], " ") != "40.0 40.0 44.0 1.10 0.55 +18.0" ||
		!strings.Contains(lines[4], "(the 1 step of 30–60 µs on one thread: 29 % of its time, speed-up 1.00)") {
		t.Errorf("30–60 µs row %q", lines[4])
	}
	if !strings.Contains(lines[5], "(the 1 step of 60–120 µs on one thread: 71 % of its time, speed-up 1.82)") {
		t.Errorf("60–120 µs row %q", lines[5])
	}
	if _, err := stepRows(one, two[:1], inl, 2); err == nil {
		t.Error("step counts that differ were accepted")
	}
	inl[1].Outputs = []string{"c"}
	if _, err := stepRows(one, two, inl, 2); err == nil {
		t.Error("steps that differ were accepted")
	}
}

// TestStepBins: each step in the class of its one-thread time, the
// bounds in the upper class (10 µs is 10–30), empty classes left out.
func TestStepBins(t *testing.T) {
	us := time.Microsecond
	var rows []stepRow
	for _, d := range []time.Duration{9 * us, 10 * us, 29 * us, 120 * us, 500 * us} {
		rows = append(rows, stepRow{one: d, many: d / 2, inl: d})
	}
	bins := stepBins(rows, 668*us)
	want := []struct {
		one   time.Duration
		label string
	}{
		{9 * us, "(the 1 step of under 10 µs on one thread: 1 % of its time, speed-up 2.00)"},
		{39 * us, "(the 2 steps of 10–30 µs on one thread: 6 % of its time, speed-up 2.00)"},
		{620 * us, "(the 2 steps of 120 µs and up on one thread: 93 % of its time, speed-up 2.00)"},
	}
	if len(bins) != len(want) {
		t.Fatalf("%d classes: %+v", len(bins), bins)
	}
	for i, w := range want {
		if bins[i].one != w.one || bins[i].label != w.label {
			t.Errorf("class %d: %v %q, want %v %q", i, bins[i].one, bins[i].label, w.one, w.label)
		}
	}
}
