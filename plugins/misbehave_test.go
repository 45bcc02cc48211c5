//go:build unix

package plugins

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/plugins/protocol"
)

// Every kind of misbehaving plugin ends in a clear *PluginError within its
// time limit, leaves no output and no process.
func TestMisbehavingPlugins(t *testing.T) {
	modes := []string{"panic", "gopanic", "hang", "exit", "memhog", "badoutput", "nooutput", "failing", "spawner"}
	dir := pluginDir(t, modes...)
	opts := testOptions(t, dir)
	// Generous enough that a healthy plugin starts and answers on a loaded
	// 2-core CI machine; the misbehaving ones sleep for an hour.
	opts.CallTimeout, opts.StartTimeout = 6*time.Second, 4*time.Second
	// These two cannot even be described: serve them as built-ins whose
	// description the host already has, as onnxconv does.
	opts.Executable = misbehaveBin
	for _, b := range []string{"garbage", "slowstart"} {
		opts.Builtins = append(opts.Builtins, Builtin{Name: b, Importer: &protocol.ImporterInfo{Description: importers.Description{Name: b, Format: b}}})
	}
	h := newHost(t, opts)
	for _, m := range modes {
		if p, ok := h.Plugin(m); !ok || p.Err != nil || p.Importer == nil {
			t.Fatalf("plugin %s: %+v", m, p)
		}
	}

	cases := []struct {
		mode string
		opts map[string]string
		kind error
		want []string // in the error text
	}{
		{mode: "panic", kind: ErrFailed, want: []string{"panic in Import: boom in Import"}},
		{mode: "gopanic", kind: ErrCrashed, want: []string{"crashed", "exit status 2", "panic: boom in a goroutine"}},
		{mode: "hang", kind: ErrTimeout, want: []string{"did not finish within 6s", "killed"}},
		{mode: "exit", kind: ErrCrashed, want: []string{"crashed", "exit status 3", "giving up for good"}},
		{mode: "garbage", kind: ErrHandshake, want: []string{"not an onnxconv plugin", "Welcome to my totally legit plugin!"}},
		{mode: "slowstart", kind: ErrTimeout, want: []string{"did not answer the handshake within 4s"}},
		{mode: "memhog", opts: map[string]string{"mb": "1024"}, kind: ErrMemoryLimit,
			want: []string{"exceeded its memory limit of 256 MiB"}},
		{mode: "badoutput", kind: ErrBadOutput, want: []string{"not an ONNX model"}},
		{mode: "nooutput", kind: ErrBadOutput, want: []string{"no output file"}},
		{mode: "failing", kind: ErrFailed, want: []string{`line 3: unknown op "Frobnicate"`}},
		{mode: "spawner", kind: ErrTimeout, want: []string{"did not finish within 6s"}},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			work := t.TempDir()
			in := writeFile(t, filepath.Join(work, "input."+c.mode), "Relu\n")
			out := filepath.Join(work, "out.onnx")
			if c.opts == nil {
				c.opts = map[string]string{}
			}
			pidfile := filepath.Join(t.TempDir(), "pid")
			c.opts["pidfile"] = pidfile
			// The call's time limit, plus time to kill and reap the
			// process on a busy machine.
			limit := opts.CallTimeout + 4*time.Second

			start := time.Now()
			_, err := h.Import(context.Background(), c.mode, in, out, c.opts)
			elapsed := time.Since(start)

			if err == nil {
				t.Fatal("Import succeeded")
			}
			var perr *PluginError
			if !errors.As(err, &perr) {
				t.Fatalf("error %v is a %T, not a *PluginError", err, err)
			}
			if !errors.Is(err, c.kind) {
				t.Errorf("error kind = %v, want %v; error: %v", perr.Kind, c.kind, err)
			}
			msg := err.Error()
			for _, w := range append([]string{`plugin "` + c.mode + `"`, in}, c.want...) {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			if elapsed > limit {
				t.Errorf("took %v, want under %v", elapsed, limit)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("output %s exists after a failure (stat: %v)", out, err)
			}
			assertDirEntries(t, work, filepath.Base(in))
			assertGone(t, perr.PID)
			assertNoChildren(t)
			if c.mode == "spawner" {
				data, err := os.ReadFile(pidfile)
				if err != nil {
					t.Fatalf("the plugin did not start its child: %v", err)
				}
				grandchild, _ := strconv.Atoi(string(data))
				// The grandchild is not ours to reap: poll until init has.
				deadline := time.Now().Add(2 * time.Second)
				for time.Now().Before(deadline) && processExists(grandchild) {
					time.Sleep(10 * time.Millisecond)
				}
				if processExists(grandchild) {
					t.Errorf("the plugin's child %d survived", grandchild)
				}
			}
			t.Logf("%s: %v (%v)", c.mode, err, elapsed.Round(time.Millisecond))
		})
	}
}

// The memory limit does not prevent work that fits under it.
func TestMemoryLimitAllowsWorkUnderIt(t *testing.T) {
	h := newHost(t, testOptions(t, pluginDir(t, "memhog")))
	work := t.TempDir()
	in := writeFile(t, filepath.Join(work, "in.memhog"), "Relu\nTanh\n")
	out := filepath.Join(work, "out.onnx")
	warnings, err := h.Import(context.Background(), "memhog", in, out, map[string]string{"mb": "96"})
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	if strings.Join(warnings, ";") != "allocated 96 MiB" {
		t.Errorf("warnings = %q", warnings)
	}
	if got := strings.Join(opTypes(readModel(t, out)), ","); got != "Relu,Tanh" {
		t.Errorf("op types = %s", got)
	}
	assertNoChildren(t)
}

func processExists(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// A zombie is dead: only its parent has not reaped it yet.
	i := strings.LastIndexByte(string(data), ')')
	return i < 0 || !strings.HasPrefix(string(data[i+1:]), " Z")
}

// A plugin does not outlive its host: when the host process is killed in
// the middle of a call, the kernel kills the plugin (Linux).
func TestPluginDiesWithHost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Pdeathsig is Linux only")
	}
	dir := pluginDir(t, "hang")
	host := exec.Command(os.Args[0])
	host.Env = append(os.Environ(), envHelperHost+"="+dir)
	var stderr strings.Builder
	host.Stderr = &stderr
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	pidfile := filepath.Join(dir, "pid")
	var pid int
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && pid == 0; time.Sleep(10 * time.Millisecond) {
		data, _ := os.ReadFile(pidfile)
		pid, _ = strconv.Atoi(string(data))
	}
	if pid == 0 {
		_ = host.Process.Kill()
		_ = host.Wait()
		t.Fatalf("the plugin did not start; host stderr: %s", stderr.String())
	}
	if !processExists(pid) {
		t.Fatalf("plugin %d is not running", pid)
	}
	if err := host.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = host.Wait()
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && processExists(pid) {
		time.Sleep(10 * time.Millisecond)
	}
	if processExists(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("plugin %d survived its host", pid)
	}
}

// Executables that cannot run or do not speak the protocol.
func TestStartFailures(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, ExecutablePrefix+"script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'not a plugin, sorry' >&2\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	opts := testOptions(t, "")
	opts.NoThirdParty = true
	opts.Executable = filepath.Join(dir, "missing")
	opts.Builtins = []Builtin{{Name: "missing", Importer: &protocol.ImporterInfo{Description: importers.Description{Name: "missing"}}}}
	h := newHost(t, opts)
	in := writeFile(t, filepath.Join(t.TempDir(), "in.x"), "Relu\n")
	out := filepath.Join(t.TempDir(), "out.onnx")
	_, err := h.Import(context.Background(), "missing", in, out, nil)
	if !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), in) || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing executable: %v", err)
	}

	infos, err := Discover(context.Background(), testOptions(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || !errors.Is(infos[0].Err, ErrCrashed) || !strings.Contains(infos[0].Err.Error(), "not a plugin, sorry") {
		t.Errorf("script plugin: %+v", infos)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output exists: %v", err)
	}
	assertNoChildren(t)
}

// A plugin that is killed cannot remove its gRPC socket: the host gives
// each call a private socket folder and removes it, so nothing is left in
// the system's temporary folder.
func TestNoSocketLeftBehind(t *testing.T) {
	dir := pluginDir(t, "hang", "failing")
	opts := testOptions(t, dir)
	opts.CallTimeout, opts.StartTimeout = 3*time.Second, 3*time.Second
	h := newHost(t, opts)
	work := t.TempDir()
	in := writeFile(t, filepath.Join(work, "input.x"), "Relu\n")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for _, mode := range []string{"hang", "failing"} {
		if _, err := h.Import(context.Background(), mode, in, filepath.Join(work, "out.onnx"), map[string]string{}); err == nil {
			t.Fatalf("%s: Import succeeded", mode)
		}
	}
	ents, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left in the temporary folder: %s", e.Name())
	}
}
