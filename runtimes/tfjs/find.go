package tfjs

import (
	"github.com/onnxconv/onnxconv/runtimes/node"
)

// Environment variables read by Find.
const (
	// EnvNodeModules names a node_modules folder holding the npm packages;
	// when set, no other folder is looked at.
	EnvNodeModules = node.EnvNodeModules
	// EnvNode names the node executable; when unset, node is looked up on
	// $PATH.
	EnvNode = node.EnvNode
)

// The npm package that holds TF.js, and the version this package was
// written and tested against; CorePackage and WASMPackage, of the same
// version, are its core (one copy, shared with the backend) and its
// WebAssembly backend, which runs the models (the CPU backend runs only
// the ops it lacks).
const (
	Package        = "@tensorflow/tfjs"
	PackageVersion = "4.22.0"
	CorePackage    = "@tensorflow/tfjs-core"
	WASMPackage    = "@tensorflow/tfjs-backend-wasm"
)

// InstallCommand is the one documented command that installs the npm
// packages where Find looks (the data folder, node.DataDir).
const InstallCommand = "onnxconv runtimes install"

// spec is what Find looks for (Package with its Node build,
// dist/tf.node.js) and how a *MissingError names the runtime.
func spec() node.Spec {
	return node.Spec{
		Runtime: "tfjs",
		Then:    "TF.js",
		Install: InstallCommand,
		Package: Package,
		Build:   "dist/tf.node.js",
	}
}

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

// ModuleDirs lists the node_modules folders Find looks in, in order:
// $ONNXCONV_NODE_MODULES alone when set; else node_modules beside the
// executable, node_modules in the user plugins folder
// (~/.config/onnxconv/plugins/node_modules), and node_modules of the
// onnxconv checkout at or above the working folder (development).
func ModuleDirs(o FindOptions) []string { return node.ModuleDirs(o) }

// Find locates node and the npm package. Errors are *MissingError.
func Find(o FindOptions) (Env, error) { return spec().Find(o) }

// WASMVersion is the version of WASMPackage installed beside Package in
// env (with its SIMD build), "" when it is not: the CPU backend then runs
// every model.
func WASMVersion(env Env) string {
	v, err := node.PackageVersion(env.Modules, WASMPackage, "dist/tfjs-backend-wasm-simd.wasm")
	if err != nil {
		return ""
	}
	return v
}
