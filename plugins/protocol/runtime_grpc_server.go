package protocol

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/plugins/pluginpb"
)

// RuntimeGRPCServer is the plugin side of the runtime service.
type RuntimeGRPCServer struct {
	pluginpb.UnimplementedRuntimeServer
	Impl Runtime
}

// Describe implements pluginpb.RuntimeServer.
func (s *RuntimeGRPCServer) Describe(ctx context.Context, _ *pluginpb.Empty) (*pluginpb.RuntimeInfo, error) {
	if s.Impl == nil {
		return nil, status.Error(codes.Unimplemented, "this plugin has no runtime")
	}
	info, err := s.Impl.Describe(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pluginpb.RuntimeInfo{Name: info.Name, Version: info.Version, Description: info.Description}, nil
}

// Run implements pluginpb.RuntimeServer.
func (s *RuntimeGRPCServer) Run(ctx context.Context, req *pluginpb.RunRequest) (*pluginpb.RunResponse, error) {
	if s.Impl == nil {
		return nil, status.Error(codes.Unimplemented, "this plugin has no runtime")
	}
	if req.GetModelPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "run: no model path")
	}
	inputs, err := unmarshalTensors(req.GetInputs(), "input")
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, "run "+req.GetModelPath()+": "+err.Error())
	}
	outs, err := s.Impl.Run(ctx, req.GetModelPath(), inputs, RunOptions{Threads: int(req.GetThreads()), Options: req.GetOptions()})
	if err != nil {
		return nil, toStatus(err)
	}
	data, err := marshalTensors(outs, "output")
	if err != nil {
		return nil, status.Error(codes.Internal, "run "+req.GetModelPath()+": "+err.Error())
	}
	return &pluginpb.RunResponse{Outputs: data}, nil
}

// marshalTensors serializes ts; what names them in errors ("input").
func marshalTensors(ts []*onnxpb.TensorProto, what string) ([][]byte, error) {
	out := make([][]byte, len(ts))
	for i, t := range ts {
		if t == nil {
			return nil, fmt.Errorf("%s %d is nil", what, i)
		}
		b, err := proto.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("serializing %s %d (%q): %w", what, i, t.GetName(), err)
		}
		out[i] = b
	}
	return out, nil
}

// unmarshalTensors parses serialized TensorProtos.
func unmarshalTensors(data [][]byte, what string) ([]*onnxpb.TensorProto, error) {
	out := make([]*onnxpb.TensorProto, len(data))
	for i, b := range data {
		t := &onnxpb.TensorProto{}
		if err := proto.Unmarshal(b, t); err != nil {
			return nil, fmt.Errorf("%s %d is not a TensorProto: %w", what, i, err)
		}
		out[i] = t
	}
	return out, nil
}
