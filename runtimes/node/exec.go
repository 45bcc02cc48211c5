package node

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"sync"
)

// Process is one run of node on a script.
type Process struct {
	// Node is the node executable (Env.Node).
	Node string
	// Args are node's arguments: its options, the script (a file, or -e
	// and the source) and the script's arguments.
	Args []string
	// Dir is the working folder ("" for the caller's).
	Dir string
	// Env is added to the process's environment (nil: inherited as is).
	Env []string
	// Stdin is the request.
	Stdin []byte
	// MaxStdout bounds the answer kept; more sets Output.Truncated (and
	// is read and dropped, so that node is not left blocked on a pipe).
	MaxStdout int64
	// MaxStderr is how many of the last bytes of stderr are kept.
	MaxStderr int
}

// Output is what a run of node wrote and how it ended.
type Output struct {
	Stdout []byte
	// Truncated: node wrote more than MaxStdout bytes to stdout.
	Truncated bool
	// Stderr is the last MaxStderr bytes node wrote to stderr.
	Stderr []byte
	// Err is how the process ended (nil: exit status 0).
	Err error
}

// Exec runs p, killed when ctx ends. Its error is ctx's when ctx ended
// (the output is then dropped); how node itself ended is Output.Err.
func Exec(ctx context.Context, p Process) (*Output, error) {
	cmd := exec.CommandContext(ctx, p.Node, p.Args...)
	cmd.Dir = p.Dir
	if p.Env != nil {
		cmd.Env = append(os.Environ(), p.Env...)
	}
	cmd.Stdin = bytes.NewReader(p.Stdin)
	var stdout bytes.Buffer
	out := &capWriter{w: &stdout, left: p.MaxStdout}
	errs := &tailWriter{max: p.MaxStderr}
	cmd.Stdout, cmd.Stderr = out, errs
	runErr := cmd.Run()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &Output{Stdout: stdout.Bytes(), Truncated: out.over, Stderr: errs.b, Err: runErr}, nil
}

// capWriter keeps the first left bytes written and drops the rest.
type capWriter struct {
	w    *bytes.Buffer
	left int64
	over bool
}

func (c *capWriter) Write(p []byte) (int, error) {
	k := len(p)
	if int64(k) > c.left {
		p, c.over = p[:c.left], true
	}
	c.left -= int64(len(p))
	c.w.Write(p)
	return k, nil
}

// tailWriter keeps the last max bytes written.
type tailWriter struct {
	mu  sync.Mutex // held by Conn's readers and writers; Exec does not need it
	b   []byte
	max int
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}
