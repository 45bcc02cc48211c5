package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/onnxconv/onnxconv/internal/bytesize"
)

// progressMin is the size from which a byte progress line is drawn.
const progressMin = 100 << 20

// rateAfter is how long a step must have run before a rate is shown: a
// memory-mapped read "reads" a gigabyte in a millisecond, and a rate
// computed over that says TB/s.
const rateAfter = time.Second

// How often the heartbeat speaks during a long step: on a terminal the
// status line is redrawn every ttyBeat once the step has run that long;
// elsewhere a plain timed line is written every plainBeat.
const (
	ttyBeat   = time.Second
	plainBeat = 10 * time.Second
)

// progress reports what a command is doing, so that a long step (an
// import, a reference runtime's samples) is never silent: the pipeline's
// log lines, a status line on a terminal (the step, its sample or bytes,
// the time it has run) redrawn every second, and on anything else a timed
// line every plainBeat while a step runs. A quiet progress says nothing.
type progress struct {
	w     io.Writer
	tty   bool
	quiet bool
	now   func() time.Time
	mu    sync.Mutex
	// what, start and last are the byte progress of a read or write.
	what  string
	start time.Time
	last  time.Time
	// step is the last log line, when it began and what is known of its
	// progress (a sample, bytes); drawn is a status line on the terminal.
	step      string
	stepStart time.Time
	detail    string
	drawn     bool
	stop      chan struct{}
	stopped   chan struct{}
}

// newProgress returns the progress of a command writing to stderr; its
// heartbeat runs until close.
func newProgress(stderr io.Writer) *progress {
	p := &progress{w: stderr, now: time.Now}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
	}
	return p
}

// cmdProgress is the progress of a command: with its heartbeat running,
// or saying nothing when quiet (-q).
func cmdProgress(stderr io.Writer, quiet bool) *progress {
	if quiet {
		return &progress{w: stderr, quiet: true, now: time.Now}
	}
	return newProgress(stderr).beat()
}

// beat starts the heartbeat; close ends it.
func (p *progress) beat() *progress {
	if p.quiet || p.stop != nil {
		return p
	}
	p.stop, p.stopped = make(chan struct{}), make(chan struct{})
	period := plainBeat
	if p.tty {
		period = ttyBeat
	}
	go func() {
		defer close(p.stopped)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.tick(period)
			}
		}
	}()
	return p
}

// close ends the heartbeat and clears the status line.
func (p *progress) close() {
	if p.stop != nil {
		close(p.stop)
		<-p.stopped
		p.stop = nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
}

// tick redraws the status line (terminal) or writes a timed line of a step
// that has run at least period.
func (p *progress) tick(period time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.step == "" {
		return
	}
	elapsed := p.now().Sub(p.stepStart)
	if elapsed < period {
		return
	}
	line := fmt.Sprintf("%s (%s", p.step, elapsed.Round(time.Second))
	if p.detail != "" {
		line += ", " + p.detail
	}
	line += ")"
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[K"+line)
		p.drawn = true
		return
	}
	fmt.Fprintln(p.w, "... still "+line)
}

// clearLocked clears the status line of a terminal.
func (p *progress) clearLocked() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// logf is the pipeline's log function: one line, which is also the step
// the heartbeat reports until the next line.
func (p *progress) logf(format string, args ...any) {
	if p.quiet {
		return
	}
	line := fmt.Sprintf(format, args...)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
	fmt.Fprintln(p.w, line)
	p.step, p.stepStart, p.detail = line, p.now(), ""
}

// bytes is a pipeline.Progress: reading or writing done of total bytes.
func (p *progress) bytes(what string, done, total int64) {
	if p.quiet || total < progressMin {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if what != p.what || p.start.IsZero() {
		p.what, p.start = what, now
	}
	if done >= total {
		p.detail = ""
		p.start = time.Time{}
		p.clearLocked()
		return
	}
	p.detail = formatProgress(what, done, total, now.Sub(p.start))
	if !p.tty || now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	fmt.Fprint(p.w, "\r\x1b[K"+p.detail)
	p.drawn = true
}

// samples is a verification progress callback.
func (p *progress) samples(done, total int) {
	if p.quiet || total < 1 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if done >= total {
		p.detail = ""
		p.clearLocked()
		return
	}
	p.detail = fmt.Sprintf("sample %d of %d done", done, total)
	if !p.tty || total < 2 {
		return
	}
	fmt.Fprintf(p.w, "\r\x1b[Kverify: sample %d of %d", done, total)
	p.drawn = true
}

// formatProgress renders one line: "reading 512.0 MiB of 1.0 GiB (50%,
// 230.4 MiB/s)". The rate is left out until the step has run rateAfter.
func formatProgress(what string, done, total int64, elapsed time.Duration) string {
	s := fmt.Sprintf("%s %s of %s (%d%%", what, bytesize.Format(done), bytesize.Format(total), done*100/max(total, 1))
	if elapsed >= rateAfter && done > 0 {
		s += fmt.Sprintf(", %s/s", bytesize.Format(int64(float64(done)/elapsed.Seconds())))
	}
	return s + ")"
}
