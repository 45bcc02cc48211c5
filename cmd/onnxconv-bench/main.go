//go:build cgo

// Command onnxconv-bench times the built-in executor against ONNX Runtime
// on the fixture models (ONNX backend-test layout: model.onnx and
// test_data_set_0/input_N.pb, output_N.pb).
//
// For each model it loads the model into the executor (GoMLX, pure-Go
// backend unless --backend says otherwise) and into an ONNX Runtime session
// with --threads intra-op threads, runs both --warmup times, checks that
// both give the stored outputs, then runs them --reps times, alternating
// executor and ONNX Runtime so that background load hits both alike, and
// prints the median latencies, their ratio and the geometric mean of the
// ratios.
//
// This command needs cgo and the ONNX Runtime shared library (see package
// runtimes/ort); it is not part of the static onnxconv binary.
//
//	go run ./cmd/onnxconv-bench --models fixtures/models --reps 20 --threads 1
//	go run ./cmd/onnxconv-bench --only squeezenet --cpuprofile /tmp/cpu   # writes /tmp/cpu.squeezenet.pprof
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/runtimes/ort"
)

type config struct {
	models     string
	reps       int
	warmup     int
	threads    int
	backend    string
	only       string
	cpuprofile string
	noORT      bool
	rtol, atol float64
}

func main() {
	var cfg config
	flag.StringVar(&cfg.models, "models", "fixtures/models", "folder of model folders (model.onnx + test_data_set_0)")
	flag.IntVar(&cfg.reps, "reps", 10, "timed repetitions per model and runtime")
	flag.IntVar(&cfg.warmup, "warmup", 2, "untimed runs per model and runtime before timing")
	flag.IntVar(&cfg.threads, "threads", 1, "ONNX Runtime intra-op threads")
	flag.StringVar(&cfg.backend, "backend", "", "executor GoMLX backend config (default: pure Go, \"go\"; e.g. \"go:parallelism=1\")")
	flag.StringVar(&cfg.only, "only", "", "regular expression: bench only the models whose folder name matches")
	flag.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of --reps extra executor-only runs of each model to PREFIX.<model>.pprof")
	flag.BoolVar(&cfg.noORT, "no-ort", false, "time the executor only (no ONNX Runtime)")
	flag.Float64Var(&cfg.rtol, "rtol", 1e-3, "relative tolerance against the stored outputs")
	flag.Float64Var(&cfg.atol, "atol", 1e-4, "absolute tolerance against the stored outputs")
	flag.Parse()
	if cfg.reps < 1 || cfg.warmup < 0 || cfg.threads < 0 {
		fmt.Fprintln(os.Stderr, "onnxconv-bench: --reps must be >= 1, --warmup and --threads >= 0")
		os.Exit(2)
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "onnxconv-bench:", err)
		os.Exit(1)
	}
}

type result struct {
	name            string
	exec, ort       time.Duration // medians
	execMin, ortMin time.Duration
	execCPU         time.Duration // median process CPU time (user+sys) of an executor run
}

func run(cfg config) error {
	dirs, err := modelDirs(cfg.models, cfg.only)
	if err != nil {
		return err
	}
	var rt *ort.Runtime
	if !cfg.noORT {
		rt, err = ort.OpenDefault(cfg.threads)
		if err != nil {
			return fmt.Errorf("opening ONNX Runtime: %w", err)
		}
		defer rt.Close()
	}
	ortVersion := "-"
	if rt != nil {
		ortVersion = rt.Version()
	}
	fmt.Printf("onnxconv-bench: %s/%s, %d CPUs, GOMAXPROCS %d, ONNX Runtime %s (%d intra-op threads), executor backend %q, %d warm-up + %d timed runs\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), ortVersion, cfg.threads, cfg.backend, cfg.warmup, cfg.reps)
	var res []result
	failed := false
	for _, d := range dirs {
		r, err := benchModel(cfg, rt, d)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(d), err)
			failed = true
			continue
		}
		res = append(res, r)
	}
	printTable(os.Stdout, res, rt != nil)
	if failed {
		return errors.New("some models failed (see above)")
	}
	return nil
}

// modelDirs lists the folders of root holding a model.onnx, sorted.
func modelDirs(root, only string) ([]string, error) {
	var re *regexp.Regexp
	if only != "" {
		var err error
		if re, err = regexp.Compile(only); err != nil {
			return nil, fmt.Errorf("--only: %w", err)
		}
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("--models: %w", err)
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() || re != nil && !re.MatchString(e.Name()) {
			continue
		}
		d := filepath.Join(root, e.Name())
		if _, err := os.Stat(filepath.Join(d, "model.onnx")); err == nil {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no model folders (with model.onnx) in %s", root)
	}
	sort.Strings(out)
	return out, nil
}

// dataSet holds the stored inputs and outputs of test_data_set_0.
type dataSet struct {
	inProtos []*onnxpb.TensorProto
	ins      []*canonical.Tensor
	outs     []*canonical.Tensor
}

func readDataSet(dir string) (*dataSet, error) {
	ds := &dataSet{}
	for _, kind := range []string{"input", "output"} {
		for i := 0; ; i++ {
			p := filepath.Join(dir, kind+"_"+strconv.Itoa(i)+".pb")
			b, err := os.ReadFile(p)
			if errors.Is(err, os.ErrNotExist) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("reading data set: %w", err)
			}
			tp := &onnxpb.TensorProto{}
			if err := proto.Unmarshal(b, tp); err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			t, err := canonical.TensorFromProto(tp)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			if kind == "input" {
				ds.inProtos = append(ds.inProtos, tp)
				ds.ins = append(ds.ins, t)
			} else {
				ds.outs = append(ds.outs, t)
			}
		}
	}
	if len(ds.ins) == 0 || len(ds.outs) == 0 {
		return nil, fmt.Errorf("%s: no input_N.pb or output_N.pb", dir)
	}
	return ds, nil
}

func benchModel(cfg config, rt *ort.Runtime, dir string) (result, error) {
	r := result{name: filepath.Base(dir)}
	modelPath := filepath.Join(dir, "model.onnx")
	ds, err := readDataSet(filepath.Join(dir, "test_data_set_0"))
	if err != nil {
		return r, err
	}
	m, err := canonical.Load(modelPath, canonical.LoadOptions{})
	if err != nil {
		return r, fmt.Errorf("loading: %w", err)
	}
	defer m.Close()
	ex, err := executor.New(m, executor.Options{Backend: cfg.backend})
	if err != nil {
		return r, fmt.Errorf("executor: %w", err)
	}
	defer ex.Close()
	ctx := context.Background()
	runExec := func() ([]*canonical.Tensor, error) { return ex.Run(ctx, ds.ins) }

	var sess *ort.Session
	if rt != nil {
		sess, err = rt.NewSession(modelPath, ort.WithIntraOpThreads(cfg.threads))
		if err != nil {
			return r, fmt.Errorf("ONNX Runtime session: %w", err)
		}
		defer sess.Close()
	}
	runORT := func() ([]*canonical.Tensor, error) {
		got, err := sess.Run(ds.inProtos)
		if err != nil {
			return nil, err
		}
		out := make([]*canonical.Tensor, len(got))
		for i, tp := range got {
			if out[i], err = canonical.TensorFromProto(tp); err != nil {
				return nil, err
			}
		}
		return out, nil
	}

	// Warm-up (the first executor run compiles) and checks.
	for i := 0; i < max(cfg.warmup, 1); i++ {
		got, err := runExec()
		if err != nil {
			return r, fmt.Errorf("executor run: %w", err)
		}
		if i == 0 {
			if err := compare(got, ds.outs, cfg.rtol, cfg.atol); err != nil {
				return r, fmt.Errorf("executor output differs from the stored output: %w", err)
			}
		}
		if sess != nil {
			got, err := runORT()
			if err != nil {
				return r, fmt.Errorf("ONNX Runtime run: %w", err)
			}
			if i == 0 {
				if err := compare(got, ds.outs, cfg.rtol, cfg.atol); err != nil {
					return r, fmt.Errorf("ONNX Runtime output differs from the stored output: %w", err)
				}
			}
		}
	}

	execTimes := make([]time.Duration, 0, cfg.reps)
	execCPU := make([]time.Duration, 0, cfg.reps)
	ortTimes := make([]time.Duration, 0, cfg.reps)
	for i := 0; i < cfg.reps; i++ {
		c0 := cpuTime()
		t0 := time.Now()
		if _, err := runExec(); err != nil {
			return r, fmt.Errorf("executor run: %w", err)
		}
		execTimes = append(execTimes, time.Since(t0))
		execCPU = append(execCPU, cpuTime()-c0)
		if sess != nil {
			t0 = time.Now()
			if _, err := sess.Run(ds.inProtos); err != nil {
				return r, fmt.Errorf("ONNX Runtime run: %w", err)
			}
			ortTimes = append(ortTimes, time.Since(t0))
		}
	}
	if cfg.cpuprofile != "" {
		// A separate executor-only loop, so that the profile holds no
		// ONNX Runtime time.
		if err := profileRuns(cfg.cpuprofile+"."+r.name+".pprof", cfg.reps, runExec); err != nil {
			return r, err
		}
	}
	r.exec, r.execMin, r.execCPU = median(execTimes), minimum(execTimes), median(execCPU)
	if len(ortTimes) > 0 {
		r.ort, r.ortMin = median(ortTimes), minimum(ortTimes)
	}
	return r, nil
}

// profileRuns writes a CPU profile of reps executor runs to path.
func profileRuns(path string, reps int, run func() ([]*canonical.Tensor, error)) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("cpu profile: %w", cerr)
		}
	}()
	if err := pprof.StartCPUProfile(f); err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	defer pprof.StopCPUProfile()
	for i := 0; i < reps; i++ {
		if _, err := run(); err != nil {
			return fmt.Errorf("executor run: %w", err)
		}
	}
	return nil
}

func median(ts []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ts...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// cpuTime is the CPU time (user + system) used by the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func minimum(ts []time.Duration) time.Duration {
	m := ts[0]
	for _, t := range ts[1:] {
		m = min(m, t)
	}
	return m
}

func printTable(w *os.File, res []result, withORT bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if withORT {
		fmt.Fprintln(tw, "model\texecutor ms\tORT ms\tratio\texecutor min\tORT min\tratio of mins\texecutor CPU ms\t")
	} else {
		fmt.Fprintln(tw, "model\texecutor ms\texecutor min\texecutor CPU ms\t")
	}
	logSum, logSumMin, n := 0.0, 0.0, 0
	for _, r := range res {
		if !withORT {
			fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t\n", r.name, ms(r.exec), ms(r.execMin), ms(r.execCPU))
			continue
		}
		ratio := float64(r.exec) / float64(r.ort)
		ratioMin := float64(r.execMin) / float64(r.ortMin)
		logSum += math.Log(ratio)
		logSumMin += math.Log(ratioMin)
		n++
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.1f\t%.3f\t%.3f\t%.1f\t%.3f\t\n", r.name, ms(r.exec), ms(r.ort), ratio, ms(r.execMin), ms(r.ortMin), ratioMin, ms(r.execCPU))
	}
	if withORT && n > 0 {
		fmt.Fprintf(tw, "geomean\t\t\t%.1f\t\t\t%.1f\t\t\n", math.Exp(logSum/float64(n)), math.Exp(logSumMin/float64(n)))
	}
	tw.Flush()
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// compare checks got against want element-wise: |g-w| <= atol + rtol*|w|
// for floating point, equality otherwise.
func compare(got, want []*canonical.Tensor, rtol, atol float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d outputs, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.DataType != w.DataType || !sameDims(g.Dims, w.Dims) {
			return fmt.Errorf("output %d: %v %v, want %v %v", i, g.DataType, g.Dims, w.DataType, w.Dims)
		}
		gv, err := values(g)
		if err != nil {
			return fmt.Errorf("output %d: %w", i, err)
		}
		wv, err := values(w)
		if err != nil {
			return fmt.Errorf("output %d: %w", i, err)
		}
		bad, worst, worstAt := 0, 0.0, 0
		for j := range wv {
			d := math.Abs(gv[j] - wv[j])
			if d > atol+rtol*math.Abs(wv[j]) || math.IsNaN(gv[j]) != math.IsNaN(wv[j]) {
				bad++
			}
			if d > worst {
				worst, worstAt = d, j
			}
		}
		if bad > 0 {
			return fmt.Errorf("output %d (%s): %d of %d values out of rtol %g / atol %g (max abs diff %.3g at %d: got %g, want %g)",
				i, w.Name, bad, len(wv), rtol, atol, worst, worstAt, gv[worstAt], wv[worstAt])
		}
	}
	return nil
}

func sameDims(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// values decodes the numeric types the fixtures use.
func values(t *canonical.Tensor) ([]float64, error) {
	b, err := t.Bytes()
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	var out []float64
	switch t.DataType {
	case canonical.Float:
		for i := 0; i+4 <= len(b); i += 4 {
			out = append(out, float64(math.Float32frombits(le.Uint32(b[i:]))))
		}
	case canonical.Double:
		for i := 0; i+8 <= len(b); i += 8 {
			out = append(out, math.Float64frombits(le.Uint64(b[i:])))
		}
	case canonical.Int64:
		for i := 0; i+8 <= len(b); i += 8 {
			out = append(out, float64(int64(le.Uint64(b[i:]))))
		}
	case canonical.Int32:
		for i := 0; i+4 <= len(b); i += 4 {
			out = append(out, float64(int32(le.Uint32(b[i:]))))
		}
	case canonical.Bool, canonical.Uint8:
		for _, x := range b {
			out = append(out, float64(x))
		}
	default:
		return nil, fmt.Errorf("comparing %s tensors is not supported", strings.ToLower(t.DataType.String()))
	}
	return out, nil
}
