package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/onnxconv/onnxconv/plugins/protocol"
)

// envHostOptions carries the host options of a RunProcess caller to the
// program it starts (see InheritedOptions).
const envHostOptions = "ONNXCONV_PLUGIN_HOST_OPTIONS"

// hostOptions are the options a program started by RunProcess opens its
// own plugins with: where third-party plugins are, and their limits.
type hostOptions struct {
	PluginPath      string        `json:"plugin_path"`
	UserDir         string        `json:"user_dir"`
	NoThirdParty    bool          `json:"no_third_party,omitempty"`
	CallTimeout     time.Duration `json:"call_timeout_ns"`
	DescribeTimeout time.Duration `json:"describe_timeout_ns"`
	StartTimeout    time.Duration `json:"start_timeout_ns"`
	MemoryLimit     int64         `json:"memory_limit"`
}

// InheritedOptions are the host options of the process that started this
// one with RunProcess (its plugin folders and limits, resolved), so that
// the plugins this process starts (e.g. the runtime of `onnxconv bench
// --runtime`) are the ones its caller would have started, under the same
// limits. The zero Options when this process was not started so.
func InheritedOptions() (Options, error) {
	v := os.Getenv(envHostOptions)
	if v == "" {
		return Options{}, nil
	}
	var h hostOptions
	if err := json.Unmarshal([]byte(v), &h); err != nil {
		return Options{}, fmt.Errorf("%s: not the options of a plugin host: %w", envHostOptions, err)
	}
	return Options{PluginPath: h.PluginPath, UserDir: h.UserDir, NoThirdParty: h.NoThirdParty, CallTimeout: h.CallTimeout,
		DescribeTimeout: h.DescribeTimeout, StartTimeout: h.StartTimeout, MemoryLimit: h.MemoryLimit}, nil
}

// RunProcess runs the program argv[0] with argv[1:] under the limits of
// a plugin process: opts' memory limit (its default when 0) is passed in
// ONNXCONV_PLUGIN_MEMORY_LIMIT for the program to apply (sdk.LimitFromEnv),
// the program runs in its own process group, and the group is killed when
// ctx ends. name and op name the process in errors ("onnxconv bench",
// "bench"), input what it worked on; the program gets opts' plugin
// folders and limits too (InheritedOptions). It returns the program's
// standard output, also when it fails (a program may describe its failure
// there). A program that fails gives a *PluginError of kind
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
	inherit, err := json.Marshal(hostOptions{PluginPath: o.PluginPath, UserDir: o.UserDir, NoThirdParty: o.NoThirdParty,
		CallTimeout: o.CallTimeout, DescribeTimeout: o.DescribeTimeout, StartTimeout: o.StartTimeout, MemoryLimit: o.MemoryLimit})
	if err != nil {
		return nil, fmt.Errorf("plugins: %w", err)
	}
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", protocol.EnvMemoryLimit, max(o.MemoryLimit, 0)), envHostOptions+"="+string(inherit))
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
		return stdout.Bytes(), perr
	}
	if err != nil {
		perr.Err, perr.Stderr = err, tail.String()
		describeExit(perr, cmd, o.MemoryLimit, op, input)
		return stdout.Bytes(), perr
	}
	return stdout.Bytes(), nil
}
