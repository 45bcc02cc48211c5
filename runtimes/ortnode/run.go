package ortnode

import (
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/runtimes/node"
)

//go:embed runner.js
var runnerJS string

// maxReply bounds one answer read from node.
const maxReply = 4 << 30

// RunError is a model ONNX Runtime refused or failed on. Its message is one
// line.
type RunError struct {
	Model string
	// Kind is where it failed: "load" (ONNX Runtime refused the model: an
	// op or type it has no kernel for, an invalid graph), "type" (a graph
	// input or output of a type onnxruntime-node cannot pass: bfloat16,
	// float8, int4, …, or a map), "values" (a graph input or output is a
	// sequence or an optional: New's sessions run such a model through
	// copies, see values.go), "inputs" (names,
	// types or sizes do not match), "run", "protocol", "internal", "node"
	// (the node process failed).
	Kind   string
	Detail string
}

func (e *RunError) Error() string {
	return oneLine(fmt.Sprintf("onnxruntime (%s %s under Node): %s: %s: %s", Package, PackageVersion, e.Model, e.Kind, e.Detail))
}

// RuntimeLimit tells whether the failure is onnxruntime-node's (a graph
// input or output of a type it cannot pass), not the model's
// (runtimes.Limited).
func (e *RunError) RuntimeLimit() bool { return e.Kind == "type" || e.Kind == "values" }

// oneLine joins the lines of s.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// TensorInfo is a graph input or output as ONNX Runtime describes it
// (dtype "non-tensor" for a sequence, map or optional; -1 for a free dim).
type TensorInfo struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
	Bytes int64   `json:"bytes,omitempty"`
}

// Session is an ONNX model loaded once into ONNX Runtime in one node
// process, which serves every run until Close.
type Session struct {
	conn  *node.Conn
	model string
	// port is the copy ONNX Runtime runs instead of the model (nil: the
	// model itself), in tmp.
	port *portable
	tmp  string
	// Version is onnxruntime-node's version as it reports it; Inputs and
	// Outputs are the model's as ONNX Runtime loaded it.
	Version         string
	Inputs, Outputs []TensorInfo
}

// Open starts node on runner.js and loads the ONNX model at modelPath (by
// its path, so that external data beside it is found) with threads
// intra-op threads (<= 0: 1), its graph optimizations off when
// unoptimized. The process ends with Close or ctx.
func Open(ctx context.Context, env Env, modelPath string, threads int, unoptimized bool) (*Session, error) {
	abs, err := filepath.Abs(modelPath)
	if err != nil {
		return nil, fmt.Errorf("onnxruntime (under Node): %s: %w", modelPath, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("onnxruntime (under Node): %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("onnxruntime (under Node): %s is not a regular file", modelPath)
	}
	tmp, err := tempDir()
	if err != nil {
		return nil, fmt.Errorf("onnxruntime (under Node): %s: %w", modelPath, err)
	}
	port, err := makePortable(abs, tmp)
	var re *RunError
	if errors.As(err, &re) {
		_ = os.RemoveAll(tmp)
		re.Model = modelPath
		return nil, re
	}
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("onnxruntime (under Node): %s: %w", modelPath, err)
	}
	load := abs
	if port != nil {
		load = port.Path
	} else {
		_ = os.RemoveAll(tmp)
		tmp = ""
	}
	conn, err := node.Start(ctx, node.Process{
		Node:      env.Node,
		Args:      []string{"-e", node.FrameJS + runnerJS, "--", env.Modules},
		Dir:       os.TempDir(),
		MaxStderr: 64 << 10,
	}, maxReply)
	if err != nil {
		removeTemp(tmp)
		return nil, fmt.Errorf("onnxruntime (under Node): %s: starting node: %w", modelPath, err)
	}
	s := &Session{conn: conn, model: modelPath, port: port, tmp: tmp}
	head := struct {
		Op          string `json:"op"`
		Path        string `json:"path"`
		Threads     int    `json:"threads"`
		Unoptimized bool   `json:"unoptimized"`
		NoPrepack   bool   `json:"noPrepack"`
	}{"load", load, max(threads, 1), unoptimized, largeExternal(abs)}
	rep, _, err := s.call(ctx, head, nil)
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	s.Version, s.Inputs, s.Outputs = rep.Version, rep.Inputs, rep.Outputs
	return s, nil
}

// Close ends the node process and removes the portable copy.
func (s *Session) Close() error {
	err := s.conn.Close()
	removeTemp(s.tmp)
	return err
}

func removeTemp(dir string) {
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
}

// Note says how the model ONNX Runtime ran differs from the file: a copy
// stamped with an earlier opset, or with Cast nodes at inputs and outputs
// of types onnxruntime-node cannot pass ("" when it ran the file itself;
// runtimes.SessionNoter).
func (s *Session) Note() string {
	if s.port == nil {
		return ""
	}
	return strings.Join(s.port.Notes, "; ")
}

type reply struct {
	OK      bool         `json:"ok"`
	Kind    string       `json:"kind"`
	Error   string       `json:"error"`
	Version string       `json:"version"`
	Inputs  []TensorInfo `json:"inputs"`
	Outputs []TensorInfo `json:"outputs"`
}

// call sends one request and reads its answer.
func (s *Session) call(ctx context.Context, head any, blobs [][]byte) (*reply, [][]byte, error) {
	var rep reply
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
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("onnxruntime (under Node): %s: %w", s.model, err)
		}
		return nil, nil, &RunError{Model: s.model, Kind: "node", Detail: err.Error()}
	}
	if !rep.OK {
		return nil, nil, &RunError{Model: s.model, Kind: rep.Kind, Detail: rep.Error}
	}
	outs := make([][]byte, len(rep.Outputs))
	for i, o := range rep.Outputs {
		outs[i], body = body[:o.Bytes], body[o.Bytes:]
	}
	return &rep, outs, nil
}

// inHead is an input tensor in a request header.
type inHead struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
}

// RunProtos computes the model once on inputs, bound by name, and returns
// the outputs in the model's order (runtimes.ProtoRunner).
func (s *Session) RunProtos(ctx context.Context, inputs []*onnxpb.TensorProto) ([]*onnxpb.TensorProto, error) {
	heads := make([]inHead, 0, len(inputs))
	blobs := make([][]byte, 0, len(inputs))
	for i, tp := range inputs {
		t, err := canonical.TensorFromProto(tp)
		if err != nil {
			return nil, fmt.Errorf("onnxruntime (under Node): %s: input %d: %w", s.model, i, err)
		}
		if s.port != nil && s.port.Types[t.Name] == t.DataType {
			if t, err = wireIn(t); err != nil {
				return nil, fmt.Errorf("onnxruntime (under Node): %s: input %d: %w", s.model, i, err)
			}
		}
		dt, ok := dtypeName(t.DataType)
		if !ok {
			return nil, &RunError{Model: s.model, Kind: "type", Detail: fmt.Sprintf("input %q: element type %s does not pass through %s", t.Name, t.DataType, Package)}
		}
		raw, err := encode(t)
		if err != nil {
			return nil, fmt.Errorf("onnxruntime (under Node): %s: input %q: %w", s.model, t.Name, err)
		}
		heads = append(heads, inHead{Name: t.Name, DType: dt, Shape: append([]int64{}, t.Dims...)})
		blobs = append(blobs, raw)
	}
	rep, outs, err := s.call(ctx, struct {
		Op     string   `json:"op"`
		Inputs []inHead `json:"inputs"`
	}{"run", heads}, blobs)
	if err != nil {
		return nil, err
	}
	res := make([]*onnxpb.TensorProto, len(rep.Outputs))
	for i, o := range rep.Outputs {
		t, err := decode(o, outs[i])
		if err != nil {
			return nil, &RunError{Model: s.model, Kind: "protocol", Detail: err.Error()}
		}
		if dt, ok := s.wired(o.Name); ok {
			if t, err = wireOut(t, dt); err != nil {
				return nil, &RunError{Model: s.model, Kind: "protocol", Detail: fmt.Sprintf("output %q: %v", o.Name, err)}
			}
		}
		tp, err := canonical.TensorToProto(t)
		if err != nil {
			return nil, fmt.Errorf("onnxruntime (under Node): %s: output %q: %w", s.model, o.Name, err)
		}
		tp.Name = proto.String(o.Name)
		res[i] = tp
	}
	return res, nil
}

// wired is the own type of the output named name when it crossed as its
// wire type.
func (s *Session) wired(name string) (canonical.DataType, bool) {
	if s.port == nil {
		return 0, false
	}
	dt, ok := s.port.Types[name]
	return dt, ok
}

// encode is t's bytes on the wire: raw little-endian, or for STRING each
// element as a 4-byte little-endian length and its bytes.
func encode(t *canonical.Tensor) ([]byte, error) {
	if t.DataType != canonical.String {
		return t.Bytes()
	}
	strs, err := t.Strings()
	if err != nil {
		return nil, err
	}
	var out []byte
	for _, s := range strs {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(s)))
		out = append(out, s...)
	}
	return out, nil
}

// decode is an output tensor from its header and bytes, checked against
// its shape.
func decode(o TensorInfo, b []byte) (*canonical.Tensor, error) {
	dt, ok := dtypeOf(o.DType)
	if !ok {
		return nil, fmt.Errorf("output %q: element type %s", o.Name, o.DType)
	}
	n, err := canonical.NumElements(o.Shape)
	if err != nil {
		return nil, fmt.Errorf("output %q: %w", o.Name, err)
	}
	if dt == canonical.String {
		strs := make([][]byte, 0, min(n, int64(len(b))))
		for range n {
			if len(b) < 4 || int64(binary.LittleEndian.Uint32(b)) > int64(len(b)-4) {
				return nil, fmt.Errorf("output %q: truncated string tensor", o.Name)
			}
			k := binary.LittleEndian.Uint32(b)
			strs = append(strs, append([]byte(nil), b[4:4+k]...))
			b = b[4+k:]
		}
		return canonical.NewStringTensor(o.Name, o.Shape, strs), nil
	}
	if dt == onnxpb.TensorProto_BOOL {
		for j, v := range b {
			if v != 0 {
				b[j] = 1
			}
		}
	}
	t := canonical.NewTensor(o.Name, dt, o.Shape, b)
	size, err := t.ByteSize()
	if err != nil || size != int64(len(b)) {
		return nil, fmt.Errorf("output %q: %d bytes for shape %v %s", o.Name, len(b), o.Shape, o.DType)
	}
	return t, nil
}

// dtypes are the element types onnxruntime-node passes, by its names.
var dtypes = []struct {
	name string
	dt   canonical.DataType
}{
	{"float32", onnxpb.TensorProto_FLOAT},
	{"float64", onnxpb.TensorProto_DOUBLE},
	{"float16", onnxpb.TensorProto_FLOAT16},
	{"int8", onnxpb.TensorProto_INT8},
	{"int16", onnxpb.TensorProto_INT16},
	{"int32", onnxpb.TensorProto_INT32},
	{"int64", onnxpb.TensorProto_INT64},
	{"uint8", onnxpb.TensorProto_UINT8},
	{"uint16", onnxpb.TensorProto_UINT16},
	{"uint32", onnxpb.TensorProto_UINT32},
	{"uint64", onnxpb.TensorProto_UINT64},
	{"bool", onnxpb.TensorProto_BOOL},
	{"string", onnxpb.TensorProto_STRING},
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
