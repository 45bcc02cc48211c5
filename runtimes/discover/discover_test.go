package discover

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes/node"
	"github.com/onnxconv/onnxconv/runtimes/ortnode"
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
		"@tensorflow/tfjs/package.json":                                         `{"version": "4.22.0"}`,
		"@tensorflow/tfjs/dist/tf.node.js":                                      "",
		"@tensorflow/tfjs-backend-wasm/package.json":                            `{"version": "4.22.0"}`,
		"@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm":        "",
		"onnxruntime-node/package.json":                                         `{"version": "1.30.0"}`,
		"onnxruntime-node/" + ortnode.NativeDir() + "/onnxruntime_binding.node": "",
		"onnxruntime-node/" + ortnode.NativeDir() + "/" + libName():             "",
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
	if r := got["onnxruntime"]; r.Missing != "" || r.Version != "1.30.0" || r.Where != filepath.Join(data, "onnxconv", "node_modules") {
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

// TestListLibtorch: libtorch is listed with the version of its headers
// when its plugin is built; else it says what is missing, or that
// 'onnxconv runtimes install' builds it.
func TestListLibtorch(t *testing.T) {
	root := t.TempDir()
	header := filepath.Join(root, "include", "torch", "script.h")
	fakeModules(t, root, nil)
	for p, content := range map[string]string{
		header: "",
		filepath.Join(root, "include", "torch", "csrc", "api", "include", "torch", "version.h"): "#pragma once\n#define TORCH_VERSION \\\n  \"1.13.0\"\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checkout := filepath.Join(root, "src")
	if err := os.MkdirAll(checkout, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(checkout, "go.mod"), []byte("module github.com/onnxconv/onnxconv\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{"g++": true, "go": true}
	lo := LibtorchOptions{
		Header: header,
		LookPath: func(n string) (string, error) {
			if have[n] {
				return "/usr/bin/" + n, nil
			}
			return "", exec.ErrNotFound
		},
		Getwd: func() (string, error) { return checkout, nil },
	}
	plugins := filepath.Join(root, "plugins")
	o := Options{Getenv: func(string) string { return "" }, PluginDirs: []string{plugins}, Libtorch: lo}
	libtorch := func() Runtime {
		for _, r := range List(o) {
			if r.Name == "libtorch" {
				return r
			}
		}
		t.Fatal("libtorch is not listed")
		return Runtime{}
	}
	if r := libtorch(); !strings.Contains(r.Missing, "run '"+InstallCommand+"'") || !strings.Contains(r.Missing, "1.13.0") {
		t.Errorf("buildable: %+v", r)
	}
	have["g++"] = false
	o.Libtorch.Getwd = func() (string, error) { return root, nil }
	r := libtorch()
	for _, want := range []string{"a C++ compiler (apt-get install g++)", "the onnxconv source"} {
		if !strings.Contains(r.Missing, want) || strings.Contains(r.Missing, "libtorch-dev (") {
			t.Errorf("missing g++ and the source: %+v lacks %q or names libtorch-dev", r, want)
		}
	}
	if _, err := InstallLibtorch(t.Context(), plugins, o.Libtorch, io.Discard, io.Discard); !errors.As(err, new(*LibtorchMissingError)) || !strings.Contains(err.Error(), "g++") {
		t.Errorf("InstallLibtorch without g++: %v", err)
	}
	fakeModules(t, root, map[string]string{"../plugins/onnxconv-plugin-libtorch": "#!/bin/sh\n"})
	if err := os.Chmod(filepath.Join(plugins, "onnxconv-plugin-libtorch"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := libtorch(); r.Missing != "" || r.Version != "1.13.0" || r.Where != filepath.Join(plugins, "onnxconv-plugin-libtorch") {
		t.Errorf("built: %+v", r)
	}
}

// TestInstallLibtorch: with Debian's libtorch-dev, g++ and Go here,
// InstallLibtorch builds the plugin from the checkout into the folder
// given, and List then shows libtorch there with the headers' version.
func TestInstallLibtorch(t *testing.T) {
	testpaths.Libtorch(t)
	root := testpaths.RepoRoot(t)
	dir := t.TempDir()
	lo := LibtorchOptions{Getwd: func() (string, error) { return root, nil }}
	var log strings.Builder
	p, err := InstallLibtorch(t.Context(), dir, lo, &log, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if p != filepath.Join(dir, "onnxconv-plugin-libtorch") {
		t.Errorf("built %s", p)
	}
	var got Runtime
	for _, r := range List(Options{PluginDirs: []string{dir}, Libtorch: lo}) {
		if r.Name == "libtorch" {
			got = r
		}
	}
	if got.Missing != "" || got.Where != p || !strings.HasPrefix(got.Version, "1.") {
		t.Errorf("libtorch after the build: %+v", got)
	}
}
