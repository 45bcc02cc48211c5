package testpaths

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// libtorchPlugin is the libtorch plugin of the test process, built once.
var libtorchPlugin struct {
	once sync.Once
	dir  string
	err  error
	out  []byte
}

// LibtorchPlugin builds cmd/onnxconv-plugin-libtorch with the libtorch tag,
// once per test process, into a folder of its own under TMPDIR (the
// hermetic one of Main, removed when the tests end), and returns the
// folder, for plugins.Options.PluginPath; without libtorch it skips t as
// Libtorch does. The first build compiles the C++ shim: minutes.
func LibtorchPlugin(t testing.TB) string {
	t.Helper()
	Libtorch(t)
	p := &libtorchPlugin
	p.once.Do(func() {
		if p.dir, p.err = os.MkdirTemp("", "onnxconv-libtorch-plugin"); p.err != nil {
			return
		}
		cmd := exec.Command("go", "build", "-tags", "libtorch", "-o", filepath.Join(p.dir, "onnxconv-plugin-libtorch"), "./cmd/onnxconv-plugin-libtorch")
		cmd.Dir = RepoRoot(t)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		p.out, p.err = cmd.CombinedOutput()
	})
	if p.err != nil {
		t.Fatalf("building the libtorch plugin: %v\n%s", p.err, p.out)
	}
	return p.dir
}
