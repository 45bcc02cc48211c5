package plugins

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-plugin"
)

// Import converts the file in with the importer of plugin name and writes
// the ONNX model to out. The plugin writes into a temporary folder beside
// out; the file is checked to be a protobuf ModelProto with a graph and
// renamed onto out only on success, so a failed call leaves no output. It
// returns the plugin's warnings.
func (h *Host) Import(ctx context.Context, name, in, out string, opts map[string]string) ([]string, error) {
	p, err := h.lookup(name)
	if err != nil {
		return nil, err
	}
	if p.Importer == nil {
		return nil, fmt.Errorf("importing %s: plugin %q has no importer: %w", in, name, ErrUnsupported)
	}
	var warnings []string
	err = h.produce(ctx, p, "import", in, out, func(ctx context.Context, cp plugin.ClientProtocol, absIn, tmpOut string) error {
		imp, _, err := dispense(cp)
		if err != nil {
			return err
		}
		warnings, err = imp.Import(ctx, absIn, tmpOut, opts)
		return err
	}, checkModelFile)
	return warnings, err
}

// Export converts the ONNX model in for target with the exporter of plugin
// name and writes the result to out, with the same guarantees as Import. It
// returns the plugin's warnings.
func (h *Host) Export(ctx context.Context, name, in, out, target string, opts map[string]string) ([]string, error) {
	p, err := h.lookup(name)
	if err != nil {
		return nil, err
	}
	if p.Exporter == nil {
		return nil, fmt.Errorf("exporting %s: plugin %q has no exporter: %w", in, name, ErrUnsupported)
	}
	var warnings []string
	err = h.produce(ctx, p, "export", in, out, func(ctx context.Context, cp plugin.ClientProtocol, absIn, tmpOut string) error {
		_, exp, err := dispense(cp)
		if err != nil {
			return err
		}
		warnings, err = exp.Export(ctx, absIn, tmpOut, target, opts)
		return err
	}, checkNonEmpty)
	return warnings, err
}

func (h *Host) lookup(name string) (*PluginInfo, error) {
	i, ok := h.byName[name]
	if !ok {
		return nil, fmt.Errorf("plugin %q: %w (see `onnxconv plugins`)", name, ErrNotFound)
	}
	p := &h.plugins[i]
	if p.Err != nil {
		return nil, fmt.Errorf("plugin %q (%s) is unusable: %w", name, p.Path, p.Err)
	}
	return p, nil
}

// produce runs a call that reads in and writes out through a private
// temporary folder beside out.
func (h *Host) produce(ctx context.Context, p *PluginInfo, op, in, out string,
	fn func(ctx context.Context, cp plugin.ClientProtocol, absIn, tmpOut string) error,
	check func(path string) error) error {
	st, err := stage(op, in, out)
	if err != nil {
		return err
	}
	// call returns only after the plugin process is gone, so nothing
	// writes into the staging folder once it is removed.
	defer st.cleanup()
	pid, err := call(ctx, h.opts, p, op, in, h.opts.CallTimeout, func(ctx context.Context, cp plugin.ClientProtocol) error {
		return fn(ctx, cp, st.absIn, st.tmpOut)
	})
	if err != nil {
		return err
	}
	return st.commit(p, op, in, out, pid, check)
}

// staged is the private temporary folder beside an output that a plugin
// writes into (tmpOut), for an input that was checked to be a regular file
// other than the output.
type staged struct {
	absIn, absOut, tmpDir, tmpOut string
}

// stage checks in and out and creates the temporary folder beside out.
func stage(op, in, out string) (*staged, error) {
	absIn, err := filepath.Abs(in)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", op, in, err)
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return nil, fmt.Errorf("%s %s: output %s: %w", op, in, out, err)
	}
	st, err := os.Stat(absIn)
	if err != nil {
		return nil, fmt.Errorf("%s: reading input: %w", op, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: input %s is not a regular file", op, in)
	}
	if absIn == absOut {
		return nil, fmt.Errorf("%s %s: the output would overwrite the input", op, in)
	}
	tmpDir, err := os.MkdirTemp(filepath.Dir(absOut), ".onnxconv-"+filepath.Base(absOut)+"-*")
	if err != nil {
		return nil, fmt.Errorf("%s %s: creating a temporary folder beside the output: %w", op, in, err)
	}
	return &staged{absIn: absIn, absOut: absOut, tmpDir: tmpDir, tmpOut: filepath.Join(tmpDir, filepath.Base(absOut))}, nil
}

// commit checks what the plugin (process pid, 0 when unknown) wrote and
// renames it onto the output.
func (s *staged) commit(p *PluginInfo, op, in, out string, pid int, check func(path string) error) error {
	if err := check(s.tmpOut); err != nil {
		return &PluginError{Plugin: p.Name, Path: p.Path, Op: op, Input: in, Kind: ErrBadOutput, Err: err, PID: pid,
			Detail: "reported success but its output is unusable: " + err.Error()}
	}
	if err := os.Rename(s.tmpOut, s.absOut); err != nil {
		return fmt.Errorf("%s %s: moving the result onto %s: %w", op, in, out, err)
	}
	return nil
}

// cleanup removes the temporary folder.
func (s *staged) cleanup() { _ = os.RemoveAll(s.tmpDir) }

func checkNonEmpty(path string) error {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return errors.New("no output file was written")
	}
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return errors.New("the output is not a regular file")
	}
	if st.Size() == 0 {
		return errors.New("the output file is empty")
	}
	return nil
}

// readHead reads up to n bytes from the start of path.
func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	m, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:m], nil
}
