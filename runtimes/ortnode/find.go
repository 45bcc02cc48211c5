package ortnode

import (
	"path"
	"runtime"

	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/runtimes/node"
)

// The npm package that ships ONNX Runtime for Node, and the version this
// package was written and tested against.
const (
	Package        = "onnxruntime-node"
	PackageVersion = "1.30.0"
)

// Env is where the runtime's programs are: the node executable and the
// node_modules folder holding Package (Version is Package's version as
// installed).
type Env = node.Env

// MissingError is node or the npm package not found. Its message says what
// to install.
type MissingError = node.MissingError

// FindOptions are what Find reads of the outside world; the zero value
// reads the process's environment.
type FindOptions = node.FindOptions

// spec is what Find looks for (Package with its native binding for this
// platform) and how a *MissingError names the runtime.
func spec() node.Spec {
	return node.Spec{
		Runtime: RuntimeName,
		Then:    "ONNX Runtime",
		Install: runtimes.InstallCommand,
		Package: Package,
		Build:   path.Join(NativeDir(), "onnxruntime_binding.node"),
	}
}

// NativeDir is the folder of Package (slash-separated, relative to the
// package) that holds the native binding and ONNX Runtime's library for
// this platform ("bin/napi-v6/linux/x64").
func NativeDir() string {
	goos, arch := runtime.GOOS, runtime.GOARCH
	if goos == "windows" {
		goos = "win32"
	}
	if arch == "amd64" {
		arch = "x64"
	}
	return path.Join("bin", "napi-v6", goos, arch)
}

// Find locates node and the npm package with its native binding, in
// node.ModuleDirs's order. Errors are *MissingError.
func Find(o FindOptions) (Env, error) { return spec().Find(o) }
