package plugins

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/onnxconv/onnxconv/plugins/protocol"
)

// RunProcess runs the program argv[0] with argv[1:] under the limits of
// a plugin process: opts' memory limit (its default when 0) is passed in
// ONNXCONV_PLUGIN_MEMORY_LIMIT for the program to apply (sdk.LimitFromEnv),
// the program runs in its own process group, and the group is killed when
// ctx ends. name and op name the process in errors ("onnxconv bench",
// "bench"), input what it worked on. It returns the program's standard
// output. A program that fails gives a *PluginError of kind
// ErrMemoryLimit (it ran out of its limit), ErrTimeout (ctx ended) or
// ErrCrashed (any other failure; Err is the *exec.ExitError).
func RunProcess(ctx context.Context, opts Options, name, op, input string, argv []string) ([]byte, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		return nil, errors.New("plugins: RunProcess without a program")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", protocol.EnvMemoryLimit, max(o.MemoryLimit, 0)))
	setProcAttr(cmd)
	var stdout bytes.Buffer
	tail := newHeadTailBuffer(stderrHead, stderrTail)
	cmd.Stdout, cmd.Stderr = &stdout, tail
	perr := &PluginError{Plugin: name, Path: argv[0], Op: op, Input: input}
	if err := cmd.Start(); err != nil {
		perr.Kind, perr.Err, perr.Detail = ErrStart, err, "cannot start "+argv[0]
		return nil, perr
	}
	perr.PID = cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		killGroup(cmd.Process.Pid)
		<-done
		perr.Kind, perr.Err, perr.Stderr = ErrTimeout, ctx.Err(), tail.String()
		perr.Detail = canceledDetail(ctx, op, input)
		return nil, perr
	}
	if err != nil {
		perr.Err, perr.Stderr = err, tail.String()
		describeExit(perr, cmd, o.MemoryLimit, op, input)
		return nil, perr
	}
	return stdout.Bytes(), nil
}
