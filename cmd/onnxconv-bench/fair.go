//go:build cgo

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/onnxconv/onnxconv/bench"
	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/runtimes/ort"
)

// Fairness at --threads N > 1. ONNX Runtime's intra-op workers keep
// spinning for a while after each run (waiting for the next parallel
// section), and the executor's helpers poll 100 µs after their last job
// before they park: whichever side runs next in the interleaved loop
// finds a CPU taken. --settle pauses before each side's runs until that
// is over ("auto": measured per model, cpuTail), --block times each side
// in blocks of runs (the runs inside a block are back to back, as in
// ONNX Runtime's own perf test).

// parseSettle parses --settle: "auto", "0" or a Go duration ("3ms").
// auto is reported as a negative duration.
func parseSettle(s string) (time.Duration, error) {
	switch s = strings.TrimSpace(s); s {
	case "auto", "":
		return -1, nil
	case "0":
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("--settle %q: want auto, 0 or a duration such as 5ms", s)
	}
	return d, nil
}

// cpuSample is the process's CPU time at a wall time after a run ended.
type cpuSample struct{ wall, cpu time.Duration }

// tailEnd is where the process stopped using CPU after a run: the end
// of the last sampling interval in which it used at least frac of a CPU
// (a spinning thread uses all of one; the sampler itself a few %). Zero
// when no interval did.
func tailEnd(s []cpuSample, frac float64) time.Duration {
	end := time.Duration(0)
	for i := 1; i < len(s); i++ {
		dw, dc := s[i].wall-s[i-1].wall, s[i].cpu-s[i-1].cpu
		if dw > 0 && float64(dc) >= frac*float64(dw) {
			end = s[i].wall
		}
	}
	return end
}

// cpuTail runs run rounds times and after each samples the process's CPU
// time every step for window (sleeping between samples), and returns the
// median and the largest time after a run's end at which the process
// still used at least half a CPU: how long the run's threads keep
// spinning once it returned.
func cpuTail(run func() error, rounds int, window, step time.Duration) (median, most time.Duration, err error) {
	tails := make([]time.Duration, 0, rounds)
	s := make([]cpuSample, 0, int(window/step)+2)
	for r := 0; r < rounds; r++ {
		if err := run(); err != nil {
			return 0, 0, err
		}
		t0 := time.Now()
		s = append(s[:0], cpuSample{0, bench.ProcessCPU()})
		for time.Since(t0) < window {
			time.Sleep(step)
			s = append(s, cpuSample{time.Since(t0), bench.ProcessCPU()})
		}
		tails = append(tails, tailEnd(s, 0.5))
	}
	sort.Slice(tails, func(i, j int) bool { return tails[i] < tails[j] })
	return tails[len(tails)/2], tails[len(tails)-1], nil
}

// settleFor is the pause before each side's runs for a measured tail:
// the longest tail seen and half as much again, at least 1 ms (a parked
// thread's wake-up and the sampling's granularity), at most 100 ms.
func settleFor(most time.Duration) time.Duration {
	return min(max(most+most/2, time.Millisecond), 100*time.Millisecond)
}

// autoSettle measures how long ONNX Runtime's threads spin after a run of
// the session of sr (on the model folder's test_data_set_0 inputs, after
// three untimed runs) and returns the pause for it (settleFor), printing
// what it measured.
func autoSettle(sr *sessionRunner, dir string) (time.Duration, error) {
	infos := sr.s.Inputs()
	vals := make([]*canonical.Value, len(infos))
	for i, in := range infos {
		vals[i] = &canonical.Value{Name: in.Name}
	}
	ins, err := childInputs(dir, vals)
	if err != nil {
		return 0, fmt.Errorf("--settle auto: %w", err)
	}
	run := func() error {
		_, err := sr.Run(context.Background(), ins)
		return err
	}
	for i := 0; i < 3; i++ {
		if err := run(); err != nil {
			return 0, fmt.Errorf("--settle auto: %w", err)
		}
	}
	med, most, err := cpuTail(run, 8, 50*time.Millisecond, 250*time.Microsecond)
	if err != nil {
		return 0, fmt.Errorf("--settle auto: %w", err)
	}
	d := settleFor(most)
	fmt.Printf("%s: ONNX Runtime's threads use CPU for %.1f ms (median; most %.1f ms) after a run: %.1f ms pause before each side's runs\n",
		filepath.Base(dir), msf(med), msf(most), msf(d))
	return d, nil
}

// scaleORT times ONNX Runtime alone on the model folder dir with as many
// intra-op threads as each of rows' counts, one session per count, the
// counts taking turns run by run (the order reversed every other round),
// and fills in rows' ortP50, ortMin and ortCPU. Before each timed run it
// pauses for --settle (auto: for the longest spin after a run of the
// largest count, settleFor), so that no session's spinning workers take
// a CPU from the next, then runs the session once untimed (its caches
// and workers as in back-to-back runs); the CPU time of a run is the process's during
// it (ONNX Runtime's workers included, their spinning after it not).
func scaleORT(cfg config, rt *ort.Runtime, dir string, rows []scalingRow) error {
	modelPath := filepath.Join(dir, "model.onnx")
	want, err := readOutputs(filepath.Join(dir, "test_data_set_0"))
	if err != nil {
		return err
	}
	srs := make([]*sessionRunner, len(rows))
	for i, r := range rows {
		sess, err := rt.NewSession(modelPath, ort.WithIntraOpThreads(r.threads))
		if err != nil {
			return fmt.Errorf("ONNX Runtime session, %d threads: %w", r.threads, err)
		}
		defer sess.Close()
		srs[i] = &sessionRunner{s: sess}
	}
	infos := srs[0].s.Inputs()
	vals := make([]*canonical.Value, len(infos))
	for i, in := range infos {
		vals[i] = &canonical.Value{Name: in.Name}
	}
	ins, err := childInputs(dir, vals)
	if err != nil {
		return fmt.Errorf("ONNX Runtime inputs: %w", err)
	}
	ctx := context.Background()
	most := 0
	for i, r := range rows {
		var outs []*canonical.Tensor
		for w := 0; w <= cfg.warmup; w++ {
			if outs, err = srs[i].Run(ctx, ins); err != nil {
				return fmt.Errorf("ONNX Runtime, %d threads: %w", r.threads, err)
			}
		}
		if err := compare(outs, want, cfg.rtol, cfg.atol); err != nil {
			return fmt.Errorf("ONNX Runtime, %d threads: output differs from the stored output: %w", r.threads, err)
		}
		if r.threads > rows[most].threads {
			most = i
		}
	}
	settle := cfg.settle
	if settle < 0 {
		_, tail, err := cpuTail(func() error {
			_, err := srs[most].Run(ctx, ins)
			return err
		}, 8, 50*time.Millisecond, 250*time.Microsecond)
		if err != nil {
			return fmt.Errorf("ONNX Runtime, %d threads: %w", rows[most].threads, err)
		}
		settle = settleFor(tail)
		fmt.Printf("%s: ONNX Runtime's threads use CPU for up to %.1f ms after a run on %d threads: %.1f ms pause before each of its timed runs\n",
			filepath.Base(dir), msf(tail), rows[most].threads, msf(settle))
	}
	wall := make([][]time.Duration, len(rows))
	cpu := make([][]time.Duration, len(rows))
	for r := 0; r < cfg.reps; r++ {
		for k := range rows {
			i := k
			if r%2 == 1 {
				i = len(rows) - 1 - k
			}
			time.Sleep(settle)
			if _, err := srs[i].Run(ctx, ins); err != nil { // untimed: caches and threads as in back-to-back runs
				return fmt.Errorf("ONNX Runtime, %d threads: %w", rows[i].threads, err)
			}
			c0, t0 := bench.ProcessCPU(), time.Now()
			if _, err := srs[i].Run(ctx, ins); err != nil {
				return fmt.Errorf("ONNX Runtime, %d threads: %w", rows[i].threads, err)
			}
			wall[i], cpu[i] = append(wall[i], time.Since(t0)), append(cpu[i], bench.ProcessCPU()-c0)
		}
	}
	for i := range rows {
		w := sorted(wall[i])
		rows[i].ortP50, rows[i].ortMin, rows[i].ortCPU = w[len(w)/2], w[0], sorted(cpu[i])[len(w)/2]
	}
	return nil
}
