package protocol

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/plugins/pluginpb"
)

// RuntimePluginName is the name under which the runtime service is
// dispensed.
const RuntimePluginName = "runtime"

// RuntimeInfo describes a runtime: something that runs ONNX models, such as
// ONNX Runtime.
type RuntimeInfo struct {
	// Name is what users pick the runtime by (`--runtime NAME`).
	Name        string `json:"name"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
}

// OptionCapture is the RunOptions.Options key that asks a runtime for
// intermediate values of the model instead of its outputs: a JSON list of
// names in the source's own terms (the libtorch plugin: submodule calls,
// "PATH:K"); the answer is one tensor per name, in that order. A runtime
// that does not know it refuses the option. The host sets it for the
// error map (plugins.RuntimeSession.RunNamed).
const OptionCapture = "onnxconv.capture"

// RunOptions configure one Runtime.Run call.
type RunOptions struct {
	// Threads is the number of intra-op threads; 0 lets the runtime
	// choose.
	Threads int
	// Options are runtime-specific settings (for ONNX Runtime:
	// "optimization": "disable").
	Options map[string]string
}

// Runtime is the runtime service.
type Runtime interface {
	Describe(ctx context.Context) (*RuntimeInfo, error)
	// Run runs the ONNX model at modelPath once. inputs are the graph
	// inputs that are not initializers, in graph order; a tensor's name,
	// when set, binds it to the graph input of that name. The outputs are
	// the graph outputs in graph order, named.
	Run(ctx context.Context, modelPath string, inputs []*onnxpb.TensorProto, opts RunOptions) ([]*onnxpb.TensorProto, error)
}

// RuntimePlugin is the go-plugin GRPCPlugin for Runtime.
type RuntimePlugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Impl is the implementation served; nil on the host side (and in
	// plugins that serve no runtime: the service then answers
	// Unimplemented).
	Impl Runtime
}

// GRPCServer registers the runtime service.
func (p *RuntimePlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pluginpb.RegisterRuntimeServer(s, &RuntimeGRPCServer{Impl: p.Impl})
	return nil
}

// GRPCClient returns a Runtime that calls the plugin.
func (p *RuntimePlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (interface{}, error) {
	return &RuntimeGRPCClient{client: pluginpb.NewRuntimeClient(c)}, nil
}

// FullPluginSet is PluginSet with the runtime service: imp, exp and rt may
// each be nil. A host passes all nil. The runtime service is always in the
// set, so that a host can ask any plugin whether it serves one (an older
// plugin without the service answers Unimplemented).
func FullPluginSet(imp Importer, exp Exporter, rt Runtime) plugin.PluginSet {
	set := PluginSet(imp, exp)
	set[RuntimePluginName] = &RuntimePlugin{Impl: rt}
	return set
}
