package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/plugins/protocol"
)

// RunOptions configure a runtime call: intra-op threads (0: the runtime
// chooses) and runtime-specific settings.
type RunOptions = protocol.RunOptions

// Runtimes returns the usable plugins that serve a runtime, sorted by
// runtime name.
func (h *Host) Runtimes() []PluginInfo {
	var out []PluginInfo
	for _, p := range h.plugins {
		if p.Err == nil && p.Runtime != nil {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Runtime.Name < out[j].Runtime.Name })
	return out
}

// RuntimePlugin returns the plugin serving the runtime called name (see
// Run), without starting it. The error wraps ErrNotFound when no plugin
// serves it, ErrUnsupported when the plugin of that name serves no
// runtime.
func (h *Host) RuntimePlugin(name string) (PluginInfo, error) {
	p, err := h.lookupRuntime(name)
	if err != nil {
		return PluginInfo{}, err
	}
	return *p, nil
}

// lookupRuntime returns the plugin serving the runtime called name: the
// first usable plugin whose runtime has that name, else the plugin of that
// name.
func (h *Host) lookupRuntime(name string) (*PluginInfo, error) {
	for i := range h.plugins {
		if p := &h.plugins[i]; p.Err == nil && p.Runtime != nil && p.Runtime.Name == name {
			return p, nil
		}
	}
	i, ok := h.byName[name]
	if !ok {
		var have []string
		for _, p := range h.Runtimes() {
			have = append(have, p.Runtime.Name)
		}
		avail := "none"
		if len(have) > 0 {
			avail = strings.Join(have, ", ")
		}
		return nil, fmt.Errorf("runtime %q: %w serves it (runtimes installed: %s; see `onnxconv plugins`)", name, ErrNotFound, avail)
	}
	p := &h.plugins[i]
	if p.Err != nil {
		return nil, fmt.Errorf("runtime %q: plugin %s is unusable: %w", name, p.Path, p.Err)
	}
	if p.Runtime == nil {
		return nil, fmt.Errorf("runtime %q: plugin %q (%s) serves no runtime: %w", name, p.Name, p.Path, ErrUnsupported)
	}
	return p, nil
}

// Run runs the ONNX model at modelPath once on the runtime called name
// (see lookupRuntime), in a plugin process started for the call and killed
// afterwards. inputs are the graph inputs that are not initializers, in
// graph order (a tensor's name, when set, binds it to the graph input of
// that name); it returns the graph outputs in graph order. A failure of the
// plugin is a *PluginError with Op "run" and Input modelPath.
func (h *Host) Run(ctx context.Context, name, modelPath string, inputs []*onnxpb.TensorProto, opts RunOptions) ([]*onnxpb.TensorProto, error) {
	p, err := h.lookupRuntime(name)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(modelPath)
	if err != nil {
		return nil, fmt.Errorf("run %s on %s: %w", modelPath, name, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("run on %s: reading the model: %w", name, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("run on %s: model %s is not a regular file", name, modelPath)
	}
	var outs []*onnxpb.TensorProto
	pid, err := call(ctx, h.opts, p, "run", modelPath, h.opts.CallTimeout, func(ctx context.Context, cp plugin.ClientProtocol) error {
		rt, err := dispenseRuntime(cp)
		if err != nil {
			return err
		}
		outs, err = rt.Run(ctx, abs, inputs, opts)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(outs) == 0 {
		return nil, &PluginError{Plugin: p.Name, Path: p.Path, Op: "run", Input: modelPath, Kind: ErrBadOutput, PID: pid,
			Detail: "reported success but returned no outputs"}
	}
	return outs, nil
}

// dispenseRuntime returns the runtime client of a started plugin.
func dispenseRuntime(cp plugin.ClientProtocol) (protocol.Runtime, error) {
	raw, err := cp.Dispense(protocol.RuntimePluginName)
	if err != nil {
		return nil, fmt.Errorf("dispensing the runtime: %w", err)
	}
	rt, ok := raw.(protocol.Runtime)
	if !ok {
		return nil, errors.New("plugin runtime client has an unexpected type")
	}
	return rt, nil
}

// RuntimeRunner runs one model file on a runtime plugin. It has the method
// set of verify.Runner, so a runtime can take a side of a comparison:
//
//	r, err := host.Runner("onnxruntime", "model.onnx", names, plugins.RunOptions{Threads: 1})
//	side := &verify.Side{Name: "model.onnx (onnxruntime)", Model: m, Runner: r}
//
// Every Run starts the plugin process anew; the runtime loads the model
// each time.
type RuntimeRunner struct {
	host       *Host
	runtime    string
	modelPath  string
	inputNames []string
	opts       RunOptions
}

// Runner returns a RuntimeRunner for the model at modelPath on the runtime
// called runtime. inputNames, when not nil, are the names of the graph
// inputs that are not initializers, in order: input i is passed under
// inputNames[i] whatever its tensor is called. It fails early, without
// starting anything, when no plugin serves the runtime (see Run).
func (h *Host) Runner(runtime, modelPath string, inputNames []string, opts RunOptions) (*RuntimeRunner, error) {
	if _, err := h.lookupRuntime(runtime); err != nil {
		return nil, err
	}
	return &RuntimeRunner{host: h, runtime: runtime, modelPath: modelPath,
		inputNames: append([]string(nil), inputNames...), opts: opts}, nil
}

// Runtime returns the name of the runtime r runs on.
func (r *RuntimeRunner) Runtime() string { return r.runtime }

// Run runs the model on inputs (graph inputs that are not initializers, in
// order) and returns the graph outputs in order.
func (r *RuntimeRunner) Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error) {
	if r.inputNames != nil && len(inputs) != len(r.inputNames) {
		return nil, fmt.Errorf("run %s on %s: %d inputs given, the model takes %d (%s)",
			r.modelPath, r.runtime, len(inputs), len(r.inputNames), strings.Join(r.inputNames, ", "))
	}
	in := make([]*onnxpb.TensorProto, len(inputs))
	for i, t := range inputs {
		if t == nil {
			return nil, fmt.Errorf("run %s on %s: input %d is nil", r.modelPath, r.runtime, i)
		}
		tp, err := canonical.TensorToProto(t)
		if err != nil {
			return nil, fmt.Errorf("run %s on %s: input %d (%q): %w", r.modelPath, r.runtime, i, t.Name, err)
		}
		if r.inputNames != nil {
			tp.Name = proto.String(r.inputNames[i])
		}
		in[i] = tp
	}
	outs, err := r.host.Run(ctx, r.runtime, r.modelPath, in, r.opts)
	if err != nil {
		return nil, err
	}
	res := make([]*canonical.Tensor, len(outs))
	for i, tp := range outs {
		t, err := canonical.TensorFromProto(tp)
		if err != nil {
			return nil, fmt.Errorf("run %s on %s: output %d: %w", r.modelPath, r.runtime, i, err)
		}
		res[i] = t
	}
	return res, nil
}

// RuntimeSession runs one model file on a runtime plugin in one plugin
// process, started by OpenRuntime and serving every Run until Close: the
// process starts once per model, not once per sample. (Whether the runtime
// also keeps the model loaded between runs is the plugin's affair.)
type RuntimeSession struct {
	runtime, modelPath string
	inputNames         []string
	rt                 protocol.Runtime
	abs                string
	opts               RunOptions
	sess               *session
	plugin             PluginInfo
}

// OpenRuntime starts the plugin serving the runtime called runtime for
// the model at modelPath (see Runner for inputNames).
func (h *Host) OpenRuntime(ctx context.Context, runtime, modelPath string, inputNames []string, opts RunOptions) (*RuntimeSession, error) {
	p, err := h.lookupRuntime(runtime)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(modelPath)
	if err != nil {
		return nil, fmt.Errorf("run %s on %s: %w", modelPath, runtime, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("run on %s: model %s is not a readable regular file", runtime, modelPath)
	}
	s := &RuntimeSession{runtime: runtime, modelPath: modelPath, inputNames: append([]string(nil), inputNames...), abs: abs, opts: opts, plugin: *p}
	s.sess, err = h.startSession(ctx, *p, "run", modelPath, func(ctx context.Context, cp plugin.ClientProtocol) error {
		rt, err := dispenseRuntime(cp)
		s.rt = rt
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Run runs the model on inputs (graph inputs that are not initializers, in
// order) and returns the graph outputs in order.
func (s *RuntimeSession) Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error) {
	return s.run(ctx, inputs, s.opts)
}

// RunNamed computes the values of the model named in the source's own
// terms instead of its outputs, one tensor each in that order
// (protocol.OptionCapture; runtimes.NamedSession, for the error map). A
// runtime that does not hand them out refuses the option.
func (s *RuntimeSession) RunNamed(ctx context.Context, inputs []*canonical.Tensor, names []string) ([]*canonical.Tensor, error) {
	b, err := json.Marshal(names)
	if err != nil {
		return nil, fmt.Errorf("run %s on %s: %w", s.modelPath, s.runtime, err)
	}
	o := s.opts
	o.Options = maps.Clone(o.Options)
	if o.Options == nil {
		o.Options = map[string]string{}
	}
	o.Options[protocol.OptionCapture] = string(b)
	res, err := s.run(ctx, inputs, o)
	if err != nil {
		return nil, err
	}
	if len(res) != len(names) {
		return nil, &PluginError{Plugin: s.plugin.Name, Path: s.plugin.Path, Op: "run", Input: s.modelPath, Kind: ErrBadOutput,
			Detail: fmt.Sprintf("%d values returned for %d asked for", len(res), len(names))}
	}
	return res, nil
}

func (s *RuntimeSession) run(ctx context.Context, inputs []*canonical.Tensor, opts RunOptions) ([]*canonical.Tensor, error) {
	if s.inputNames != nil && len(inputs) != len(s.inputNames) {
		return nil, fmt.Errorf("run %s on %s: %d inputs given, the model takes %d (%s)",
			s.modelPath, s.runtime, len(inputs), len(s.inputNames), strings.Join(s.inputNames, ", "))
	}
	in := make([]*onnxpb.TensorProto, len(inputs))
	for i, t := range inputs {
		if t == nil {
			return nil, fmt.Errorf("run %s on %s: input %d is nil", s.modelPath, s.runtime, i)
		}
		tp, err := canonical.TensorToProto(t)
		if err != nil {
			return nil, fmt.Errorf("run %s on %s: input %d (%q): %w", s.modelPath, s.runtime, i, t.Name, err)
		}
		if s.inputNames != nil {
			tp.Name = proto.String(s.inputNames[i])
		}
		in[i] = tp
	}
	var outs []*onnxpb.TensorProto
	err := s.sess.do(ctx, "", func(ctx context.Context) error {
		var err error
		outs, err = s.rt.Run(ctx, s.abs, in, opts)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(outs) == 0 {
		return nil, &PluginError{Plugin: s.plugin.Name, Path: s.plugin.Path, Op: "run", Input: s.modelPath, Kind: ErrBadOutput,
			Detail: "reported success but returned no outputs"}
	}
	res := make([]*canonical.Tensor, len(outs))
	for i, tp := range outs {
		t, err := canonical.TensorFromProto(tp)
		if err != nil {
			return nil, fmt.Errorf("run %s on %s: output %d: %w", s.modelPath, s.runtime, i, err)
		}
		res[i] = t
	}
	return res, nil
}

// Close ends the plugin process.
func (s *RuntimeSession) Close() error {
	s.sess.close()
	return nil
}
