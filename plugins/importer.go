package plugins

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/hashicorp/go-plugin"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/formats/formatinfo"
	"github.com/onnxconv/onnxconv/options"
	"github.com/onnxconv/onnxconv/plugins/internal/scrub"
	"github.com/onnxconv/onnxconv/plugins/protocol"
)

// Detect confidences of a HostImporter decided without the plugin.
const (
	confMagic     = 1   // one of the plugin's magic patterns is in the file
	confExtension = 0.5 // the extension matches and the plugin could not be asked
)

// ImporterPlugin is an importer plugin of a Host, in the host's terms
// (files, option maps, canonical models): plugins/importhost adapts it to
// importers.Importer, so that the host, which serves every role, depends
// on no role's contract. Each import starts the plugin process (see
// Host.Import); Describe and Detect mostly use the description the plugin
// gave at discovery.
type ImporterPlugin struct {
	host *Host
	info PluginInfo
}

// ImporterPlugin returns the importer of plugin name. A plugin that is
// unknown, broken, or serves no importer is an error (ErrNotFound, the
// plugin's Err, ErrUnsupported).
func (h *Host) ImporterPlugin(name string) (*ImporterPlugin, error) {
	p, err := h.lookup(name)
	if err != nil {
		return nil, err
	}
	if p.Importer == nil {
		return nil, fmt.Errorf("plugin %q has no importer: %w", name, ErrUnsupported)
	}
	return &ImporterPlugin{host: h, info: *p}, nil
}

// ImporterPlugins returns the third-party importer plugins that work, in
// discovery order: what a registry of the built-in importers
// (importers/builtin) lacks. Built-in plugins (served by the host
// executable) are left out; ImporterPlugin(name) returns them.
func (h *Host) ImporterPlugins() []*ImporterPlugin {
	var out []*ImporterPlugin
	for _, p := range h.plugins {
		if p.Builtin || p.Err != nil || p.Importer == nil {
			continue
		}
		out = append(out, &ImporterPlugin{host: h, info: p})
	}
	return out
}

// Plugin returns the plugin behind the importer.
func (hi *ImporterPlugin) Plugin() PluginInfo { return hi.info }

// Describe returns the plugin's description, as the plugin gave it (the
// protocol carries the whole formatinfo.Description: options and reference
// runtime too), named as the plugin.
func (hi *ImporterPlugin) Describe() formatinfo.Description {
	d := hi.info.Importer.Description
	d.Name = hi.info.Name
	d.Extensions = append([]string(nil), d.Extensions...)
	d.Magic = append([]formatinfo.Magic(nil), d.Magic...)
	d.Options = append([]options.Spec(nil), d.Options...)
	return d
}

// Detect decides from the plugin's description when it can: 1 when one of
// its magic patterns is in the file (patterns beyond head are read from
// path), 0 when neither a pattern nor an extension matches and the plugin
// declares some. Otherwise (only the extension matches, or the plugin
// declares neither) the plugin is started and asked, within the host's
// describe timeout; a plugin that cannot answer counts as 0.
func (hi *ImporterPlugin) Detect(path string, head []byte) float32 {
	ii := hi.info.Importer
	if formatinfo.MatchMagic(head, ii.Magic) || hi.magicBeyondHead(path, head) {
		return confMagic
	}
	declares := len(ii.Magic) > 0 || len(ii.Extensions) > 0
	if declares && !formatinfo.MatchExtension(path, ii.Extensions) {
		return 0
	}
	conf, err := hi.ask(path, head)
	if err != nil {
		return 0
	}
	return conf
}

// magicBeyondHead matches the patterns that end past head against the
// start of the file (up to maxMagicEnd).
func (hi *ImporterPlugin) magicBeyondHead(path string, head []byte) bool {
	need := 0
	for _, m := range hi.info.Importer.Magic {
		if end := m.Offset + int64(len(m.Bytes)); end > int64(len(head)) && end <= maxMagicEnd {
			need = max(need, int(end))
		}
	}
	if need == 0 || len(head) < protocol.HeadSize {
		return false // no such pattern, or head is the whole file
	}
	more, err := readHead(path, need)
	if err != nil {
		return false
	}
	return formatinfo.MatchMagic(more, hi.info.Importer.Magic)
}

// ask calls the plugin's Detect.
func (hi *ImporterPlugin) ask(path string, head []byte) (float32, error) {
	var ok bool
	var conf float32
	p := hi.info
	_, err := call(context.Background(), hi.host.opts, &p, "detect", path, hi.host.opts.DescribeTimeout,
		func(ctx context.Context, cp plugin.ClientProtocol) error {
			imp, _, err := dispense(cp)
			if err != nil {
				return err
			}
			ok, conf, err = imp.Detect(ctx, path, head[:min(len(head), protocol.HeadSize)])
			return err
		})
	if err != nil || !ok {
		return 0, err
	}
	return min(max(conf, 0), 1), nil
}

// ImportModel runs the plugin on the file at path (Host.Import) into a
// private temporary folder, loads the model it wrote and removes the folder
// (on Linux and other Unix systems the model stays memory-mapped; elsewhere
// it is read into memory first), and returns the model and the plugin's
// warnings. Errors name path and the plugin, never the temporary files;
// plugin failures stay *PluginError values of their kind (ErrTimeout,
// ErrMemoryLimit, ErrCrashed, ErrFailed, ...). The caller checks opts
// against the description first (importers.CheckOptions, in
// plugins/importhost): the plugin's own errors lose their type crossing the
// process boundary.
func (hi *ImporterPlugin) ImportModel(ctx context.Context, path string, opts map[string]string) (*canonical.Model, []string, error) {
	return hi.importWith(path, func(out string) ([]string, error) {
		return hi.host.Import(ctx, hi.info.Name, path, out, opts)
	})
}

// importWith runs an import of the file at path by the plugin (run, which
// writes the model to out) into a private temporary folder, and loads the
// model it wrote (see ImportModel).
func (hi *ImporterPlugin) importWith(path string, run func(out string) ([]string, error)) (*canonical.Model, []string, error) {
	tmpDir, err := os.MkdirTemp("", "onnxconv-import-*")
	if err != nil {
		return nil, nil, fmt.Errorf("importing %s with plugin %q: creating a temporary folder: %w", path, hi.info.Name, err)
	}
	defer func() { _ = os.RemoveAll(tmpDir) }()
	dirs := []string{tmpDir}
	if real, err := filepath.EvalSymlinks(tmpDir); err == nil && real != tmpDir {
		dirs = append(dirs, real)
	}
	const repl = "(the plugin's output)"
	out := filepath.Join(tmpDir, "model.onnx")
	warnings, err := run(out)
	if err != nil {
		return nil, nil, scrubError(err, repl, dirs)
	}
	m, err := loadOutput(out)
	if err != nil {
		err = scrub.Error(err, repl, dirs...)
		return nil, nil, &PluginError{Plugin: hi.info.Name, Path: hi.info.Path, Op: "import", Input: path, Kind: ErrBadOutput, Err: err,
			Detail: "reported success but its model is unusable: " + err.Error()}
	}
	return m, warnings, nil
}

// loadOutput loads the model a plugin wrote, so that the file can be
// removed right away.
func loadOutput(path string) (*canonical.Model, error) {
	if runtime.GOOS == "windows" {
		// A mapped file cannot be removed there: read it into memory.
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return canonical.Decode(data, filepath.Dir(path), canonical.LoadOptions{})
	}
	m, err := canonical.Load(path, canonical.LoadOptions{})
	if err != nil {
		return nil, err
	}
	// The mapping outlives the file; a model with external data would
	// need the folder, which the host's check (one protobuf file) rules
	// out.
	_ = os.Remove(path)
	return m, nil
}

// scrubError keeps temporary paths out of err: a *PluginError is copied
// with its detail and standard error cleaned (so errors.As still finds
// it, with its kind); any other error is wrapped.
func scrubError(err error, repl string, dirs []string) error {
	var pe *PluginError
	if errors.As(err, &pe) && pe == err {
		c := *pe
		c.Detail = scrub.String(c.Detail, repl, dirs...)
		c.Stderr = scrub.String(c.Stderr, repl, dirs...)
		c.Err = scrub.Error(c.Err, repl, dirs...)
		return &c
	}
	return scrub.Error(err, repl, dirs...)
}
