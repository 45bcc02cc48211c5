package testpaths

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	os.Exit(Main(m, "internal/testpaths"))
}

// fakeEnv is an environment with the given variables and files.
func fakeEnv(vars map[string]string, files ...string) env {
	has := map[string]bool{}
	for _, f := range files {
		has[f] = true
	}
	return env{
		getenv: func(k string) string { return vars[k] },
		isFile: func(p string) bool { return has[p] },
		lookPath: func(n string) (string, error) {
			if has[n] {
				return n, nil
			}
			for _, f := range files {
				if filepath.Base(f) == n && filepath.IsAbs(f) {
					return f, nil
				}
			}
			return "", errors.New("not found")
		},
		root:   "/repo",
		goarch: "amd64",
	}
}

// fakeTB records Skipf and Fatalf, which end the goroutine as testing's do.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// runFake runs f as a test body on a fakeTB and returns it with f's result.
func runFake(f func(t testing.TB) string) (*fakeTB, string) {
	t := &fakeTB{}
	var got string
	done := make(chan struct{})
	go func() {
		defer close(done)
		got = f(t)
	}()
	<-done
	return t, got
}

const npmLib = "/repo/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"

func TestFindORT(t *testing.T) {
	cases := []struct {
		name         string
		e            env
		path, looked string
	}{
		{"npm", fakeEnv(nil, npmLib), npmLib, ""},
		{"npm missing", fakeEnv(nil), "", npmLib},
		{"env", fakeEnv(map[string]string{ORTLibraryEnv: "/opt/ort.so"}, "/opt/ort.so", npmLib), "/opt/ort.so", ""},
		// A set variable is the only place looked at.
		{"env missing", fakeEnv(map[string]string{ORTLibraryEnv: "/nowhere/lib.so"}, npmLib), "", "$ONNXRUNTIME_LIB=/nowhere/lib.so"},
	}
	for _, c := range cases {
		p, looked, ok := findORT(c.e)
		if p != c.path || looked != c.looked || ok != (c.path != "") {
			t.Errorf("%s: findORT = %q, %q, %v; want %q, %q", c.name, p, looked, ok, c.path, c.looked)
		}
	}
	e := fakeEnv(nil)
	e.goarch = "arm64"
	if _, looked, _ := findORT(e); looked != "/repo/node_modules/onnxruntime-node/bin/napi-v6/linux/arm64/libonnxruntime.so.1" {
		t.Errorf("arm64: looked in %s", looked)
	}
}

func TestFindChromium(t *testing.T) {
	if p, _, ok := findChromium(fakeEnv(nil, "/usr/lib/bin/chromium-browser")); !ok || p != "/usr/lib/bin/chromium-browser" {
		t.Errorf("chromium-browser: %q, %v", p, ok)
	}
	_, looked, ok := findChromium(fakeEnv(nil))
	if ok || looked != "/usr/bin/chromium, chromium, chromium-browser on $PATH" {
		t.Errorf("missing: looked %q, %v", looked, ok)
	}
}

// TestReport counts skips through lookup and SkipORT-style skips on fake
// tests and checks the exact lines and exit codes of every policy.
func TestReport(t *testing.T) {
	const ortLine = "runtimes/ort: 3 test(s) skipped: ONNX Runtime not found (looked in " + npmLib +
		"); run 'npm ci --ignore-scripts' or set ONNXRUNTIME_LIB"
	const failSuffix = "; set ONNXCONV_SKIP_ORT=1 to skip them"
	missing := fakeEnv(nil)
	newTally := func() *tally {
		c := &tally{}
		c.wire()
		for i := 0; i < 3; i++ {
			ft, got := runFake(func(t testing.TB) string { return lookup(t, c, missing, needORT) })
			if got != "" || ft.failed != "" || !strings.HasPrefix(ft.skipped, "ONNX Runtime not found (looked in "+npmLib+")") {
				t.Fatalf("lookup: %q, skipped %q, failed %q", got, ft.skipped, ft.failed)
			}
		}
		return c
	}
	cases := []struct {
		name     string
		vars     map[string]string
		code     int
		wantCode int
		want     string
	}{
		{"default fails", nil, 0, 1, ortLine + failSuffix},
		{"require fails", map[string]string{RequireORTEnv: "1"}, 0, 1, ortLine + failSuffix},
		{"skip allowed", map[string]string{SkipORTEnv: "1"}, 0, 0, ortLine},
		{"require wins over skip", map[string]string{SkipORTEnv: "1", RequireORTEnv: "1"}, 0, 1, ortLine + failSuffix},
		{"other skip variable", map[string]string{SkipChromiumEnv: "1"}, 0, 1, ortLine + failSuffix},
		{"failing tests keep their code", map[string]string{SkipORTEnv: "1"}, 2, 2, ortLine},
	}
	for _, c := range cases {
		var out bytes.Buffer
		code := newTally().report(&out, fakeEnv(c.vars), "runtimes/ort", c.code)
		if code != c.wantCode || out.String() != c.want+"\n" {
			t.Errorf("%s: code %d, output\n%s\nwant code %d, output\n%s", c.name, code, out.String(), c.wantCode, c.want)
		}
	}

	// Found: the path, nothing counted, nothing printed.
	c := &tally{}
	c.wire()
	if ft, got := runFake(func(t testing.TB) string { return lookup(t, c, fakeEnv(nil, npmLib), needORT) }); got != npmLib || ft.skipped != "" {
		t.Errorf("found: %q, skipped %q", got, ft.skipped)
	}
	var out bytes.Buffer
	if code := c.report(&out, missing, "p", 0); code != 0 || out.Len() != 0 {
		t.Errorf("nothing skipped: code %d, output %q", code, out.String())
	}

	// Two programs, the first reason kept, SKIP per program.
	c = &tally{}
	c.wire()
	runFake(func(t testing.TB) string { skip(t, c, needORT, "not usable (built with CGO_ENABLED=0)"); return "" })
	runFake(func(t testing.TB) string { return lookup(t, c, missing, needORT) })
	runFake(func(t testing.TB) string { return lookup(t, c, missing, needChromium) })
	out.Reset()
	code := c.report(&out, fakeEnv(map[string]string{SkipORTEnv: "1"}), "verify", 0)
	want := "verify: 2 test(s) skipped: ONNX Runtime not usable (built with CGO_ENABLED=0); run 'npm ci --ignore-scripts' or set ONNXRUNTIME_LIB\n" +
		"verify: 1 test(s) skipped: Chromium not found (looked in /usr/bin/chromium, chromium, chromium-browser on $PATH); " +
		"install Debian's chromium ('apt-get install chromium'); set ONNXCONV_SKIP_CHROMIUM=1 to skip them\n"
	if code != 1 || out.String() != want {
		t.Errorf("two programs: code %d, output\n%s\nwant\n%s", code, out.String(), want)
	}

	// Without Main nobody would report the skip: the test fails instead.
	c = &tally{}
	ft, _ := runFake(func(t testing.TB) string { return lookup(t, c, missing, needORT) })
	if ft.skipped != "" || !strings.Contains(ft.failed, "does not run its tests through testpaths.Main") {
		t.Errorf("unwired: skipped %q, failed %q", ft.skipped, ft.failed)
	}
}

// envChild makes this test binary run TestChildNeedsORT for TestMainReports.
const envChild = "ONNXCONV_TESTPATHS_CHILD"

// TestChildNeedsORT is two tests that need ONNX Runtime, run by
// TestMainReports in a child process.
func TestChildNeedsORT(t *testing.T) {
	if os.Getenv(envChild) != "1" {
		return
	}
	for _, name := range []string{"a", "b"} {
		t.Run(name, func(t *testing.T) {
			ORT(t)
			t.Error("ORT returned without a library")
		})
	}
}

// TestMainReports runs this package's test binary (whose TestMain is Main)
// with no ONNX Runtime and checks its exit code and report line.
func TestMainReports(t *testing.T) {
	if os.Getenv(envChild) == "1" {
		return
	}
	const line = "internal/testpaths: 2 test(s) skipped: ONNX Runtime not found (looked in $ONNXRUNTIME_LIB=/nowhere/libonnxruntime.so.1); " +
		"run 'npm ci --ignore-scripts' or set ONNXRUNTIME_LIB"
	for _, c := range []struct {
		vars []string
		code int
		want string
	}{
		{nil, 1, line + "; set ONNXCONV_SKIP_ORT=1 to skip them\n"},
		{[]string{SkipORTEnv + "=1"}, 0, line + "\n"},
		{[]string{SkipORTEnv + "=1", RequireORTEnv + "=1"}, 1, line + "; set ONNXCONV_SKIP_ORT=1 to skip them\n"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildNeedsORT$")
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, SkipORTEnv+"=") && !strings.HasPrefix(kv, RequireORTEnv+"=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, append(c.vars, envChild+"=1", ORTLibraryEnv+"=/nowhere/libonnxruntime.so.1")...)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		// m.Run prints PASS (the tests skipped); the line follows.
		if code != c.code || string(out) != "PASS\n"+c.want {
			t.Errorf("%q: exit %d, output\n%s\nwant exit %d, output\nPASS\n%s", c.vars, code, out, c.code, c.want)
		}
	}
}

func TestFindNode(t *testing.T) {
	files := map[string]bool{"/repo/node_modules/@tensorflow/tfjs/package.json": true}
	e := env{
		getenv:   func(string) string { return "" },
		isFile:   func(p string) bool { return files[p] },
		lookPath: func(n string) (string, error) { return "/usr/bin/" + n, nil },
		root:     "/repo",
	}
	if p, _, ok := findNode(e, []string{"@tensorflow/tfjs"}); !ok || p != "/usr/bin/node" {
		t.Fatalf("findNode: %q %v", p, ok)
	}
	if _, looked, ok := findNode(e, []string{"@tensorflow/tfjs", "@litertjs/core"}); ok || looked != "/repo/node_modules/@litertjs/core/package.json" {
		t.Fatalf("missing package: looked %q ok %v", looked, ok)
	}
	e.lookPath = func(string) (string, error) { return "", os.ErrNotExist }
	if _, looked, ok := findNode(e, nil); ok || looked != "node on $PATH" {
		t.Fatalf("missing node: looked %q ok %v", looked, ok)
	}
	want := "p: 2 test(s) skipped: Node.js with the npm packages not found (looked for node on $PATH); install Node.js (Debian's nodejs) and run 'npm ci --ignore-scripts'; set ONNXCONV_SKIP_NODE=1 to skip them"
	if got := line("p", needNode, 2, "not found (looked for node on $PATH)", true); got != want {
		t.Fatalf("line:\n%s\nwant\n%s", got, want)
	}
}

func TestFindSlurm(t *testing.T) {
	// Debian puts the daemons in /usr/sbin, which a user's $PATH may lack.
	e := fakeEnv(nil, "/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd",
		"/usr/bin/sbatch", "/usr/bin/scontrol", "/usr/bin/squeue", "/usr/bin/sinfo")
	e.lookPath = func(n string) (string, error) {
		if strings.HasPrefix(n, "s") && n != "slurmctld" && n != "slurmd" {
			return "/usr/bin/" + n, nil
		}
		return "", os.ErrNotExist
	}
	paths, _, ok := findSlurm(e)
	if !ok || paths["slurmd"] != "/usr/sbin/slurmd" || paths["sbatch"] != "/usr/bin/sbatch" || paths["munged"] != "/usr/sbin/munged" {
		t.Fatalf("findSlurm: %v %v", paths, ok)
	}
	e = fakeEnv(nil, "/usr/sbin/slurmctld")
	if _, looked, ok := findSlurm(e); ok || looked != "munged on $PATH and in /usr/sbin" {
		t.Fatalf("missing munge: looked %q ok %v", looked, ok)
	}
	want := "p: 1 test(s) skipped: Slurm with munge not found (looked for munged on $PATH and in /usr/sbin); install Debian's slurmctld, slurmd, slurm-client and munge (scripts/test.sh does); set ONNXCONV_SKIP_SLURM=1 to skip them"
	if got := line("p", needSlurm, 1, "not found (looked for munged on $PATH and in /usr/sbin)", true); got != want {
		t.Fatalf("line:\n%s\nwant\n%s", got, want)
	}
}

// TestTraceLine: strace and ptrace skips have their own variables and
// report line, and REQUIRE fails them as it does the others.
func TestTraceLine(t *testing.T) {
	want := "p: 3 test(s) skipped: process tracing not found (looked for strace on $PATH); install Debian's strace (scripts/test.sh does) and allow ptrace (a container needs --cap-add SYS_PTRACE); set ONNXCONV_SKIP_TRACE=1 to skip them"
	if got := line("p", needTrace, 3, "not found (looked for strace on $PATH)", true); got != want {
		t.Fatalf("line:\n%s\nwant\n%s", got, want)
	}
	if !skipAllowed(fakeEnv(map[string]string{SkipTraceEnv: "1"}), needTrace) {
		t.Errorf("%s=1 does not let trace skips pass", SkipTraceEnv)
	}
	if skipAllowed(fakeEnv(map[string]string{SkipTraceEnv: "1", RequireTraceEnv: "1"}), needTrace) {
		t.Errorf("%s=1 does not win over %s=1", RequireTraceEnv, SkipTraceEnv)
	}
}
