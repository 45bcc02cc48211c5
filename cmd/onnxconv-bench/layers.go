//go:build cgo

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/executor/kernels"
	"github.com/onnxconv/onnxconv/runtimes/ort"
)

// ortNodeTime is one node of ONNX Runtime's profile: its name and op type
// (after ONNX Runtime's fusions: "FusedConv", or the NCHWc layout's
// "Conv" on reordered data) and its kernel time in each run, in order.
type ortNodeTime struct {
	Name, Op string
	Times    []time.Duration
}

// ortProfile is what parseORTProfile reads from an ONNX Runtime profile.
type ortProfile struct {
	// Nodes in the order of their first event.
	Nodes []*ortNodeTime
	// Runs is each run's wall time ("model_run" events), in order.
	Runs []time.Duration
}

// parseORTProfile reads ONNX Runtime's profile (the JSON array of Chrome
// trace events that EnableProfiling writes): each "Node" event named
// "<node>_kernel_time" is one run of a node; "Session" events named
// "model_run" are whole runs. Fence events and the session's setup are
// left out.
func parseORTProfile(r io.Reader) (*ortProfile, error) {
	var evs []struct {
		Cat  string `json:"cat"`
		Name string `json:"name"`
		Dur  int64  `json:"dur"`
		Args struct {
			OpName string `json:"op_name"`
		} `json:"args"`
	}
	if err := json.NewDecoder(r).Decode(&evs); err != nil {
		return nil, fmt.Errorf("ONNX Runtime profile: %w", err)
	}
	p := &ortProfile{}
	idx := map[string]*ortNodeTime{}
	for _, ev := range evs {
		d := time.Duration(ev.Dur) * time.Microsecond
		switch {
		case ev.Cat == "Session" && ev.Name == "model_run":
			p.Runs = append(p.Runs, d)
		case ev.Cat == "Node" && strings.HasSuffix(ev.Name, "_kernel_time"):
			name := strings.TrimSuffix(ev.Name, "_kernel_time")
			n := idx[name]
			if n == nil {
				n = &ortNodeTime{Name: name, Op: ev.Args.OpName}
				idx[name] = n
				p.Nodes = append(p.Nodes, n)
			}
			n.Times = append(n.Times, d)
		}
	}
	if len(p.Nodes) == 0 {
		return nil, fmt.Errorf("ONNX Runtime profile: no node events")
	}
	return p, nil
}

// dropFirst removes the first k runs (warm-up) from every node's and the
// session's times.
func (p *ortProfile) dropFirst(k int) {
	for _, n := range p.Nodes {
		n.Times = n.Times[min(k, len(n.Times)):]
	}
	p.Runs = p.Runs[min(k, len(p.Runs)):]
}

// layerRow is one row of the comparison: a step of the executor (one node,
// or a fused chain) with the ONNX Runtime nodes mapped to it, or an ONNX
// Runtime node mapped to no step.
type layerRow struct {
	// nodes, ops: the executor step's nodes; ortNodes, ortOps: ONNX
	// Runtime's nodes mapped to it.
	nodes, ops, ortNodes, ortOps []string
	kind                         string
	ours, ortT                   stat
}

// stat is a least and a median time.
type stat struct{ min, med time.Duration }

func statOf(ts []time.Duration) stat {
	if len(ts) == 0 {
		return stat{}
	}
	s := slices.Clone(ts)
	slices.Sort(s)
	return stat{min: s[0], med: s[len(s)/2]}
}

func (s stat) add(o stat) stat { return stat{min: s.min + o.min, med: s.med + o.med} }

// mapLayers joins the executor's steps with ONNX Runtime's nodes by name:
// an ONNX Runtime node whose name is one of a step's node names counts in
// that step, and so does one named after a value the step writes with
// "_nchwc" after it (the NCHWc layout transformer names its convolutions,
// pools and their fused activations or Add after the output value of the
// chain it replaced), and so does one named after a step's node with
// "/" and the names of ONNX Runtime's fusions after it; the others
// (ReorderInput/ReorderOutput of the NCHWc
// layout, nodes ONNX Runtime made under new names) are rows of their own.
// Rows are sorted by the excess of the least times (ours − ONNX
// Runtime's), largest first.
func mapLayers(steps []executor.StepTime, prof *ortProfile) []layerRow {
	rows := make([]layerRow, 0, len(steps))
	byNode, byValue := map[string]int{}, map[string]int{}
	for _, st := range steps {
		if len(st.Nodes) == 0 && st.Kind != "segment" {
			continue // guards and static values: no node, ~0 time
		}
		for _, n := range st.Nodes {
			if _, dup := byNode[n]; !dup {
				byNode[n] = len(rows)
			}
		}
		for _, v := range st.Outputs {
			if _, dup := byValue[v]; !dup {
				byValue[v] = len(rows)
			}
		}
		rows = append(rows, layerRow{nodes: st.Nodes, ops: st.Ops, kind: st.Kind, ours: statOf(st.Times)})
	}
	for _, n := range prof.Nodes {
		i, ok := byNode[n.Name]
		if base, cut := strings.CutSuffix(n.Name, "_nchwc"); !ok && cut {
			i, ok = byValue[base]
		}
		// A node ONNX Runtime fused keeps the first node's name with the
		// fusions' names after it: "/l/MatMul/MatMulAddFusion",
		// "/l/MatMul_1/MatmulTransposeFusion//MatMulScaleFusion/".
		for name := n.Name; !ok; {
			k := strings.LastIndexByte(name, '/')
			if k <= 0 {
				break
			}
			name = name[:k]
			i, ok = byNode[name]
		}
		if !ok {
			rows = append(rows, layerRow{ortNodes: []string{n.Name}, ortOps: []string{n.Op}, ortT: statOf(n.Times)})
			continue
		}
		r := &rows[i]
		r.ortNodes = append(r.ortNodes, n.Name)
		r.ortOps = append(r.ortOps, n.Op)
		r.ortT = r.ortT.add(statOf(n.Times))
	}
	sort.SliceStable(rows, func(a, b int) bool {
		return rows[a].ours.min-rows[a].ortT.min > rows[b].ours.min-rows[b].ortT.min
	})
	return rows
}

// runLayers compares each model's executor steps with ONNX Runtime's
// nodes (--layers): both sides run the model alternately, warm-up runs
// first, the executor timing each step (executor.StepTimes) and ONNX
// Runtime profiling its nodes (its profiler, read from the JSON it writes
// when the session closes), and the rows are printed sorted by the
// executor's excess over ONNX Runtime (least times over the runs).
func runLayers(cfg config) error {
	dirs, err := modelDirs(cfg.models, cfg.only)
	if err != nil {
		return err
	}
	if cfg.threads > 0 {
		runtime.GOMAXPROCS(cfg.threads)
	}
	rt, err := ort.OpenDefault(cfg.threads)
	if err != nil {
		return fmt.Errorf("opening ONNX Runtime: %w", err)
	}
	defer rt.Close()
	fmt.Printf("per-node comparison: ONNX Runtime %s, %d intra-op threads; GOMAXPROCS %d; SGEMM kernel %s; %d runs each side after %d warm-up, alternating\n",
		rt.Version(), cfg.threads, runtime.GOMAXPROCS(0), kernels.KernelName(), cfg.reps, cfg.warmup)
	for _, d := range dirs {
		res, err := layersModel(cfg, rt, d)
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(d), err)
		}
		if err := writeLayers(os.Stdout, filepath.Base(d), res, cfg.layersTop); err != nil {
			return err
		}
	}
	return nil
}

// layersResult is one model's comparison.
type layersResult struct {
	rows []layerRow
	// oursRun, ortRun: whole runs (the executor's Run; ONNX Runtime's
	// model_run events).
	oursRun, ortRun stat
}

func layersModel(cfg config, rt *ort.Runtime, dir string) (*layersResult, error) {
	modelPath, m, want, err := loadFolder(dir)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	times := &executor.StepTimes{}
	ex, err := executor.New(m, executor.Options{Backend: cfg.backend, Threads: cfg.threads, StepTimes: times})
	if err != nil {
		return nil, err
	}
	defer ex.Close()
	ins, err := childInputs(dir, ex.Inputs())
	if err != nil {
		return nil, fmt.Errorf("inputs: %w", err)
	}
	protos := make([]*onnxpb.TensorProto, len(ins))
	for i, t := range ins {
		if protos[i], err = canonical.TensorToProto(t); err != nil {
			return nil, err
		}
	}
	tmp, err := os.MkdirTemp("", "onnxconv-layers-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	sess, err := rt.NewSession(modelPath, ort.WithIntraOpThreads(cfg.threads), ort.WithProfiling(filepath.Join(tmp, "ort")))
	if err != nil {
		return nil, fmt.Errorf("ONNX Runtime session: %w", err)
	}
	closed := false
	defer func() {
		if !closed {
			_ = sess.Close()
		}
	}()
	ctx := context.Background()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var oursRuns []time.Duration
	for i := 0; i < cfg.warmup+cfg.reps; i++ {
		timed := i >= cfg.warmup
		if timed {
			times.Start()
		}
		t0 := time.Now()
		outs, err := ex.Run(ctx, ins)
		d := time.Since(t0)
		times.Stop()
		if err != nil {
			return nil, fmt.Errorf("executor: %w", err)
		}
		if timed {
			oursRuns = append(oursRuns, d)
		} else if err := compare(outs, want, cfg.rtol, cfg.atol); err != nil {
			return nil, fmt.Errorf("executor: output differs from the stored output: %w", err)
		}
		got, err := sess.Run(protos)
		if err != nil {
			return nil, fmt.Errorf("ONNX Runtime: %w", err)
		}
		if !timed {
			outs := make([]*canonical.Tensor, len(got))
			for j, tp := range got {
				if outs[j], err = canonical.TensorFromProto(tp); err != nil {
					return nil, err
				}
			}
			if err := compare(outs, want, cfg.rtol, cfg.atol); err != nil {
				return nil, fmt.Errorf("ONNX Runtime: output differs from the stored output: %w", err)
			}
		}
	}
	closed = true
	if err := sess.Close(); err != nil {
		return nil, fmt.Errorf("ONNX Runtime session: %w", err)
	}
	files, err := filepath.Glob(filepath.Join(tmp, "ort*.json"))
	if err != nil || len(files) != 1 {
		return nil, fmt.Errorf("ONNX Runtime wrote %d profiles, want 1 (%v)", len(files), err)
	}
	f, err := os.Open(files[0])
	if err != nil {
		return nil, err
	}
	prof, err := parseORTProfile(f)
	_ = f.Close()
	if err != nil {
		return nil, err
	}
	prof.dropFirst(cfg.warmup)
	return &layersResult{rows: mapLayers(times.Steps(), prof), oursRun: statOf(oursRuns), ortRun: statOf(prof.Runs)}, nil
}

// writeLayers prints one model's rows (the first top, all if top <= 0)
// and the totals over all rows.
func writeLayers(w io.Writer, model string, res *layersResult, top int) error {
	fmt.Fprintf(w, "== %s: executor steps against ONNX Runtime nodes, µs (least and median over the runs), sorted by excess = ours − ORT (least)\n", model)
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\texcess\tours\tORT\tours p50\tORT p50\tratio\tours (nodes)\tORT (nodes)\t")
	us := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/1e3) }
	var sumOurs, sumORT stat
	unmapped := 0
	for i, r := range res.rows {
		sumOurs, sumORT = sumOurs.add(r.ours), sumORT.add(r.ortT)
		if len(r.nodes) == 0 {
			unmapped++
		}
		if top > 0 && i >= top {
			continue
		}
		ratio := "-"
		if r.ortT.min > 0 && len(r.nodes) > 0 {
			ratio = fmt.Sprintf("%.2f", float64(r.ours.min)/float64(r.ortT.min))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", i+1, us(r.ours.min-r.ortT.min), us(r.ours.min), us(r.ortT.min),
			us(r.ours.med), us(r.ortT.med), ratio, describeNodes(r.kind, r.nodes, r.ops), describeNodes("", r.ortNodes, r.ortOps))
	}
	fmt.Fprintf(tw, "\t%s\t%s\t%s\t%s\t%s\t%.2f\tsum of all %d rows\t(%d ORT nodes mapped to no step)\t\n", us(sumOurs.min-sumORT.min), us(sumOurs.min), us(sumORT.min),
		us(sumOurs.med), us(sumORT.med), float64(sumOurs.min)/float64(max(sumORT.min, 1)), len(res.rows), unmapped)
	fmt.Fprintf(tw, "\t%s\t%s\t%s\t%s\t%s\t%.2f\twhole runs\t\t\n", us(res.oursRun.min-res.ortRun.min), us(res.oursRun.min), us(res.ortRun.min),
		us(res.oursRun.med), us(res.ortRun.med), float64(res.oursRun.min)/float64(max(res.ortRun.min, 1)))
	return tw.Flush()
}

// describeNodes names a row's nodes: "Conv+Clip conv1 (+1)".
func describeNodes(kind string, nodes, ops []string) string {
	if len(nodes) == 0 {
		if kind != "" {
			return kind
		}
		return "-"
	}
	s := strings.Join(ops, "+") + " " + nodes[0]
	if len(nodes) > 1 {
		s += fmt.Sprintf(" (+%d)", len(nodes)-1)
	}
	if kind == "segment" {
		s = "segment: " + s
	}
	return s
}
