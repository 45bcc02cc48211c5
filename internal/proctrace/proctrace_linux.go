// Package proctrace runs a command under ptrace and records every program
// its process tree executes (execve), for tests that count the child
// processes a command starts. Linux only; Run fails with ErrUnsupported
// where ptrace is not permitted (a seccomp profile, Yama scope 3).
package proctrace

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrUnsupported is returned when processes cannot be traced here.
var ErrUnsupported = errors.New("proctrace: ptrace is not permitted here")

// Exec is one program a traced process executed.
type Exec struct {
	PID int
	// Args is the program's command line (argv).
	Args []string
}

// Result is what a traced run did.
type Result struct {
	// Execs are the programs executed after the command itself, in order.
	Execs []Exec
	// ExitCode is the command's exit status (-1 when killed by a signal).
	ExitCode int
	// Files is, for each process (by PID, the command's own first) that
	// opened one of the watched files, how it used them.
	Files []FileUse
}

// FileUse is how one process used the watched files.
type FileUse struct {
	// PID is the process (thread group) id.
	PID int
	// Opens counts the successful opens of a watched file.
	Opens int
	// Read is the number of bytes read from them (read, pread64, readv,
	// preadv).
	Read int64
	// Mapped is set when the process memory-mapped one of them: what it
	// then reads is not counted.
	Mapped bool
}

// Options tune Run.
type Options struct {
	// Timeout bounds the run; the whole tree is killed after it.
	Timeout time.Duration
	// Files are file names (compared by base name) whose opens and reads
	// are counted per process (Result.Files). Tracing them stops every
	// process at every system call: on linux/amd64 only (elsewhere Run
	// fails with ErrUnsupported).
	Files []string
}

// Run starts cmd (not started yet; its Stdout and Stderr must be nil or
// *os.File, since Run never calls cmd.Wait) under ptrace, follows every
// fork, vfork and clone of its process tree, records each execve (and with
// o.Files, the opens and reads of those files), and returns when every
// traced process has ended. After o.Timeout the whole tree is killed and
// the error says so.
func Run(cmd *exec.Cmd, o Options) (*Result, error) {
	timeout := o.Timeout
	var files *fileTracer
	if len(o.Files) > 0 {
		if !canTraceFiles {
			return nil, fmt.Errorf("%w: tracing file reads needs linux/amd64", ErrUnsupported)
		}
		files = newFileTracer(o.Files)
	}
	for _, w := range []any{cmd.Stdout, cmd.Stderr} {
		if _, ok := w.(*os.File); w != nil && !ok {
			return nil, errors.New("proctrace: Stdout and Stderr must be files")
		}
	}
	// The tracer is the thread that started the process: every ptrace
	// call must come from it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Ptrace = true
	if err := cmd.Start(); err != nil {
		if errors.Is(err, syscall.EPERM) {
			return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
		}
		return nil, err
	}
	root := cmd.Process.Pid
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(root, &ws, syscall.WALL, nil); err != nil {
		return nil, fmt.Errorf("proctrace: waiting for the first stop: %w", err)
	}
	opts := syscall.PTRACE_O_TRACEFORK | syscall.PTRACE_O_TRACEVFORK | syscall.PTRACE_O_TRACECLONE |
		syscall.PTRACE_O_TRACEEXEC | 0x100000 // PTRACE_O_EXITKILL
	if files != nil {
		opts |= syscall.PTRACE_O_TRACESYSGOOD
	}
	// resume lets a stopped task run to its next stop: the next system
	// call too when files are traced.
	resume := func(pid, sig int) error {
		if files != nil {
			return syscall.PtraceSyscall(pid, sig)
		}
		return syscall.PtraceCont(pid, sig)
	}
	if err := syscall.PtraceSetOptions(root, opts); err != nil {
		_ = syscall.Kill(root, syscall.SIGKILL)
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	var mu sync.Mutex
	seen := map[int]bool{root: true}
	timedOut := false
	timer := time.AfterFunc(timeout, func() {
		mu.Lock()
		defer mu.Unlock()
		timedOut = true
		for pid := range seen {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	defer timer.Stop()
	res := &Result{ExitCode: -1}
	if err := resume(root, 0); err != nil {
		return nil, fmt.Errorf("proctrace: %w", err)
	}
	for {
		pid, err := syscall.Wait4(-1, &ws, syscall.WALL, nil)
		if errors.Is(err, syscall.ECHILD) {
			break
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("proctrace: wait: %w", err)
		}
		switch {
		case ws.Exited() || ws.Signaled():
			if pid == root {
				if ws.Exited() {
					res.ExitCode = ws.ExitStatus()
				}
			}
			continue
		case !ws.Stopped():
			continue
		}
		mu.Lock()
		isNew := !seen[pid]
		seen[pid] = true
		mu.Unlock()
		sig := ws.StopSignal()
		inject := 0
		switch {
		case files != nil && sig == syscall.SIGTRAP|0x80:
			files.syscallStop(pid)
		case sig == syscall.SIGTRAP && ws.TrapCause() == syscall.PTRACE_EVENT_EXEC:
			res.Execs = append(res.Execs, Exec{PID: pid, Args: cmdline(pid)})
			if files != nil {
				files.exec(pid)
			}
		case sig == syscall.SIGTRAP && ws.TrapCause() > 0:
			// fork, vfork, clone: the new task is traced already.
		case sig == syscall.SIGSTOP && isNew:
			// The first stop of a new task.
		default:
			inject = int(sig)
		}
		_ = resume(pid, inject)
	}
	if files != nil {
		res.Files = files.result(root)
	}
	if timedOut {
		return res, fmt.Errorf("proctrace: %s did not end within %s: killed", strings.Join(cmd.Args, " "), timeout)
	}
	return res, nil
}

// tgid returns the thread group (process) id of task tid.
func tgid(tid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return tid
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Tgid:"); ok {
			var n int
			if _, err := fmt.Sscan(strings.TrimSpace(v), &n); err == nil {
				return n
			}
		}
	}
	return tid
}

// cmdline reads the argv of process pid.
func cmdline(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}
