package discover

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/runtimes/node"
)

// LibtorchHeader is where Debian's libtorch-dev puts torch/script.h.
const LibtorchHeader = "/usr/include/torch/script.h"

// libtorchPlugin is the plugin executable that serves the libtorch
// runtime, and the command that builds it from a checkout.
const libtorchPlugin = plugins.ExecutablePrefix + "libtorch"

// LibtorchOptions are what the libtorch listing and build read of the
// outside world; the zero value reads this machine.
type LibtorchOptions struct {
	// Header is torch/script.h (LibtorchHeader when "").
	Header string
	// LookPath finds g++ and go (exec.LookPath when nil).
	LookPath func(string) (string, error)
	// Getwd is where the onnxconv checkout is looked for, at or above
	// (os.Getwd when nil).
	Getwd func() (string, error)
}

func (o LibtorchOptions) withDefaults() LibtorchOptions {
	if o.Header == "" {
		o.Header = LibtorchHeader
	}
	if o.LookPath == nil {
		o.LookPath = exec.LookPath
	}
	if o.Getwd == nil {
		o.Getwd = os.Getwd
	}
	return o
}

// libtorchVersion is TORCH_VERSION of the headers beside header
// (torch/csrc/api/include/torch/version.h), "" when they are not there.
func libtorchVersion(header string) string {
	f, err := os.Open(filepath.Join(filepath.Dir(header), "csrc", "api", "include", "torch", "version.h"))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<16))
	want := false
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#define TORCH_VERSION ") || l == "#define TORCH_VERSION \\" {
			want = true
		}
		if want {
			if i := strings.IndexByte(l, '"'); i >= 0 {
				if j := strings.IndexByte(l[i+1:], '"'); j >= 0 {
					return l[i+1 : i+1+j]
				}
			}
		}
	}
	return ""
}

// libtorchNeeds returns the checkout the plugin is built from and what
// building it needs but this machine lacks, each with how to get it.
func libtorchNeeds(o LibtorchOptions) (root string, missing []string) {
	o = o.withDefaults()
	if st, err := os.Stat(o.Header); err != nil || !st.Mode().IsRegular() {
		missing = append(missing, "Debian's libtorch-dev (apt-get install libtorch-dev; no "+o.Header+")")
	}
	if _, err := o.LookPath("g++"); err != nil {
		missing = append(missing, "a C++ compiler (apt-get install g++)")
	}
	if _, err := o.LookPath("go"); err != nil {
		missing = append(missing, "a Go toolchain (go on $PATH; https://go.dev/dl)")
	}
	wd, err := o.Getwd()
	if err == nil {
		root, _ = node.CheckoutRoot(wd)
	}
	if root == "" {
		missing = append(missing, "the onnxconv source (run it from a checkout of github.com/onnxconv/onnxconv)")
	}
	return root, missing
}

// libtorchRuntime lists libtorch: its version and plugin when the plugin
// is built, else what is missing.
func libtorchRuntime(o Options) Runtime {
	lo := o.Libtorch.withDefaults()
	r := Runtime{Name: "libtorch", What: "PyTorch's C++ library (Debian's libtorch-dev) through the cgo plugin " + libtorchPlugin}
	ver := libtorchVersion(lo.Header)
	if p := findPlugin(o.PluginDirs, libtorchPlugin); p != "" {
		r.Where, r.Version = p, ver
		return r
	}
	if _, missing := libtorchNeeds(lo); len(missing) > 0 {
		r.Missing = "its plugin is not built, and cannot be here: missing " + strings.Join(missing, ", ")
		return r
	}
	r.Missing = fmt.Sprintf("its plugin is not built: run '%s' (builds it against libtorch %s)", InstallCommand, ver)
	return r
}

// LibtorchMissingError is the libtorch plugin that cannot be built here:
// Missing says what is needed, each with how to get it.
type LibtorchMissingError struct{ Missing []string }

func (e *LibtorchMissingError) Error() string {
	return "the libtorch plugin was not built: missing " + strings.Join(e.Missing, ", ")
}

// InstallLibtorch builds the libtorch plugin (go build -tags libtorch, with
// cgo, of cmd/onnxconv-plugin-libtorch in the onnxconv checkout at or above
// the working folder) into dir (the user plugins folder when ""), and
// returns its path. When something it needs is missing it builds nothing
// and fails with a *LibtorchMissingError.
func InstallLibtorch(ctx context.Context, dir string, o LibtorchOptions, stdout, stderr io.Writer) (string, error) {
	root, missing := libtorchNeeds(o)
	if len(missing) > 0 {
		return "", &LibtorchMissingError{Missing: missing}
	}
	if dir == "" {
		d, err := plugins.UserDir()
		if err != nil {
			return "", fmt.Errorf("libtorch plugin: %w", err)
		}
		dir = d
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("libtorch plugin: %w", err)
	}
	out := filepath.Join(dir, libtorchPlugin)
	goExe, err := o.withDefaults().LookPath("go")
	if err != nil {
		return "", &LibtorchMissingError{Missing: []string{"a Go toolchain (go on $PATH)"}}
	}
	args := []string{"build", "-tags", "libtorch", "-o", out, "./cmd/onnxconv-plugin-libtorch"}
	fmt.Fprintf(stderr, "building the libtorch plugin: go %s (in %s)\n", strings.Join(args, " "), root)
	cmd := exec.CommandContext(ctx, goExe, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("libtorch plugin: go %s (in %s): %w", strings.Join(args, " "), root, err)
	}
	return out, nil
}
