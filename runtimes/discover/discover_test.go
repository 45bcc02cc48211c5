package discover

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/runtimes/node"
)

// fakeModules makes a node_modules folder holding package.json files
// (and the build files Find requires) of the given packages.
func fakeModules(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, "node_modules", filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestListFromDataFolder: packages in $XDG_DATA_HOME/onnxconv are found
// from any working folder, each with its version; ONNX Runtime's library
// inside onnxruntime-node too. A missing one says the install command.
func TestListFromDataFolder(t *testing.T) {
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		nodeBin = "/usr/bin/node" // only looked up, never run
	}
	data := t.TempDir()
	fakeModules(t, filepath.Join(data, "onnxconv"), map[string]string{
		"@tensorflow/tfjs/package.json":                                                     `{"version": "4.22.0"}`,
		"@tensorflow/tfjs/dist/tf.node.js":                                                  "",
		"@tensorflow/tfjs-backend-wasm/package.json":                                        `{"version": "4.22.0"}`,
		"@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm":                    "",
		"onnxruntime-node/package.json":                                                     `{"version": "1.30.0"}`,
		"onnxruntime-node/bin/napi-v6/" + npmPlatform() + "/" + npmArch() + "/" + libName(): "",
	})
	env := map[string]string{"XDG_DATA_HOME": data}
	getenv := func(k string) string { return env[k] }
	o := Options{Getenv: getenv, Node: node.FindOptions{
		Getenv:     getenv,
		LookPath:   func(string) (string, error) { return nodeBin, nil },
		Executable: func() (string, error) { return filepath.Join(t.TempDir(), "onnxconv"), nil },
		UserDir:    func() (string, error) { return t.TempDir(), nil },
		Getwd:      func() (string, error) { return t.TempDir(), nil },
	}}
	got := map[string]Runtime{}
	for _, r := range List(o) {
		got[r.Name] = r
	}
	if r := got["tfjs"]; r.Missing != "" || r.Version != "4.22.0 (WASM backend 4.22.0)" || !strings.HasPrefix(r.Where, filepath.Join(data, "onnxconv")) {
		t.Errorf("tfjs: %+v", r)
	}
	if r := got["onnxruntime"]; r.Missing != "" || r.Version != "1.30.0" || !strings.HasSuffix(r.Where, libName()) {
		t.Errorf("onnxruntime: %+v", r)
	}
	if r := got["tflite"]; r.Missing == "" || !strings.Contains(r.Missing, InstallCommand) || strings.Contains(r.Missing, "\n") {
		t.Errorf("tflite should be missing with one line naming %q: %+v", InstallCommand, r)
	}
	if why := Missing("tflite", o.Node); why != "the tflite runtime is not installed: run '"+InstallCommand+"'" {
		t.Errorf("Missing(tflite) = %q", why)
	}
	if why := Missing("tfjs", o.Node); why != "" {
		t.Errorf("Missing(tfjs) = %q, want found", why)
	}
}

// TestPackagesPinned: install pins every package to the tested release.
func TestPackagesPinned(t *testing.T) {
	for _, p := range Packages() {
		i := strings.LastIndexByte(p, '@')
		if i <= 0 || i == len(p)-1 {
			t.Errorf("%q is not pinned", p)
		}
	}
}
