package plugins

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-plugin"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/plugins/protocol"
)

// ImportModelSource imports the file at path and opens its source in one
// plugin process: the process that parsed the file for the import then
// computes every sample of the source (OpenSource, then Predict per Run),
// until the source is closed. A source that cannot be opened is nil (its
// process has ended; OpenSource says why), and so is the source of a
// plugin that does not predict (it only imports). The caller checks opts
// first (see ImportModel).
func (hi *ImporterPlugin) ImportModelSource(ctx context.Context, path string, opts map[string]string) (*canonical.Model, []string, *RemoteSource, error) {
	if !hi.Predicts() {
		m, warnings, err := hi.ImportModel(ctx, path, opts)
		return m, warnings, nil, err
	}
	var sess *session
	var imp protocol.Importer
	m, warnings, err := hi.importWith(path, func(out string) ([]string, error) {
		var warnings []string
		var err error
		warnings, sess, imp, err = hi.host.importKeep(ctx, hi.info.Name, path, out, opts)
		return warnings, err
	})
	if err != nil {
		if sess != nil {
			sess.close()
		}
		return nil, nil, nil, err
	}
	src := &RemoteSource{plugin: hi.info.Name, path: path, imp: imp, sess: sess}
	err = sess.do(ctx, "predict", func(ctx context.Context) error {
		var err error
		src.desc, err = imp.OpenSource(ctx, path, opts)
		return err
	})
	if err != nil {
		sess.close()
		return m, warnings, nil, nil
	}
	return m, warnings, src, nil
}

// importKeep is Import (see Host.Import), in a plugin process that is
// kept afterwards: the session serves the calls that follow on the
// importer imp, until it is closed. On failure the process has ended and
// sess is nil, unless the plugin's output is unusable (sess is then set,
// for the caller to close).
func (h *Host) importKeep(ctx context.Context, name, in, out string, opts map[string]string) (warnings []string, sess *session, imp protocol.Importer, err error) {
	p, err := h.lookup(name)
	if err != nil {
		return nil, nil, nil, err
	}
	if p.Importer == nil {
		return nil, nil, nil, fmt.Errorf("importing %s: plugin %q has no importer: %w", in, name, ErrUnsupported)
	}
	const op = "import"
	st, err := stage(op, in, out)
	if err != nil {
		return nil, nil, nil, err
	}
	defer st.cleanup()
	sess, err = h.startSession(ctx, *p, op, in, func(ctx context.Context, cp plugin.ClientProtocol) error {
		var err error
		if imp, _, err = dispense(cp); err != nil {
			return err
		}
		warnings, err = imp.Import(ctx, st.absIn, st.tmpOut, opts)
		return err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if err := st.commit(p, op, in, out, 0, checkModelFile); err != nil {
		return nil, sess, nil, err
	}
	return warnings, sess, imp, nil
}
