package testpaths

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHermetic: inside Main the home, XDG and temporary folders are new
// and empty, and Go's folders are where `go env` put them outside.
func TestHermetic(t *testing.T) {
	tmp := os.TempDir()
	for _, k := range hermeticVars {
		d := os.Getenv(k)
		if !filepath.IsAbs(d) || !strings.HasPrefix(d, filepath.Dir(tmp)+string(filepath.Separator)) {
			t.Errorf("$%s = %q, want a folder beside $TMPDIR %s", k, d, tmp)
		}
	}
	for _, k := range []string{"HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"} {
		if ents, err := os.ReadDir(os.Getenv(k)); err != nil || len(ents) > 0 {
			t.Errorf("$%s holds %d entries (%v), want an empty folder", k, len(ents), err)
		}
	}
	for _, k := range goVars {
		if d := os.Getenv(k); d == "" || strings.HasPrefix(d, filepath.Dir(tmp)+string(filepath.Separator)) {
			t.Errorf("$%s = %q, want Go's own folder, outside the test's home", k, d)
		}
	}
}

// TestSuiteAfterRuntimesInstall simulates `onnxconv runtimes install` run
// as the user who runs the tests: a home whose data folder
// (~/.local/share/onnxconv/node_modules) holds the npm packages, ONNX
// Runtime's library included, at another path than the checkout's. The
// tests of the packages that look for runtimes there must still pass
// (they failed when they read the real home: runtimes/ort's
// TestOpenIdempotent found the data folder's library, runtimes/tflite's
// TestFind found the data folder's package).
func TestSuiteAfterRuntimesInstall(t *testing.T) {
	root := RepoRoot(t)
	modules := filepath.Join(root, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "onnxruntime-node")); err != nil {
		// The packages the tests below need: counted as ORT's skip.
		ORT(t)
	}
	home := t.TempDir()
	data := filepath.Join(home, ".local", "share", "onnxconv")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(data, "node_modules")); err != nil {
		t.Fatal(err)
	}
	// Go's folders stay where they are (a fresh module and build cache
	// would download and build everything again).
	pinned, err := goFolders()
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := pinned[k]; ok || k == "HOME" || strings.HasPrefix(k, "XDG_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home)
	for k, v := range pinned {
		env = append(env, k+"="+v)
	}
	pkgs := []string{"./runtimes", "./runtimes/node", "./runtimes/discover", "./runtimes/ort", "./runtimes/tflite"}
	cmd := exec.Command("go", append([]string{"test", "-short", "-count=1"}, pkgs...)...)
	cmd.Dir = root
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test %s with %s populated as 'onnxconv runtimes install' does: %v\n%s", strings.Join(pkgs, " "), data, err, out)
	}
	t.Logf("with %s populated:\n%s", data, out)
}
