package tfjs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/unsupported"
	"github.com/onnxconv/onnxconv/formats/tensorflow"
	"github.com/onnxconv/onnxconv/formats/tensorflow/tfpb"
)

// TensorFlowError is a TensorFlow model (GraphDef, SavedModel, checkpoint)
// the runtime could not write as a TF.js graph model: not a well-formed
// file (Err is then formats/tensorflow's *FormatError or *SignatureError,
// reachable with errors.As), or a constant TF.js cannot hold. Ops TF.js
// lacks are an *unsupported.OpsError instead (Stage run, every op named).
type TensorFlowError struct {
	Model string
	Err   error
}

func (e *TensorFlowError) Error() string {
	return fmt.Sprintf("tfjs runtime: %s: cannot run the TensorFlow model on TF.js: %v", e.Model, e.Err)
}

func (e *TensorFlowError) Unwrap() error { return e.Err }

// looksLikeTensorFlow tells whether path is a TensorFlow model that
// formats/tensorflow reads: a folder holding saved_model.pb, a .meta
// checkpoint graph, or a .pb file (a GraphDef or a SavedModel).
func looksLikeTensorFlow(path string) bool {
	st, err := os.Stat(path)
	if err != nil {
		return false
	}
	if st.IsDir() {
		in, err := os.Lstat(filepath.Join(path, "saved_model.pb"))
		return err == nil && in.Mode().IsRegular()
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".pb", ".meta":
		return st.Mode().IsRegular()
	}
	return false
}

// tfjsOps is the set of ops TF.js's graph-model executor runs.
func tfjsOps() map[string]bool {
	ops := tensorflow.TFJSOps()
	m := make(map[string]bool, len(ops))
	for _, o := range ops {
		m[o.Op] = true
	}
	return m
}

// writeTensorFlowAsTFJS reads the TensorFlow model at path with
// formats/tensorflow (the reader importers/tensorflow uses: variables
// frozen into Const nodes) and writes it into dir as a TF.js graph model,
// as tensorflowjs_converter lays one out: model.json with format
// "graph-model", modelTopology the GraphDef in protobuf JSON without the
// Const values, a weights manifest naming each Const node (those of
// library functions too, where TF.js's function executor looks them up)
// and weights.bin holding their data (float32, int32 or bool, as TF.js
// holds tensors), and a signature naming the inputs and outputs. The
// graph is the one the importer chose (the signature, or the tensors the
// graph is cut at: tf.options), else the SavedModel's serving_default; for
// a file without a signature (a GraphDef, a checkpoint) the tensors named
// by tf's inputs and outputs (the imported model's names, NAME for
// NAME:0), else TF.js's own choice (the Placeholders and the nodes nothing
// reads). Placeholders lose their
// shape attr: TensorFlow does not check a fed tensor against it, and
// neither does the written model. Each output is read
// through an Identity node of its own, so that an output other than a
// node's first is computed as itself. Ops TF.js lacks are one
// *unsupported.OpsError naming every one. It returns model.json's path.
func writeTensorFlowAsTFJS(ctx context.Context, path, dir string, tf graphChoice) (string, error) {
	var o tensorflow.Options
	if tf.options != "" {
		var err error
		if o, err = tensorflow.UnmarshalOptions(tf.options); err != nil {
			return "", &TensorFlowError{Model: path, Err: err}
		}
	}
	g, err := tensorflow.Load(ctx, path, o)
	var se *tensorflow.SignatureError
	if errors.As(err, &se) && len(tf.inputs) > 0 && len(tf.outputs) > 0 {
		g, err = tensorflow.Load(ctx, path, tensorflow.Options{Inputs: named(tf.inputs), Outputs: named(tf.outputs)})
	}
	if err != nil {
		return "", &TensorFlowError{Model: path, Err: err}
	}
	if g.Kind == tensorflow.KindGraphDef && g.Outputs == nil && len(tf.outputs) > 0 && hasNodes(g.Nodes, tf.inputs) && hasNodes(g.Nodes, tf.outputs) {
		g.Inputs, g.Outputs = named(tf.inputs), named(tf.outputs)
	}
	lib := usedFunctions(g.Nodes, g.Library)
	if err := checkTFJSOps(path, g.Nodes, lib); err != nil {
		return "", err
	}
	gd := &tfpb.GraphDef{Versions: &tfpb.VersionDef{Producer: 1}}
	for _, nd := range g.Nodes {
		c := proto.Clone(nd).(*tfpb.NodeDef)
		if c.GetOp() == "Placeholder" {
			// TensorFlow runs a fed tensor whatever its placeholder's
			// shape attr says (a tf.function traced on scalars computes
			// vectors); TF.js would refuse it.
			delete(c.Attr, "shape")
		}
		gd.Node = append(gd.Node, c)
	}
	if len(lib) > 0 {
		gd.Library = &tfpb.FunctionDefLibrary{}
		for _, fd := range lib {
			gd.Library.Function = append(gd.Library.Function, proto.Clone(fd).(*tfpb.FunctionDef))
		}
	}
	var bin bytes.Buffer
	var weights []map[string]any
	moveConsts := func(nodes []*tfpb.NodeDef) error {
		for _, nd := range nodes {
			if nd.GetOp() != "Const" {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			t, err := tensorflow.TensorFromProto(g.File, nd.GetName(), nd.GetAttr()["value"].GetTensor())
			if err != nil {
				return err
			}
			w, raw, err := constToWire(t)
			if err != nil {
				return fmt.Errorf("node %q: %w", nd.GetName(), err)
			}
			bin.Write(raw)
			weights = append(weights, map[string]any{"name": nd.GetName(), "shape": w.Shape, "dtype": w.DType})
			delete(nd.Attr, "value")
		}
		return nil
	}
	if err := moveConsts(gd.Node); err != nil {
		return "", &TensorFlowError{Model: path, Err: err}
	}
	for _, fd := range gd.GetLibrary().GetFunction() {
		if err := moveConsts(fd.GetNodeDef()); err != nil {
			return "", &TensorFlowError{Model: path, Err: fmt.Errorf("function %q: %w", fd.GetSignature().GetName(), err)}
		}
	}
	sig, err := signature(gd, g)
	if err != nil {
		return "", &TensorFlowError{Model: path, Err: err}
	}
	topo, err := protojson.Marshal(gd)
	if err != nil {
		return "", &TensorFlowError{Model: path, Err: err}
	}
	if weights == nil {
		weights = []map[string]any{}
	}
	model := map[string]any{
		"format":          "graph-model",
		"generatedBy":     "TensorFlow (" + g.Kind + ")",
		"convertedBy":     "onnxconv runtimes/tfjs",
		"modelTopology":   json.RawMessage(topo),
		"weightsManifest": []any{map[string]any{"paths": []string{"weights.bin"}, "weights": weights}},
	}
	if sig != nil {
		model["signature"] = sig
	}
	mj, err := json.Marshal(model)
	if err != nil {
		return "", &TensorFlowError{Model: path, Err: err}
	}
	if err := os.WriteFile(filepath.Join(dir, "weights.bin"), bin.Bytes(), 0o600); err != nil {
		return "", fmt.Errorf("tfjs runtime: %s: %w", path, err)
	}
	p := filepath.Join(dir, "model.json")
	if err := os.WriteFile(p, mj, 0o600); err != nil {
		return "", fmt.Errorf("tfjs runtime: %s: %w", path, err)
	}
	return p, nil
}

// graphChoice says which graph of a TensorFlow model to run: options is
// the tensorflow.Options the importer loaded it with (the model metadata
// under tensorflow.OptionsKey, "" when absent); inputs and outputs are the
// imported model's input and output names, read as tensors (NAME:0) for a
// graph whose choice is not recorded and that has no signature.
type graphChoice struct {
	inputs, outputs []string
	options         string
}

// named reads the imported model's input or output names as TF tensors
// (NAME is NAME:0).
func named(names []string) []tensorflow.IO {
	out := make([]tensorflow.IO, len(names))
	for i, n := range names {
		out[i] = tensorflow.IO{Name: n, Tensor: n}
	}
	return out
}

// hasNodes tells whether every name is a node of nodes.
func hasNodes(nodes []*tfpb.NodeDef, names []string) bool {
	have := make(map[string]bool, len(nodes))
	for _, nd := range nodes {
		have[nd.GetName()] = true
	}
	for _, n := range names {
		if !have[strings.Split(n, ":")[0]] {
			return false
		}
	}
	return true
}

// usedFunctions returns the library functions that nodes call, directly
// or through other functions, in the library's order.
func usedFunctions(nodes []*tfpb.NodeDef, lib *tfpb.FunctionDefLibrary) []*tfpb.FunctionDef {
	byName := map[string]*tfpb.FunctionDef{}
	for _, fd := range lib.GetFunction() {
		byName[fd.GetSignature().GetName()] = fd
	}
	used := map[string]bool{}
	var visit func(nodes []*tfpb.NodeDef)
	visit = func(nodes []*tfpb.NodeDef) {
		for _, nd := range nodes {
			for _, av := range nd.GetAttr() {
				names := []string{av.GetFunc().GetName()}
				for _, f := range av.GetList().GetFunc() {
					names = append(names, f.GetName())
				}
				for _, n := range names {
					if fd := byName[n]; fd != nil && !used[n] {
						used[n] = true
						visit(fd.GetNodeDef())
					}
				}
			}
		}
	}
	visit(nodes)
	var out []*tfpb.FunctionDef
	for _, fd := range lib.GetFunction() {
		if used[fd.GetSignature().GetName()] {
			out = append(out, fd)
		}
	}
	return out
}

// checkTFJSOps names, at once, every op of the graph and its functions
// that TF.js's graph-model executor does not run (tensorflow.TFJSOps).
func checkTFJSOps(path string, nodes []*tfpb.NodeDef, lib []*tfpb.FunctionDef) error {
	have := tfjsOps()
	errs := &unsupported.OpsError{Format: RuntimeName, Stage: unsupported.StageRun, File: path,
		Hint: "TF.js " + tensorflow.TFJSVersion + " has no kernel for these ops, so it cannot compute this TensorFlow model as the reference"}
	check := func(nodes []*tfpb.NodeDef) {
		for _, nd := range nodes {
			if !have[nd.GetOp()] {
				errs.Add(nd.GetOp(), nd.GetName(), "")
			}
		}
	}
	check(nodes)
	for _, fd := range lib {
		check(fd.GetNodeDef())
	}
	return errs.Err()
}

// constToWire converts a constant to what a TF.js weight holds (toWire's
// conversions: float32, int32 checked for range, bool).
func constToWire(t *canonical.Tensor) (wireTensor, []byte, error) {
	tp, err := canonical.TensorToProto(t)
	if err != nil {
		return wireTensor{}, nil, err
	}
	return toWire(tp)
}

// signature is the model.json signature for g's inputs and outputs (nil
// when g leaves them to TF.js): each input by its tensor; each output
// through an Identity node added to gd, named onnxconv_output/K, that
// reads the output's tensor. JSON objects keep the order written, which
// TF.js follows for its inputs and outputs.
func signature(gd *tfpb.GraphDef, g *tensorflow.Graph) (json.RawMessage, error) {
	if g.Inputs == nil && g.Outputs == nil {
		return nil, nil
	}
	var b bytes.Buffer
	entry := func(key, tensor string) error {
		k, err := json.Marshal(key)
		if err != nil {
			return err
		}
		v, err := json.Marshal(map[string]string{"name": tensor})
		if err != nil {
			return err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
		return nil
	}
	b.WriteString(`{"inputs":{`)
	for i, io := range g.Inputs {
		if i > 0 {
			b.WriteByte(',')
		}
		t := io.Tensor
		if !strings.Contains(t, ":") {
			t += ":0"
		}
		if err := entry(io.Name, t); err != nil {
			return nil, err
		}
	}
	b.WriteString(`},"outputs":{`)
	names := map[string]bool{}
	for _, nd := range gd.GetNode() {
		names[nd.GetName()] = true
	}
	for i, io := range g.Outputs {
		if i > 0 {
			b.WriteByte(',')
		}
		id := fmt.Sprintf("onnxconv_output/%d", i)
		for names[id] {
			id += "_"
		}
		names[id] = true
		in := io.Tensor
		if base, idx, ok := strings.Cut(in, ":"); ok && idx == "0" {
			in = base
		}
		gd.Node = append(gd.Node, &tfpb.NodeDef{Name: id, Op: "Identity", Input: []string{in}})
		if err := entry(io.Name, id+":0"); err != nil {
			return nil, err
		}
	}
	b.WriteString(`}}`)
	if !json.Valid(b.Bytes()) {
		return nil, errors.New("signature: not valid JSON")
	}
	return slices.Clip(b.Bytes()), nil
}
