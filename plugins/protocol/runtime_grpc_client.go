package protocol

import (
	"context"
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/plugins/pluginpb"
)

// RuntimeGRPCClient is the host side of the runtime service.
type RuntimeGRPCClient struct{ client pluginpb.RuntimeClient }

var _ Runtime = (*RuntimeGRPCClient)(nil)

// Describe implements Runtime.
func (c *RuntimeGRPCClient) Describe(ctx context.Context) (*RuntimeInfo, error) {
	resp, err := c.client.Describe(ctx, &pluginpb.Empty{})
	if err != nil {
		return nil, err
	}
	return &RuntimeInfo{Name: resp.GetName(), Version: resp.GetVersion(), Description: resp.GetDescription()}, nil
}

// Run implements Runtime.
func (c *RuntimeGRPCClient) Run(ctx context.Context, modelPath string, inputs []*onnxpb.TensorProto, opts RunOptions) ([]*onnxpb.TensorProto, error) {
	if opts.Threads < 0 || opts.Threads > math.MaxInt32 {
		return nil, fmt.Errorf("run %s: threads %d out of range", modelPath, opts.Threads)
	}
	data, err := marshalTensors(inputs, "input")
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", modelPath, err)
	}
	resp, err := c.client.Run(ctx, &pluginpb.RunRequest{
		ModelPath: modelPath, Inputs: data, Threads: int32(opts.Threads), Options: opts.Options,
	})
	if err != nil {
		return nil, err
	}
	outs, err := unmarshalTensors(resp.GetOutputs(), "output")
	if err != nil {
		return nil, fmt.Errorf("run %s: the runtime's answer: %w", modelPath, err)
	}
	return outs, nil
}
