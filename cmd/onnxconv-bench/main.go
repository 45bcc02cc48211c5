//go:build cgo

// Command onnxconv-bench times the built-in executor against ONNX Runtime
// in process (steady state) on the fixture models (ONNX backend-test
// layout: model.onnx and test_data_set_0/input_N.pb, output_N.pb). It is
// a thin shell over package bench, as `onnxconv bench` is; it exists
// because the runtime plugin behind `onnxconv bench --runtime` starts and
// loads the model anew for every run, while this links ONNX Runtime (cgo)
// and keeps one session.
//
// For each model it checks both sides against the stored outputs, then
// times them interleaved and prints p50/p90/p99, throughput, CPU time,
// peak RSS and the ratio of the medians, with the geometric mean of the
// ratios. --before also times the executor without its kernels
// (executor/kernels) in the same run, against the same ONNX Runtime
// session, for before/after figures.
//
//	go build -o /tmp/ocbench ./cmd/onnxconv-bench
//	/tmp/ocbench --threads 1 --reps 20 --before
//	/tmp/ocbench --only squeezenet --cpuprofile /tmp/cpu   # executor-only profile in /tmp/cpu.squeezenet.pprof
//	/tmp/ocbench --memory --threads 1 --reps 5              # peak RSS of each side, one process per model and side
//	/tmp/ocbench --scaling 1,2 --reps 20                    # executor runs/s on 1 and 2 threads, alternating; ONNX Runtime alone on each
//	/tmp/ocbench --scaling 1,2 --inline --no-ort            # and the 2-thread plan with every chunk on the caller: the split's cost in wall time
//	/tmp/ocbench --chunks 2 --reps 20                       # per step and call site: one thread's time against two threads' serial + chunks
//	/tmp/ocbench --layers --only mobilenet_v2 --reps 50      # per-node times against ONNX Runtime's profiler
//
// At --threads N > 1 each side's runs follow a pause (--settle, auto: as
// long as ONNX Runtime's workers spin after a run, ~30 ms here) and one
// untimed run, so that neither side's spinning threads take a CPU from
// the other's timed runs (fair.go).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/bench"
	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/runtimes/ort"
)

type config struct {
	models, only, backend, cpuprofile string
	reps, warmup, threads             int
	noORT, before, asJSON, memory     bool
	inline                            bool
	memoryChild, memprofile, scaling  string
	layers                            bool
	chunks                            int
	layersTop                         int
	steps                             int
	settle                            time.Duration // < 0: auto
	block                             int
	rtol, atol                        float64
}

func main() {
	var cfg config
	flag.StringVar(&cfg.models, "models", "fixtures/models", "folder of model folders (model.onnx + test_data_set_0)")
	flag.IntVar(&cfg.reps, "reps", 20, "timed repetitions per model and side")
	flag.IntVar(&cfg.warmup, "warmup", 2, "untimed runs per model and side before timing")
	flag.IntVar(&cfg.threads, "threads", 1, "threads of each side: kernel threads of the executor (GOMAXPROCS one more while ONNX Runtime is loaded: docs/speed.md, \"the bench's spare P\"), intra-op threads of ONNX Runtime (0: all cores)")
	flag.StringVar(&cfg.backend, "backend", "", "executor GoMLX backend config (default: pure Go)")
	flag.StringVar(&cfg.only, "only", "", "regular expression: bench only the models whose folder name matches")
	flag.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of an extra executor-only benchmark of each model to PREFIX.<model>.pprof")
	flag.BoolVar(&cfg.noORT, "no-ort", false, "time the executor only (no ONNX Runtime)")
	flag.BoolVar(&cfg.before, "before", false, "also time the executor without executor/kernels (MatMul, Gemm, Conv on GoMLX), in the same run")
	flag.BoolVar(&cfg.asJSON, "json", false, "print the results as JSON")
	flag.BoolVar(&cfg.memory, "memory", false, "measure the peak RSS of each side in a process of its own (this binary, once per model and side)")
	flag.StringVar(&cfg.memprofile, "memprofile", "", "with --memory: write a heap profile of each executor child after its runs to PREFIX.<model>.pprof")
	flag.StringVar(&cfg.memoryChild, "memory-child", "", "internal: run one side (executor or onnxruntime) on the model folder given as argument and print its peak RSS")
	flag.StringVar(&cfg.scaling, "scaling", "", "thread counts, e.g. 1,2: time the executor alone with each count, alternating run by run in one process, and print runs/s, CPU time per run and the speed-up over the first count (outputs checked to be bit-identical)")
	flag.BoolVar(&cfg.inline, "inline", false, "with --scaling: also time each count above one with every chunk on the caller (the same cut, no helpers), and print the split's own cost (inline p50 over one thread's) and the efficiency of the threads (inline p50 / threads over p50)")
	flag.BoolVar(&cfg.layers, "layers", false, "compare the executor's time per step (node or fused chain) with ONNX Runtime's per node (its profiler), sorted by the executor's excess (layers.go)")
	flag.IntVar(&cfg.chunks, "chunks", 0, "N >= 2: where the chunks' time goes at N threads: per step and call site, one thread's time against the serial and chunks' thread CPU time at N threads and with the chunks all on the caller (chunks.go)")
	flag.IntVar(&cfg.steps, "steps", 0, "with --scaling and --inline: print, per model and count above one, the N steps (wall time per step) that lose most on that count's threads against an even share of their inline time (steps.go)")
	flag.IntVar(&cfg.layersTop, "layers-top", 30, "with --layers: print this many rows per model (0: all)")
	settle := flag.String("settle", "auto", "pause before each side's timed runs when both sides run: auto (at --threads other than 1: how long ONNX Runtime's threads spin after a run, measured per model, and half as much again; 0 at --threads 1), 0, or a duration such as 5ms")
	flag.IntVar(&cfg.block, "block", 1, "timed runs of one side in a row before the other side's (1: alternate run by run)")
	flag.Float64Var(&cfg.rtol, "rtol", 1e-3, "relative tolerance against the stored outputs")
	flag.Float64Var(&cfg.atol, "atol", 1e-4, "absolute tolerance against the stored outputs")
	flag.Parse()
	if cfg.reps < 1 || cfg.warmup < 0 || cfg.threads < 0 || cfg.block < 1 {
		fmt.Fprintln(os.Stderr, "onnxconv-bench: --reps and --block must be >= 1, --warmup and --threads >= 0")
		os.Exit(2)
	}
	var err error
	if cfg.settle, err = parseSettle(*settle); err != nil {
		fmt.Fprintln(os.Stderr, "onnxconv-bench:", err)
		os.Exit(2)
	}
	switch {
	case cfg.memoryChild != "":
		if flag.NArg() != 1 {
			fmt.Fprintln(os.Stderr, "onnxconv-bench: --memory-child takes one model folder")
			os.Exit(2)
		}
		err = memoryChild(cfg, cfg.memoryChild, flag.Arg(0))
	case cfg.memory:
		err = runMemory(cfg)
	case cfg.layers:
		err = runLayers(cfg)
	case cfg.chunks != 0:
		err = runChunks(cfg, cfg.chunks)
	case cfg.steps < 0 || cfg.steps != 0 && (cfg.scaling == "" || !cfg.inline):
		err = errors.New("--steps takes a count >= 0 and needs --scaling and --inline")
	case cfg.scaling != "":
		var counts []int
		if counts, err = parseThreadList(cfg.scaling); err == nil {
			err = runScaling(cfg, counts)
		}
	default:
		err = run(cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "onnxconv-bench:", err)
		os.Exit(1)
	}
}

func run(cfg config) error {
	dirs, err := modelDirs(cfg.models, cfg.only)
	if err != nil {
		return err
	}
	if cfg.threads > 0 {
		procs := cfg.threads
		if !cfg.noORT {
			// ONNX Runtime runs in this process through purego: each run
			// is a system call to Go's scheduler. With no spare P, sysmon
			// takes the caller's P away 20 µs into every ORT run and then
			// polls every 20 µs into the executor's next run, CPU time the
			// executor alone never spends (docs/speed.md, "The bench's
			// spare P"). The executor's kernels and GoMLX workers stay
			// bounded by --threads.
			procs++
		}
		runtime.GOMAXPROCS(procs)
	}
	var rt *ort.Runtime
	if !cfg.noORT {
		rt, err = ort.OpenDefault(cfg.threads)
		if err != nil {
			return fmt.Errorf("opening ONNX Runtime: %w", err)
		}
		defer rt.Close()
		fmt.Printf("ONNX Runtime %s, %d intra-op threads; GOMAXPROCS %d\n", rt.Version(), cfg.threads, runtime.GOMAXPROCS(0))
	}
	var after, before []*bench.Result
	failed := false
	for _, d := range dirs {
		a, b, err := benchModel(cfg, rt, d)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", filepath.Base(d), err)
			failed = true
			continue
		}
		after = append(after, a)
		if b != nil {
			before = append(before, b)
		}
	}
	if cfg.asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"kernels": after, "no_kernels": before}); err != nil {
			return err
		}
	} else {
		if len(before) > 0 {
			fmt.Println("== executor without its kernels (GoMLX MatMul/Gemm/Conv)")
			if err := bench.WriteTable(os.Stdout, before); err != nil {
				return err
			}
			fmt.Println("== executor with its kernels")
		}
		if err := bench.WriteTable(os.Stdout, after); err != nil {
			return err
		}
	}
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

// readOutputs reads the stored output_N.pb of a data set.
func readOutputs(dir string) ([]*canonical.Tensor, error) {
	var outs []*canonical.Tensor
	for i := 0; ; i++ {
		p := filepath.Join(dir, "output_"+strconv.Itoa(i)+".pb")
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
		outs = append(outs, t)
	}
	if len(outs) == 0 {
		return nil, fmt.Errorf("%s: no output_N.pb", dir)
	}
	return outs, nil
}

// sessionRunner is an in-process ONNX Runtime session as a bench.Runner;
// the inputs are converted to protos once (bench passes the same ones).
type sessionRunner struct {
	s      *ort.Session
	ins    []*canonical.Tensor
	protos []*onnxpb.TensorProto
}

func (r *sessionRunner) Run(_ context.Context, ins []*canonical.Tensor) ([]*canonical.Tensor, error) {
	if !sameSlice(ins, r.ins) {
		r.protos = r.protos[:0]
		for _, t := range ins {
			tp, err := canonical.TensorToProto(t)
			if err != nil {
				return nil, err
			}
			r.protos = append(r.protos, tp)
		}
		r.ins = ins
	}
	got, err := r.s.Run(r.protos)
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

func sameSlice(a, b []*canonical.Tensor) bool {
	if len(a) != len(b) || a == nil {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// loadFolder loads a model folder's model.onnx and the outputs stored in
// its test_data_set_0 (the caller closes the model).
func loadFolder(dir string) (modelPath string, m *canonical.Model, want []*canonical.Tensor, err error) {
	modelPath = filepath.Join(dir, "model.onnx")
	if want, err = readOutputs(filepath.Join(dir, "test_data_set_0")); err != nil {
		return "", nil, nil, err
	}
	if m, err = canonical.Load(modelPath, canonical.LoadOptions{}); err != nil {
		return "", nil, nil, fmt.Errorf("loading: %w", err)
	}
	return modelPath, m, want, nil
}

// benchModel benchmarks one model folder: with the kernels, and without
// them when --before is set.
func benchModel(cfg config, rt *ort.Runtime, dir string) (after, before *bench.Result, err error) {
	modelPath, m, want, err := loadFolder(dir)
	if err != nil {
		return nil, nil, err
	}
	defer m.Close()
	var other bench.Runner
	var sr *sessionRunner
	if rt != nil {
		sess, err := rt.NewSession(modelPath, ort.WithIntraOpThreads(cfg.threads))
		if err != nil {
			return nil, nil, fmt.Errorf("ONNX Runtime session: %w", err)
		}
		defer sess.Close()
		sr = &sessionRunner{s: sess}
		other = sr
	}
	settle := cfg.settle
	if settle < 0 {
		settle = 0
		if rt != nil && cfg.threads != 1 {
			if settle, err = autoSettle(sr, dir); err != nil {
				return nil, nil, err
			}
		}
	}
	opts := bench.Options{
		Threads: cfg.threads, Warmup: cfg.warmup, Reps: cfg.reps, Backend: cfg.backend, Runtime: "onnxruntime",
		Settle: settle, Block: cfg.block,
		// ORT runs on the calling thread at one thread; at more, its
		// workers' CPU time is its own once they stop spinning before
		// the executor's runs.
		OtherInProcess: cfg.threads == 1 || settle > 0,
		Check: func(side string, outs []*canonical.Tensor) error {
			if err := compare(outs, want, cfg.rtol, cfg.atol); err != nil {
				return fmt.Errorf("output differs from the stored output: %w", err)
			}
			return nil
		},
	}
	ctx := context.Background()
	if cfg.before {
		o := opts
		o.DisableKernels = true
		if before, err = bench.Run(ctx, modelPath, m, o, other); err != nil {
			return nil, nil, err
		}
	}
	if after, err = bench.Run(ctx, modelPath, m, opts, other); err != nil {
		return nil, nil, err
	}
	if cfg.cpuprofile != "" {
		if err := profile(cfg.cpuprofile+"."+filepath.Base(dir)+".pprof", func() error {
			_, err := bench.Run(ctx, modelPath, m, opts, nil)
			return err
		}); err != nil {
			return nil, nil, err
		}
	}
	return after, before, nil
}

// profile writes a CPU profile of f to path.
func profile(path string, f func() error) (err error) {
	out, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	defer func() {
		if cerr := out.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("--cpuprofile: %w", cerr)
		}
	}()
	if err := pprof.StartCPUProfile(out); err != nil {
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	defer pprof.StopCPUProfile()
	return f()
}
