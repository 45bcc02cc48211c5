package plugins

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-plugin"

	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/plugins/protocol"
)

// ImportSource imports the file at path and opens its source in one
// plugin process: the process that parsed the file for the import then
// computes every sample of the source (OpenSource, then Predict per Run),
// until the source is closed. A source that cannot be opened is nil (its
// process has ended); Source says why.
func (p predictingHostImporter) ImportSource(ctx context.Context, path string, opts importers.Options) (*importers.Result, importers.Source, error) {
	return p.importSource(ctx, path, opts)
}

// ImportSource is predictingHostImporter.ImportSource for a built-in
// importer served by its plugin.
func (w predictingPluginImporter) ImportSource(ctx context.Context, path string, opts importers.Options) (*importers.Result, importers.Source, error) {
	return w.importSource(ctx, path, opts)
}

var (
	_ importers.SourceImporter = predictingHostImporter{}
	_ importers.SourceImporter = predictingPluginImporter{}
)

// importSource is ImportSource for any importer plugin; one that does not
// compute its sources only imports.
func (hi *HostImporter) importSource(ctx context.Context, path string, opts importers.Options) (*importers.Result, importers.Source, error) {
	if !hi.Predicts() {
		res, err := hi.Import(ctx, path, opts)
		return res, nil, err
	}
	if err := importers.CheckOptions(hi.Describe(), opts); err != nil {
		return nil, nil, err
	}
	var sess *session
	var imp protocol.Importer
	res, err := hi.importWith(path, func(out string) ([]string, error) {
		var warnings []string
		var err error
		warnings, sess, imp, err = hi.host.importKeep(ctx, hi.info.Name, path, out, opts)
		return warnings, err
	})
	if err != nil {
		if sess != nil {
			sess.close()
		}
		return nil, nil, err
	}
	src := &remoteSource{plugin: hi.info.Name, path: path, imp: imp, sess: sess}
	err = sess.do(ctx, "predict", func(ctx context.Context) error {
		var err error
		src.desc, err = imp.OpenSource(ctx, path, opts)
		return err
	})
	if err != nil {
		sess.close()
		return res, nil, nil
	}
	return res, src, nil
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
