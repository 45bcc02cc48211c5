package node

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Conn is a node process that serves a stream of framed requests (see
// FrameJS's nextRequest): a runner script started once, which loads a model
// on its first request and answers every later one, until its standard
// input is closed. One call at a time; a Conn is safe for concurrent use.
type Conn struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *tailWriter
	done   chan struct{} // closed when the process has exited
	err    error         // how it exited, once done
	// maxReply bounds one answer.
	maxReply int64
}

// Start starts p as a Conn (p.Stdin and p.MaxStdout are ignored: requests
// go through Call; maxReply bounds each answer). The process is killed
// when ctx ends or on Close.
func Start(ctx context.Context, p Process, maxReply int64) (*Conn, error) {
	cmd := exec.CommandContext(ctx, p.Node, p.Args...)
	cmd.Dir = p.Dir
	if p.Env != nil {
		cmd.Env = append(os.Environ(), p.Env...)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &Conn{cmd: cmd, stdin: stdin, stdout: bufio.NewReaderSize(stdout, 1<<16), stderr: &tailWriter{max: p.MaxStderr},
		done: make(chan struct{}), maxReply: maxReply}
	cmd.Stderr = &lockedWriter{w: c.stderr}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// ErrExited is the error of a call to a process that has ended.
var ErrExited = errors.New("the node process has exited")

// Call sends a request (head as JSON, then blobs) and reads the answer's
// header into reply; it returns the bytes that follow the header, whose
// length is body(reply) (the sum of the sizes the header announces). When
// ctx ends during the call, the process is killed and ctx's error
// returned.
func (c *Conn) Call(ctx context.Context, head any, blobs [][]byte, reply any, body func() (int64, error)) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.done:
		return nil, c.exited()
	default:
	}
	stop := context.AfterFunc(ctx, func() { _ = c.cmd.Process.Kill() })
	defer stop()
	res, err := c.call(head, blobs, reply, body)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		select {
		case <-c.done:
			return nil, fmt.Errorf("%w: %w", err, c.exited())
		case <-time.After(100 * time.Millisecond):
		}
	}
	return res, err
}

func (c *Conn) call(head any, blobs [][]byte, reply any, body func() (int64, error)) ([]byte, error) {
	// The header announces the sizes of the blobs ("sizes"), so that the
	// script reads the request without knowing its kind.
	hj, err := json.Marshal(head)
	if err != nil {
		return nil, err
	}
	var h map[string]any
	if err := json.Unmarshal(hj, &h); err != nil {
		return nil, fmt.Errorf("request header: %w", err)
	}
	sizes := make([]int, len(blobs))
	for i, b := range blobs {
		sizes[i] = len(b)
	}
	h["sizes"] = sizes
	msg, err := Frame(h, blobs...)
	if err != nil {
		return nil, err
	}
	if _, err := c.stdin.Write(msg); err != nil {
		return nil, fmt.Errorf("sending the request: %w", err)
	}
	var n [4]byte
	if _, err := io.ReadFull(c.stdout, n[:]); err != nil {
		return nil, fmt.Errorf("no answer from the runner: %w", err)
	}
	hl := int64(binary.LittleEndian.Uint32(n[:]))
	if hl > c.maxReply {
		return nil, fmt.Errorf("answer header of %d bytes", hl)
	}
	ah := make([]byte, hl)
	if _, err := io.ReadFull(c.stdout, ah); err != nil {
		return nil, fmt.Errorf("truncated answer header: %w", err)
	}
	if err := json.Unmarshal(ah, reply); err != nil {
		return nil, fmt.Errorf("bad answer header: %w", err)
	}
	size, err := body()
	if err != nil {
		return nil, err
	}
	if size < 0 || size > c.maxReply {
		return nil, fmt.Errorf("answer of %d bytes (at most %d)", size, c.maxReply)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(c.stdout, b); err != nil {
		return nil, fmt.Errorf("truncated answer: %w", err)
	}
	return b, nil
}

// exited says how the process ended, with the tail of its stderr.
func (c *Conn) exited() error {
	err := ErrExited
	if c.err != nil {
		err = fmt.Errorf("%w (%v)", ErrExited, c.err)
	}
	if s := c.Stderr(); len(s) > 0 {
		err = fmt.Errorf("%w; stderr: %s", err, s)
	}
	return err
}

// Stderr returns the last bytes the process wrote to stderr.
func (c *Conn) Stderr() []byte {
	c.stderr.mu.Lock()
	defer c.stderr.mu.Unlock()
	return append([]byte(nil), c.stderr.b...)
}

// Close closes the process's standard input, which ends its loop, and
// waits for it to exit (killing it after a few seconds).
func (c *Conn) Close() error {
	_ = c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	return nil
}

// lockedWriter guards a tailWriter written by the process's stderr copier
// and read by Stderr.
type lockedWriter struct{ w *tailWriter }

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.w.mu.Lock()
	defer l.w.mu.Unlock()
	return l.w.Write(p)
}
