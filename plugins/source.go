package plugins

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-plugin"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/formats/formatinfo"
	"github.com/onnxconv/onnxconv/plugins/protocol"
)

// Predicts tells whether the plugin computes its sources directly (its
// description says so): OpenSource then works.
func (hi *ImporterPlugin) Predicts() bool {
	return hi.info.Importer != nil && hi.info.Importer.Predictor
}

// OpenSource opens the source model at path for direct computation in a
// plugin process started for it: the plugin parses the file and computes
// every sample (OpenSource, then Predict per Run); the host never parses
// the file. The process ends with Close (or ctx, or the host's call
// timeout). Failures are *PluginError values, as for ImportModel; a plugin
// that does not predict is ErrUnsupported. The caller checks opts first
// (see ImportModel).
func (hi *ImporterPlugin) OpenSource(ctx context.Context, path string, opts map[string]string) (*RemoteSource, error) {
	if !hi.Predicts() {
		return nil, fmt.Errorf("plugin %q does not compute its sources: %w", hi.info.Name, ErrUnsupported)
	}
	src := &RemoteSource{plugin: hi.info.Name, path: path}
	sess, err := hi.host.startSession(ctx, hi.info, "predict", path, func(ctx context.Context, cp plugin.ClientProtocol) error {
		imp, _, err := dispense(cp)
		if err != nil {
			return err
		}
		src.imp = imp
		src.desc, err = imp.OpenSource(ctx, path, opts)
		return err
	})
	if err != nil {
		return nil, err
	}
	src.sess = sess
	return src, nil
}

// RemoteSource is a source model computed in a plugin process (a
// formatinfo.Source).
type RemoteSource struct {
	plugin, path string
	desc         string
	imp          protocol.Importer
	sess         *session
}

var _ formatinfo.Source = (*RemoteSource)(nil)

// Describe says what computes the source, as the plugin put it.
func (s *RemoteSource) Describe() string { return s.desc }

// Run computes one sample in the plugin process.
func (s *RemoteSource) Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error) {
	in := make([]*onnxpb.TensorProto, len(inputs))
	for i, t := range inputs {
		if t == nil {
			return nil, fmt.Errorf("computing %s with plugin %q: input %d is nil", s.path, s.plugin, i)
		}
		tp, err := canonical.TensorToProto(t)
		if err != nil {
			return nil, fmt.Errorf("computing %s with plugin %q: input %d: %w", s.path, s.plugin, i, err)
		}
		in[i] = tp
	}
	var outs []*onnxpb.TensorProto
	err := s.sess.do(ctx, "predict", func(ctx context.Context) error {
		var err error
		outs, err = s.imp.Predict(ctx, in)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("computing %s with plugin %q: %w", s.path, s.plugin, err)
	}
	out := make([]*canonical.Tensor, len(outs))
	for i, tp := range outs {
		t, err := canonical.TensorFromProto(tp)
		if err != nil {
			return nil, fmt.Errorf("computing %s with plugin %q: output %d: %w", s.path, s.plugin, i, err)
		}
		out[i] = t
	}
	return out, nil
}

// Close ends the plugin process.
func (s *RemoteSource) Close() error {
	s.sess.close()
	return nil
}
