package testpaths

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Tests that need a program the repository does not hold (ONNX Runtime,
// headless Chromium) get it through ORT or Chromium, which skip the test
// when it is missing and count the skip; the package's TestMain runs its
// tests through Main (os.Exit(testpaths.Main(m, "runtimes/ort"))), which
// reports the count in one line:
//
//	<package>: N test(s) skipped: ONNX Runtime not found (looked in …); run 'npm ci --ignore-scripts' or set ONNXRUNTIME_LIB
//
// With ONNXCONV_SKIP_ORT=1 (ONNXCONV_SKIP_CHROMIUM=1) that is all, and the
// line shows with go test -v. Otherwise the package fails with that line
// and "; set ONNXCONV_SKIP_ORT=1 to skip them", so that a missing runtime
// is never silent in `go test ./...`. ONNXCONV_REQUIRE_ORT=1
// (ONNXCONV_REQUIRE_CHROMIUM=1) is the default and wins over the SKIP
// variable.

// Environment variables.
const (
	// ORTLibraryEnv names the ONNX Runtime shared library to use; when
	// set, nothing else is looked at.
	ORTLibraryEnv = "ONNXRUNTIME_LIB"
	SkipORTEnv    = "ONNXCONV_SKIP_ORT"
	RequireORTEnv = "ONNXCONV_REQUIRE_ORT"

	SkipChromiumEnv    = "ONNXCONV_SKIP_CHROMIUM"
	RequireChromiumEnv = "ONNXCONV_REQUIRE_CHROMIUM"

	SkipNodeEnv    = "ONNXCONV_SKIP_NODE"
	RequireNodeEnv = "ONNXCONV_REQUIRE_NODE"

	SkipSlurmEnv       = "ONNXCONV_SKIP_SLURM"
	RequireSlurmEnv    = "ONNXCONV_REQUIRE_SLURM"
	SkipLibtorchEnv    = "ONNXCONV_SKIP_LIBTORCH"
	RequireLibtorchEnv = "ONNXCONV_REQUIRE_LIBTORCH"

	// Process tracing: strace, and ptrace for internal/proctrace.
	SkipTraceEnv    = "ONNXCONV_SKIP_TRACE"
	RequireTraceEnv = "ONNXCONV_REQUIRE_TRACE"

	// PostgreSQL's server programs (initdb, pg_ctl), for serve's shared
	// job store.
	SkipPostgresEnv    = "ONNXCONV_SKIP_POSTGRES"
	RequirePostgresEnv = "ONNXCONV_REQUIRE_POSTGRES"
)

// libtorchHeader is where Debian's libtorch-dev puts torch/script.h.
const libtorchHeader = "/usr/include/torch/script.h"

// npmORTDir is where `npm ci --ignore-scripts` puts onnxruntime-node's
// native files, relative to the repository root.
const npmORTDir = "node_modules/onnxruntime-node/bin/napi-v6"

// chromiumNames are looked up in order (an absolute path, then $PATH).
var chromiumNames = []string{"/usr/bin/chromium", "chromium", "chromium-browser"}

// need is one outside program some tests need.
type need int

const (
	needORT need = iota
	needChromium
	needNode
	needSlurm
	needLibtorch
	needTrace
	needPostgres
	numNeeds
)

func (n need) name() string {
	switch n {
	case needORT:
		return "ONNX Runtime"
	case needNode:
		return "Node.js with the npm packages"
	case needSlurm:
		return "Slurm with munge"
	case needLibtorch:
		return "libtorch"
	case needTrace:
		return "process tracing"
	case needPostgres:
		return "PostgreSQL"
	}
	return "Chromium"
}

func (n need) skipEnv() string {
	switch n {
	case needORT:
		return SkipORTEnv
	case needNode:
		return SkipNodeEnv
	case needSlurm:
		return SkipSlurmEnv
	case needLibtorch:
		return SkipLibtorchEnv
	case needTrace:
		return SkipTraceEnv
	case needPostgres:
		return SkipPostgresEnv
	}
	return SkipChromiumEnv
}

func (n need) requireEnv() string {
	switch n {
	case needORT:
		return RequireORTEnv
	case needNode:
		return RequireNodeEnv
	case needSlurm:
		return RequireSlurmEnv
	case needLibtorch:
		return RequireLibtorchEnv
	case needTrace:
		return RequireTraceEnv
	case needPostgres:
		return RequirePostgresEnv
	}
	return RequireChromiumEnv
}

func (n need) hint() string {
	switch n {
	case needORT:
		return "run 'npm ci --ignore-scripts' or set " + ORTLibraryEnv
	case needNode:
		return "install Node.js (Debian's nodejs) and run 'npm ci --ignore-scripts'"
	case needSlurm:
		return "install Debian's slurmctld, slurmd, slurm-client and munge (scripts/test.sh does)"
	case needLibtorch:
		return "install Debian's libtorch-dev and a C++ compiler ('apt-get install libtorch-dev g++')"
	case needTrace:
		return "install Debian's strace (scripts/test.sh does) and allow ptrace (a container needs --cap-add SYS_PTRACE)"
	case needPostgres:
		return "install Debian's postgresql (scripts/test.sh does)"
	}
	return "install Debian's chromium ('apt-get install chromium')"
}

// env is what the helpers read of the outside world; tests of this
// package pass a fake one.
type env struct {
	getenv   func(string) string
	isFile   func(string) bool
	lookPath func(string) (string, error)
	root     string // the repository root
	goarch   string
}

func osEnv(root string) env {
	return env{
		getenv: os.Getenv,
		isFile: func(p string) bool {
			fi, err := os.Stat(p)
			return err == nil && !fi.IsDir()
		},
		lookPath: exec.LookPath,
		root:     root,
		goarch:   runtime.GOARCH,
	}
}

// npmORTLibrary is the library file `npm ci --ignore-scripts` installs
// for Linux on goarch.
func npmORTLibrary(root, goarch string) string {
	arch := goarch
	if arch == "amd64" {
		arch = "x64"
	}
	return filepath.Join(root, filepath.FromSlash(npmORTDir), "linux", arch, "libonnxruntime.so.1")
}

// findORT returns the library's path, or where it looked.
func findORT(e env) (path, looked string, ok bool) {
	if p := e.getenv(ORTLibraryEnv); p != "" {
		if e.isFile(p) {
			if abs, err := filepath.Abs(p); err == nil {
				p = abs
			}
			return p, "", true
		}
		return "", "$" + ORTLibraryEnv + "=" + p, false
	}
	p := npmORTLibrary(e.root, e.goarch)
	if e.isFile(p) {
		return p, "", true
	}
	return "", p, false
}

// findChromium returns Chromium's path, or where it looked.
func findChromium(e env) (path, looked string, ok bool) {
	for _, n := range chromiumNames {
		if p, err := e.lookPath(n); err == nil {
			return p, "", true
		}
	}
	return "", strings.Join(chromiumNames, ", ") + " on $PATH", false
}

// tally counts, per need, the tests skipped in this test process and the
// reason of the first skip. It is the record the tests write to and
// TestMain reads, so there is one per process (skips below); tests of
// this package use their own.
type tally struct {
	mu    sync.Mutex
	wired bool // Main runs the tests, so the count is reported
	n     [numNeeds]int
	why   [numNeeds]string
}

// skips is the process's record (see tally).
var skips tally

func (c *tally) wire() {
	c.mu.Lock()
	c.wired = true
	c.mu.Unlock()
}

// add counts one skip and tells whether it will be reported.
func (c *tally) add(n need, why string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[n]++
	if c.why[n] == "" {
		c.why[n] = why
	}
	return c.wired
}

// skipAllowed: the SKIP variable is 1 and the REQUIRE variable is not.
func skipAllowed(e env, n need) bool {
	return e.getenv(n.skipEnv()) == "1" && e.getenv(n.requireEnv()) != "1"
}

// line is the report of count skips of n in pkg for why ("not found
// (looked in …)"); failing adds how to skip them instead.
func line(pkg string, n need, count int, why string, failing bool) string {
	s := fmt.Sprintf("%s: %d test(s) skipped: %s %s; %s", pkg, count, n.name(), why, n.hint())
	if failing {
		s += "; set " + n.skipEnv() + "=1 to skip them"
	}
	return s
}

// lookup returns the path of n in e, or skips t, counted in c.
func lookup(t testing.TB, c *tally, e env, n need) string {
	t.Helper()
	find := findORT
	if n == needChromium {
		find = findChromium
	}
	p, looked, ok := find(e)
	if !ok {
		skip(t, c, n, "not found (looked in "+looked+")")
	}
	return p
}

// skip skips t for n, counted in c; a skip that no TestMain would report
// fails t instead.
func skip(t testing.TB, c *tally, n need, why string) {
	t.Helper()
	if !c.add(n, why) {
		t.Fatalf("%s %s; %s (and this package's TestMain does not run its tests through testpaths.Main, so skipping would be silent)",
			n.name(), why, n.hint())
	}
	t.Skipf("%s %s; %s", n.name(), why, n.hint())
}

// report writes one line per need with skips and returns the exit code:
// code, or 1 when a need was skipped without its SKIP variable.
func (c *tally) report(w io.Writer, e env, pkg string, code int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for n := need(0); n < numNeeds; n++ {
		if c.n[n] == 0 {
			continue
		}
		failing := !skipAllowed(e, n)
		fmt.Fprintln(w, line(pkg, n, c.n[n], c.why[n], failing))
		if failing && code == 0 {
			code = 1
		}
	}
	return code
}

// ORT returns the path of the ONNX Runtime shared library: $ONNXRUNTIME_LIB
// when set (nothing else is looked at), else the one `npm ci
// --ignore-scripts` installs under node_modules of the repository root.
// When there is none it skips t, counted for the package's report (see
// Main).
func ORT(t testing.TB) string {
	t.Helper()
	return lookup(t, &skips, osEnv(RepoRoot(t)), needORT)
}

// SkipORT skips t because ONNX Runtime cannot be used for another reason
// than a missing library (a build without cgo), counted as ORT's skips
// are; reason completes "ONNX Runtime not usable (…)".
func SkipORT(t testing.TB, reason string) {
	t.Helper()
	skip(t, &skips, needORT, "not usable ("+reason+")")
}

// Chromium returns the path of a headless-capable Chromium
// (/usr/bin/chromium, or chromium or chromium-browser on $PATH), or skips
// t, counted for the package's report (see Main).
func Chromium(t testing.TB) string {
	t.Helper()
	return lookup(t, &skips, osEnv(""), needChromium)
}

// Node returns the path of the node executable and of the repository's
// node_modules folder, which must hold every npm package of pkgs (e.g.
// "@tensorflow/tfjs-tflite"), as `npm ci --ignore-scripts` installs them.
// When node or a package is missing it skips t, counted for the package's
// report (see Main; ONNXCONV_SKIP_NODE=1 lets the package pass).
func Node(t testing.TB, pkgs ...string) (node, modules string) {
	t.Helper()
	e := osEnv(RepoRoot(t))
	p, looked, ok := findNode(e, pkgs)
	if !ok {
		skip(t, &skips, needNode, "not found (looked for "+looked+")")
	}
	return p, filepath.Join(e.root, "node_modules")
}

// slurmPrograms are what a single-node Slurm cluster in a test needs.
var slurmPrograms = []string{"munged", "slurmctld", "slurmd", "sbatch", "scontrol", "squeue", "sinfo"}

// Slurm returns the folder of each Slurm and munge program a test starts
// (munged, slurmctld, slurmd, sbatch, scontrol, squeue, sinfo), found on
// $PATH or in /usr/sbin (where Debian puts the daemons), or skips t,
// counted for the package's report (see Main).
func Slurm(t testing.TB) map[string]string {
	t.Helper()
	paths, looked, ok := findSlurm(osEnv(""))
	if !ok {
		skip(t, &skips, needSlurm, "not found (looked for "+looked+")")
	}
	return paths
}

// findSlurm returns the path of every Slurm program, or the first missing.
func findSlurm(e env) (paths map[string]string, looked string, ok bool) {
	paths = map[string]string{}
	for _, name := range slurmPrograms {
		p, err := e.lookPath(name)
		if err != nil {
			sbin := filepath.Join("/usr/sbin", name)
			if !e.isFile(sbin) {
				return nil, name + " on $PATH and in /usr/sbin", false
			}
			p = sbin
		}
		paths[name] = p
	}
	return paths, "", true
}

// findNode returns node's path when node and every package are there, or
// what is missing.
func findNode(e env, pkgs []string) (path, looked string, ok bool) {
	p, err := e.lookPath("node")
	if err != nil {
		return "", "node on $PATH", false
	}
	for _, pkg := range pkgs {
		pj := filepath.Join(e.root, "node_modules", filepath.FromSlash(pkg), "package.json")
		if !e.isFile(pj) {
			return "", pj, false
		}
	}
	return p, "", true
}

// Libtorch checks that the libtorch plugin can be built here (Debian's
// libtorch-dev headers and g++), or skips t, counted for the package's
// report (see Main; ONNXCONV_SKIP_LIBTORCH=1 lets the package pass).
func Libtorch(t testing.TB) {
	t.Helper()
	e := osEnv(RepoRoot(t))
	if !e.isFile(libtorchHeader) {
		skip(t, &skips, needLibtorch, "not found (looked for "+libtorchHeader+")")
	}
	if _, err := e.lookPath("g++"); err != nil {
		skip(t, &skips, needLibtorch, "not usable (no g++ on $PATH)")
	}
}

// Strace returns the path of strace on $PATH, or skips t, counted for the
// package's report (see Main; ONNXCONV_SKIP_TRACE=1 lets the package pass).
func Strace(t testing.TB) string {
	t.Helper()
	p, err := osEnv("").lookPath("strace")
	if err != nil {
		skip(t, &skips, needTrace, "not found (looked for strace on $PATH)")
	}
	return p
}

// SkipTrace skips t because this process cannot trace its children
// (ptrace refused, or a platform without it), counted as Strace's skips
// are; reason completes "process tracing not usable (…)".
func SkipTrace(t testing.TB, reason string) {
	t.Helper()
	skip(t, &skips, needTrace, "not usable ("+reason+")")
}

// postgresBins is where Debian puts the server programs of each
// PostgreSQL version.
const postgresBins = "/usr/lib/postgresql/*/bin"

// Postgres returns the folder of PostgreSQL's server programs (initdb,
// pg_ctl, postgres): initdb's on $PATH, else Debian's
// /usr/lib/postgresql/VERSION/bin (the last in name order); or skips t, counted for the package's
// report (see Main; ONNXCONV_SKIP_POSTGRES=1 lets the package pass).
func Postgres(t testing.TB) string {
	t.Helper()
	e := osEnv("")
	if p, err := e.lookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	dirs, _ := filepath.Glob(postgresBins)
	for i := len(dirs) - 1; i >= 0; i-- {
		if e.isFile(filepath.Join(dirs[i], "initdb")) && e.isFile(filepath.Join(dirs[i], "pg_ctl")) {
			return dirs[i]
		}
	}
	skip(t, &skips, needPostgres, "not found (looked for initdb on $PATH and in "+postgresBins+")")
	return ""
}

// Main runs the package's tests (m.Run) and returns the exit code for
// os.Exit: m.Run's, or 1 when a test was skipped for an outside program
// whose SKIP variable (ONNXCONV_SKIP_ORT=1, ONNXCONV_SKIP_CHROMIUM=1) is
// not set. For each program some tests skipped for it prints
//
//	<pkg>: N test(s) skipped: ONNX Runtime not found (looked in …); run 'npm ci --ignore-scripts' or set ONNXRUNTIME_LIB
//
// ending, when that fails the package, with "; set ONNXCONV_SKIP_ORT=1 to
// skip them". Every package whose tests call ORT, SkipORT or Chromium runs
// them through Main from its TestMain (those helpers fail a test rather
// than skip it silently otherwise); pkg is the package's folder in the
// repository, such as "runtimes/ort". The tests run with a home of their
// own (see Hermetic).
func Main(m *testing.M, pkg string) int {
	restore, err := Hermetic()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", pkg, err)
		return 2
	}
	defer restore()
	skips.wire()
	return skips.report(os.Stdout, osEnv(""), pkg, m.Run())
}
