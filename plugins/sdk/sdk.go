// Package sdk is the serving side of onnxconv plugins, used by every
// importer and exporter, built-in or third-party.
//
// A third-party importer is a main package that calls ServeImporter:
//
//	func main() {
//		sdk.ServeImporter(sdk.Importer{
//			Name:       "csvgraph",
//			Version:    "0.1",
//			Extensions: []string{".csvg"},
//			Magic:      []sdk.Magic{{Bytes: []byte("#csvgraph")}},
//			Import: func(ctx context.Context, in []byte, opts map[string]string) (*onnxpb.ModelProto, error) {
//				...
//			},
//		})
//	}
//
// Built as an executable named onnxconv-plugin-NAME and put in a folder of
// $ONNXCONV_PLUGIN_PATH or in the user plugins folder, it is found and
// started by onnxconv. The SDK reads the input, calls Import, and writes the
// model atomically; a panic in Import becomes an error. It applies the
// memory limit the host passes in ONNXCONV_PLUGIN_MEMORY_LIMIT.
package sdk

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/onnxconv/onnxconv/plugins/protocol"
)

// Magic is a byte pattern that identifies a format: the file holds Bytes
// at byte Offset.
type Magic = protocol.Magic

// Plugin is what one plugin process serves: an importer, an exporter, a
// runtime (see Runtime), or several of them.
type Plugin struct {
	Importer *Importer
	Exporter *Exporter
	Runtime  *Runtime
}

// Info returns the descriptions of what p serves (nil for what it does not
// serve). It lets a host list built-in plugins without starting them.
func (p Plugin) Info() (*protocol.ImporterInfo, *protocol.ExporterInfo) {
	var ii *protocol.ImporterInfo
	var ei *protocol.ExporterInfo
	if p.Importer != nil {
		ii = p.Importer.info()
	}
	if p.Exporter != nil {
		ei = p.Exporter.info()
	}
	return ii, ei
}

// Validate reports what is missing in p.
func (p Plugin) Validate() error {
	if p.Importer == nil && p.Exporter == nil && p.Runtime == nil {
		return errors.New("plugin serves neither an importer, an exporter nor a runtime")
	}
	if p.Importer != nil {
		if err := p.Importer.validate(); err != nil {
			return err
		}
	}
	if p.Exporter != nil {
		if err := p.Exporter.validate(); err != nil {
			return err
		}
	}
	if p.Runtime != nil {
		if err := p.Runtime.validate(); err != nil {
			return err
		}
	}
	return nil
}

// ErrNotStartedByHost is returned by Run when the process was not started by
// an onnxconv host (the handshake cookie is missing).
var ErrNotStartedByHost = errors.New("this is an onnxconv plugin: onnxconv starts it, it is not run directly " +
	"(see `onnxconv plugins`)")

// Run serves p until the host closes the connection. It returns an error
// when p is invalid, the process was not started by a host, or the memory
// limit cannot be applied.
func Run(p Plugin) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("onnxconv plugin: %w", err)
	}
	if os.Getenv(protocol.EnvMagicCookie) != protocol.MagicCookie {
		return ErrNotStartedByHost
	}
	if err := LimitFromEnv(); err != nil {
		return fmt.Errorf("onnxconv plugin: %w", err)
	}
	// go-plugin points os.Stderr at a pipe once serving; the process's own
	// standard error reaches the host even when the process dies.
	stderr := os.Stderr
	var imp protocol.Importer
	var exp protocol.Exporter
	if p.Importer != nil {
		imp = &importerServer{imp: p.Importer, stderr: stderr}
	}
	if p.Exporter != nil {
		exp = &exporterServer{exp: p.Exporter, stderr: stderr}
	}
	var rt protocol.Runtime
	if p.Runtime != nil {
		rt = &runtimeServer{rt: p.Runtime, stderr: stderr}
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: protocol.Handshake(),
		Plugins:         protocol.FullPluginSet(imp, exp, rt),
		GRPCServer:      grpcServer,
		Logger:          hclog.New(&hclog.LoggerOptions{Level: hclog.Error, Output: os.Stderr}),
	})
	return nil
}

// LimitFromEnv applies the memory limit the host passes in
// ONNXCONV_PLUGIN_MEMORY_LIMIT (bytes; unset or 0: none) to this process:
// what Run does first, and what a process started by plugins.RunProcess
// calls.
func LimitFromEnv() error {
	s := os.Getenv(protocol.EnvMemoryLimit)
	if s == "" {
		return nil
	}
	limit, err := strconv.ParseInt(s, 10, 64)
	if err != nil || limit < 0 {
		return fmt.Errorf("bad %s=%q: want a number of bytes", protocol.EnvMemoryLimit, s)
	}
	if limit > 0 {
		if err := applyMemoryLimit(limit); err != nil {
			return fmt.Errorf("applying memory limit of %d bytes: %w", limit, err)
		}
	}
	return nil
}

// grpcServer is go-plugin's default server with gRPC's 4 MiB limit on
// received messages lifted: runtime calls carry tensors.
func grpcServer(opts []grpc.ServerOption) *grpc.Server {
	return plugin.DefaultGRPCServer(append(opts, grpc.MaxRecvMsgSize(math.MaxInt32), grpc.MaxSendMsgSize(math.MaxInt32)))
}

// Serve serves p and exits the process with status 1 and a message on
// standard error if it cannot.
func Serve(p Plugin) {
	if err := Run(p); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// ServeImporter serves imp (see Serve).
func ServeImporter(imp Importer) { Serve(Plugin{Importer: &imp}) }

// ServeExporter serves exp (see Serve).
func ServeExporter(exp Exporter) { Serve(Plugin{Exporter: &exp}) }
