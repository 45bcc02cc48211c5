package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A memory-mapped read reports a gigabyte within a millisecond: no rate
// may be drawn from that (it used to say TB/s).
func TestProgressNoRateBeforeASecond(t *testing.T) {
	got := formatProgress("reading", 1<<30, 2<<30, time.Millisecond)
	if strings.Contains(got, "/s") {
		t.Fatalf("rate shown after 1 ms: %q", got)
	}
	if want := "reading 1.0 GiB of 2.0 GiB (50%)"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	got = formatProgress("writing", 600<<20, 1<<30, 2*time.Second)
	if want := "writing 600.0 MiB of 1.0 GiB (58%, 300.0 MiB/s)"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestProgressDrawsOnlyOnATerminal(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf)
	p.bytes("reading", 1<<29, 1<<30)
	p.samples(1, 4)
	if buf.Len() != 0 {
		t.Fatalf("drew on a non-terminal: %q", buf.String())
	}
	// As on a terminal, with a clock that does not move.
	clock := time.Unix(0, 0)
	p = &progress{w: &buf, tty: true, now: func() time.Time { return clock }}
	p.bytes("reading", 1<<29, 1<<30)
	p.bytes("reading", 1<<30, 1<<30)
	out := buf.String()
	if !strings.Contains(out, "reading 512.0 MiB of 1.0 GiB (50%)") || strings.Contains(out, "/s") {
		t.Fatalf("terminal output %q", out)
	}
	if !strings.HasSuffix(out, "\r\x1b[K") {
		t.Fatalf("the line is not cleared at the end: %q", out)
	}
}
