package plugins

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-plugin"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/plugins/protocol"
)

// Predicts tells whether the plugin computes its sources directly (its
// description says so): Source then works.
func (hi *HostImporter) Predicts() bool { return hi.info.Importer != nil && hi.info.Importer.Predictor }

// withPredictor returns hi as an importers.Importer that is also an
// importers.Predictor when the plugin computes its sources.
func (hi *HostImporter) withPredictor() importers.Importer {
	if hi.Predicts() {
		return predictingHostImporter{hi}
	}
	return hi
}

type predictingHostImporter struct{ *HostImporter }

var _ importers.Predictor = predictingHostImporter{}

// Source opens the source model at path for direct computation in a
// plugin process started for it: the plugin parses the file and computes
// every sample (OpenSource, then Predict per Run); the host never parses
// the file. The process ends with Close (or ctx, or the host's call
// timeout). Failures are *PluginError values, as for Import.
func (p predictingHostImporter) Source(ctx context.Context, path string, opts importers.Options) (importers.Source, error) {
	return p.source(ctx, path, opts)
}

// source is Source for any importer plugin (*HostImporter itself is no
// importers.Predictor: only the plugins that say they predict are).
func (hi *HostImporter) source(ctx context.Context, path string, opts importers.Options) (importers.Source, error) {
	if !hi.Predicts() {
		return nil, fmt.Errorf("plugin %q does not compute its sources: %w", hi.info.Name, ErrUnsupported)
	}
	if err := importers.CheckOptions(hi.Describe(), opts); err != nil {
		return nil, err
	}
	src := &remoteSource{plugin: hi.info.Name, path: path}
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

// remoteSource is a source computed in a plugin process.
type remoteSource struct {
	plugin, path string
	desc         string
	imp          protocol.Importer
	sess         *session
}

func (s *remoteSource) Describe() string { return s.desc }

// Run computes one sample in the plugin process.
func (s *remoteSource) Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error) {
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
func (s *remoteSource) Close() error {
	s.sess.close()
	return nil
}
