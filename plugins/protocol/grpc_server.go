package protocol

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/onnxconv/onnxconv/plugins/pluginpb"
)

// ImporterGRPCServer is the plugin side of the importer service.
type ImporterGRPCServer struct {
	pluginpb.UnimplementedImporterServer
	Impl Importer
}

// Describe implements pluginpb.ImporterServer.
func (s *ImporterGRPCServer) Describe(ctx context.Context, _ *pluginpb.Empty) (*pluginpb.ImporterInfo, error) {
	if s.Impl == nil {
		return nil, status.Error(codes.Unimplemented, "this plugin has no importer")
	}
	info, err := s.Impl.Describe(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	return importerInfoToPB(info), nil
}

// Detect implements pluginpb.ImporterServer.
func (s *ImporterGRPCServer) Detect(ctx context.Context, req *pluginpb.DetectRequest) (*pluginpb.DetectResponse, error) {
	if s.Impl == nil {
		return nil, status.Error(codes.Unimplemented, "this plugin has no importer")
	}
	ok, conf, err := s.Impl.Detect(ctx, req.GetPath(), req.GetHead())
	if err != nil {
		return nil, toStatus(err)
	}
	return &pluginpb.DetectResponse{Ok: ok, Confidence: conf}, nil
}

// Import implements pluginpb.ImporterServer.
func (s *ImporterGRPCServer) Import(ctx context.Context, req *pluginpb.ImportRequest) (*pluginpb.ImportResponse, error) {
	if s.Impl == nil {
		return nil, status.Error(codes.Unimplemented, "this plugin has no importer")
	}
	warnings, err := s.Impl.Import(ctx, req.GetInputPath(), req.GetOutputPath(), req.GetOptions())
	if err != nil {
		return nil, toStatus(err)
	}
	return &pluginpb.ImportResponse{Warnings: warnings}, nil
}

// OpenSource implements pluginpb.ImporterServer.
func (s *ImporterGRPCServer) OpenSource(ctx context.Context, req *pluginpb.SourceRequest) (*pluginpb.SourceResponse, error) {
	if s.Impl == nil {
		return nil, status.Error(codes.Unimplemented, "this plugin has no importer")
	}
	d, err := s.Impl.OpenSource(ctx, req.GetInputPath(), req.GetOptions())
	if err != nil {
		return nil, toStatus(err)
	}
	return &pluginpb.SourceResponse{Description: d}, nil
}

// Predict implements pluginpb.ImporterServer.
func (s *ImporterGRPCServer) Predict(ctx context.Context, req *pluginpb.PredictRequest) (*pluginpb.PredictResponse, error) {
	if s.Impl == nil {
		return nil, status.Error(codes.Unimplemented, "this plugin has no importer")
	}
	ins, err := unmarshalTensors(req.GetInputs(), "input")
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	outs, err := s.Impl.Predict(ctx, ins)
	if err != nil {
		return nil, toStatus(err)
	}
	data, err := marshalTensors(outs, "output")
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &pluginpb.PredictResponse{Outputs: data}, nil
}

// ExporterGRPCServer is the plugin side of the exporter service.
type ExporterGRPCServer struct {
	pluginpb.UnimplementedExporterServer
	Impl Exporter
}

// Describe implements pluginpb.ExporterServer.
func (s *ExporterGRPCServer) Describe(ctx context.Context, _ *pluginpb.Empty) (*pluginpb.ExporterInfo, error) {
	if s.Impl == nil {
		return nil, status.Error(codes.Unimplemented, "this plugin has no exporter")
	}
	info, err := s.Impl.Describe(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pluginpb.ExporterInfo{
		Name:        info.Name,
		Version:     info.Version,
		Targets:     info.Targets,
		Description: info.Description,
	}, nil
}

// Export implements pluginpb.ExporterServer.
func (s *ExporterGRPCServer) Export(ctx context.Context, req *pluginpb.ExportRequest) (*pluginpb.ExportResponse, error) {
	if s.Impl == nil {
		return nil, status.Error(codes.Unimplemented, "this plugin has no exporter")
	}
	warnings, err := s.Impl.Export(ctx, req.GetInputPath(), req.GetOutputPath(), req.GetTarget(), req.GetOptions())
	if err != nil {
		return nil, toStatus(err)
	}
	return &pluginpb.ExportResponse{Warnings: warnings}, nil
}

// toStatus keeps status errors and maps context errors to their codes;
// anything else becomes codes.Unknown with the error's text.
func toStatus(err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	}
	return opsStatus(codes.Unknown, err)
}
