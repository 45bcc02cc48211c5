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
// Runtime shared library with the --ort-lib flag (for a wrapper script), or
// else as ort.FindLibrary does: $ONNXRUNTIME_LIB, beside this executable
// (or in lib/ beside it), the user plugins folder, the npm-installed copy of
// a checkout above the working directory (`npm ci --ignore-scripts`), the
// system library folders. So an installed plugin works from any folder when
// libonnxruntime.so.1 is copied beside it.
//
// The library is loaded when the plugin starts, so that the runtime it
// describes carries ONNX Runtime's own version (RuntimeInfo.Version, e.g.
// "1.30.0"; the plugin's version is in the description). When the library
// is missing the plugin still describes itself (version "unknown"), so
// `onnxconv plugins` lists it, and every run fails saying how to install
// the library.
//
// Run options (plugins.RunOptions.Options): "optimization": "all"
// (default) or "disable" (ONNX Runtime's graph optimizations off, every
// node runs as written).
package main

import (
	"context"
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

// unknownVersion is the runtime version described when the library could
// not be loaded.
const unknownVersion = "unknown"

func main() {
	fs := flag.NewFlagSet(filepath.Base(os.Args[0]), flag.ContinueOnError)
	lib := fs.String("ort-lib", "", "path of libonnxruntime.so (default: as ort.FindLibrary: $"+ort.LibraryEnv+
		", beside this executable, the user plugins folder, the npm-installed copy, the system folders)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	s := open(*lib)
	sdk.ServeRuntime(s.info())
}

// server holds the ONNX Runtime opened when the plugin starts, or why it
// could not be opened. It does not change after open.
type server struct {
	lib     string       // library path; "" when not found
	rt      *ort.Runtime // nil when err is set
	version string       // ONNX Runtime's version
	err     error        // why the library could not be found or opened

	// The host keeps one plugin process for the runs of one model
	// (plugins.Host.OpenRuntime): the last session is kept for the next
	// run of the same file with the same settings, so the model is
	// loaded once.
	mu   sync.Mutex
	last *cached
}

// cached is a loaded model and what it was loaded with.
type cached struct {
	key  string
	sess *ort.Session
}

// open finds and opens the ONNX Runtime library.
func open(libFlag string) *server {
	lib, err := findLibrary(libFlag)
	if err != nil {
		return &server{err: err}
	}
	rt, err := ort.Open(lib, 0)
	if err != nil {
		return &server{lib: lib, err: fmt.Errorf("%s plugin: %w", RuntimeName, err)}
	}
	return &server{lib: lib, rt: rt, version: rt.Version()}
}

// info describes the runtime s serves: ONNX Runtime's version as the
// runtime's, the plugin's own version and the library in the description.
func (s *server) info() sdk.Runtime {
	r := sdk.Runtime{Name: RuntimeName, Version: s.version, Run: s.run}
	if s.err != nil {
		r.Version = unknownVersion
		r.Description = fmt.Sprintf("ONNX Runtime (library not loaded: runs fail, see their error) through onnxconv-plugin-onnxruntime %s", version)
		return r
	}
	r.Description = fmt.Sprintf("ONNX Runtime %s, CPU execution provider, library %s, via onnxruntime_go in onnxconv-plugin-onnxruntime %s",
		s.version, s.lib, version)
	return r
}

// findLibrary resolves the library path: the flag, else ort.FindLibrary.
func findLibrary(flagPath string) (string, error) {
	if flagPath != "" {
		if _, err := os.Stat(flagPath); err != nil {
			return "", fmt.Errorf("%s plugin: --ort-lib: %w; %s", RuntimeName, err, ort.InstallHint)
		}
		return flagPath, nil
	}
	p, err := ort.FindLibrary()
	if err != nil {
		return "", fmt.Errorf("%s plugin: %w", RuntimeName, err)
	}
	return p, nil
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
	if s.err != nil {
		return nil, s.err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st, err := os.Stat(modelPath)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%s\x00%d\x00%d\x00%d\x00%s", modelPath, st.Size(), st.ModTime().UnixNano(), ro.Threads, ro.Options["optimization"])
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil || s.last.key != key {
		if s.last != nil {
			_ = s.last.sess.Close()
			s.last = nil
		}
		sess, err := s.rt.NewSession(modelPath, opts...)
		if err != nil {
			return nil, err
		}
		s.last = &cached{key: key, sess: sess}
	}
	return s.last.sess.Run(inputs)
}
