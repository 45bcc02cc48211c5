package plugins

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/importers"
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
	s := &remoteSource{plugin: hi.info.Name, path: path, reqs: make(chan sourceReq), done: make(chan struct{})}
	ready := make(chan error, 1)
	p := hi.info
	go func() {
		_, err := call(ctx, hi.host.opts, &p, "predict", path, hi.host.opts.CallTimeout, func(ctx context.Context, cp plugin.ClientProtocol) error {
			imp, _, err := dispense(cp)
			if err != nil {
				return err
			}
			if s.desc, err = imp.OpenSource(ctx, path, opts); err != nil {
				return err
			}
			ready <- nil
			for r := range s.reqs {
				outs, err := imp.Predict(ctx, r.inputs)
				r.reply <- sourceReply{outs, err}
				if err != nil {
					return err
				}
			}
			return nil
		})
		s.err = err
		close(s.done)
		select {
		case ready <- err:
		default:
		}
	}()
	if err := <-ready; err != nil {
		return nil, err
	}
	return s, nil
}

// remoteSource is a source computed in a plugin process.
type remoteSource struct {
	plugin, path string
	desc         string
	reqs         chan sourceReq
	done         chan struct{}
	err          error // how the plugin call ended, once done
	mu           sync.Mutex
	closed       bool
}

type sourceReq struct {
	inputs []*onnxpb.TensorProto
	reply  chan sourceReply
}

type sourceReply struct {
	outs []*onnxpb.TensorProto
	err  error
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
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("computing %s with plugin %q: the source is closed", s.path, s.plugin)
	}
	r := sourceReq{inputs: in, reply: make(chan sourceReply, 1)}
	select {
	case s.reqs <- r:
	case <-s.done:
		return nil, s.ended()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	var rep sourceReply
	select {
	case rep = <-r.reply:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if rep.err != nil {
		// The call ends with the error classified (crash, timeout, ...).
		select {
		case <-s.done:
			if s.err != nil {
				return nil, s.err
			}
		case <-time.After(exitWait):
		}
		return nil, fmt.Errorf("computing %s with plugin %q: %w", s.path, s.plugin, rep.err)
	}
	out := make([]*canonical.Tensor, len(rep.outs))
	for i, tp := range rep.outs {
		t, err := canonical.TensorFromProto(tp)
		if err != nil {
			return nil, fmt.Errorf("computing %s with plugin %q: output %d: %w", s.path, s.plugin, i, err)
		}
		out[i] = t
	}
	return out, nil
}

// ended is the error of a call that ended before a run.
func (s *remoteSource) ended() error {
	if s.err != nil {
		return s.err
	}
	return errors.New("the plugin process computing the source has ended")
}

// Close ends the plugin process.
func (s *remoteSource) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.reqs)
	}
	s.mu.Unlock()
	<-s.done
	return nil
}
