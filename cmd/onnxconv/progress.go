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

// progress draws one progress line on a terminal (nothing elsewhere).
type progress struct {
	w     io.Writer
	tty   bool
	now   func() time.Time
	mu    sync.Mutex
	what  string
	start time.Time
	last  time.Time
}

func newProgress(stderr io.Writer) *progress {
	p := &progress{w: stderr, now: time.Now}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
	}
	return p
}

// bytes is a pipeline.Progress: reading or writing done of total bytes.
func (p *progress) bytes(what string, done, total int64) {
	if !p.tty || total < progressMin {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if what != p.what || p.start.IsZero() {
		p.what, p.start = what, now
	}
	if done < total && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	if done >= total {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.start = time.Time{}
		return
	}
	fmt.Fprint(p.w, "\r\x1b[K"+formatProgress(what, done, total, now.Sub(p.start)))
}

// samples is a verification progress callback.
func (p *progress) samples(done, total int) {
	if !p.tty || total < 2 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if done >= total {
		fmt.Fprint(p.w, "\r\x1b[K")
		return
	}
	fmt.Fprintf(p.w, "\r\x1b[Kverify: sample %d of %d", done, total)
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
