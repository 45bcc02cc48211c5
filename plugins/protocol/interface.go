// Package protocol is the Go side of the onnxconv plugin protocol: the
// go-plugin handshake, the Importer and Exporter interfaces that both ends
// program against, and their gRPC client and server (grpc_client.go,
// grpc_server.go), following the layout of go-plugin's gRPC example.
//
// Plugin authors use package sdk, library users package plugins; this
// package is what both of them share.
package protocol

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/formats/formatinfo"
	"github.com/onnxconv/onnxconv/plugins/pluginpb"
)

// Version is the application protocol version of the handshake. It changes
// only when the services change in a way old plugins cannot serve.
const Version = 1

// Environment variables set by the host for the plugin process.
const (
	// EnvMagicCookie is the go-plugin magic cookie key.
	EnvMagicCookie = "ONNXCONV_PLUGIN_MAGIC_COOKIE"
	// MagicCookie is the value of EnvMagicCookie.
	MagicCookie = "4f4e4e58-636f6e76-706c7567-696e0001"
	// EnvMemoryLimit holds the memory limit of the plugin process in bytes
	// (decimal). The serving side applies it before serving.
	EnvMemoryLimit = "ONNXCONV_PLUGIN_MEMORY_LIMIT"
)

// Names under which the services are dispensed.
const (
	ImporterPluginName = "importer"
	ExporterPluginName = "exporter"
)

// Handshake returns the go-plugin handshake shared by host and plugins.
func Handshake() plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  Version,
		MagicCookieKey:   EnvMagicCookie,
		MagicCookieValue: MagicCookie,
	}
}

// PluginSet returns the go-plugin plugin set. imp or exp may be nil: a
// host passes both nil (it only needs the clients); a plugin passes what it
// serves. The set always holds the runtime service, without an
// implementation (see FullPluginSet for plugins that serve a runtime).
func PluginSet(imp Importer, exp Exporter) plugin.PluginSet {
	set := plugin.PluginSet{RuntimePluginName: &RuntimePlugin{}}
	if imp != nil || exp == nil {
		set[ImporterPluginName] = &ImporterPlugin{Impl: imp}
	}
	if exp != nil || imp == nil {
		set[ExporterPluginName] = &ExporterPlugin{Impl: exp}
	}
	return set
}

// Magic is a byte pattern that identifies a format.
type Magic = formatinfo.Magic

// ImporterInfo describes an importer: the whole formatinfo.Description (the
// one description of an importer, built in or plugin), the plugin's
// version, and whether it computes its sources directly (OpenSource,
// Predict).
type ImporterInfo struct {
	formatinfo.Description
	Version   string `json:"version"`
	Predictor bool   `json:"predictor,omitempty"`
}

// ExporterInfo describes an exporter.
type ExporterInfo struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Targets     []string `json:"targets,omitempty"`
	Description string   `json:"description,omitempty"`
}

// Importer is the importer service.
type Importer interface {
	Describe(ctx context.Context) (*ImporterInfo, error)
	// Detect tells whether the file at path, whose first bytes are head,
	// is in the importer's format, and how sure it is (0 to 1).
	Detect(ctx context.Context, path string, head []byte) (ok bool, confidence float32, err error)
	// Import reads in and writes an ONNX ModelProto to out.
	Import(ctx context.Context, in, out string, opts map[string]string) (warnings []string, err error)
	// OpenSource parses the source model at in (with Import's options)
	// for direct computation and keeps it for Predict; it returns what
	// computes it, for reports.
	OpenSource(ctx context.Context, in string, opts map[string]string) (description string, err error)
	// Predict computes the opened source on one sample: the graph inputs
	// of the imported model that are not initializers, in order; the
	// graph outputs in order.
	Predict(ctx context.Context, inputs []*onnxpb.TensorProto) ([]*onnxpb.TensorProto, error)
}

// Exporter is the exporter service.
type Exporter interface {
	Describe(ctx context.Context) (*ExporterInfo, error)
	// Export reads the ONNX model in and writes the target's file to out.
	Export(ctx context.Context, in, out, target string, opts map[string]string) (warnings []string, err error)
}

// ImporterPlugin is the go-plugin GRPCPlugin for Importer.
type ImporterPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Impl is the implementation served; nil on the host side.
	Impl Importer
}

// GRPCServer registers the importer service.
func (p *ImporterPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pluginpb.RegisterImporterServer(s, &ImporterGRPCServer{Impl: p.Impl})
	return nil
}

// GRPCClient returns an Importer that calls the plugin.
func (p *ImporterPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (interface{}, error) {
	return &ImporterGRPCClient{client: pluginpb.NewImporterClient(c)}, nil
}

// ExporterPlugin is the go-plugin GRPCPlugin for Exporter.
type ExporterPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Impl is the implementation served; nil on the host side.
	Impl Exporter
}

// GRPCServer registers the exporter service.
func (p *ExporterPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pluginpb.RegisterExporterServer(s, &ExporterGRPCServer{Impl: p.Impl})
	return nil
}

// GRPCClient returns an Exporter that calls the plugin.
func (p *ExporterPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (interface{}, error) {
	return &ExporterGRPCClient{client: pluginpb.NewExporterClient(c)}, nil
}
