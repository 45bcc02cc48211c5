//go:build cgo

package ort

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	ortgo "github.com/yalue/onnxruntime_go"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// env guards the process-global ONNX Runtime environment that onnxruntime_go
// keeps; see the package documentation.
var env struct {
	mu      sync.Mutex
	libPath string // library the environment was opened with; "" if not ours
}

// Runtime is an opened ONNX Runtime. Any number of Runtimes may exist; they
// share the process-global environment. A Runtime is safe for concurrent use.
type Runtime struct {
	threads int
}

// Open loads the ONNX Runtime library at libPath and initialises the
// process-global environment, or joins it if an earlier Open did so with the
// same library. threads is the default number of intra-op threads of the
// sessions made by this Runtime (0 lets ONNX Runtime choose, 1 for fair
// single-thread benchmarks). Open is safe to call from several goroutines.
func Open(libPath string, threads int) (*Runtime, error) {
	if threads < 0 {
		return nil, fmt.Errorf("open ONNX Runtime: threads must be >= 0, got %d", threads)
	}
	if libPath == "" {
		return nil, fmt.Errorf("open ONNX Runtime: empty library path; %s", InstallHint)
	}
	abs, err := filepath.Abs(libPath)
	if err != nil {
		return nil, fmt.Errorf("open ONNX Runtime %s: %w", libPath, err)
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("open ONNX Runtime: %w; %s", err, InstallHint)
	}
	env.mu.Lock()
	defer env.mu.Unlock()
	switch {
	case env.libPath == abs:
		// Already ours, same library.
	case env.libPath != "":
		return nil, fmt.Errorf("open ONNX Runtime %s: this process already uses %s "+
			"(onnxruntime_go allows one library per process)", abs, env.libPath)
	case ortgo.IsInitialized():
		// Initialised by someone else through onnxruntime_go directly: join it.
	default:
		ortgo.SetSharedLibraryPath(abs)
		if err := ortgo.InitializeEnvironment(ortgo.WithLogLevelError()); err != nil {
			return nil, fmt.Errorf("open ONNX Runtime %s: %w", abs, err)
		}
		env.libPath = abs
	}
	return &Runtime{threads: threads}, nil
}

// OpenDefault is Open(FindLibrary(), threads).
func OpenDefault(threads int) (*Runtime, error) {
	p, err := FindLibrary()
	if err != nil {
		return nil, err
	}
	return Open(p, threads)
}

// Version returns the version string of the loaded ONNX Runtime, e.g. "1.30.0".
func (r *Runtime) Version() string { return ortgo.GetVersion() }

// Close releases what this Runtime owns. It does not tear down the
// process-global environment, which other Runtimes may share; it lives until
// the process exits. Sessions made by r stay valid until closed themselves.
func (r *Runtime) Close() error { return nil }

// Run loads the model at modelPath, runs it once on inputs and returns the
// graph outputs in graph-output order, each named. Input i is bound to the
// graph input named by inputs[i].Name, or, if that is empty, to the i-th
// graph input. For repeated runs use NewSession.
func (r *Runtime) Run(modelPath string, inputs []*onnxpb.TensorProto) ([]*onnxpb.TensorProto, error) {
	s, err := r.NewSession(modelPath)
	if err != nil {
		return nil, err
	}
	out, runErr := s.Run(inputs)
	if err := s.Close(); err != nil && runErr == nil {
		return nil, err
	}
	return out, runErr
}
