package plugins

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/onnxconv/onnxconv/plugins/protocol"
)

// How much of the start and of the end of a plugin's standard error is
// kept for errors.
const (
	stderrHead = 8 << 10
	stderrTail = 8 << 10
)

// exitWait is how long a call waits for a plugin whose connection broke to
// exit, before killing it.
const exitWait = 2 * time.Second

// call starts plugin p, runs fn against it within timeout (and ctx), and
// kills the process afterwards, whatever happened. It returns the process
// id the plugin had. A failure is returned as a *PluginError.
func call(ctx context.Context, opts Options, p *PluginInfo, op, input string, timeout time.Duration,
	fn func(ctx context.Context, cp plugin.ClientProtocol) error) (int, error) {
	return callOp(ctx, opts, p, &op, input, timeout, fn)
}

// callOp is call whose operation (*op, read when a failure is
// classified) may change while fn runs, as the requests of a session do.
// A timeout of 0 puts no limit on the whole call: fn then bounds its own
// steps (a *requestEnded error says that one ran out of time or was
// canceled).
func callOp(ctx context.Context, opts Options, p *PluginInfo, opp *string, input string, timeout time.Duration,
	fn func(ctx context.Context, cp plugin.ClientProtocol) error) (int, error) {
	var cancel context.CancelFunc
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(opts.StartTimeout + time.Hour) // only the start is bounded here
	}
	op := *opp

	// The plugin's gRPC socket goes in a private folder that is removed
	// after the call: a plugin that is killed cannot remove its socket,
	// which would otherwise be left in the system's temporary folder.
	sockDir, err := socketTempDir()
	if err != nil {
		return 0, &PluginError{Plugin: p.Name, Path: p.Path, Op: op, Input: input, Kind: ErrFailed,
			Err: err, Detail: "cannot create the plugin's socket folder"}
	}
	defer os.RemoveAll(sockDir)
	cmd := exec.Command(p.Path, p.Args...)
	// The plugin's temporary files go in that folder too (TMPDIR), so
	// that a plugin killed on an interrupt or a timeout leaves none.
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", protocol.EnvMemoryLimit, max(opts.MemoryLimit, 0)),
		plugin.EnvUnixSocketDir+"="+sockDir, "TMPDIR="+sockDir)
	setProcAttr(cmd)
	tail := newHeadTailBuffer(stderrHead, stderrTail)
	var stderr io.Writer = tail
	if opts.Stderr != nil {
		stderr = io.MultiWriter(tail, opts.Stderr)
	}
	startTimeout := min(opts.StartTimeout, time.Until(deadline))
	if startTimeout <= 0 {
		return 0, &PluginError{Plugin: p.Name, Path: p.Path, Op: op, Input: input, Kind: ErrTimeout,
			Err: ctx.Err(), Detail: "no time left to start the plugin"}
	}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  protocol.Handshake(),
		Plugins:          protocol.PluginSet(nil, nil),
		Cmd:              cmd,
		SkipHostEnv:      true, // cmd.Env already holds it, before our variables
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		StartTimeout:     startTimeout,
		Stderr:           stderr, // the process's own standard error
		SyncStderr:       stderr, // what it writes to os.Stderr once serving
		Logger:           opts.Logger,
	})

	perr := &PluginError{Plugin: p.Name, Path: p.Path, Op: op, Input: input}
	cp, release, err := startLocked(client)
	defer release() // after stop below: the starting thread outlives the process
	perr.PID, _ = strconv.Atoi(client.ID())
	if err != nil {
		// The process is already killed by go-plugin; reap it.
		stop(client, perr.PID, true)
		perr.Stderr = tail.String()
		perr.Err = err
		classifyStart(perr, err, ctx, startTimeout)
		return perr.PID, perr
	}

	err = runGuarded(ctx, fn, cp)
	if err == nil {
		stop(client, perr.PID, false)
		return perr.PID, nil
	}
	op = *opp
	perr.Op = op
	perr.Err = err
	if ctx.Err() == nil && time.Until(deadline) < 250*time.Millisecond {
		// gRPC sends the deadline along: the plugin's side can see it
		// expire and reset the stream a moment before ours fires. Wait
		// for ours (at most 250 ms) so the call counts as timed out.
		<-ctx.Done()
	}
	st, isStatus := status.FromError(err)
	var re *requestEnded
	switch {
	case errors.As(err, &re):
		// A request of a session ran out of its time, or its caller
		// gave up on it.
		stop(client, perr.PID, true)
		perr.Stderr = tail.String()
		perr.Err = re.err
		if re.caller != nil {
			perr.Kind = re.caller.Err()
			perr.Detail = canceledDetail(re.caller, op, input)
		} else {
			perr.Kind = ErrTimeout
			perr.Detail = timeLimitDetail(op, input, re.limit)
		}
	case ctx.Err() != nil:
		stop(client, perr.PID, true)
		perr.Stderr = tail.String()
		perr.Kind = ErrTimeout
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			perr.Detail = timeLimitDetail(op, input, timeout)
		} else {
			perr.Kind = context.Canceled
			perr.Detail = canceledDetail(ctx, op, input)
		}
	case isStatus && (st.Code() == codes.Unavailable || st.Code() == codes.Internal || st.Code() == codes.Canceled):
		// The connection broke: the process most likely died.
		waitExit(ctx, client, exitWait)
		exited := client.Exited()
		stop(client, perr.PID, true)
		perr.Stderr = tail.String()
		if exited {
			describeExit(perr, cmd, opts.MemoryLimit, op, input)
		} else {
			perr.Kind = ErrFailed
			perr.Detail = "lost the connection to the plugin: " + st.Message()
		}
	default:
		// The plugin answered with an error.
		stop(client, perr.PID, true)
		perr.Stderr = tail.String()
		perr.Kind = ErrFailed
		if isStatus {
			perr.Detail = st.Message()
			if ops := protocol.OpsError(st); ops != nil {
				// The model uses parts the plugin cannot map: the host
				// classifies it as an in-process importer's error.
				perr.Err = ops
			}
		} else {
			perr.Detail = err.Error()
		}
	}
	return perr.PID, perr
}

// startLocked starts the plugin process from a goroutine locked to its OS
// thread, and keeps that thread alive until release is called. On Linux the
// plugin gets SIGKILL when the thread that started it ends (Pdeathsig, so
// that it dies with the host); a Go thread ends when a goroutine locked to
// it exits, which must not happen while the plugin runs.
func startLocked(client *plugin.Client) (plugin.ClientProtocol, func(), error) {
	type result struct {
		cp  plugin.ClientProtocol
		err error
	}
	started := make(chan result, 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cp, err := client.Client()
		started <- result{cp, err}
		<-done
	}()
	r := <-started
	return r.cp, func() { close(done) }, r.err
}

// runGuarded runs fn, turning a panic in the host-side client code (for
// example a type assertion on a broken plugin's answer) into an error.
func runGuarded(ctx context.Context, fn func(context.Context, plugin.ClientProtocol) error, cp plugin.ClientProtocol) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("host-side panic talking to the plugin: %v", r)
		}
	}()
	return fn(ctx, cp)
}

// stop ends the plugin process and waits for it (no zombie remains):
// gracefully after a successful call, by SIGKILL to its process group
// otherwise. Processes the plugin started are killed with it.
func stop(client *plugin.Client, pid int, force bool) {
	if force {
		killGroup(pid)
	}
	client.Kill()
	killGroup(pid) // anything left in the group
}

// waitExit waits up to d for the plugin process to exit.
func waitExit(ctx context.Context, client *plugin.Client, d time.Duration) {
	deadline := time.Now().Add(d)
	for !client.Exited() && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
}

// describeExit fills perr for a plugin process that ended during a call.
func describeExit(perr *PluginError, cmd *exec.Cmd, memLimit int64, op, input string) {
	how := "exited"
	if ps := cmd.ProcessState; ps != nil {
		how = "exited (" + ps.String() + ")"
	}
	key := keyLine(perr.Stderr)
	if memLimit > 0 && outOfMemory(perr.Stderr) {
		perr.Kind = ErrMemoryLimit
		perr.Detail = memoryLimitDetail(op, input, memLimit, how, key)
		return
	}
	perr.Kind = ErrCrashed
	perr.Detail = "crashed: the plugin process " + how
	if key != "" {
		perr.Detail += ": " + key
	}
}

// outOfMemory tells whether a crashed plugin's standard error shows that
// it could not get memory: the Go runtime's fatal error, or a C library's
// failure to map a thread stack or an allocation.
func outOfMemory(stderr string) bool {
	for _, s := range []string{"out of memory", "cannot allocate memory", "Cannot allocate memory",
		"pthread_create failed", "std::bad_alloc"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// classifyStart fills perr for a plugin that did not start.
func classifyStart(perr *PluginError, err error, ctx context.Context, startTimeout time.Duration) {
	msg := err.Error()
	key := keyLine(perr.Stderr)
	switch {
	case perr.PID == 0:
		perr.Kind = ErrStart
		perr.Detail = "could not be started: " + truncate(msg, 300)
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		perr.Kind = ErrTimeout
		perr.Detail = fmt.Sprintf("did not start within %s; the plugin was killed", startTimeout.Round(time.Millisecond))
		if ctx.Err() == nil {
			perr.Detail = fmt.Sprintf("did not answer the handshake within %s; the plugin was killed", startTimeout.Round(time.Millisecond))
		}
	case strings.Contains(msg, "exited before we could connect") || strings.Contains(msg, "Failed to read any lines from plugin's stdout"):
		perr.Kind = ErrCrashed
		perr.Detail = "exited before the handshake"
		if key != "" {
			perr.Detail += ": " + key
		}
	default:
		perr.Kind = ErrHandshake
		perr.Detail = "is not an onnxconv plugin of protocol version " + strconv.Itoa(protocol.Version) +
			" (handshake failed: " + truncate(strings.TrimSpace(strings.SplitN(msg, "\n", 2)[0]), 300) + ")"
	}
}

// dispense returns the importer and exporter clients of a started plugin.
func dispense(cp plugin.ClientProtocol) (protocol.Importer, protocol.Exporter, error) {
	ri, err := cp.Dispense(protocol.ImporterPluginName)
	if err != nil {
		return nil, nil, fmt.Errorf("dispensing the importer: %w", err)
	}
	re, err := cp.Dispense(protocol.ExporterPluginName)
	if err != nil {
		return nil, nil, fmt.Errorf("dispensing the exporter: %w", err)
	}
	imp, ok1 := ri.(protocol.Importer)
	exp, ok2 := re.(protocol.Exporter)
	if !ok1 || !ok2 {
		return nil, nil, errors.New("plugin clients have unexpected types")
	}
	return imp, exp, nil
}

func isUnimplemented(err error) bool {
	st, ok := status.FromError(err)
	return ok && st.Code() == codes.Unimplemented
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
