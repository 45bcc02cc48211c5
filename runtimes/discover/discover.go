// Package discover finds the reference runtimes onnxconv verifies with —
// Google's TFLite interpreter, TF.js and ONNX Runtime (npm's
// onnxruntime-node) under Node, the optional cgo plugin that loads ONNX
// Runtime's library, and libtorch (Debian's libtorch-dev through the cgo
// plugin onnxconv-plugin-libtorch) — from any working folder, installs the
// npm packages into the user's data folder and builds the libtorch plugin
// when it can ('onnxconv runtimes install'). It runs nothing it finds;
// listing is a look at files.
package discover

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/runtimes/node"
	"github.com/onnxconv/onnxconv/runtimes/ortnode"
	"github.com/onnxconv/onnxconv/runtimes/tfjs"
	"github.com/onnxconv/onnxconv/runtimes/tflite"
)

// InstallCommand is the one command that installs every reference
// runtime where onnxconv finds it.
const InstallCommand = runtimes.InstallCommand

// ORTPackage and ORTVersion are the npm package that ships ONNX Runtime
// (runtimes/ortnode runs it under Node; its library also serves the cgo
// plugin), and its tested release.
const (
	ORTPackage = ortnode.Package
	ORTVersion = ortnode.PackageVersion
)

// Packages are the npm packages 'onnxconv runtimes install' installs,
// pinned to the releases onnxconv is tested with.
func Packages() []string {
	return []string{
		tfjs.Package + "@" + tfjs.PackageVersion,
		tfjs.CorePackage + "@" + tfjs.PackageVersion,
		tfjs.WASMPackage + "@" + tfjs.PackageVersion,
		tflite.Package + "@" + tflite.PackageVersion,
		tflite.LiteRTPackage + "@" + tflite.LiteRTPackageVersion,
		ORTPackage + "@" + ORTVersion,
	}
}

// Runtime is one reference runtime as found (or not).
type Runtime struct {
	// Name is the runtime ("tflite", "tfjs", "onnxruntime",
	// "onnxruntime-plugin" when built, "libtorch"); What says what it is.
	Name, What string
	// Where it was found and its version; empty when missing.
	Where, Version string
	// Missing says why it was not found ("" when found).
	Missing string
}

// Options are what List reads of the outside world; the zero value reads
// the process's environment.
type Options struct {
	Node node.FindOptions
	// Getenv reads the environment (nil: os.Getenv).
	Getenv func(string) string
	// PluginDirs are the folders runtime plugins are looked for in (the
	// plugin path and the user plugins folder).
	PluginDirs []string
	// Libtorch is where libtorch's headers and the tools that build its
	// plugin are looked for; the zero value looks at this machine.
	Libtorch LibtorchOptions
}

// List finds every reference runtime.
func List(o Options) []Runtime {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if o.Node.Getenv == nil {
		o.Node.Getenv = getenv
	}
	var rs []Runtime
	if env, err := tflite.Find(o.Node); err == nil {
		rs = append(rs, Runtime{Name: "tflite", What: "Google's TFLite interpreter (" + tflite.LiteRTPackage + " first, then " + tflite.Package + ") under Node " + env.Node,
			Where: env.Modules, Version: env.Versions()})
	} else {
		rs = append(rs, Runtime{Name: "tflite", What: "Google's TFLite interpreter under Node", Missing: oneLine(err)})
	}
	if env, err := tfjs.Find(o.Node); err == nil {
		v := env.Version + " (CPU backend: " + tfjs.WASMPackage + " is not installed)"
		if wv := tfjs.WASMVersion(env); wv != "" {
			v = env.Version + " (WASM backend " + wv + ")"
		}
		rs = append(rs, Runtime{Name: "tfjs", What: "TF.js (" + tfjs.Package + ") under Node " + env.Node, Where: env.Modules, Version: v})
	} else {
		rs = append(rs, Runtime{Name: "tfjs", What: "TF.js under Node", Missing: oneLine(err)})
	}
	if env, err := ortnode.Find(o.Node); err == nil {
		rs = append(rs, Runtime{Name: ortnode.RuntimeName, What: "ONNX Runtime (" + ortnode.Package + ", its native library) under Node " + env.Node, Where: env.Modules, Version: env.Version})
	} else {
		rs = append(rs, Runtime{Name: ortnode.RuntimeName, What: "ONNX Runtime under Node", Missing: oneLine(err)})
	}
	if p := findPlugin(o.PluginDirs, plugins.ExecutablePrefix+"onnxruntime"); p != "" {
		// Optional, listed when built: the built-in above wins over it.
		const what = "the cgo plugin that runs ONNX Runtime's library, used when ONNX Runtime under Node is not installed"
		if lib, ver, looked := ortLibrary(getenv, o.Node); lib != "" {
			rs = append(rs, Runtime{Name: "onnxruntime-plugin", What: what + " (library " + lib + ")", Where: p, Version: ver})
		} else {
			rs = append(rs, Runtime{Name: "onnxruntime-plugin", What: what,
				Missing: "its library is not found in " + strings.Join(looked, ", ") + ": run '" + InstallCommand + "' (or set $ONNXRUNTIME_LIB)"})
		}
	}
	return append(rs, libtorchRuntime(o))
}

// ortLibrary looks, without loading it, for ONNX Runtime's library where
// the plugin looks first: $ONNXRUNTIME_LIB, then onnxruntime-node in the
// node_modules folders of the Node runtimes (the data folder first).
func ortLibrary(getenv func(string) string, o node.FindOptions) (path, version string, looked []string) {
	if l := getenv("ONNXRUNTIME_LIB"); l != "" {
		if st, err := os.Stat(l); err == nil && st.Mode().IsRegular() {
			return l, "", nil
		}
		return "", "", []string{"$ONNXRUNTIME_LIB=" + l}
	}
	rel := filepath.Join(ORTPackage, filepath.FromSlash(ortnode.NativeDir()), libName())
	for _, d := range node.ModuleDirs(o) {
		p := filepath.Join(d, rel)
		looked = append(looked, d)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			v, _ := node.PackageVersion(d, ORTPackage, "package.json")
			return p, v, nil
		}
	}
	return "", "", looked
}

func findPlugin(dirs []string, name string) string {
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

func libName() string {
	switch runtime.GOOS {
	case "darwin":
		return "libonnxruntime." + ORTVersion + ".dylib"
	case "windows":
		return "onnxruntime.dll"
	}
	return "libonnxruntime.so.1"
}

// oneLine is the first line of err's message.
func oneLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// ErrNoNPM is returned by Install when npm is not on $PATH.
var ErrNoNPM = errors.New("npm not found on $PATH: install Node.js and npm (Debian: apt-get install nodejs npm)")

// Install runs 'npm install --ignore-scripts --legacy-peer-deps' of
// Packages into dir (node.DataDir when ""), so that every command finds
// the runtimes from any working folder. No package script runs; ONNX
// Runtime's library comes inside onnxruntime-node. --legacy-peer-deps:
// tfjs-tflite names tfjs-core 4.9.0 as a peer, but only its WebAssembly
// interpreter is used, and one tfjs-core 4.22.0 must serve TF.js and its
// WASM backend (the repository's .npmrc says the same to npm ci).
func Install(ctx context.Context, dir string, stdout, stderr io.Writer) (string, error) {
	if dir == "" {
		d, err := node.DataDir(nil)
		if err != nil {
			return "", err
		}
		dir = d
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return dir, ErrNoNPM
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return dir, fmt.Errorf("runtimes install: %w", err)
	}
	args := append([]string{"install", "--ignore-scripts", "--legacy-peer-deps", "--no-audit", "--no-fund", "--prefix", dir}, Packages()...)
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return dir, fmt.Errorf("runtimes install: npm %s: %w", strings.Join(args, " "), err)
	}
	return dir, nil
}

// Missing returns, for a reference runtime by name ("tflite", "tfjs"),
// one line saying it is not installed and the command that installs it;
// "" when it is found or is not one this package finds (ONNX Runtime is
// found by its plugin).
func Missing(name string, o node.FindOptions) string {
	var err error
	switch name {
	case "tflite":
		_, err = tflite.Find(o)
	case "tfjs":
		_, err = tfjs.Find(o)
	default:
		return ""
	}
	if err != nil {
		return oneLine(node.NotInstalled(name, err))
	}
	return ""
}
