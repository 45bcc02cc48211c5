package plugins

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/go-plugin"

	"github.com/onnxconv/onnxconv/plugins/protocol"
)

// PluginInfo describes a plugin found by Discover.
type PluginInfo struct {
	// Name identifies the plugin: the built-in name, or the executable's
	// name without the onnxconv-plugin- prefix (and .exe).
	Name    string
	Builtin bool
	// Path and Args start the plugin.
	Path string
	Args []string
	// Importer, Exporter and Runtime are what the plugin serves (nil: not
	// served).
	Importer *protocol.ImporterInfo
	Exporter *protocol.ExporterInfo
	Runtime  *protocol.RuntimeInfo
	// Err is set when the plugin could not describe itself; it is then
	// unusable.
	Err error
}

// Kind returns "importer", "exporter", "runtime", a "+"-joined combination
// of them ("importer+exporter") or "broken".
func (p PluginInfo) Kind() string {
	if p.Err != nil {
		return "broken"
	}
	var kinds []string
	if p.Importer != nil {
		kinds = append(kinds, "importer")
	}
	if p.Exporter != nil {
		kinds = append(kinds, "exporter")
	}
	if p.Runtime != nil {
		kinds = append(kinds, "runtime")
	}
	if len(kinds) == 0 {
		return "broken"
	}
	return strings.Join(kinds, "+")
}

// Version returns the importer's version, else the exporter's, else the
// runtime's.
func (p PluginInfo) Version() string {
	if p.Importer != nil {
		return p.Importer.Version
	}
	if p.Exporter != nil {
		return p.Exporter.Version
	}
	if p.Runtime != nil {
		return p.Runtime.Version
	}
	return ""
}

// Formats returns the format read (with its extensions) and the targets
// written, for display.
func (p PluginInfo) Formats() []string {
	var out []string
	if p.Importer != nil {
		f := p.Importer.Format
		if len(p.Importer.Extensions) > 0 {
			f += " (" + strings.Join(p.Importer.Extensions, ", ") + ")"
		}
		out = append(out, f)
	}
	if p.Exporter != nil {
		for _, t := range p.Exporter.Targets {
			out = append(out, "→"+t)
		}
	}
	if p.Runtime != nil {
		out = append(out, "runs ONNX as "+p.Runtime.Name)
	}
	return out
}

// UserDir returns the user plugins folder,
// os.UserConfigDir()/onnxconv/plugins (for example
// ~/.config/onnxconv/plugins on Linux), whether or not it exists. It is
// the folder Discover searches after $ONNXCONV_PLUGIN_PATH when
// Options.UserDir is empty, and where plugins may keep what they need
// beside them (the ONNX Runtime plugin looks there for its library).
func UserDir() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("user plugins folder: %w", err)
	}
	return filepath.Join(dir, "onnxconv", "plugins"), nil
}

// Discover finds the built-in plugins of opts and the third-party
// executables named onnxconv-plugin-* in each folder of
// $ONNXCONV_PLUGIN_PATH (or opts.PluginPath) and in the user plugins
// folder, and asks each what it serves (built-ins given with their
// descriptions are not started). Earlier entries win over later ones of the
// same name: built-ins, then the path in order, then the user folder.
// Folders that do not exist are skipped. A plugin that cannot describe
// itself is listed with Err set.
func Discover(ctx context.Context, opts Options) ([]PluginInfo, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return discover(ctx, opts)
}

func discover(ctx context.Context, opts Options) ([]PluginInfo, error) {
	var infos []PluginInfo
	seen := map[string]bool{}
	for _, b := range opts.Builtins {
		if b.Name == "" || seen[b.Name] {
			continue
		}
		seen[b.Name] = true
		infos = append(infos, PluginInfo{
			Name:     b.Name,
			Builtin:  true,
			Path:     opts.Executable,
			Args:     append(append([]string(nil), opts.ServeArgs...), b.Name),
			Importer: b.Importer,
			Exporter: b.Exporter,
			Runtime:  b.Runtime,
		})
	}
	if !opts.NoThirdParty {
		var dirs []string
		for _, d := range filepath.SplitList(opts.PluginPath) {
			if d != "" {
				dirs = append(dirs, d)
			}
		}
		if opts.UserDir != "" {
			dirs = append(dirs, opts.UserDir)
		}
		for _, dir := range dirs {
			found, err := scanDir(dir)
			if err != nil {
				return nil, err
			}
			for _, f := range found {
				if seen[f.Name] {
					continue
				}
				seen[f.Name] = true
				infos = append(infos, f)
			}
		}
	}

	// Ask the plugins without a description, a few at a time.
	sem := make(chan struct{}, max(2, runtime.NumCPU()))
	var wg sync.WaitGroup
	for i := range infos {
		if infos[i].Importer != nil || infos[i].Exporter != nil || infos[i].Runtime != nil {
			continue
		}
		wg.Add(1)
		go func(p *PluginInfo) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			p.Importer, p.Exporter, p.Runtime, p.Err = describe(ctx, opts, p)
		}(&infos[i])
	}
	wg.Wait()
	return infos, nil
}

// scanDir lists the plugin executables in dir, sorted by name.
func scanDir(dir string) ([]PluginInfo, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading plugin folder %s: %w", dir, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("reading plugin folder %s: %w", dir, err)
	}
	var out []PluginInfo
	for _, e := range entries {
		base := e.Name()
		if !strings.HasPrefix(base, ExecutablePrefix) {
			continue
		}
		name := strings.TrimPrefix(base, ExecutablePrefix)
		if runtime.GOOS == "windows" {
			if !strings.HasSuffix(strings.ToLower(name), ".exe") {
				continue
			}
			name = name[:len(name)-4]
		}
		if name == "" {
			continue
		}
		path := filepath.Join(abs, base)
		st, err := os.Stat(path) // follows symbolic links
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if runtime.GOOS != "windows" && st.Mode().Perm()&0o111 == 0 {
			continue
		}
		out = append(out, PluginInfo{Name: name, Path: path})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// describe starts p and asks what it serves.
func describe(ctx context.Context, opts Options, p *PluginInfo) (*protocol.ImporterInfo, *protocol.ExporterInfo, *protocol.RuntimeInfo, error) {
	var imp *protocol.ImporterInfo
	var exp *protocol.ExporterInfo
	var rt *protocol.RuntimeInfo
	_, err := call(ctx, opts, p, "describe", "", opts.DescribeTimeout, func(ctx context.Context, cp plugin.ClientProtocol) error {
		ic, ec, err := dispense(cp)
		if err != nil {
			return err
		}
		imp, err = ic.Describe(ctx)
		if err != nil && !isUnimplemented(err) {
			return fmt.Errorf("describing the importer: %w", err)
		}
		exp, err = ec.Describe(ctx)
		if err != nil && !isUnimplemented(err) {
			return fmt.Errorf("describing the exporter: %w", err)
		}
		rc, err := dispenseRuntime(cp)
		if err != nil {
			return err
		}
		rt, err = rc.Describe(ctx)
		if err != nil && !isUnimplemented(err) {
			return fmt.Errorf("describing the runtime: %w", err)
		}
		if rt != nil && rt.Name == "" {
			return errors.New("describes a runtime without a name")
		}
		if imp == nil && exp == nil && rt == nil {
			return errors.New("serves neither an importer, an exporter nor a runtime")
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return imp, exp, rt, nil
}
