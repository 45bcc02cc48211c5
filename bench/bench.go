// Package bench measures how fast a model runs on the built-in executor,
// and optionally on another runtime side by side, like ONNX Runtime's
// perf test: warm-up runs, timed repetitions, p50/p90/p99 latency,
// throughput, the process's peak memory, and the ratio of the medians.
//
// The executor and the other runtime are timed interleaved (one executor
// run, one runtime run, …) so that background load hits both alike.
package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/executor/kernels"
	"github.com/onnxconv/onnxconv/verify"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// Runner is the other side of a benchmark (a runtime plugin's
// plugins.RuntimeRunner, an in-process ONNX Runtime session, …).
type Runner interface {
	Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error)
}

// Options configure Run.
type Options struct {
	// Inputs is a folder of inputs (NAME.pb / NAME.npy after the graph
	// inputs, or input_N.pb / input_N.npy). Empty: the model folder's
	// test_data_set_0 when there is one, else generated inputs.
	Inputs string
	// Dims sets the symbolic dims of generated inputs (NAME or
	// INPUT:AXIS; unset ones are 1).
	Dims map[string]int64
	// Threads bounds the executor's kernel threads (0: all cores). The
	// caller sets GOMAXPROCS and the runtime's threads to match.
	Threads int
	// Warmup runs per side before timing (the first executor run
	// compiles; the second must give its outputs bit for bit); Reps
	// timed runs per side.
	Warmup, Reps int
	// Backend is the executor's GoMLX backend ("" for the default).
	Backend string
	// DisableKernels runs the executor without executor/kernels, for
	// before/after comparisons.
	DisableKernels bool
	// Runtime names the other side in the result ("onnxruntime").
	Runtime string
	// OtherInProcess: the other side runs in this process (on the
	// calling goroutine's thread), so its process CPU time per run is
	// measured too, and the ratio of CPU times is reported (steadier than
	// wall time on a loaded machine).
	OtherInProcess bool
	// Settle is a pause before each side's block of timed runs, followed
	// by one untimed run of that side, when there is another side: time
	// for the threads of the side that ran before to stop spinning (ONNX
	// Runtime's intra-op workers spin for a while after each run, and
	// would take a CPU from the executor's next run at more than one
	// thread), then the side's caches and threads as in back-to-back
	// runs. Zero: none.
	Settle time.Duration
	// Block is the number of timed runs of one side in a row before the
	// other side's (0 or 1: the sides alternate run by run).
	Block int
	// Check, when set, is called with the first outputs of each side
	// ("executor", or Runtime); an error fails the benchmark.
	Check func(side string, outs []*canonical.Tensor) error
}

// Stats are the figures of one side.
type Stats struct {
	Name          string        `json:"name"`
	Runs          int           `json:"runs"`
	Load          time.Duration `json:"load_ns"` // executor: New and the first (compiling) run
	Min           time.Duration `json:"min_ns"`
	P50           time.Duration `json:"p50_ns"`
	P90           time.Duration `json:"p90_ns"`
	P99           time.Duration `json:"p99_ns"`
	Mean          time.Duration `json:"mean_ns"`
	ThroughputRPS float64       `json:"throughput_per_s"` // runs per second of wall time
	// CPU is the median process CPU time (user+sys) per run: above P50
	// when the side used more than one core. Zero for the other side when
	// it runs out of process.
	CPU time.Duration `json:"cpu_ns"`
}

// Result is the outcome of Run.
type Result struct {
	Model string `json:"model"`
	// Opset and IRVersion are the model's default-domain opset and IR
	// version.
	Opset     int64 `json:"opset,omitempty"`
	IRVersion int64 `json:"ir_version,omitempty"`
	// PID is the process that measured (a batch or serve bench job runs
	// in a process of its own).
	PID     int    `json:"pid,omitempty"`
	Threads int    `json:"threads"`
	Kernel  string `json:"sgemm_kernel"`
	// IntKernel is the integer GEMM kernel (ConvInteger, MatMulInteger,
	// QLinearConv, QLinearMatMul).
	IntKernel string `json:"igemm_kernel"`
	CPUs      int    `json:"cpus"`
	LoadAvg   string `json:"load_average,omitempty"`
	Executor  Stats  `json:"executor"`
	// PeakRSS is the process's peak resident memory (VmHWM) while the
	// executor side loaded and ran, in bytes (0 where unknown).
	PeakRSS int64  `json:"executor_peak_rss_bytes"`
	Other   *Stats `json:"runtime,omitempty"`
	// Ratio is executor P50 / other P50; CPURatio the ratio of the
	// median CPU times (OtherInProcess only).
	Ratio    float64 `json:"ratio,omitempty"`
	CPURatio float64 `json:"cpu_ratio,omitempty"`
	// SlowPaths lists the nodes that ran a per-element path where a
	// kernel was expected, with why (executor.Executor.SlowPaths).
	SlowPaths []string `json:"slow_paths,omitempty"`
	// MaxAbsDiff is the largest absolute difference between the outputs
	// of the two sides (first run), when both ran.
	MaxAbsDiff float64 `json:"max_abs_diff,omitempty"`
}

// UsageError reports bad options.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return "bench: " + e.Msg }

// Run loads m (read from modelPath), and times it on the executor and,
// when other is not nil, on other.
func Run(ctx context.Context, modelPath string, m *canonical.Model, opts Options, other Runner) (*Result, error) {
	if opts.Reps < 1 {
		return nil, &UsageError{Msg: "reps must be at least 1"}
	}
	if opts.Warmup < 0 || opts.Threads < 0 || opts.Settle < 0 || opts.Block < 0 {
		return nil, &UsageError{Msg: "warmup, threads, settle and block must not be negative"}
	}
	// Start from a clean heap, so that an earlier benchmark in the same
	// process shows neither in the peak RSS nor in GC work.
	debug.FreeOSMemory()
	resetPeakRSS()
	start := time.Now()
	ex, err := executor.New(m, executor.Options{Backend: opts.Backend, Threads: opts.Threads, DisableKernels: opts.DisableKernels})
	if err != nil {
		return nil, fmt.Errorf("bench %s: %w", modelPath, err)
	}
	defer ex.Close()
	ins, err := inputs(modelPath, m, ex.Inputs(), opts.Inputs, opts.Dims)
	if err != nil {
		return nil, fmt.Errorf("bench %s: inputs: %w", modelPath, err)
	}
	exOut, err := ex.Run(ctx, ins)
	if err != nil {
		return nil, fmt.Errorf("bench %s: executor: %w", modelPath, err)
	}
	load := time.Since(start)
	if opts.Check != nil {
		if err := opts.Check("executor", exOut); err != nil {
			return nil, fmt.Errorf("bench %s: executor: %w", modelPath, err)
		}
	}
	threads := opts.Threads
	if threads == 0 {
		threads = runtime.NumCPU()
	}
	res := &Result{Model: modelPath, Opset: m.Opset(""), IRVersion: m.IRVersion, PID: os.Getpid(), Threads: threads, Kernel: kernels.KernelName(), IntKernel: kernels.IGemmKernel(), CPUs: runtime.NumCPU(), LoadAvg: loadAvg()}
	if other != nil {
		oOut, err := other.Run(ctx, ins)
		if err != nil {
			return nil, fmt.Errorf("bench %s: %s: %w", modelPath, opts.Runtime, err)
		}
		if opts.Check != nil {
			if err := opts.Check(opts.Runtime, oOut); err != nil {
				return nil, fmt.Errorf("bench %s: %s: %w", modelPath, opts.Runtime, err)
			}
		}
		if res.MaxAbsDiff, err = maxAbsDiff(exOut, oOut); err != nil {
			return nil, fmt.Errorf("bench %s: comparing the outputs of the executor and %s: %w", modelPath, opts.Runtime, err)
		}
	}
	for i := 1; i < opts.Warmup; i++ {
		out, err := ex.Run(ctx, ins)
		if err != nil {
			return nil, fmt.Errorf("bench %s: executor: %w", modelPath, err)
		}
		if i == 1 {
			// A replay of the plan gives its first run's bits (the
			// build runs NCHW: docs/architecture.md).
			if err := sameBits(exOut, out); err != nil {
				return nil, fmt.Errorf("bench %s: executor: a replay against the first run: %w", modelPath, err)
			}
		}
		if other != nil {
			if _, err := other.Run(ctx, ins); err != nil {
				return nil, fmt.Errorf("bench %s: %s: %w", modelPath, opts.Runtime, err)
			}
		}
	}
	var exT, exCPU, oT, oCPU []time.Duration
	var exWall, oWall time.Duration
	block := max(opts.Block, 1)
	// settle pauses, then runs run once untimed: the pause lets the
	// other side's threads stop spinning, the run brings this side's
	// caches and threads back to the state of back-to-back runs.
	settle := func(run func(context.Context, []*canonical.Tensor) ([]*canonical.Tensor, error)) error {
		if other == nil || opts.Settle <= 0 {
			return nil
		}
		time.Sleep(opts.Settle)
		_, err := run(ctx, ins)
		return err
	}
	for i := 0; i < opts.Reps; i += block {
		n := min(block, opts.Reps-i)
		if err := settle(ex.Run); err != nil {
			return nil, fmt.Errorf("bench %s: executor: %w", modelPath, err)
		}
		for j := 0; j < n; j++ {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("bench: %w", err)
			}
			c0 := cpuTime()
			t0 := time.Now()
			if _, err := ex.Run(ctx, ins); err != nil {
				return nil, fmt.Errorf("bench %s: executor: %w", modelPath, err)
			}
			d := time.Since(t0)
			exT, exCPU, exWall = append(exT, d), append(exCPU, cpuTime()-c0), exWall+d
		}
		if other == nil {
			continue
		}
		if err := settle(other.Run); err != nil {
			return nil, fmt.Errorf("bench %s: %s: %w", modelPath, opts.Runtime, err)
		}
		for j := 0; j < n; j++ {
			c0 := cpuTime()
			t0 := time.Now()
			if _, err := other.Run(ctx, ins); err != nil {
				return nil, fmt.Errorf("bench %s: %s: %w", modelPath, opts.Runtime, err)
			}
			d := time.Since(t0)
			oT, oCPU, oWall = append(oT, d), append(oCPU, cpuTime()-c0), oWall+d
		}
	}
	res.PeakRSS = peakRSS()
	res.Executor = stats("executor", exT, exWall)
	res.Executor.Load = load
	res.Executor.CPU = median(exCPU)
	res.SlowPaths = ex.SlowPaths()
	if other != nil {
		name := opts.Runtime
		if name == "" {
			name = "runtime"
		}
		s := stats(name, oT, oWall)
		if opts.OtherInProcess {
			s.CPU = median(oCPU)
			if s.CPU > 0 {
				res.CPURatio = float64(res.Executor.CPU) / float64(s.CPU)
			}
		}
		res.Other = &s
		if s.P50 > 0 {
			res.Ratio = float64(res.Executor.P50) / float64(s.P50)
		}
	}
	return res, nil
}

// inputs reads the inputs from dir, the model folder's test_data_set_0, or
// generates them.
func inputs(modelPath string, m *canonical.Model, vals []*canonical.Value, dir string, dims map[string]int64) ([]*canonical.Tensor, error) {
	if dir == "" {
		ds := filepath.Join(filepath.Dir(modelPath), "test_data_set_0")
		if _, err := os.Stat(filepath.Join(ds, "input_0.pb")); err == nil {
			dir = ds
		}
	}
	if dir == "" {
		return verify.GenerateInputs(m, verify.GenOptions{Dims: verify.FillDims(m, dims)}, 0)
	}
	sets, err := tensorio.LoadSamples(dir, "input", vals, false)
	if err != nil {
		return nil, err
	}
	if len(sets) != 1 {
		return nil, fmt.Errorf("%s holds %d samples; bench takes one", dir, len(sets))
	}
	return sets[0], nil
}

func stats(name string, ds []time.Duration, wall time.Duration) Stats {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	st := Stats{Name: name, Runs: len(s), Min: s[0], P50: pct(s, 50), P90: pct(s, 90), P99: pct(s, 99)}
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	st.Mean = sum / time.Duration(len(s))
	if wall > 0 {
		st.ThroughputRPS = float64(len(s)) / wall.Seconds()
	}
	return st
}

// pct is the nearest-rank percentile of sorted s.
func pct(s []time.Duration, p int) time.Duration {
	i := (p*len(s) + 99) / 100
	return s[max(0, min(len(s)-1, i-1))]
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// sameBits reports an error unless a and b hold the same outputs, byte
// for byte.
func sameBits(a, b []*canonical.Tensor) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d outputs against %d", len(a), len(b))
	}
	for i := range a {
		x, err := a[i].Bytes()
		if err != nil {
			return fmt.Errorf("output %d: %w", i, err)
		}
		y, err := b[i].Bytes()
		if err != nil {
			return fmt.Errorf("output %d: %w", i, err)
		}
		if !bytes.Equal(x, y) {
			return fmt.Errorf("output %d is not bit-identical", i)
		}
	}
	return nil
}

func maxAbsDiff(a, b []*canonical.Tensor) (float64, error) {
	if len(a) != len(b) {
		return 0, fmt.Errorf("%d outputs against %d", len(a), len(b))
	}
	worst := 0.0
	for i := range a {
		x, errA := a[i].Float64s()
		y, errB := b[i].Float64s()
		if errA != nil || errB != nil {
			continue // not numeric: not compared here
		}
		if len(x) != len(y) {
			return 0, fmt.Errorf("output %d has %d elements against %d", i, len(x), len(y))
		}
		for j := range x {
			d := math.Abs(x[j] - y[j])
			if math.IsNaN(d) && !(math.IsNaN(x[j]) && math.IsNaN(y[j])) {
				d = math.Inf(1)
			}
			if d > worst {
				worst = d
			}
		}
	}
	return worst, nil
}

// ProcessCPU is the process's user+sys CPU time (0 where unknown).
func ProcessCPU() time.Duration { return cpuTime() }

// LoadAverage is the 1, 5 and 15 minute load averages ("" where unknown).
func LoadAverage() string { return loadAvg() }

// resetPeakRSS resets the kernel's peak-RSS mark of this process (Linux;
// ignored elsewhere), so that peakRSS measures from here on.
func resetPeakRSS() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peakRSS is VmHWM of /proc/self/status in bytes, or 0.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// GeoMean is the geometric mean of the positive values of xs.
func GeoMean(xs []float64) float64 {
	s, n := 0.0, 0
	for _, x := range xs {
		if x > 0 {
			s += math.Log(x)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return math.Exp(s / float64(n))
}

// PeakRSS is the process's peak resident memory (VmHWM) in bytes, or 0
// where unknown.
func PeakRSS() int64 { return peakRSS() }
