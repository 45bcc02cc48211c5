package tflite

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

// The npm package that holds tfjs-tflite's interpreter (the build for what
// LiteRT.js does not run, and the one Find requires), and the version
// this package was written and tested against.
const (
	Package        = "@tensorflow/tfjs-tflite"
	PackageVersion = "0.0.1-alpha.10"
)

// The npm package of LiteRT.js, the build tried first when it is
// installed beside Package (Route).
const (
	LiteRTPackage        = "@litertjs/core"
	LiteRTPackageVersion = "2.5.3"
)

// InstallCommand is the one documented command that installs the npm
// packages where Find looks (the data folder, node.DataDir).
const InstallCommand = "onnxconv runtimes install"

// spec is what Find looks for (Package with its WebAssembly build) and how
// a *MissingError names the runtime.
func spec() node.Spec {
	return node.Spec{
		Runtime: "tflite",
		Then:    "the interpreter",
		Install: InstallCommand,
		Package: Package,
		Build:   "wasm/tflite_web_api_cc_simd.wasm",
	}
}

// litertBuild is the compat WebAssembly build LiteRTPackage must hold.
const litertBuild = "wasm/litert_wasm_compat_internal.wasm"

// Env is where the runtime's programs are: the node executable and the
// node_modules folder holding Package.
type Env struct {
	Node    string
	Modules string
	// Version is Package's version as installed.
	Version string
	// LiteRTVersion is LiteRTPackage's version when it is installed in
	// Modules (with its WebAssembly build), else "".
	LiteRTVersion string
}

// Versions names the installed builds, the one tried first first:
// "LiteRT.js 2.5.3, tfjs-tflite 0.0.1-alpha.10".
func (e Env) Versions() string {
	v := "tfjs-tflite " + e.Version
	if e.LiteRTVersion != "" {
		v = "LiteRT.js " + e.LiteRTVersion + ", " + v
	}
	return v
}

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

// Find locates node and the npm package (and LiteRTPackage beside it).
// Errors are *MissingError.
func Find(o FindOptions) (Env, error) {
	e, err := spec().Find(o)
	env := Env{Node: e.Node, Modules: e.Modules, Version: e.Version}
	if err != nil {
		return env, err
	}
	if lv, err := node.PackageVersion(env.Modules, LiteRTPackage, litertBuild); err == nil {
		env.LiteRTVersion = lv
	}
	return env, nil
}
