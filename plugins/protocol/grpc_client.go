package protocol

import (
	"context"

	"github.com/onnxconv/onnxconv/plugins/pluginpb"
)

// ImporterGRPCClient is the host side of the importer service.
type ImporterGRPCClient struct{ client pluginpb.ImporterClient }

var _ Importer = (*ImporterGRPCClient)(nil)

// Describe implements Importer.
func (c *ImporterGRPCClient) Describe(ctx context.Context) (*ImporterInfo, error) {
	resp, err := c.client.Describe(ctx, &pluginpb.Empty{})
	if err != nil {
		return nil, err
	}
	return importerInfoFromPB(resp), nil
}

// Detect implements Importer.
func (c *ImporterGRPCClient) Detect(ctx context.Context, path string, head []byte) (bool, float32, error) {
	resp, err := c.client.Detect(ctx, &pluginpb.DetectRequest{Path: path, Head: head})
	if err != nil {
		return false, 0, err
	}
	return resp.GetOk(), resp.GetConfidence(), nil
}

// Import implements Importer.
func (c *ImporterGRPCClient) Import(ctx context.Context, in, out string, opts map[string]string) ([]string, error) {
	resp, err := c.client.Import(ctx, &pluginpb.ImportRequest{InputPath: in, OutputPath: out, Options: opts})
	if err != nil {
		return nil, err
	}
	return resp.GetWarnings(), nil
}

// ExporterGRPCClient is the host side of the exporter service.
type ExporterGRPCClient struct{ client pluginpb.ExporterClient }

var _ Exporter = (*ExporterGRPCClient)(nil)

// Describe implements Exporter.
func (c *ExporterGRPCClient) Describe(ctx context.Context) (*ExporterInfo, error) {
	resp, err := c.client.Describe(ctx, &pluginpb.Empty{})
	if err != nil {
		return nil, err
	}
	return &ExporterInfo{
		Name:        resp.GetName(),
		Version:     resp.GetVersion(),
		Targets:     resp.GetTargets(),
		Description: resp.GetDescription(),
	}, nil
}

// Export implements Exporter.
func (c *ExporterGRPCClient) Export(ctx context.Context, in, out, target string, opts map[string]string) ([]string, error) {
	resp, err := c.client.Export(ctx, &pluginpb.ExportRequest{InputPath: in, OutputPath: out, Target: target, Options: opts})
	if err != nil {
		return nil, err
	}
	return resp.GetWarnings(), nil
}

func importerInfoFromPB(p *pluginpb.ImporterInfo) *ImporterInfo {
	info := &ImporterInfo{
		Name:        p.GetName(),
		Version:     p.GetVersion(),
		Format:      p.GetFormat(),
		Extensions:  p.GetExtensions(),
		Description: p.GetDescription(),
	}
	for _, m := range p.GetMagic() {
		info.Magic = append(info.Magic, Magic{Offset: m.GetOffset(), Bytes: m.GetBytes()})
	}
	if info.Format == "" {
		info.Format = info.Name
	}
	return info
}
