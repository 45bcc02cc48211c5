package main

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// openPTY returns a new pseudo-terminal's controlling side and its
// terminal side.
func openPTY(t *testing.T) (ptm, pts *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("opening /dev/ptmx: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlocking the pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	pts, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("opening the pty's terminal side: %v", err)
	}
	return ptm, pts
}

// slowModel is X [rows, n] through k times MatMul by one n×n weight and
// Tanh: one sample takes seconds on one thread, with no step in between
// to report.
func slowModel(t *testing.T, dir string, rows, n, k int) string {
	t.Helper()
	rng := rand.New(rand.NewSource(1))
	w := make([]float32, n*n)
	for i := range w {
		w[i] = float32(rng.NormFloat64()) / float32(n)
	}
	g := &onnxpb.GraphProto{
		Name:        proto.String("slow"),
		Input:       []*onnxpb.ValueInfoProto{{Name: proto.String("X"), Type: floatType(int64(rows), int64(n))}},
		Initializer: []*onnxpb.TensorProto{{Name: proto.String("W"), Dims: []int64{int64(n), int64(n)}, DataType: proto.Int32(1), FloatData: w}},
	}
	prev := "X"
	for i := range k {
		mm, th := fmt.Sprintf("mm%d", i), fmt.Sprintf("t%d", i)
		g.Node = append(g.Node, node("MatMul", mm, []string{prev, "W"}, []string{mm}), node("Tanh", th, []string{mm}, []string{th}))
		prev = th
	}
	g.Output = []*onnxpb.ValueInfoProto{{Name: proto.String(prev), Type: floatType(int64(rows), int64(n))}}
	m := &onnxpb.ModelProto{IrVersion: proto.Int64(8), OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(17)}}, Graph: g}
	return writeFile(t, dir, "slow.onnx", marshal(t, m))
}

// A long verification run on a terminal is never silent: from the first
// line to the end, something is drawn at least every 2 s (the status line
// with the step and the time it has run), although one sample of the
// model takes seconds.
func TestProgressOnATerminal(t *testing.T) {
	// 96 layers: the run must last over 4 s on an idle machine (Tanh on
	// AVX2 made 24 layers end in under 4 s).
	bin := onnxconvBin(t)
	dir := t.TempDir()
	in := slowModel(t, dir, 1024, 1024, 96)
	out := filepath.Join(dir, "out.onnx")
	ptm, pts := openPTY(t)
	defer ptm.Close()
	cmd := exec.Command(bin, "convert", in, out, "--opset", "18", "--samples", "1", "--threads", "1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pts.Close()
	waited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		// A child of the command that still holds the terminal must not
		// keep the reader waiting: what is left is read for 3 s more.
		_ = ptm.SetReadDeadline(time.Now().Add(3 * time.Second))
		waited <- err
	}()
	type chunk struct {
		at   time.Time
		text string
	}
	chunks := make(chan chunk, 1024)
	go func() {
		defer close(chunks)
		r := bufio.NewReader(ptm)
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				chunks <- chunk{time.Now(), string(buf[:n])}
			}
			if err != nil { // EIO once the command has ended
				return
			}
		}
	}()
	var all strings.Builder
	var first, last time.Time
	var longest time.Duration
	beats := 0
	for c := range chunks {
		if first.IsZero() {
			first = c.at
		} else if gap := c.at.Sub(last); gap > longest {
			longest = gap
		}
		last = c.at
		if strings.Contains(c.text, "\r\x1b[K") {
			beats++
		}
		all.WriteString(c.text)
	}
	err := <-waited
	text := all.String()
	if err != nil {
		t.Fatalf("convert: %v\n%s", err, text)
	}
	if !strings.Contains(text, "EQUIVALENT") {
		t.Fatalf("no verdict:\n%s", text)
	}
	if run := last.Sub(first); run < 4*time.Second || beats < 3 {
		t.Fatalf("the run lasted %s with %d status lines: too short to show the heartbeat; raise --samples", run, beats)
	}
	t.Logf("the run lasted %s: %d status lines, longest gap %s", last.Sub(first), beats, longest)
	if longest > 2*time.Second {
		t.Fatalf("%s without any output on the terminal (longest gap); output:\n%q", longest, text)
	}
	if !strings.Contains(text, "verifying") {
		t.Fatalf("the status line does not name the step:\n%q", text)
	}
}

// Elsewhere (a pipe, a log file), a long step writes a plain timed line
// every 10 s and no terminal control sequences.
func TestProgressPlainLines(t *testing.T) {
	var buf strings.Builder
	clock := time.Unix(0, 0)
	p := &progress{w: &buf, now: func() time.Time { return clock }}
	p.logf("verifying %s against %s", "out.onnx", "ONNX Runtime")
	p.samples(1, 4)
	clock = clock.Add(12 * time.Second)
	p.tick(plainBeat)
	p.close()
	got := buf.String()
	want := "verifying out.onnx against ONNX Runtime\n... still verifying out.onnx against ONNX Runtime (12s, sample 1 of 4 done)\n"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	// -q: nothing at all.
	buf.Reset()
	q := cmdProgress(&buf, true)
	q.logf("importing")
	q.samples(1, 2)
	q.bytes("reading", 1<<29, 1<<30)
	q.close()
	if buf.Len() != 0 {
		t.Fatalf("-q wrote %q", buf.String())
	}
}
