package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/plugins/protocol"
)

// Exporter is an exporter served by a plugin. Set Export, or ExportFile for
// models too large to hold in memory.
type Exporter struct {
	Name        string
	Version     string
	Description string
	// Targets are the target profiles written, e.g. "ort".
	Targets []string

	// Export writes model for target to w. The SDK writes w to a temporary
	// file and renames it onto the output path when Export succeeds.
	Export func(ctx context.Context, model *onnxpb.ModelProto, target string, opts map[string]string, w io.Writer) error

	// ExportFile is the path-based form: it reads the ONNX model at inPath
	// and writes outPath itself (see WriteFileAtomic). It is used when set,
	// instead of Export.
	ExportFile func(ctx context.Context, inPath, outPath, target string, opts map[string]string) error
}

func (exp *Exporter) info() *protocol.ExporterInfo {
	return &protocol.ExporterInfo{
		Name:        exp.Name,
		Version:     exp.Version,
		Targets:     exp.Targets,
		Description: exp.Description,
	}
}

func (exp *Exporter) validate() error {
	if exp.Name == "" {
		return errors.New("exporter has no Name")
	}
	if exp.Export == nil && exp.ExportFile == nil {
		return fmt.Errorf("exporter %q has neither Export nor ExportFile", exp.Name)
	}
	if len(exp.Targets) == 0 {
		return fmt.Errorf("exporter %q has no Targets", exp.Name)
	}
	return nil
}

// exporterServer adapts an Exporter to protocol.Exporter. Stack traces of
// panics go to stderr.
type exporterServer struct {
	exp    *Exporter
	stderr io.Writer
}

func (s *exporterServer) Describe(context.Context) (*protocol.ExporterInfo, error) {
	return s.exp.info(), nil
}

func (s *exporterServer) Export(ctx context.Context, in, out, target string, opts map[string]string) ([]string, error) {
	if !slices.Contains(s.exp.Targets, target) {
		return nil, fmt.Errorf("exporter %q does not write target %q (it writes %v)", s.exp.Name, target, s.exp.Targets)
	}
	ctx, w := withWarnings(ctx)
	if s.exp.ExportFile != nil {
		if err := callRecover(s.stderr, "ExportFile", func() error { return s.exp.ExportFile(ctx, in, out, target, opts) }); err != nil {
			return nil, err
		}
		return w.all(), nil
	}
	data, err := os.ReadFile(in)
	if err != nil {
		return nil, fmt.Errorf("reading input model: %w", err)
	}
	model := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(data, model); err != nil {
		return nil, fmt.Errorf("parsing input model %s: %w", in, err)
	}
	data = nil
	err = WriteFileAtomic(out, func(wr io.Writer) error {
		return callRecover(s.stderr, "Export", func() error { return s.exp.Export(ctx, model, target, opts, wr) })
	})
	if err != nil {
		return nil, err
	}
	return w.all(), nil
}
