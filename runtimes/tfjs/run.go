package tfjs

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/runtimes/node"
)

//go:embed runner.js
var runnerJS []byte

// DefaultTimeout bounds one run when ctx has no deadline.
const DefaultTimeout = 10 * time.Minute

// maxAnswer bounds what the script may answer (outputs, base64).
const maxAnswer = 4 << 30

// RunError is a model TF.js could not load or run; Detail is TF.js's own
// message.
type RunError struct {
	Model  string
	Detail string
	Stderr string
}

func (e *RunError) Error() string {
	s := fmt.Sprintf("tfjs runtime: %s: TF.js failed: %s", e.Model, e.Detail)
	if e.Stderr != "" {
		s += "\nnode stderr (last lines):\n" + e.Stderr
	}
	return s
}

// NotTFJSError is a model file that is neither a TF.js model.json, a
// Keras file nor a TensorFlow model (an .onnx given to `--runtime tfjs`).
type NotTFJSError struct{ Model string }

func (e *NotTFJSError) Error() string {
	return fmt.Sprintf("tfjs runtime: %s is not a TF.js model.json, a Keras file or a TensorFlow model: the tfjs runtime runs TF.js, Keras and TensorFlow models (the source side of a conversion), not ONNX; use --runtime executor or onnxruntime for ONNX files", e.Model)
}

// Result is one run.
type Result struct {
	Outputs []*onnxpb.TensorProto
	// Kind is "layers-model" or "graph-model"; Method is how TF.js ran it
	// (predict, execute, executeAsync); Version is TF.js's; Backend the
	// backend that ran it ("wasm", or "cpu" without the WASM package).
	Kind, Method, Version, Backend string
	// CPUOps are the kernels the WASM backend lacks that ran on the CPU
	// backend in this session so far.
	CPUOps []string
	// Keras is the kind of Keras file (keras.Kind: "keras3", "h5",
	// "json+h5") run as a TF.js layers model, "" for a TF.js model.json.
	Keras string
}

// wireTensor is a tensor in a request or answer header; its bytes follow
// the header.
type wireTensor struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
	Bytes int64   `json:"bytes,omitempty"`
}

// toWire converts an ONNX tensor to what TF.js takes: float32 (float16 and
// double converted), int32 (int64, int8, uint8, int16 converted, checked
// for range), bool.
func toWire(tp *onnxpb.TensorProto) (wireTensor, []byte, error) {
	t, err := canonical.TensorFromProto(tp)
	if err != nil {
		return wireTensor{}, nil, err
	}
	raw, err := t.Bytes()
	if err != nil {
		return wireTensor{}, nil, err
	}
	n, err := t.NumElements()
	if err != nil {
		return wireTensor{}, nil, err
	}
	w := wireTensor{Name: t.Name, Shape: append([]int64{}, t.Dims...)}
	if w.Shape == nil {
		w.Shape = []int64{}
	}
	out := make([]byte, 0, 4*n)
	switch t.DataType {
	case canonical.Float:
		w.DType, out = "float32", raw
	case canonical.Double, canonical.Float16:
		w.DType = "float32"
		for i := int64(0); i < n; i++ {
			var f float32
			if t.DataType == canonical.Double {
				f = float32(math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:])))
			} else {
				f = float32(canonical.Float16ToFloat64(binary.LittleEndian.Uint16(raw[2*i:])))
			}
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(f))
		}
	case canonical.Int32:
		w.DType, out = "int32", raw
	case canonical.Int64, canonical.Int8, canonical.Uint8, canonical.Int16, canonical.Uint16:
		w.DType = "int32"
		es := int64(canonical.ElemBits(t.DataType) / 8)
		for i := int64(0); i < n; i++ {
			var v int64
			switch t.DataType {
			case canonical.Int64:
				v = int64(binary.LittleEndian.Uint64(raw[8*i:]))
			case canonical.Int8:
				v = int64(int8(raw[i]))
			case canonical.Uint8:
				v = int64(raw[i])
			case canonical.Int16:
				v = int64(int16(binary.LittleEndian.Uint16(raw[es*i:])))
			case canonical.Uint16:
				v = int64(binary.LittleEndian.Uint16(raw[es*i:]))
			}
			if v < math.MinInt32 || v > math.MaxInt32 {
				return w, nil, fmt.Errorf("input %q: value %d does not fit TF.js's int32", t.Name, v)
			}
			out = binary.LittleEndian.AppendUint32(out, uint32(int32(v)))
		}
	case canonical.Bool:
		w.DType, out = "bool", raw
	default:
		return w, nil, fmt.Errorf("input %q: element type %s has no TF.js equivalent", t.Name, t.DataType)
	}
	return w, out, nil
}

func fromWire(w wireTensor, raw []byte) (*onnxpb.TensorProto, error) {
	var dt canonical.DataType
	switch w.DType {
	case "float32":
		dt = canonical.Float
	case "int32":
		dt = canonical.Int32
	case "bool":
		dt = canonical.Bool
	default:
		return nil, fmt.Errorf("output %q: TF.js dtype %s is not supported", w.Name, w.DType)
	}
	n, err := canonical.NumElements(w.Shape)
	if err != nil {
		return nil, fmt.Errorf("output %q: %w", w.Name, err)
	}
	if int64(len(raw)) != n*int64(canonical.ElemBits(dt)/8) {
		return nil, fmt.Errorf("output %q: %d bytes for shape %v %s", w.Name, len(raw), w.Shape, w.DType)
	}
	return &onnxpb.TensorProto{Name: proto.String(w.Name), DataType: proto.Int32(int32(dt)), Dims: w.Shape, RawData: raw}, nil
}

// looksLikeTFJS reads whether the file at path is a JSON object with a
// modelTopology key (a TF.js model.json).
func looksLikeTFJS(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 1<<16)
	n, _ := f.Read(head)
	t := bytes.TrimLeft(head[:n], " \t\r\n\xef\xbb\xbf")
	return len(t) > 0 && t[0] == '{' && (bytes.Contains(t, []byte(`"modelTopology"`)) || bytes.Contains(t, []byte(`"weightsManifest"`)))
}

// Run runs the TF.js model.json at modelPath once on inputs, in a node
// process started for the call (Open, Session.Run, Close): see
// Session.Run.
func Run(ctx context.Context, env Env, modelPath string, inputs []*onnxpb.TensorProto) (*Result, error) {
	s, err := Open(ctx, env, modelPath)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Run(ctx, inputs)
}

// Session is a TF.js model (or a Keras file exported to one) loaded once
// into TF.js in one node process, which serves every run until Close.
type Session struct {
	conn  *node.Conn
	dir   string
	model string
	// Kind is "layers-model" or "graph-model"; Version and Backend are
	// TF.js's ("wasm", or "cpu" without the WASM package); WASMBuild the
	// WASM backend's binary ("tfjs-backend-wasm-simd.wasm"); Keras the
	// kind of Keras file ("" for a model.json); CPUReason why the CPU
	// backend runs the whole model ("" when the WASM backend does).
	Kind, Version, Backend, WASMBuild, Keras, CPUReason string
	// CPUOps are the kernels the WASM backend lacks that ran on the CPU
	// backend so far (updated by every Run).
	CPUOps []string
	// ResetAfterGRU names the GRU layers with reset_after=true, which
	// TF.js's GRUCell refuses: runner.js computes them with its
	// reset-after GRU made of TF.js ops (Keras's formulas, Keras's
	// weights).
	ResetAfterGRU []string
}

// Open starts node on runner.js and loads the model at modelPath: a TF.js
// model.json, a Keras file (see the package doc), exported to a TF.js
// layers model in the session's temporary folder first (a file the Keras
// loader refuses is a *KerasError), or a TensorFlow GraphDef, SavedModel
// (folder or saved_model.pb) or checkpoint (.meta), written there as a
// TF.js graph model (a *TensorFlowError when it cannot be; ops TF.js lacks
// are an *unsupported.OpsError). The process ends with Close or ctx.
func Open(ctx context.Context, env Env, modelPath string) (*Session, error) {
	return open(ctx, env, modelPath, graphChoice{})
}

// open is Open; tf says which graph of a TensorFlow model to run
// (writeTensorFlowAsTFJS).
func open(ctx context.Context, env Env, modelPath string, tf graphChoice) (*Session, error) {
	abs, err := filepath.Abs(modelPath)
	if err != nil {
		return nil, err
	}
	fromKeras, fromTF := false, false
	if !looksLikeTFJS(abs) {
		switch {
		case looksLikeKeras(abs):
			fromKeras = true
		case looksLikeTensorFlow(abs):
			fromTF = true
		default:
			return nil, &NotTFJSError{Model: modelPath}
		}
	}
	dir, err := os.MkdirTemp("", "onnxconv-tfjs-")
	if err != nil {
		return nil, err
	}
	s := &Session{dir: dir, model: modelPath}
	fail := func(err error) (*Session, error) {
		if s.conn != nil {
			_ = s.conn.Close()
		}
		_ = os.RemoveAll(dir)
		return nil, err
	}
	script := filepath.Join(dir, "runner.js")
	if err := os.WriteFile(script, append([]byte(node.FrameJS), runnerJS...), 0o600); err != nil {
		return fail(err)
	}
	load := struct {
		Op    string `json:"op"`
		Model string `json:"model"`
		// ByLayer: the weights manifest names LAYER/INDEX (a Keras file
		// exported by writeKerasAsTFJS); each layer gets its weights in
		// Keras's order.
		ByLayer bool `json:"by_layer,omitempty"`
	}{Op: "load", Model: abs}
	if fromKeras {
		mdir := filepath.Join(dir, "model")
		if err := os.Mkdir(mdir, 0o700); err != nil {
			return fail(fmt.Errorf("tfjs runtime: %s: %w", modelPath, err))
		}
		mj, kind, err := writeKerasAsTFJS(ctx, abs, mdir)
		if err != nil {
			return fail(err)
		}
		load.Model, load.ByLayer, s.Keras = mj, true, string(kind)
	}
	if fromTF {
		mdir := filepath.Join(dir, "model")
		if err := os.Mkdir(mdir, 0o700); err != nil {
			return fail(fmt.Errorf("tfjs runtime: %s: %w", modelPath, err))
		}
		mj, err := writeTensorFlowAsTFJS(ctx, abs, mdir, tf)
		if err != nil {
			return fail(err)
		}
		load.Model = mj
	}
	if s.conn, err = node.Start(ctx, node.Process{
		Node:      env.Node,
		Args:      []string{"--max-old-space-size=8192", script},
		Dir:       dir,
		Env:       []string{"NODE_PATH=" + env.Modules, "NODE_OPTIONS="},
		MaxStderr: 8 << 10,
	}, maxAnswer); err != nil {
		return fail(fmt.Errorf("tfjs runtime: %s: starting node: %w", modelPath, err))
	}
	ans, _, err := s.call(ctx, load, nil)
	if err != nil {
		return fail(err)
	}
	s.Kind, s.Version, s.Backend, s.WASMBuild, s.CPUReason, s.ResetAfterGRU = ans.Kind, ans.Version, ans.Backend, ans.WASMBuild, ans.CPUReason, ans.ResetAfterGRU
	return s, nil
}

// Note says which TF.js backend computed the model, and the ops that ran
// on the CPU backend because the WASM backend lacks them
// (runtimes.SessionNoter).
func (s *Session) Note() string {
	n := "TF.js " + s.Version + " on the " + s.Backend + " backend"
	switch {
	case s.CPUReason != "":
		n += " (" + s.CPUReason + ")"
	case s.WASMBuild != "":
		n += " (" + s.WASMBuild + ")"
	}
	if len(s.CPUOps) > 0 {
		n += "; ops run on the CPU backend: " + strings.Join(s.CPUOps, ", ")
	}
	return n
}

// Close ends the node process and removes the session's temporary folder.
func (s *Session) Close() error {
	err := s.conn.Close()
	_ = os.RemoveAll(s.dir)
	return err
}

// answer is the header of the runner's answer.
type answer struct {
	OK      bool   `json:"ok"`
	Error   string `json:"error"`
	Kind    string `json:"kind"`
	Method  string `json:"method"`
	Version string `json:"version"`
	Backend string `json:"backend"`
	// WASMBuild is the WASM backend's binary and CPUReason why the CPU
	// backend runs the whole model (load answer); CPUOps the kernels run
	// on the CPU backend so far (run answers).
	WASMBuild string   `json:"wasm_build"`
	CPUReason string   `json:"cpu_reason"`
	CPUOps    []string `json:"cpu_ops"`
	// ResetAfterGRU: the GRU layers runner.js computed with its
	// reset-after GRU (load answer).
	ResetAfterGRU []string     `json:"reset_after_gru"`
	Outputs       []wireTensor `json:"outputs"`
}

// call sends one request and reads its answer and output bytes. A run
// without a deadline is bounded by DefaultTimeout.
func (s *Session) call(ctx context.Context, head any, blobs [][]byte) (*answer, [][]byte, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	var ans answer
	body, err := s.conn.Call(ctx, head, blobs, &ans, func() (int64, error) {
		var n int64
		for _, o := range ans.Outputs {
			if o.Bytes < 0 {
				return 0, fmt.Errorf("output %q: negative size", o.Name)
			}
			n += o.Bytes
		}
		return n, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("tfjs runtime: %s: %w", s.model, err)
		}
		return nil, nil, &RunError{Model: s.model, Detail: "node gave no answer: " + err.Error(), Stderr: stderrTail(s.conn.Stderr())}
	}
	if !ans.OK {
		return nil, nil, &RunError{Model: s.model, Detail: ans.Error, Stderr: stderrTail(s.conn.Stderr())}
	}
	outs := make([][]byte, len(ans.Outputs))
	for i, o := range ans.Outputs {
		outs[i], body = body[:o.Bytes], body[o.Bytes:]
	}
	return &ans, outs, nil
}

// Run runs the model on inputs. Inputs are bound by name to the graph
// model's inputs (ONNX names are TF.js node names; an unknown name binds
// by position) and by position to a layers model's. Outputs come in
// TF.js's order, named as the tfjs importer names them (for a Keras file,
// as importers/keras names them).
func (s *Session) Run(ctx context.Context, inputs []*onnxpb.TensorProto) (*Result, error) {
	return s.run(ctx, inputs, nil)
}

// RunNamed computes the tensors named instead of the model's outputs, in
// that order: the intermediate values of the source, for the error map. A
// graph model's are TF.js node names ("node" or "node:N"); a layers
// model's (and a Keras file's) the outputs of its layers' calls
// ("layer:node:index", Keras's inbound-node numbering).
func (s *Session) RunNamed(ctx context.Context, inputs []*onnxpb.TensorProto, names []string) ([]*onnxpb.TensorProto, error) {
	if len(names) == 0 {
		return nil, nil
	}
	res, err := s.run(ctx, inputs, names)
	if err != nil {
		return nil, err
	}
	if len(res.Outputs) != len(names) {
		return nil, &RunError{Model: s.model, Detail: fmt.Sprintf("%d tensors computed, %d asked for", len(res.Outputs), len(names))}
	}
	return res.Outputs, nil
}

func (s *Session) run(ctx context.Context, inputs []*onnxpb.TensorProto, names []string) (*Result, error) {
	req := struct {
		Op      string       `json:"op"`
		Inputs  []wireTensor `json:"inputs"`
		Outputs []string     `json:"outputs,omitempty"`
	}{Op: "run", Inputs: []wireTensor{}, Outputs: names}
	var blobs [][]byte
	for i, tp := range inputs {
		w, b, err := toWire(tp)
		if err != nil {
			return nil, fmt.Errorf("tfjs runtime: %s: input %d: %w", s.model, i, err)
		}
		req.Inputs = append(req.Inputs, w)
		blobs = append(blobs, b)
	}
	ans, outs, err := s.call(ctx, req, blobs)
	if err != nil {
		return nil, err
	}
	s.CPUOps = ans.CPUOps
	res := &Result{Kind: s.Kind, Method: ans.Method, Version: s.Version, Backend: s.Backend, Keras: s.Keras, CPUOps: ans.CPUOps}
	if s.Kind == "layers-model" {
		names := make([]string, len(ans.Outputs))
		for i, w := range ans.Outputs {
			names[i] = w.Name
		}
		for i, n := range uniqueNames(names) {
			ans.Outputs[i].Name = n
		}
	}
	for i, w := range ans.Outputs {
		tp, err := fromWire(w, outs[i])
		if err != nil {
			return nil, &RunError{Model: s.model, Detail: err.Error()}
		}
		res.Outputs = append(res.Outputs, tp)
	}
	if len(res.Outputs) == 0 {
		return nil, &RunError{Model: s.model, Detail: "TF.js returned no outputs"}
	}
	return res, nil
}

// stderrTail is the last 20 lines of what node wrote to stderr, without
// TF.js's advice to install tfjs-node.
func stderrTail(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var keep []string
	for _, l := range lines {
		if strings.Contains(l, "====") || strings.Contains(l, "tfjs-node") || strings.TrimSpace(l) == "" {
			continue // TF.js's advice to install tfjs-node
		}
		keep = append(keep, l)
	}
	if len(keep) > 20 {
		keep = keep[len(keep)-20:]
	}
	return strings.Join(keep, "\n")
}

// RunProtos computes the model once on inputs, returning only the
// outputs (runtimes.ProtoRunner).
func (s *Session) RunProtos(ctx context.Context, inputs []*onnxpb.TensorProto) ([]*onnxpb.TensorProto, error) {
	res, err := s.Run(ctx, inputs)
	if err != nil {
		return nil, err
	}
	return res.Outputs, nil
}
