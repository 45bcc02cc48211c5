package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Environment variables read by Find.
const (
	// EnvNodeModules names a node_modules folder holding the npm packages;
	// when set, no other folder is looked at.
	EnvNodeModules = "ONNXCONV_NODE_MODULES"
	// EnvNode names the node executable; when unset, node is looked up on
	// $PATH.
	EnvNode = "ONNXCONV_NODE"
)

// Spec is what one runtime looks for and how its messages name it.
type Spec struct {
	// Runtime names the runtime in messages ("tfjs", "tflite").
	Runtime string
	// Then names what Install installs once node is there ("TF.js", "the
	// interpreter").
	Then string
	// Install is the one documented command that installs the npm packages
	// where Find looks (the user plugins folder).
	Install string
	// Package is the npm package Find requires, and Build a file of it
	// (slash-separated, relative to the package's folder) that must be
	// there too: its Node or WebAssembly build.
	Package, Build string
}

// Env is where a runtime's programs are: the node executable and the
// node_modules folder holding the Spec's Package.
type Env struct {
	Node    string
	Modules string
	// Version is Package's version as installed.
	Version string
}

// MissingError is node or an npm package not found. Its message says what
// to install.
type MissingError struct {
	// What is missing: "node" or the npm package.
	What string
	// Looked lists where it was looked for, in order.
	Looked []string
	// Runtime, Then and Install are the Spec's: the runtime's name, what
	// it installs after node, and the one command that installs it.
	Runtime, Then, Install string
}

func (e *MissingError) Error() string {
	if e.What == "node" {
		return fmt.Sprintf("%s runtime: Node.js not found (looked for %s); install it (Debian: apt-get install nodejs, or set $%s to the node executable), then %s with:\n  %s",
			e.Runtime, strings.Join(e.Looked, ", "), EnvNode, e.Then, e.Install)
	}
	return fmt.Sprintf("%s runtime not installed (npm package %s not found in %s): run '%s' (or set $%s)",
		e.Runtime, e.What, strings.Join(e.Looked, ", "), e.Install, EnvNodeModules)
}

// Missing is the *MissingError for what, looked for in looked.
func (s Spec) Missing(what string, looked []string) *MissingError {
	return &MissingError{What: what, Looked: looked, Runtime: s.Runtime, Then: s.Then, Install: s.Install}
}

// FindOptions are what Find reads of the outside world; the zero value
// reads the process's environment.
type FindOptions struct {
	Getenv     func(string) string
	LookPath   func(string) (string, error)
	Executable func() (string, error)
	// UserDir returns the user plugins folder (plugins.UserDir).
	UserDir func() (string, error)
	Getwd   func() (string, error)
}

func (o FindOptions) withDefaults() FindOptions {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.LookPath == nil {
		o.LookPath = exec.LookPath
	}
	if o.Executable == nil {
		o.Executable = os.Executable
	}
	if o.UserDir == nil {
		o.UserDir = userDir
	}
	if o.Getwd == nil {
		o.Getwd = os.Getwd
	}
	return o
}

// userDir is plugins.UserDir (not imported: package plugins imports the
// protocol the runtimes are served through, not the other way round).
func userDir() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("user plugins folder: %w", err)
	}
	return filepath.Join(dir, "onnxconv", "plugins"), nil
}

// DataDir is the user's onnxconv data folder, where 'onnxconv runtimes
// install' puts the reference runtimes: $XDG_DATA_HOME/onnxconv, else
// ~/.local/share/onnxconv.
func DataDir(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "onnxconv"), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("onnxconv data folder: %w", err)
		}
		home = h
	}
	return filepath.Join(home, ".local", "share", "onnxconv"), nil
}

// ModuleDirs lists the node_modules folders Find looks in, in order:
// $ONNXCONV_NODE_MODULES alone when set; else node_modules beside the
// executable, node_modules in the data folder (DataDir, where 'onnxconv
// runtimes install' puts them), node_modules in the user plugins folder
// (~/.config/onnxconv/plugins/node_modules), and node_modules of the
// onnxconv checkout at or above the working folder (development).
func ModuleDirs(o FindOptions) []string {
	o = o.withDefaults()
	if d := o.Getenv(EnvNodeModules); d != "" {
		return []string{d}
	}
	var dirs []string
	if exe, err := o.Executable(); err == nil {
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		dirs = append(dirs, filepath.Join(filepath.Dir(exe), "node_modules"))
	}
	if d, err := DataDir(o.Getenv); err == nil {
		// Where 'onnxconv runtimes install' puts the packages.
		dirs = append(dirs, filepath.Join(d, "node_modules"))
	}
	if u, err := o.UserDir(); err == nil && u != "" {
		dirs = append(dirs, filepath.Join(u, "node_modules"))
	}
	if wd, err := o.Getwd(); err == nil {
		if root, ok := CheckoutRoot(wd); ok {
			dirs = append(dirs, filepath.Join(root, "node_modules"))
		}
	}
	return dirs
}

// CheckoutRoot finds the onnxconv checkout (a go.mod of module
// github.com/onnxconv/onnxconv) at or above dir.
func CheckoutRoot(dir string) (string, bool) {
	for i := 0; i < 64; i++ {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), "module github.com/onnxconv/onnxconv") {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", false
}

// Find locates node ($ONNXCONV_NODE, else node on $PATH) and the first of
// ModuleDirs that holds s.Package with its build. Errors are
// *MissingError.
func (s Spec) Find(o FindOptions) (Env, error) {
	o = o.withDefaults()
	var env Env
	if n := o.Getenv(EnvNode); n != "" {
		p, err := o.LookPath(n)
		if err != nil {
			return env, s.Missing("node", []string{"$" + EnvNode + "=" + n})
		}
		env.Node = p
	} else {
		p, err := o.LookPath("node")
		if err != nil {
			return env, s.Missing("node", []string{"node on $PATH"})
		}
		env.Node = p
	}
	dirs := ModuleDirs(o)
	for _, d := range dirs {
		v, err := PackageVersion(d, s.Package, s.Build)
		if err != nil {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			abs = d
		}
		env.Modules, env.Version = abs, v
		return env, nil
	}
	return env, s.Missing(s.Package, dirs)
}

// PackageVersion reads the version of the npm package pkg under modules;
// build, a file of the package (slash-separated, relative to its folder),
// must be there too.
func PackageVersion(modules, pkg, build string) (string, error) {
	dir := filepath.Join(modules, filepath.FromSlash(pkg))
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "", err
	}
	var pj struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &pj); err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(dir, "package.json"), err)
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(build))); err != nil {
		return "", errors.New(pkg + ": " + build + " missing")
	}
	return pj.Version, nil
}
