package tflite

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/canonical/unsupported"
	formats "github.com/onnxconv/onnxconv/formats/tflite"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
	"github.com/onnxconv/onnxconv/runtimes/node"
)

//go:embed runner.js
var runnerJS string

//go:embed litert.js
var litertJS string

// MaxModelSize bounds the model files Run reads (a flatbuffer addresses
// at most 2 GiB).
const MaxModelSize = 2 << 30

// maxReply bounds the answer read from node.
const maxReply = 4 << 30

// microOnlyError is the *unsupported.OpsError of a model whose ops
// (every node of each, by op) neither WebAssembly build of TFLite runs.
func microOnlyError(modelPath string, ops []unsupported.Op) error {
	e := &unsupported.OpsError{Format: "tflite runtime", Stage: unsupported.StageRun, File: modelPath,
		Hint: fmt.Sprintf("neither TFLite WebAssembly build (%s %s, @litertjs/core) runs them, so this model cannot be computed by a reference runtime here: "+
			"verify it against stored outputs (--reference DIR) instead", Package, PackageVersion)}
	for _, o := range ops {
		e.AddOp(o)
	}
	return e.Err()
}

// ShapeError is an input whose shape the interpreter does not take:
// tfjs-tflite cannot resize inputs, so a dynamic dim runs at the size the
// model's static shape holds.
type ShapeError struct {
	Model, Detail string
	// Inputs are the interpreter's inputs (name, element type, shape).
	Inputs []TensorInfo
}

func (e *ShapeError) Error() string {
	return fmt.Sprintf("tflite runtime: %s: %s; give inputs of the interpreter's shapes (%s), e.g. size the dynamic dims with --dim NAME=N",
		e.Model, e.Detail, describeInfos(e.Inputs))
}

// RunError is a model the interpreter refused or failed on.
type RunError struct {
	Model string
	// Kind is where it failed: "load" (the interpreter refused the model),
	// "inputs" (names or types do not match), "run", "output-type" (an
	// input or output of an element type that cannot be read or written:
	// string, complex, resource), "protocol", "internal", "node" (the node
	// process failed).
	Kind   string
	Detail string
	Inputs []TensorInfo
	// Package is the npm package that failed (Package when empty).
	Package string
}

func (e *RunError) Error() string {
	pkg := Package + " " + PackageVersion
	if e.Package != "" {
		pkg = e.Package
	}
	s := fmt.Sprintf("tflite runtime (%s): %s: %s: %s", pkg, e.Model, e.Kind, e.Detail)
	if len(e.Inputs) > 0 {
		s += " (model inputs: " + describeInfos(e.Inputs) + ")"
	}
	return s
}

// NotTFLiteError is a file that is not a TFLite flatbuffer.
type NotTFLiteError struct{ Model string }

func (e *NotTFLiteError) Error() string {
	return fmt.Sprintf("tflite runtime: %s is not a TFLite model (no \"TFL3\" identifier at byte 4); the tflite runtime computes .tflite files (the source of a conversion), not ONNX models", e.Model)
}

// TensorInfo is a tensor as the interpreter describes it.
type TensorInfo struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
	Bytes int64   `json:"bytes,omitempty"`
}

func describeInfos(ts []TensorInfo) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%q %s %v", t.Name, t.DType, t.Shape)
	}
	return strings.Join(parts, ", ")
}

// Result is one run's outputs and what computed them.
type Result struct {
	Outputs []*onnxpb.TensorProto
	// Build names what ran the model ("@tensorflow/tfjs-tflite
	// 0.0.1-alpha.10 (TFLite interpreter, WebAssembly SIMD, XNNPACK)").
	Build string
}

// Run computes the .tflite model at modelPath once on inputs, in a node
// process started for the call (Open, Session.Run, Close). Inputs bind to
// the model's inputs by name (a tensor without a name binds by position);
// outputs come in the model's output order with their TFLite names.
// threads <= 0 means 1.
func Run(ctx context.Context, env Env, modelPath string, inputs []*onnxpb.TensorProto, threads int) (*Result, error) {
	return runWith(ctx, env, modelPath, inputs, Options{Threads: threads})
}

func runWith(ctx context.Context, env Env, modelPath string, inputs []*onnxpb.TensorProto, o Options) (*Result, error) {
	s, err := OpenWith(ctx, env, modelPath, o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Run(ctx, inputs)
}

// Options tune a session.
type Options struct {
	// Threads is the interpreter's thread count (<= 0: 1).
	Threads int
	// Interpreters are the builds to try, in order, until one takes the
	// model; nil: Route's order for the model.
	Interpreters []Interpreter
	// RunUncomputed runs a model holding custom ops that neither build
	// computes (uncomputedReason) instead of refusing it, to observe what
	// a build does with them (LiteRT.js leaves MediaPipe's transform ops'
	// outputs unwritten).
	RunUncomputed bool
}

// Session is a .tflite model loaded once into one of the two TFLite
// interpreters in one node process, which serves every run until Close.
type Session struct {
	env     Env
	threads int
	conn    *node.Conn
	model   string
	bytes   []byte
	names   formats.IO // the importer's names of the model's inputs and outputs
	// cur is the interpreter serving the session, rest those not tried
	// yet (tried when cur fails the first run); ran: a run succeeded.
	cur  Interpreter
	rest []Interpreter
	ran  bool
	// pool lends the node processes (nil: the session starts its own);
	// broken marks a process not to be given back to it.
	pool   *Pool
	broken bool
	// Build names what runs the model; Inputs are the interpreter's
	// inputs.
	Build  string
	Inputs []TensorInfo
	// Routed says why LiteRT.js was not tried first ("" when it was, or
	// when the interpreters were given).
	Routed string
	// Refused says, for each interpreter that refused the model before
	// Build took it, why ("@litertjs/core 2.5.3: Variable tensors not yet
	// supported.").
	Refused []string
}

// Open starts node on the script of the first interpreter of Route's
// order for the model and loads the .tflite model at modelPath (its bytes
// travel to node once); when that interpreter refuses the model, the next
// one is tried (see OpenWith). The process ends with Close or ctx.
func Open(ctx context.Context, env Env, modelPath string, threads int) (*Session, error) {
	return OpenWith(ctx, env, modelPath, Options{Threads: threads})
}

// OpenWith is Open with options: the interpreters of o (or Route's order)
// are tried in order until one loads the model. Every refusal is kept in
// Session.Refused; when all refuse, the error is a *RunError of kind load
// naming each interpreter's reason.
func OpenWith(ctx context.Context, env Env, modelPath string, o Options) (*Session, error) {
	model, err := readModel(modelPath)
	if err != nil {
		return nil, err
	}
	return openBytes(ctx, env, modelPath, model, o)
}

// openBytes is OpenWith on the bytes of the model at modelPath (which
// names it in errors).
func openBytes(ctx context.Context, env Env, modelPath string, model []byte, o Options) (*Session, error) {
	return openPooled(ctx, env, modelPath, model, o, nil)
}

// openPooled is openBytes with the processes of pool (nil: its own).
func openPooled(ctx context.Context, env Env, modelPath string, model []byte, o Options, pool *Pool) (*Session, error) {
	if ops := microOnlyOps(model); len(ops) > 0 && !o.RunUncomputed {
		return nil, microOnlyError(modelPath, ops)
	}
	// A model whose tensor names are empty or repeated binds its inputs
	// by position, named as the importer names them.
	names, err := formats.MainIO(model)
	if err != nil {
		return nil, fmt.Errorf("tflite runtime: %s: %w", modelPath, err)
	}
	order, routed := o.Interpreters, ""
	if order == nil {
		order, routed = Route(env, model)
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("tflite runtime: %s: no interpreter to run it", modelPath)
	}
	s := &Session{env: env, threads: max(o.Threads, 1), model: modelPath, bytes: model, names: names, rest: order, Routed: routed, pool: pool}
	if err := s.next(ctx, nil); err != nil {
		return nil, err
	}
	return s, nil
}

// next loads the model into the next interpreter that takes it, after
// the current one (if any) failed with why. It fails when none is left.
func (s *Session) next(ctx context.Context, why error) error {
	if why != nil {
		s.Refused = append(s.Refused, s.refusal(s.cur, why))
	}
	var last error = why
	for len(s.rest) > 0 {
		in := s.rest[0]
		s.rest = s.rest[1:]
		err := s.load(ctx, in)
		if err == nil {
			return nil
		}
		var re *RunError
		if ctx.Err() != nil || !errors.As(err, &re) || (re.Kind != "load" && re.Kind != "node") {
			return err // a missing package, a cancelled run: not a refusal
		}
		s.Refused = append(s.Refused, s.refusal(in, err))
		last = err
	}
	if len(s.Refused) > 1 {
		return &RunError{Model: s.model, Kind: "load", Package: "every TFLite interpreter", Detail: strings.Join(s.Refused, "; ")}
	}
	return last
}

// refusal is one line saying why interpreter in refused the model.
func (s *Session) refusal(in Interpreter, err error) string {
	msg := err.Error()
	var re *RunError
	if errors.As(err, &re) {
		msg = re.Detail
	}
	msg = strings.Join(strings.Fields(msg), " ")
	return s.env.describe(in) + ": " + msg
}

// load starts node on in's script and loads the model into it.
func (s *Session) load(ctx context.Context, in Interpreter) error {
	script, pkg := runnerJS, ""
	if in == LiteRT {
		if s.env.LiteRTVersion == "" {
			return spec().Missing(LiteRTPackage, []string{s.env.Modules})
		}
		script, pkg = litertJS, LiteRTPackage+" "+s.env.LiteRTVersion
	}
	var conn *node.Conn
	if !stateful(s.bytes) {
		// A stateful model starts in a process of its own: in a reused
		// heap, tfjs-tflite's BIDIRECTIONAL_SEQUENCE_LSTM with merged
		// outputs and peepholes answered NaN where a fresh process
		// answers the right values (memory it reads before writing).
		conn = s.pool.take(in)
	}
	if conn == nil {
		var err error
		conn, err = node.Start(s.pool.startCtx(ctx), node.Process{
			Node:      s.env.Node,
			Args:      []string{"-e", node.FrameJS + script, "--", s.env.Modules},
			Dir:       os.TempDir(),
			MaxStderr: 64 << 10,
		}, maxReply)
		if err != nil {
			return fmt.Errorf("tflite runtime: %s: starting node: %w", s.model, err)
		}
	}
	head := struct {
		Op      string            `json:"op"`
		Threads int               `json:"threads"`
		Types   map[string]string `json:"types"`
		// Stateful asks for a fresh interpreter for every sample.
		Stateful bool `json:"stateful"`
		// IO are the main subgraph's input and output tensor names and
		// their signature keys, in order (LiteRT.js names them by key).
		IO ioNames `json:"io"`
	}{Op: "load", Threads: s.threads, Types: ioTypes(s.bytes), Stateful: stateful(s.bytes),
		IO: ioNames{In: s.names.InRaw, InKeys: s.names.InKey, Out: s.names.OutRaw, OutKeys: s.names.OutKey}}
	s.conn, s.cur, s.broken = conn, in, false
	rep, _, err := s.call(ctx, head, [][]byte{s.bytes}, pkg)
	if err != nil {
		// A refused first load ends the process: it is not given back.
		s.broken = true
		_ = s.Close()
		s.conn = nil
		return err
	}
	s.Build, s.Inputs = rep.Build, rep.Inputs
	return nil
}

// Close ends the node process, or gives it back to the session's pool
// when no call broke it.
func (s *Session) Close() error {
	if s.conn == nil {
		return nil
	}
	if s.pool != nil && !s.broken && s.pool.put(s.cur, s.conn) {
		s.conn = nil
		return nil
	}
	return s.conn.Close()
}

// Note says what computed the model: the build that took it, and why
// each interpreter tried before it refused the model
// (runtimes.SessionNoter).
func (s *Session) Note() string {
	n := "computed by " + s.Build
	if s.Routed != "" {
		n += ", tried first as " + s.Routed
	}
	if len(s.Refused) > 0 {
		n += ", which took the model after " + strings.Join(s.Refused, "; ")
	}
	return n
}

// Run computes the model once on inputs (see Run). When the interpreter
// that loaded the model fails the first run (not the inputs: the run
// itself, or its process), the next interpreter is tried on the same
// inputs and serves the session from then on.
func (s *Session) Run(ctx context.Context, inputs []*onnxpb.TensorProto) (*Result, error) {
	res, err := s.run(ctx, inputs)
	for err != nil && !s.ran && len(s.rest) > 0 && ctx.Err() == nil {
		var re *RunError
		if !errors.As(err, &re) || (re.Kind != "run" && re.Kind != "node" && re.Kind != "output-type") {
			break
		}
		_ = s.Close()
		s.conn = nil
		if err2 := s.next(ctx, err); err2 != nil {
			return nil, err2
		}
		res, err = s.run(ctx, inputs)
	}
	if err == nil {
		s.ran = true
	}
	return res, err
}

func (s *Session) run(ctx context.Context, inputs []*onnxpb.TensorProto) (*Result, error) {
	byPosition := s.names.Ambiguous()
	if byPosition {
		var err error
		if inputs, err = inModelOrder(s.names, inputs); err != nil {
			return nil, fmt.Errorf("tflite runtime: %s: %w", s.model, err)
		}
	}
	inputs, err := narrowInt64(s.model, inputs, s.Inputs, byPosition)
	if err != nil {
		return nil, err
	}
	head, blobs, err := requestInputs(s.model, inputs, byPosition)
	if err != nil {
		return nil, err
	}
	pkg := ""
	if s.cur == LiteRT {
		pkg = LiteRTPackage + " " + s.env.LiteRTVersion
	}
	rep, outs, err := s.call(ctx, struct {
		Op     string   `json:"op"`
		Inputs []inHead `json:"inputs"`
	}{"run", head}, blobs, pkg)
	if err != nil {
		return nil, err
	}
	var outNames []string
	if byPosition {
		outNames = s.names.OutONNX
	}
	return outputs(s.model, rep, outs, pkg, s.Build, outNames)
}

// call sends one request and reads its answer; pkg names the npm package
// in errors ("" for Package).
func (s *Session) call(ctx context.Context, head any, blobs [][]byte, pkg string) (*reply, [][]byte, error) {
	var rep reply
	if s.conn == nil {
		return nil, nil, &RunError{Model: s.model, Kind: "node", Detail: "the session is closed", Package: pkg}
	}
	body, err := s.conn.Call(ctx, head, blobs, &rep, func() (int64, error) {
		var n int64
		for _, o := range rep.Outputs {
			if o.Bytes < 0 {
				return 0, fmt.Errorf("output %q: negative size", o.Name)
			}
			n += o.Bytes
		}
		return n, nil
	})
	if err != nil {
		s.broken = true
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("tflite runtime: %s: %w", s.model, err)
		}
		return nil, nil, &RunError{Model: s.model, Kind: "node", Detail: err.Error(), Package: pkg}
	}
	if !rep.OK {
		switch rep.Kind {
		case "inputs", "shape", "run", "output-type":
		default:
			s.broken = true // a protocol or internal failure: not reused
		}
		if rep.Kind == "shape" {
			return nil, nil, &ShapeError{Model: s.model, Detail: rep.Error, Inputs: rep.Inputs}
		}
		return nil, nil, &RunError{Model: s.model, Kind: rep.Kind, Detail: rep.Error, Inputs: rep.Inputs, Package: pkg}
	}
	outs := make([][]byte, len(rep.Outputs))
	for i, o := range rep.Outputs {
		outs[i], body = body[:o.Bytes], body[o.Bytes:]
	}
	return &rep, outs, nil
}

// ioNames are the tensor names and signature keys of the main
// subgraph's inputs and outputs, in order, in a load request.
type ioNames struct {
	In      []string `json:"in"`
	InKeys  []string `json:"in_keys"`
	Out     []string `json:"out"`
	OutKeys []string `json:"out_keys"`
}

// inHead is an input tensor in a request header.
type inHead struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
	Bytes int     `json:"bytes"`
}

// narrowInt64 casts each int64 input the model takes as int32 (the
// exporter writes ONNX int64 as INT32, which LiteRT.js runs and INT64 it
// refuses) to int32, matched to the model's inputs by name, else by
// position; a value outside int32 is an error naming the input.
func narrowInt64(modelPath string, inputs []*onnxpb.TensorProto, model []TensorInfo, byPosition bool) ([]*onnxpb.TensorProto, error) {
	var out []*onnxpb.TensorProto
	for i, tp := range inputs {
		if tp.GetDataType() != int32(onnxpb.TensorProto_INT64) {
			continue
		}
		j := -1
		if !byPosition {
			j = slices.IndexFunc(model, func(m TensorInfo) bool { return m.Name == tp.GetName() })
		}
		if j < 0 && i < len(model) && (byPosition || !slices.ContainsFunc(model, func(m TensorInfo) bool { return m.Name != "" })) {
			j = i
		}
		if j < 0 || model[j].DType != "int32" {
			continue
		}
		t, err := canonical.TensorFromProto(tp)
		if err != nil {
			return nil, fmt.Errorf("tflite runtime: %s: input %d: %w", modelPath, i, err)
		}
		v, err := t.Int64s()
		if err != nil {
			return nil, fmt.Errorf("tflite runtime: %s: input %q: %w", modelPath, tp.GetName(), err)
		}
		n := make([]int32, len(v))
		for k, x := range v {
			if x < math.MinInt32 || x > math.MaxInt32 {
				return nil, fmt.Errorf("tflite runtime: %s: input %q: value %d does not fit the model's int32 input", modelPath, tp.GetName(), x)
			}
			n[k] = int32(x)
		}
		if out == nil {
			out = slices.Clone(inputs)
		}
		if out[i], err = canonical.TensorToProto(canonical.Int32Tensor(tp.GetName(), t.Dims, n)); err != nil {
			return nil, fmt.Errorf("tflite runtime: %s: input %q: %w", modelPath, tp.GetName(), err)
		}
	}
	if out == nil {
		return inputs, nil
	}
	return out, nil
}

// requestInputs encodes inputs for the runner.
func requestInputs(modelPath string, inputs []*onnxpb.TensorProto, byPosition bool) ([]inHead, [][]byte, error) {
	heads := []inHead{}
	var blobs [][]byte
	for i, tp := range inputs {
		t, err := canonical.TensorFromProto(tp)
		if err != nil {
			return nil, nil, fmt.Errorf("tflite runtime: %s: input %d: %w", modelPath, i, err)
		}
		dt, ok := dtypeName(t.DataType)
		if !ok {
			return nil, nil, fmt.Errorf("tflite runtime: %s: input %d (%q): element type %s has no TFLite equivalent here", modelPath, i, t.Name, t.DataType)
		}
		raw, err := t.Bytes()
		if err != nil {
			return nil, nil, fmt.Errorf("tflite runtime: %s: input %d (%q): %w", modelPath, i, t.Name, err)
		}
		if byPosition {
			t.Name = "" // bound by position
		}
		heads = append(heads, inHead{Name: t.Name, DType: dt, Shape: append([]int64{}, t.Dims...), Bytes: len(raw)})
		blobs = append(blobs, raw)
	}
	return heads, blobs, nil
}

// outputs decodes the outputs of an answer; names, when set, rename them
// by position (a model whose tensor names are empty or repeated).
func outputs(modelPath string, rep *reply, outs [][]byte, pkg, build string, names []string) (*Result, error) {
	res := &Result{Build: build}
	if res.Build == "" {
		res.Build = rep.Build
	}
	for i, o := range rep.Outputs {
		if i < len(names) {
			o.Name = names[i] // the importer's name for it
		}
		dt, ok := dtypeOf(o.DType)
		if !ok {
			return nil, &RunError{Model: modelPath, Kind: "run", Detail: fmt.Sprintf("output %q: element type %s", o.Name, o.DType), Package: pkg}
		}
		t := canonical.NewTensor(o.Name, dt, o.Shape, outs[i])
		if dt == onnxpb.TensorProto_BOOL {
			for j, b := range outs[i] {
				if b != 0 {
					outs[i][j] = 1
				}
			}
		}
		n, err := t.ByteSize()
		if err != nil || n != int64(len(outs[i])) {
			return nil, &RunError{Model: modelPath, Kind: "protocol", Detail: fmt.Sprintf("output %q: %d bytes for shape %v %s", o.Name, len(outs[i]), o.Shape, o.DType), Package: pkg}
		}
		tp, err := canonical.TensorToProto(t)
		if err != nil {
			return nil, fmt.Errorf("tflite runtime: %s: output %q: %w", modelPath, o.Name, err)
		}
		tp.Name = proto.String(o.Name)
		res.Outputs = append(res.Outputs, tp)
	}
	return res, nil
}

// RunLiteRT computes the model once with LiteRT.js alone (LiteRTPackage),
// in a node process started for the call: float32, int32 and uint8
// tensors only, no variable tensors (LSTM, SVDF), no resizing. A model it
// does not take is a *RunError (kind load or inputs), and a missing
// package a *MissingError.
func RunLiteRT(ctx context.Context, env Env, modelPath string, inputs []*onnxpb.TensorProto) (*Result, error) {
	return runWith(ctx, env, modelPath, inputs, Options{Interpreters: []Interpreter{LiteRT}})
}

type reply struct {
	OK      bool         `json:"ok"`
	Kind    string       `json:"kind"`
	Error   string       `json:"error"`
	Build   string       `json:"build"`
	Version string       `json:"version"`
	Inputs  []TensorInfo `json:"inputs"`
	Outputs []TensorInfo `json:"outputs"`
}

// readModel reads a .tflite file, checking its identifier and size.
func readModel(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tflite runtime: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("tflite runtime: %w", err)
	}
	if !st.Mode().IsRegular() || st.Size() > MaxModelSize {
		return nil, fmt.Errorf("tflite runtime: %s: not a regular file of at most %d bytes", path, int64(MaxModelSize))
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxModelSize+1))
	if err != nil {
		return nil, fmt.Errorf("tflite runtime: reading %s: %w", path, err)
	}
	if len(b) < 8 || string(b[4:8]) != "TFL3" {
		return nil, &NotTFLiteError{Model: path}
	}
	return b, nil
}

// uncomputedReason says why neither WebAssembly build computes the custom
// op code ("" when one may): TFLite Micro's Signal* ops, and MediaPipe's
// transform ops, which LiteRT.js runs without writing their outputs (no
// kernel; importers/tflite TestMediaPipeTransformOpsNotRunByLiteRT) and
// tfjs-tflite refuses.
func uncomputedReason(code string) string {
	switch {
	case strings.HasPrefix(code, "Signal"):
		return "a custom op that only TFLite Micro has (its Signal audio-frontend library)"
	case code == "Landmarks2TransformMatrix" || code == "TransformLandmarks" || code == "TransformTensorBilinear" || code == "TransformTensor":
		return "a MediaPipe custom op that LiteRT.js runs without computing its output (no kernel) and tfjs-tflite does not have"
	}
	return ""
}

// microOnlyOps lists the custom ops of the model that neither build
// computes (uncomputedReason). A corrupt flatbuffer yields none: the
// interpreter then reports it.
func microOnlyOps(model []byte) (ops []unsupported.Op) {
	defer func() {
		if recover() != nil {
			ops = nil
		}
	}()
	m := formats.Root(model)
	micro := map[int]string{}
	var oc fb.OperatorCode
	for i := 0; i < m.OperatorCodesLength(); i++ {
		if !m.OperatorCodes(&oc, i) {
			continue
		}
		if c := string(oc.CustomCode()); uncomputedReason(c) != "" {
			micro[i] = c
		}
	}
	if len(micro) == 0 {
		return nil
	}
	var sg fb.SubGraph
	var op fb.Operator
	var t fb.Tensor
	for i := 0; i < m.SubgraphsLength(); i++ {
		if !m.Subgraphs(&sg, i) {
			continue
		}
		for j := 0; j < sg.OperatorsLength(); j++ {
			if !sg.Operators(&op, j) {
				continue
			}
			c, ok := micro[int(op.OpcodeIndex())]
			if !ok {
				continue
			}
			node := fmt.Sprintf("operator %d", j)
			if op.OutputsLength() > 0 && sg.Tensors(&t, int(op.Outputs(0))) && len(t.Name()) > 0 {
				node = string(t.Name())
			}
			ops = append(ops, unsupported.Op{Op: c, Node: node, Reason: uncomputedReason(c)})
		}
	}
	if len(ops) == 0 { // codes that no operator uses: still name them
		for _, c := range micro {
			ops = append(ops, unsupported.Op{Op: c, Reason: uncomputedReason(c)})
		}
		sort.Slice(ops, func(a, b int) bool { return ops[a].Op < ops[b].Op })
	}
	return ops
}

// ioTypes maps the tensor index of each input and output of the model's
// main subgraph to its element type name, for the types the runner does
// not name itself (it says "unknown" for int64, uint16, uint64, float16).
// A corrupt flatbuffer yields none: the interpreter then reports it.
func ioTypes(model []byte) (types map[string]string) {
	types = map[string]string{}
	defer func() {
		if recover() != nil {
			types = map[string]string{}
		}
	}()
	m := formats.Root(model)
	var g fb.SubGraph
	if m.SubgraphsLength() == 0 || !m.Subgraphs(&g, 0) {
		return types
	}
	var t fb.Tensor
	add := func(idx int32) {
		if idx < 0 || int(idx) >= g.TensorsLength() || !g.Tensors(&t, int(idx)) {
			return
		}
		if name, ok := heapTypes[t.Type()]; ok {
			types[fmt.Sprint(idx)] = name
		}
	}
	for i := 0; i < g.InputsLength(); i++ {
		add(g.Inputs(i))
	}
	for i := 0; i < g.OutputsLength(); i++ {
		add(g.Outputs(i))
	}
	return types
}

// stateful reports whether the model keeps state between inferences:
// a variable tensor in any subgraph (SVDF's state, LSTM's cell state
// kept as a variable) or a resource variable op. The converted model
// starts every inference from the initial state, so the interpreter must
// too (a corrupt flatbuffer says no: the interpreter then reports it).
func stateful(model []byte) (yes bool) {
	defer func() {
		if recover() != nil {
			yes = false
		}
	}()
	m := formats.Root(model)
	var g fb.SubGraph
	var t fb.Tensor
	var op fb.Operator
	var code fb.OperatorCode
	for s := 0; s < m.SubgraphsLength(); s++ {
		if !m.Subgraphs(&g, s) {
			continue
		}
		for i := 0; i < g.TensorsLength(); i++ {
			if g.Tensors(&t, i) && t.IsVariable() {
				return true
			}
		}
		for i := 0; i < g.OperatorsLength(); i++ {
			if !g.Operators(&op, i) || int(op.OpcodeIndex()) >= m.OperatorCodesLength() || !m.OperatorCodes(&code, int(op.OpcodeIndex())) {
				continue
			}
			b := code.BuiltinCode()
			if dep := fb.BuiltinOperator(code.DeprecatedBuiltinCode()); dep > b {
				b = dep
			}
			switch b {
			case fb.BuiltinOperatorVAR_HANDLE, fb.BuiltinOperatorASSIGN_VARIABLE, fb.BuiltinOperatorREAD_VARIABLE:
				return true
			}
		}
	}
	return false
}

// heapTypes are the element types whose bytes runner.js reads from the
// WebAssembly heap (tfjs-tflite's runner gives them no typed view).
var heapTypes = map[fb.TensorType]string{
	fb.TensorTypeINT64:   "int64",
	fb.TensorTypeUINT64:  "uint64",
	fb.TensorTypeUINT16:  "uint16",
	fb.TensorTypeFLOAT16: "float16",
}

var dtypes = []struct {
	name string
	dt   canonical.DataType
}{
	{"float32", onnxpb.TensorProto_FLOAT},
	{"float64", onnxpb.TensorProto_DOUBLE},
	{"int8", onnxpb.TensorProto_INT8},
	{"uint8", onnxpb.TensorProto_UINT8},
	{"int16", onnxpb.TensorProto_INT16},
	{"int32", onnxpb.TensorProto_INT32},
	{"uint32", onnxpb.TensorProto_UINT32},
	{"int64", onnxpb.TensorProto_INT64},
	{"uint64", onnxpb.TensorProto_UINT64},
	{"uint16", onnxpb.TensorProto_UINT16},
	{"float16", onnxpb.TensorProto_FLOAT16},
	{"bool", onnxpb.TensorProto_BOOL},
}

func dtypeName(dt canonical.DataType) (string, bool) {
	for _, d := range dtypes {
		if d.dt == dt {
			return d.name, true
		}
	}
	return "", false
}

func dtypeOf(name string) (canonical.DataType, bool) {
	for _, d := range dtypes {
		if d.name == name {
			return d.dt, true
		}
	}
	return 0, false
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
