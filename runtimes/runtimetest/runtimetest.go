// Package runtimetest is the conformance suite every reference runtime
// runs, as importers/importertest is for importers: on each case (a model
// file of the runtime's format with samples whose outputs the real
// framework computed and stored) a session opens, computes the stored
// outputs, gives the same answer again (no state kept from one sample to
// the next), leaves its inputs untouched, answers concurrent runs alike,
// hands out intermediate values when it can (verify.CaptureRunner, or an
// ONNX loader's capture through runtimes.Setup), stops on a cancelled
// context, closes twice without harm and refuses to run once closed; a
// file that is not a model fails to open with the runtime's typed error
// (errors.As); and no child process outlives its session. Call Run from
// the runtime package's tests.
package runtimetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/verify"
)

// Bound is how long one open or run of a case may take.
const Bound = 5 * time.Minute

// Sample is one set of inputs and the outputs the framework computed for
// them, both in the model's order.
type Sample struct {
	Inputs, Want []*canonical.Tensor
}

// Case is a model file and the samples it is run on, in order, on one
// session. Samples whose inputs differ in dims exercise dynamic dims.
type Case struct {
	// Name names the subtest (the file's base name when empty).
	Name    string
	Path    string
	Options runtimes.OpenOptions
	Samples []Sample
	// ComputedBy, when set, is what the session must say computed the
	// model once it ran: its runtimes.SessionNoter note starts with
	// "computed by " and it (a runtime of more than one engine).
	ComputedBy string
	// RTol and ATol bound |got-want| <= ATol + RTol*|want| for floating
	// outputs (0: 1e-4 and 1e-5); other types must be equal.
	RTol, ATol float64
}

// Suite is what a runtime's test gives Run.
type Suite struct {
	Runtime runtimes.Runtime
	Cases   []Case
	// BadModel tells whether err is the runtime's typed error for a file
	// that is not a model it reads (use errors.As); it is required.
	BadModel func(err error) bool
	// Serial is set for a runtime whose sessions serve one run at a time
	// and say so: concurrent runs are then not tried.
	Serial bool
}

// Tally counts what the suite did, for the notes of a change.
type Tally struct {
	Cases, Samples, Checks int
	// DTypes are the element types of the inputs and outputs checked;
	// MultiOutput, ZeroSize and DynamicDims whether a case had more than
	// one output, a tensor with no element, and samples of other dims.
	DTypes                             []string
	MultiOutput, ZeroSize, DynamicDims bool
}

func (t Tally) String() string {
	return fmt.Sprintf("%d cases, %d samples, %d checks; dtypes %s; multiple outputs %v, zero-size %v, dynamic dims %v",
		t.Cases, t.Samples, t.Checks, strings.Join(t.DTypes, ","), t.MultiOutput, t.ZeroSize, t.DynamicDims)
}

// Run runs the suite as subtests and returns its tally.
func Run(t *testing.T, s Suite) Tally {
	t.Helper()
	var tl Tally
	info := s.Runtime.Info()
	if info.Name == "" || info.Version == "" || info.Description == "" || info.Where == "" {
		t.Errorf("incomplete Info %+v", info)
	}
	if s.BadModel == nil {
		t.Fatalf("%s: Suite.BadModel is required", info.Name)
	}
	if len(s.Cases) == 0 {
		t.Fatalf("%s: no case", info.Name)
	}
	before := children(t)
	for _, c := range s.Cases {
		name := c.Name
		if name == "" {
			name = filepath.Base(c.Path)
		}
		t.Run(name, func(t *testing.T) {
			if len(c.Samples) == 0 {
				t.Fatalf("%s: no sample", c.Path)
			}
			tl.Cases++
			tl.Samples += len(c.Samples)
			tl.Checks += runCase(t, s, c, &tl)
			if extra := children(t) - before; extra > 0 {
				t.Errorf("%d child process(es) left after the session closed", extra)
			}
			tl.Checks++
		})
	}
	t.Run("bad model", func(t *testing.T) {
		tl.Checks += badModel(t, s)
		if extra := children(t) - before; extra > 0 {
			t.Errorf("%d child process(es) left after a failed open", extra)
		}
	})
	slices.Sort(tl.DTypes)
	tl.DTypes = slices.Compact(tl.DTypes)
	t.Logf("%s: %s", info.Name, tl)
	return tl
}

// open opens the case's model. The context of Open lives as long as the
// test: a runtime may tie its process to it.
func open(t *testing.T, s Suite, c Case) runtimes.Session {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	sess, err := s.Runtime.Open(ctx, c.Path, c.Options)
	if err != nil {
		t.Fatalf("Open(%s): %v", c.Path, err)
	}
	return sess
}

func run(sess runtimes.Session, in []*canonical.Tensor) ([]*canonical.Tensor, error) {
	ctx, cancel := context.WithTimeout(context.Background(), Bound)
	defer cancel()
	return sess.Run(ctx, in)
}

// runCase runs the checks of one case and returns how many it made.
func runCase(t *testing.T, s Suite, c Case, tl *Tally) int {
	checks := 0
	sess := open(t, s, c)
	closed := false
	defer func() {
		if !closed {
			_ = sess.Close()
		}
	}()
	var first []*canonical.Tensor
	for i, smp := range c.Samples {
		tally(tl, smp)
		if i > 0 && !sameDims(smp.Inputs, c.Samples[0].Inputs) {
			tl.DynamicDims = true
		}
		copies := clones(smp.Inputs)
		got, err := run(sess, smp.Inputs)
		if err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
		if err := match(got, smp.Want, c); err != nil {
			t.Errorf("sample %d: %v", i, err)
		}
		if err := same(smp.Inputs, copies); err != nil {
			t.Errorf("sample %d: the run changed its inputs: %v", i, err)
		}
		checks += 2
		if i == 0 {
			first = got
		}
	}
	if c.ComputedBy != "" {
		n, ok := sess.(runtimes.SessionNoter)
		if !ok || !strings.HasPrefix(n.SessionNote(), "computed by "+c.ComputedBy) {
			t.Errorf("want the session computed by %s, it is %T saying %q", c.ComputedBy, sess, note(sess))
		}
		checks++
	}
	// The first sample again, after the others: the same answer.
	again, err := run(sess, c.Samples[0].Inputs)
	if err != nil {
		t.Fatalf("sample 0 again: %v", err)
	}
	if err := exact(again, first); err != nil {
		t.Errorf("sample 0 run again differs from its first run: %v", err)
	}
	checks++
	if !s.Serial {
		checks += concurrent(t, sess, c.Samples[0].Inputs, first)
	}
	checks += capture(t, s, sess, c, first)
	checks += cancelled(t, sess, c.Samples[0].Inputs)

	closed = true
	if err := sess.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := sess.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := run(sess, c.Samples[0].Inputs); err == nil {
		t.Errorf("Run after Close succeeded, want an error")
	}
	return checks + 3
}

// concurrent runs the first sample on four goroutines at once: each must
// get the answer of the serial run.
func concurrent(t *testing.T, sess runtimes.Session, in, want []*canonical.Tensor) int {
	t.Helper()
	const n = 4
	errs := make([]error, n)
	var wg sync.WaitGroup
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := run(sess, in)
			if err == nil {
				err = exact(got, want)
			}
			errs[g] = err
		}()
	}
	wg.Wait()
	for g, err := range errs {
		if err != nil {
			t.Errorf("concurrent run %d: %v", g, err)
		}
	}
	return 1
}

// capture checks the values a session hands out by name: the graph's
// outputs as Run computed them, and one value computed inside. A session
// that is a verify.CaptureRunner is asked itself; a runtime that loads
// ONNX files as they are (runtimes.ONNXLoader) through a runtimes.Setup
// side. Other runtimes offer none: nothing to check.
func capture(t *testing.T, s Suite, sess runtimes.Session, c Case, want []*canonical.Tensor) int {
	t.Helper()
	cr, ok := sess.(verify.CaptureRunner)
	_, loader := s.Runtime.(runtimes.ONNXLoader)
	if !ok && !loader {
		return 0
	}
	m, err := canonical.Load(c.Path, canonical.LoadOptions{})
	if err != nil {
		t.Fatalf("capture: %v", err)
	}
	defer m.Close()
	if !ok {
		setup, err := runtimes.NewSetup([]string{s.Runtime.Info().Name}, 0, runtimes.NewSet(nil, s.Runtime))
		if err != nil {
			t.Fatal(err)
		}
		defer setup.Close()
		side, err := setup.Side(0, c.Path, m)
		if err != nil {
			t.Fatal(err)
		}
		if cr, ok = side.Runner.(verify.CaptureRunner); !ok {
			t.Fatalf("the side of an ONNX loader is no verify.CaptureRunner")
		}
	}
	var names []string
	for _, v := range m.Graph.Outputs {
		names = append(names, v.Name)
	}
	inner := ""
	for _, n := range m.Graph.Nodes {
		for _, o := range n.Outputs {
			if o != nil && o.Name != "" && !slices.Contains(names, o.Name) && inner == "" {
				inner = o.Name
			}
		}
	}
	if inner != "" {
		names = append(names, inner)
	}
	ctx, cancel := context.WithTimeout(context.Background(), Bound)
	defer cancel()
	got, err := cr.RunCapture(ctx, c.Samples[0].Inputs, names)
	if err != nil {
		t.Fatalf("RunCapture(%q): %v", names, err)
	}
	for i, v := range m.Graph.Outputs {
		g := got[v.Name]
		if g == nil {
			t.Errorf("RunCapture: no %q", v.Name)
			continue
		}
		if err := match([]*canonical.Tensor{g}, []*canonical.Tensor{want[i]}, c); err != nil {
			t.Errorf("RunCapture: output %q differs from Run's: %v", v.Name, err)
		}
	}
	if inner != "" && got[inner] == nil {
		t.Errorf("RunCapture: no value for the inner %q", inner)
	}
	return 1
}

// cancelled runs on a context that has ended: the run must fail with the
// context's error.
func cancelled(t *testing.T, sess runtimes.Session, in []*canonical.Tensor) int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := sess.Run(ctx, in); !errors.Is(err, context.Canceled) {
		t.Errorf("Run on a cancelled context = %v, want context.Canceled", err)
	}
	return 1
}

// badModel opens files that are not models: one of junk bytes named like
// the first case's file (Open, or the first run, fails with the
// runtime's typed error), and one that does not exist.
func badModel(t *testing.T, s Suite) int {
	t.Helper()
	c := s.Cases[0]
	dir := t.TempDir()
	junk := filepath.Join(dir, filepath.Base(c.Path))
	if err := os.WriteFile(junk, []byte("this is not a model\x00\x01\x02\xff"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), Bound)
	defer cancel()
	sess, err := s.Runtime.Open(ctx, junk, c.Options)
	if err == nil {
		_, err = sess.Run(ctx, c.Samples[0].Inputs)
		_ = sess.Close()
	}
	if err == nil || !s.BadModel(err) {
		t.Errorf("a file of junk bytes (%s) gave %v (%T), want the runtime's typed error", junk, err, err)
	}
	missing := filepath.Join(dir, "missing", filepath.Base(c.Path))
	sess, err = s.Runtime.Open(ctx, missing, c.Options)
	if err == nil {
		_, err = sess.Run(ctx, c.Samples[0].Inputs)
		_ = sess.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing file gave %v, want an error naming it", err)
	}
	return 2
}

func note(sess runtimes.Session) string {
	if n, ok := sess.(runtimes.SessionNoter); ok {
		return n.SessionNote()
	}
	return ""
}

func tally(tl *Tally, s Sample) {
	for _, list := range [][]*canonical.Tensor{s.Inputs, s.Want} {
		for _, x := range list {
			tl.DTypes = append(tl.DTypes, canonical.ElemTypeName(x.DataType))
			if n, err := x.NumElements(); err == nil && n == 0 {
				tl.ZeroSize = true
			}
		}
	}
	if len(s.Want) > 1 {
		tl.MultiOutput = true
	}
}

func sameDims(a, b []*canonical.Tensor) bool {
	return slices.EqualFunc(a, b, func(x, y *canonical.Tensor) bool { return slices.Equal(x.Dims, y.Dims) })
}

// clones copies the tensors' element data (a run may not change them).
func clones(ts []*canonical.Tensor) [][]byte {
	out := make([][]byte, len(ts))
	for i, x := range ts {
		out[i] = content(x)
	}
	return out
}

// content is a tensor's element data as bytes (strings joined with their
// lengths).
func content(x *canonical.Tensor) []byte {
	if x.DataType == canonical.String {
		s, err := x.Strings()
		if err != nil {
			return []byte(err.Error())
		}
		var b []byte
		for _, e := range s {
			b = append(strconv.AppendInt(b, int64(len(e)), 10), ':')
			b = append(b, e...)
		}
		return b
	}
	b, err := x.Bytes()
	if err != nil {
		return []byte(err.Error())
	}
	return slices.Clone(b)
}

func same(ts []*canonical.Tensor, was [][]byte) error {
	for i, x := range ts {
		if !bytes.Equal(content(x), was[i]) {
			return fmt.Errorf("input %d (%q)", i, x.Name)
		}
	}
	return nil
}

// exact checks that two answers of the same session hold the same bytes.
func exact(got, want []*canonical.Tensor) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d outputs, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].DataType != want[i].DataType || !slices.Equal(got[i].Dims, want[i].Dims) || !bytes.Equal(content(got[i]), content(want[i])) {
			return fmt.Errorf("output %d (%q) differs", i, want[i].Name)
		}
	}
	return nil
}

// match compares outputs with the stored ones: element type and dims
// equal, floats within the case's tolerance, everything else equal.
func match(got, want []*canonical.Tensor, c Case) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d outputs, want %d", len(got), len(want))
	}
	rtol, atol := c.RTol, c.ATol
	if rtol == 0 {
		rtol = 1e-4
	}
	if atol == 0 {
		atol = 1e-5
	}
	for i, w := range want {
		g := got[i]
		if g == nil {
			return fmt.Errorf("output %d (%q) is nil", i, w.Name)
		}
		if g.DataType != w.DataType || !slices.Equal(g.Dims, w.Dims) {
			return fmt.Errorf("output %d (%q) is %s%v, want %s%v", i, w.Name,
				canonical.ElemTypeName(g.DataType), g.Dims, canonical.ElemTypeName(w.DataType), w.Dims)
		}
		if !canonical.IsFloatType(w.DataType) {
			if !bytes.Equal(content(g), content(w)) {
				return fmt.Errorf("output %d (%q) differs from the stored values", i, w.Name)
			}
			continue
		}
		gv, err := g.Float64s()
		if err != nil {
			return fmt.Errorf("output %d (%q): %w", i, w.Name, err)
		}
		wv, err := w.Float64s()
		if err != nil {
			return fmt.Errorf("stored output %d (%q): %w", i, w.Name, err)
		}
		worst, at := 0.0, -1
		for k := range wv {
			d := math.Abs(gv[k] - wv[k])
			if math.IsNaN(wv[k]) && math.IsNaN(gv[k]) || gv[k] == wv[k] {
				continue
			}
			if math.IsNaN(d) || d > atol+rtol*math.Abs(wv[k]) {
				if at < 0 || d > worst || math.IsNaN(d) {
					worst, at = d, k
				}
			}
		}
		if at >= 0 {
			return fmt.Errorf("output %d (%q): element %d is %g, stored %g (|diff| %g > %g + %g*|stored|)", i, w.Name, at, gv[at], wv[at], worst, atol, rtol)
		}
	}
	return nil
}

// children counts the live child processes of this process (Linux: from
// /proc); elsewhere it is 0 and the check holds trivially.
func children(t *testing.T) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		return 0
	}
	self := strconv.Itoa(os.Getpid())
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("counting child processes: %v", err)
	}
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // ended meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces and parens.
		k := bytes.LastIndexByte(b, ')')
		if k < 0 {
			continue
		}
		f := strings.Fields(string(b[k+1:]))
		if len(f) > 1 && f[1] == self && f[0] != "Z" {
			n++
		}
	}
	return n
}
