//go:build unix

package plugins

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/plugins/protocol"
)

// Binaries built once by TestMain.
var (
	misbehaveBin string // plugins/internal/testplugins/misbehave
	csvgraphBin  string // examples/csvgraph
)

func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == "__plugin" && os.Args[2] == "serve" {
		// Started by a host as `EXE __plugin serve NAME`: serve the
		// built-in importer NAME, as cmd/onnxconv does.
		os.Exit(serveBuiltin(os.Args[3]))
	}
	if dir := os.Getenv(envHelperHost); dir != "" {
		os.Exit(helperHost(dir))
	}
	if os.Getenv(envHelperInherit) != "" {
		os.Exit(helperInherit())
	}
	os.Exit(runMain(m))
}

// envHelperHost makes the test binary a host process for
// TestPluginDiesWithHost: it imports with the hang plugin of the folder
// named by the variable, writing the plugin's pid to dir/pid.
const envHelperHost = "ONNXCONV_PLUGINS_TEST_HELPER_HOST"

func helperHost(dir string) int {
	opts := Options{PluginPath: dir, UserDir: dir, CallTimeout: time.Minute}
	h, err := NewHost(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	in := filepath.Join(dir, "in.hang")
	if err := os.WriteFile(in, []byte("Relu\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, err = h.Import(context.Background(), "hang", in, filepath.Join(dir, "out.onnx"),
		map[string]string{"pidfile": filepath.Join(dir, "pid")})
	fmt.Fprintln(os.Stderr, "import returned:", err)
	return 1
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "onnxconv-plugins-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	misbehaveBin = filepath.Join(dir, "misbehave")
	csvgraphBin = filepath.Join(dir, "csvgraph")
	for bin, pkg := range map[string]string{
		misbehaveBin: "./internal/testplugins/misbehave",
		csvgraphBin:  "../examples/csvgraph",
	} {
		cmd := exec.Command("go", "build", "-o", bin, pkg)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n", pkg, err)
			return 1
		}
	}
	// The tests must not see the user's own plugins.
	os.Unsetenv(EnvPluginPath)
	return testpaths.Main(m, "plugins")
}

// pluginDir returns a folder holding onnxconv-plugin-MODE for each mode,
// all hard links (or copies) of the misbehave binary.
func pluginDir(t *testing.T, modes ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, m := range modes {
		dst := filepath.Join(dir, ExecutablePrefix+m)
		if err := os.Link(misbehaveBin, dst); err != nil {
			data, err := os.ReadFile(misbehaveBin)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, data, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// testOptions are options for fast tests: short limits, no user folder.
func testOptions(t *testing.T, pluginPath string) Options {
	return Options{
		PluginPath:      pluginPath,
		UserDir:         t.TempDir(),
		CallTimeout:     30 * time.Second,
		DescribeTimeout: 30 * time.Second,
		StartTimeout:    20 * time.Second,
		MemoryLimit:     256 << 20,
	}
}

func newHost(t *testing.T, opts Options) *Host {
	t.Helper()
	h, err := NewHost(context.Background(), opts)
	if err != nil {
		t.Fatalf("NewHost: %v", err)
	}
	return h
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// children returns the pids of the live or zombie child processes of the
// test process.
func children(t *testing.T) []int {
	t.Helper()
	if runtime.GOOS != "linux" {
		return nil
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		rest := stat[bytes.LastIndexByte(stat, ')')+1:]
		f := strings.Fields(string(rest))
		if len(f) >= 2 {
			if ppid, _ := strconv.Atoi(f[1]); ppid == self {
				out = append(out, pid)
			}
		}
	}
	return out
}

// assertNoChildren fails if the test process has any child process left.
func assertNoChildren(t *testing.T) {
	t.Helper()
	if c := children(t); len(c) > 0 {
		t.Errorf("child processes left behind: %v", c)
	}
}

// assertGone fails if process pid still exists (even as a zombie).
func assertGone(t *testing.T, pid int) {
	t.Helper()
	if pid <= 0 {
		t.Errorf("no pid recorded")
		return
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d still exists (kill 0: %v)", pid, err)
	}
}

// assertDirEntries fails unless dir holds exactly names.
func assertDirEntries(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s holds %v, want %v", dir, got, names)
	}
}

func readModel(t *testing.T, path string) *onnxpb.ModelProto {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(data, m); err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	return m
}

func opTypes(m *onnxpb.ModelProto) []string {
	var out []string
	for _, n := range m.GetGraph().GetNode() {
		out = append(out, n.GetOpType())
	}
	return out
}

func findPlugin(infos []PluginInfo, name string) *PluginInfo {
	for i := range infos {
		if infos[i].Name == name {
			return &infos[i]
		}
	}
	return nil
}

var _ = protocol.Version
