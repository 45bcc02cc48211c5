package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/plugins/protocol"
)

// Runtime is a runtime served by a plugin: something that runs ONNX
// models, so that onnxconv can cross-check its executor and its converted
// models against it (`onnxconv verify --runtime NAME`). A runtime that
// needs cgo (ONNX Runtime) lives in its own plugin executable, so that
// onnxconv itself stays a static binary:
//
//	func main() {
//		sdk.ServeRuntime(sdk.Runtime{
//			Name:    "myrt",
//			Version: "1.0",
//			Run: func(ctx context.Context, modelPath string, in []*onnxpb.TensorProto) ([]*onnxpb.TensorProto, error) {
//				opts := sdk.RunOptionsFrom(ctx) // threads, runtime options
//				...
//			},
//		})
//	}
type Runtime struct {
	// Name is what users pick the runtime by (`--runtime NAME`).
	Name        string
	Version     string
	Description string

	// Run runs the ONNX model at modelPath once. inputs are the graph
	// inputs that are not initializers, in graph order (a tensor's name,
	// when set, names its graph input); it returns the graph outputs in
	// graph order. The call's thread count and options are in
	// RunOptionsFrom(ctx). A panic in Run becomes an error.
	Run func(ctx context.Context, modelPath string, inputs []*onnxpb.TensorProto) ([]*onnxpb.TensorProto, error)
}

type runOptionsKey struct{}

// RunOptionsFrom returns the options of the current Runtime.Run call (the
// zero value outside a call).
func RunOptionsFrom(ctx context.Context) protocol.RunOptions {
	o, _ := ctx.Value(runOptionsKey{}).(protocol.RunOptions)
	return o
}

// RuntimeInfo returns the description of the runtime p serves, nil if none.
func (p Plugin) RuntimeInfo() *protocol.RuntimeInfo {
	if p.Runtime == nil {
		return nil
	}
	return p.Runtime.info()
}

// ServeRuntime serves rt (see Serve).
func ServeRuntime(rt Runtime) { Serve(Plugin{Runtime: &rt}) }

func (rt *Runtime) info() *protocol.RuntimeInfo {
	return &protocol.RuntimeInfo{Name: rt.Name, Version: rt.Version, Description: rt.Description}
}

func (rt *Runtime) validate() error {
	if rt.Name == "" {
		return errors.New("runtime has no Name")
	}
	if rt.Run == nil {
		return fmt.Errorf("runtime %q has no Run", rt.Name)
	}
	return nil
}

// runtimeServer adapts a Runtime to protocol.Runtime. Stack traces of
// panics go to stderr.
type runtimeServer struct {
	rt     *Runtime
	stderr io.Writer
}

func (s *runtimeServer) Describe(context.Context) (*protocol.RuntimeInfo, error) {
	return s.rt.info(), nil
}

func (s *runtimeServer) Run(ctx context.Context, modelPath string, inputs []*onnxpb.TensorProto, opts protocol.RunOptions) ([]*onnxpb.TensorProto, error) {
	st, err := os.Stat(modelPath)
	if err != nil {
		return nil, fmt.Errorf("runtime %q: model: %w", s.rt.Name, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("runtime %q: model %s is not a regular file", s.rt.Name, modelPath)
	}
	ctx = context.WithValue(ctx, runOptionsKey{}, opts)
	var outs []*onnxpb.TensorProto
	err = callRecover(s.stderr, "Run", func() error {
		var err error
		outs, err = s.rt.Run(ctx, modelPath, inputs)
		return err
	})
	if err != nil {
		return nil, err
	}
	return outs, nil
}
