//go:build cgo

// Command onnxconv-plugin-onnxruntime is an onnxconv plugin that serves the
// "onnxruntime" runtime: it runs ONNX models with ONNX Runtime (through
// runtimes/ort and github.com/yalue/onnxruntime_go), so that
// `onnxconv verify --runtime onnxruntime ...` can cross-check converted
// models and the built-in executor against it.
//
// It needs cgo, so it is a separate executable: onnxconv itself stays a
// static CGO_ENABLED=0 binary and starts this one like any third-party
// plugin. Build and install it with
//
//	go build -o ~/.config/onnxconv/plugins/onnxconv-plugin-onnxruntime ./cmd/onnxconv-plugin-onnxruntime
//
// (or put it in a folder of $ONNXCONV_PLUGIN_PATH). It finds the ONNX
// Runtime shared library, in this order: the --ort-lib flag (for a wrapper
// script), $ONNXRUNTIME_LIB, the npm-installed copy under the repository
// root above the working directory (`npm install --ignore-scripts
// onnxruntime-node@1.30.0`), a libonnxruntime.so.1 (or .so) beside the
// executable. The library is loaded on the first run, not to describe the
// plugin, so `onnxconv plugins` lists it even when the library is missing.
//
// Run options (plugins.RunOptions.Options): "optimization": "all"
// (default) or "disable" (ONNX Runtime's graph optimizations off, every
// node runs as written).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/plugins/sdk"
	"github.com/onnxconv/onnxconv/runtimes/ort"
)

// RuntimeName is the name users pick the runtime by.
const RuntimeName = "onnxruntime"

// version of this plugin.
const version = "0.1.0"

func main() {
	fs := flag.NewFlagSet(filepath.Base(os.Args[0]), flag.ContinueOnError)
	lib := fs.String("ort-lib", "", "path of libonnxruntime.so (default: $"+ort.LibraryEnv+", the npm-installed copy, or one beside this executable)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	s := &server{libFlag: *lib}
	sdk.ServeRuntime(sdk.Runtime{
		Name:        RuntimeName,
		Version:     version,
		Description: "ONNX Runtime (C API 24+, e.g. 1.30) through onnxruntime_go; CPU execution provider",
		Run:         s.run,
	})
}

// server holds the ONNX Runtime opened on the first run.
type server struct {
	libFlag string

	mu sync.Mutex
	rt *ort.Runtime
}

// runtime opens ONNX Runtime once.
func (s *server) runtime() (*ort.Runtime, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rt != nil {
		return s.rt, nil
	}
	lib, err := findLibrary(s.libFlag)
	if err != nil {
		return nil, err
	}
	rt, err := ort.Open(lib, 0)
	if err != nil {
		return nil, fmt.Errorf("%s plugin: %w", RuntimeName, err)
	}
	s.rt = rt
	return rt, nil
}

// findLibrary resolves the library path: flag, then ort.FindLibrary
// ($ONNXRUNTIME_LIB, the npm copy), then beside the executable.
func findLibrary(flagPath string) (string, error) {
	if flagPath != "" {
		if _, err := os.Stat(flagPath); err != nil {
			return "", fmt.Errorf("%s plugin: --ort-lib: %w; %s", RuntimeName, err, ort.InstallHint)
		}
		return flagPath, nil
	}
	p, err := ort.FindLibrary()
	if err == nil {
		return p, nil
	}
	if os.Getenv(ort.LibraryEnv) != "" || !errors.Is(err, ort.ErrLibraryNotFound) {
		return "", fmt.Errorf("%s plugin: %w", RuntimeName, err)
	}
	exe, xerr := os.Executable()
	if xerr != nil {
		return "", fmt.Errorf("%s plugin: %w", RuntimeName, err)
	}
	dir := filepath.Dir(exe)
	for _, name := range []string{"libonnxruntime.so.1", "libonnxruntime.so"} {
		cand := filepath.Join(dir, name)
		if _, serr := os.Stat(cand); serr == nil {
			return cand, nil
		}
	}
	return "", fmt.Errorf("%s plugin: %w; or put libonnxruntime.so.1 beside the plugin, in %s", RuntimeName, err, dir)
}

// run runs the model once with the call's thread count and options.
func (s *server) run(ctx context.Context, modelPath string, inputs []*onnxpb.TensorProto) ([]*onnxpb.TensorProto, error) {
	ro := sdk.RunOptionsFrom(ctx)
	opts := []ort.SessionOption{ort.WithIntraOpThreads(ro.Threads)}
	for k, v := range ro.Options {
		switch {
		case k == "optimization" && (v == "all" || v == ""):
		case k == "optimization" && v == "disable":
			opts = append(opts, ort.WithoutOptimization())
		case k == "optimization":
			return nil, fmt.Errorf("%s: option optimization=%q: want all or disable", RuntimeName, v)
		default:
			return nil, fmt.Errorf("%s: unknown option %q (known: optimization)", RuntimeName, k)
		}
	}
	rt, err := s.runtime()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sess, err := rt.NewSession(modelPath, opts...)
	if err != nil {
		return nil, err
	}
	outs, runErr := sess.Run(inputs)
	if err := sess.Close(); err != nil && runErr == nil {
		return nil, fmt.Errorf("%s: closing the session of %s: %w", RuntimeName, modelPath, err)
	}
	if runErr != nil {
		return nil, runErr
	}
	return outs, nil
}
