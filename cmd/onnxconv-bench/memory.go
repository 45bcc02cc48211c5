//go:build cgo

package main

// --memory: the peak RSS of each side in a process of its own. The parent
// runs this binary again once per model and side with --memory-child; the
// child loads the model, runs it --warmup + --reps times on the model
// folder's test_data_set_0 inputs with --threads threads, checks the
// outputs against the stored ones and prints its VmHWM (the whole process:
// loading included). The ONNX Runtime child calls onnxruntime_go directly
// (no Go-side parse of the model, which ort.NewSession does for its output
// probe) and never loads the executor; the executor child never loads
// ONNX Runtime.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"

	ortgo "github.com/yalue/onnxruntime_go"

	"github.com/onnxconv/onnxconv/bench"
	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/runtimes/ort"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

const peakPrefix = "peak_rss_bytes "

// memRow is one model's figures.
type memRow struct {
	model          string
	fileBytes      int64
	ort, executor  int64
	ortErr, exeErr error
}

// runMemory measures every model folder of cfg.models in child processes.
func runMemory(cfg config) error {
	dirs, err := modelDirs(cfg.models, cfg.only)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("--memory: %w", err)
	}
	var rows []memRow
	for _, d := range dirs {
		r := memRow{model: filepath.Base(d)}
		if st, err := os.Stat(filepath.Join(d, "model.onnx")); err == nil {
			r.fileBytes = st.Size()
		}
		if !cfg.noORT {
			r.ort, r.ortErr = childPeak(cfg, self, "onnxruntime", d)
		}
		r.executor, r.exeErr = childPeak(cfg, self, "executor", d)
		rows = append(rows, r)
	}
	writeMemTable(os.Stdout, cfg, rows)
	for _, r := range rows {
		if r.ortErr != nil || r.exeErr != nil {
			return errors.New("some models failed (see the table)")
		}
	}
	return nil
}

func childPeak(cfg config, self, side, dir string) (int64, error) {
	args := []string{"--memory-child", side, "--threads", strconv.Itoa(cfg.threads),
		"--reps", strconv.Itoa(cfg.reps), "--warmup", strconv.Itoa(cfg.warmup),
		"--rtol", strconv.FormatFloat(cfg.rtol, 'g', -1, 64), "--atol", strconv.FormatFloat(cfg.atol, 'g', -1, 64)}
	if cfg.backend != "" {
		args = append(args, "--backend", cfg.backend)
	}
	if cfg.memprofile != "" && side == "executor" {
		args = append(args, "--memprofile", cfg.memprofile+"."+filepath.Base(dir)+".pprof")
	}
	args = append(args, dir)
	cmd := exec.Command(self, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s: %w: %s", side, err, strings.TrimSpace(errb.String()))
	}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), peakPrefix); ok {
			return strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
		}
	}
	return 0, fmt.Errorf("%s: no %q line in the child's output", side, strings.TrimSpace(peakPrefix))
}

func writeMemTable(w io.Writer, cfg config, rows []memRow) {
	mib := func(b int64) string { return fmt.Sprintf("%.0f", float64(b)/(1<<20)) }
	fmt.Fprintf(w, "peak RSS (VmHWM, whole process, one process per model and side), %d thread(s), %d warm-up + %d runs\n",
		cfg.threads, cfg.warmup, cfg.reps)
	fmt.Fprintln(w, "| model | file MiB | ONNX Runtime MiB | executor MiB | executor / ORT |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: |")
	var ratios []float64
	for _, r := range rows {
		o, e, ratio := mib(r.ort), mib(r.executor), "–"
		if r.ortErr != nil {
			o = "error: " + r.ortErr.Error()
		}
		if r.exeErr != nil {
			e = "error: " + r.exeErr.Error()
		}
		if r.ortErr == nil && r.exeErr == nil && r.ort > 0 {
			x := float64(r.executor) / float64(r.ort)
			ratios = append(ratios, x)
			ratio = fmt.Sprintf("%.2f", x)
		}
		fmt.Fprintf(w, "| %s | %.1f | %s | %s | %s |\n", r.model, float64(r.fileBytes)/(1<<20), o, e, ratio)
	}
	if len(ratios) > 0 {
		fmt.Fprintf(w, "| **geometric mean** | | | | %.2f |\n", bench.GeoMean(ratios))
	}
}

// memoryChild runs one side on the model folder dir and prints its peak RSS.
func memoryChild(cfg config, side, dir string) error {
	if cfg.threads > 0 {
		runtime.GOMAXPROCS(cfg.threads)
	}
	modelPath := filepath.Join(dir, "model.onnx")
	want, err := readOutputs(filepath.Join(dir, "test_data_set_0"))
	if err != nil {
		return err
	}
	var run func() ([]*canonical.Tensor, error)
	switch side {
	case "executor":
		m, err := canonical.Load(modelPath, canonical.LoadOptions{})
		if err != nil {
			return fmt.Errorf("loading: %w", err)
		}
		defer m.Close()
		ex, err := executor.New(m, executor.Options{Backend: cfg.backend, Threads: cfg.threads})
		if err != nil {
			return err
		}
		defer ex.Close()
		ins, err := childInputs(dir, ex.Inputs())
		if err != nil {
			return err
		}
		run = func() ([]*canonical.Tensor, error) { return ex.Run(context.Background(), ins) }
	case "onnxruntime":
		if _, err := ort.OpenDefault(cfg.threads); err != nil {
			return fmt.Errorf("opening ONNX Runtime: %w", err)
		}
		s, err := newORTChild(modelPath, dir, cfg.threads)
		if err != nil {
			return err
		}
		defer s.close()
		run = s.run
	default:
		return fmt.Errorf("--memory-child: unknown side %q (executor, onnxruntime)", side)
	}
	for i := 0; i < cfg.warmup+cfg.reps; i++ {
		outs, err := run()
		if err != nil {
			return fmt.Errorf("%s: %w", side, err)
		}
		if i == 0 {
			if err := compare(outs, want, cfg.rtol, cfg.atol); err != nil {
				return fmt.Errorf("%s: output differs from the stored output: %w", side, err)
			}
		}
	}
	peak := bench.PeakRSS()
	if cfg.memprofile != "" {
		f, err := os.Create(cfg.memprofile)
		if err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
		err = pprof.Lookup("heap").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
	}
	fmt.Printf("%s%d\n", peakPrefix, peak)
	return nil
}

// childInputs reads test_data_set_0's inputs for the graph inputs vals.
func childInputs(dir string, vals []*canonical.Value) ([]*canonical.Tensor, error) {
	sets, err := tensorio.LoadSamples(filepath.Join(dir, "test_data_set_0"), "input", vals, false)
	if err != nil {
		return nil, err
	}
	if len(sets) != 1 {
		return nil, fmt.Errorf("test_data_set_0 holds %d samples, want 1", len(sets))
	}
	return sets[0], nil
}

// ortChild is a bare onnxruntime_go session with its inputs made once.
type ortChild struct {
	sess *ortgo.DynamicAdvancedSession
	ins  []ortgo.Value
	nout int
}

func newORTChild(modelPath, dir string, threads int) (*ortChild, error) {
	so, err := ortgo.NewSessionOptions()
	if err != nil {
		return nil, err
	}
	defer func() { _ = so.Destroy() }()
	if err := so.SetIntraOpNumThreads(threads); err != nil {
		return nil, err
	}
	if err := so.SetInterOpNumThreads(1); err != nil {
		return nil, err
	}
	if err := so.SetExecutionMode(ortgo.ExecutionModeSequential); err != nil {
		return nil, err
	}
	ins, outs, err := ortgo.GetInputOutputInfoWithOptions(modelPath, so)
	if err != nil {
		return nil, err
	}
	vals := make([]*canonical.Value, len(ins))
	inNames := make([]string, len(ins))
	for i, in := range ins {
		inNames[i] = in.Name
		vals[i] = &canonical.Value{Name: in.Name}
	}
	outNames := make([]string, len(outs))
	for i, o := range outs {
		outNames[i] = o.Name
	}
	ts, err := childInputs(dir, vals)
	if err != nil {
		return nil, err
	}
	c := &ortChild{nout: len(outs)}
	for _, t := range ts {
		v, err := ortValue(t)
		if err != nil {
			c.close()
			return nil, fmt.Errorf("input %q: %w", t.Name, err)
		}
		c.ins = append(c.ins, v)
	}
	if c.sess, err = ortgo.NewDynamicAdvancedSession(modelPath, inNames, outNames, so); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

func ortValue(t *canonical.Tensor) (ortgo.Value, error) {
	shape := ortgo.NewShape(t.Dims...)
	switch t.DataType {
	case canonical.Float:
		raw, err := t.Bytes()
		if err != nil {
			return nil, err
		}
		d := make([]float32, len(raw)/4)
		for i := range d {
			d[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return ortgo.NewTensor(shape, d)
	case canonical.Int64:
		v, err := t.Int64s()
		if err != nil {
			return nil, err
		}
		return ortgo.NewTensor(shape, v)
	}
	return nil, fmt.Errorf("input type %v is not supported by --memory", t.DataType)
}

func (c *ortChild) run() ([]*canonical.Tensor, error) {
	outs := make([]ortgo.Value, c.nout)
	if err := c.sess.Run(c.ins, outs); err != nil {
		return nil, err
	}
	defer func() {
		for _, o := range outs {
			if o != nil {
				_ = o.Destroy()
			}
		}
	}()
	res := make([]*canonical.Tensor, len(outs))
	for i, o := range outs {
		t, ok := o.(*ortgo.Tensor[float32])
		if !ok {
			return nil, fmt.Errorf("output %d is a %T; --memory compares float32 outputs", i, o)
		}
		d := t.GetData()
		b := make([]byte, 4*len(d))
		for j, x := range d {
			binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(x))
		}
		res[i] = canonical.NewTensor("", canonical.Float, t.GetShape(), b)
	}
	return res, nil
}

func (c *ortChild) close() {
	for _, v := range c.ins {
		_ = v.Destroy()
	}
	if c.sess != nil {
		_ = c.sess.Destroy()
	}
}
