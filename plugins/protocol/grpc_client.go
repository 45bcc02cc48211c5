package protocol

import (
	"context"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/formats/formatinfo"
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

// OpenSource implements Importer.
func (c *ImporterGRPCClient) OpenSource(ctx context.Context, in string, opts map[string]string) (string, error) {
	resp, err := c.client.OpenSource(ctx, &pluginpb.SourceRequest{InputPath: in, Options: opts})
	if err != nil {
		return "", err
	}
	return resp.GetDescription(), nil
}

// Predict implements Importer.
func (c *ImporterGRPCClient) Predict(ctx context.Context, inputs []*onnxpb.TensorProto) ([]*onnxpb.TensorProto, error) {
	data, err := marshalTensors(inputs, "input")
	if err != nil {
		return nil, err
	}
	resp, err := c.client.Predict(ctx, &pluginpb.PredictRequest{Inputs: data})
	if err != nil {
		return nil, err
	}
	return unmarshalTensors(resp.GetOutputs(), "output")
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
		Description: formatinfo.Description{
			Name:       p.GetName(),
			Format:     p.GetFormat(),
			Extensions: p.GetExtensions(),
			Summary:    p.GetDescription(),
			Runtime:    p.GetRuntime(),
		},
		Version:   p.GetVersion(),
		Predictor: p.GetPredictor(),
	}
	for _, m := range p.GetMagic() {
		info.Magic = append(info.Magic, Magic{Offset: m.GetOffset(), Bytes: m.GetBytes()})
	}
	for _, o := range p.GetOptions() {
		info.Options = append(info.Options, optionFromPB(o))
	}
	if info.Format == "" {
		info.Format = info.Name
	}
	return info
}

// importerInfoToPB is the wire form of info.
func importerInfoToPB(info *ImporterInfo) *pluginpb.ImporterInfo {
	out := &pluginpb.ImporterInfo{
		Name:        info.Name,
		Version:     info.Version,
		Format:      info.Format,
		Extensions:  info.Extensions,
		Description: info.Summary,
		Runtime:     info.Runtime,
		Predictor:   info.Predictor,
	}
	for _, m := range info.Magic {
		out.Magic = append(out.Magic, &pluginpb.MagicPattern{Offset: m.Offset, Bytes: m.Bytes})
	}
	for _, o := range info.Options {
		out.Options = append(out.Options, optionToPB(o))
	}
	return out
}
