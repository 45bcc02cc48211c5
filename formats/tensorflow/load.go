package tensorflow

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/formats/tensorflow/tfpb"
	"github.com/onnxconv/onnxconv/fsys"
)

// MaxFileSize bounds saved_model.pb, .meta and frozen .pb files (protobuf's
// 2 GiB limit) and a bundle's index.
const MaxFileSize = 2 << 30

// The kinds of TensorFlow file Load reads.
const (
	KindGraphDef   = "graphdef"   // a frozen GraphDef (.pb)
	KindSavedModel = "savedmodel" // a SavedModel (folder or saved_model.pb)
	KindCheckpoint = "checkpoint" // a TF1 checkpoint's MetaGraphDef (.meta)
)

// IO is one input or output of a graph: the name it is known by (a
// signature's key, or the tensor's name without ":0") and the TF tensor
// ("NAME:0", or "NAME" for output 0).
type IO struct {
	Name   string `json:"name"`
	Tensor string `json:"tensor"`
}

// Options choose what Load returns.
type Options struct {
	// Signature is the SavedModel or meta graph signature ("":
	// serving_default).
	Signature string `json:"signature,omitempty"`
	// Inputs and Outputs, when set, replace the signature's (a
	// SavedModel's or checkpoint's graph is cut at them) or, for a
	// GraphDef, are its inputs and outputs.
	Inputs  []IO `json:"inputs,omitempty"`
	Outputs []IO `json:"outputs,omitempty"`
}

// OptionsKey is the model metadata key under which importers/tensorflow
// records the Options it loaded the graph with (JSON), so that the
// reference runtime computes the same graph (the same signature, or the
// same cut).
const OptionsKey = "onnxconv.tensorflow.graph"

// MarshalOptions is o as OptionsKey's value.
func MarshalOptions(o Options) (string, error) {
	b, err := json.Marshal(o)
	return string(b), err
}

// UnmarshalOptions reads OptionsKey's value.
func UnmarshalOptions(v string) (Options, error) {
	var o Options
	if err := json.Unmarshal([]byte(v), &o); err != nil {
		return Options{}, fmt.Errorf("metadata %s: %w", OptionsKey, err)
	}
	return o, nil
}

// Graph is a TensorFlow model's graph, frozen.
type Graph struct {
	// File is the protobuf file read (saved_model.pb for a SavedModel
	// folder).
	File string
	// Kind is KindGraphDef, KindSavedModel or KindCheckpoint.
	Kind string
	// Nodes are the graph's nodes: for a SavedModel or checkpoint only
	// those the outputs need (and the inputs), with each variable
	// replaced by a Const node of the same name holding its value; calls
	// of library functions (PartitionedCall, StatefulPartitionedCall)
	// are inlined and ReadVariableOp is Identity (Inline).
	Nodes []*tfpb.NodeDef
	// Library holds the graph's functions (nil when none).
	Library *tfpb.FunctionDefLibrary
	// Inputs and Outputs are the signature's, sorted by key, or the
	// options'; nil for a GraphDef without options (its Placeholders
	// and the nodes nothing reads).
	Inputs, Outputs []IO
	// Variables names the Const nodes that were variables.
	Variables []string
	// Chosen, when set, says which inputs and outputs Load chose for a
	// graph that names none and why (the inference part of a training
	// graph: one line).
	Chosen string
}

// Load reads the TensorFlow model at path: a frozen GraphDef file, a
// SavedModel folder or its saved_model.pb (whose folder holds variables/),
// or a TF1 checkpoint's .meta (its bundle beside it: model.index,
// model.data-*). Errors are *FormatError, *SignatureError or an
// *unsupported.OpsError.
func Load(ctx context.Context, path string, o Options) (*Graph, error) {
	file := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		file = filepath.Join(path, "saved_model.pb")
	}
	data, err := fsys.ReadFile(file, MaxFileSize)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if filepath.Ext(file) == ".meta" {
		// A TF1 checkpoint: the MetaGraphDef, its variables in the bundle
		// beside it (model.meta, model.index, model.data-*).
		var mg tfpb.MetaGraphDef
		if err := proto.Unmarshal(data, &mg); err != nil {
			return nil, &FormatError{File: file, What: fmt.Sprintf("not a MetaGraphDef protobuf: %v", err)}
		}
		g, err := frozen(file, &tfpb.SavedModel{MetaGraphs: []*tfpb.MetaGraphDef{&mg}}, strings.TrimSuffix(file, ".meta"), o)
		if g != nil {
			g.Kind = KindCheckpoint
		}
		return g, err
	}
	if IsSavedModel(data) || filepath.Base(file) == "saved_model.pb" {
		var sm tfpb.SavedModel
		if err := proto.Unmarshal(data, &sm); err != nil {
			return nil, &FormatError{File: file, What: fmt.Sprintf("not a SavedModel protobuf: %v", err)}
		}
		return frozen(file, &sm, filepath.Join(filepath.Dir(file), "variables", "variables"), o)
	}
	var gd tfpb.GraphDef
	if err := proto.Unmarshal(data, &gd); err != nil {
		return nil, &FormatError{File: file, What: fmt.Sprintf("not a GraphDef protobuf: %v", err)}
	}
	g := &Graph{File: file, Kind: KindGraphDef, Nodes: gd.GetNode(), Library: gd.GetLibrary(), Inputs: o.Inputs, Outputs: slices.Clone(o.Outputs)}
	if len(g.Library.GetFunction()) > 0 {
		if err := g.inline(); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// IsSavedModel tells whether head starts a SavedModel protobuf:
// saved_model_schema_version = 1, then a MetaGraphDef whose meta_info_def
// (field 1) comes first.
func IsSavedModel(head []byte) bool {
	if len(head) < 5 || head[0] != 0x08 || head[1] != 0x01 || head[2] != 0x12 {
		return false
	}
	// varint length of the MetaGraphDef, then its meta_info_def (field 1)
	i := 3
	for i < len(head) && i < 8 && head[i]&0x80 != 0 {
		i++
	}
	return i+1 < len(head) && head[i+1] == 0x0a
}

// Limits on what a SavedModel may hold.
const maxNodes = 1 << 20

// frozen returns the serving meta graph of sm cut at its signature (or the
// options' tensors), its variables read from the tensor bundle varPrefix
// (.index, .data-*) into Const nodes.
func frozen(file string, sm *tfpb.SavedModel, varPrefix string, o Options) (*Graph, error) {
	var mg *tfpb.MetaGraphDef
	for _, m := range sm.GetMetaGraphs() {
		if slices.Contains(m.GetMetaInfoDef().GetTags(), "serve") {
			mg = m
			break
		}
	}
	if mg == nil {
		if len(sm.GetMetaGraphs()) == 0 {
			return nil, &FormatError{File: file, What: "the SavedModel holds no meta graph"}
		}
		mg = sm.GetMetaGraphs()[0]
	}
	sigName := o.Signature
	if sigName == "" {
		sigName = "serving_default"
	}
	g := &Graph{File: file, Kind: KindSavedModel, Library: mg.GetGraphDef().GetLibrary()}
	sig, ok := mg.GetSignatureDef()[sigName]
	if !ok && o.Inputs == nil && o.Outputs == nil && (o.Signature == "" || o.Signature == "serving_default") && len(mg.GetSignatureDef()) == 0 && filepath.Ext(file) == ".meta" {
		// A TF1 checkpoint without signatures: its graph names what it
		// computes when it does not train.
		ins, outs, training := graphIO(mg.GetGraphDef())
		switch {
		case len(ins) == 0 || len(outs) == 0:
			return nil, &SignatureError{File: file, Want: sigName, Placeholders: ins, Unread: outs, Training: training}
		case training:
			// A training graph: its inference part, when the graph
			// tells which Placeholders are labels.
			tin, tout, why, ok := inferenceIO(mg.GetGraphDef(), outs)
			if !ok {
				return nil, &SignatureError{File: file, Want: sigName, Placeholders: ins, Unread: outs, Training: training}
			}
			o.Inputs, o.Outputs, g.Chosen = tin, tout, why
		default:
			o.Inputs, o.Outputs = nil, nil
			for _, n := range ins {
				o.Inputs = append(o.Inputs, IO{Name: n, Tensor: n + ":0"})
			}
			for _, n := range outs {
				o.Outputs = append(o.Outputs, IO{Name: n, Tensor: n + ":0"})
			}
		}
	}
	if !ok && (o.Inputs == nil || o.Outputs == nil) {
		return nil, &SignatureError{File: file, Want: sigName, Have: slices.Sorted(maps.Keys(mg.GetSignatureDef()))}
	}
	for _, k := range slices.Sorted(maps.Keys(sig.GetInputs())) {
		g.Inputs = append(g.Inputs, IO{Name: k, Tensor: sig.GetInputs()[k].GetName()})
	}
	for _, k := range slices.Sorted(maps.Keys(sig.GetOutputs())) {
		g.Outputs = append(g.Outputs, IO{Name: k, Tensor: sig.GetOutputs()[k].GetName()})
	}
	if o.Inputs != nil {
		g.Inputs = o.Inputs
	}
	if o.Outputs != nil {
		g.Outputs = slices.Clone(o.Outputs)
	}
	gd := mg.GetGraphDef()
	if len(gd.GetNode()) > maxNodes {
		return nil, &FormatError{File: file, What: fmt.Sprintf("%d nodes, more than %d", len(gd.GetNode()), maxNodes)}
	}
	vars, err := readVariables(file, varPrefix)
	if err != nil {
		return nil, err
	}
	defer vars.close()
	// Variables: TF1 VariableV2 by node name; TF2 VarHandleOp captured by
	// a signature call, by the checkpoint key of the bound object.
	bound := map[string]string{} // VarHandleOp node name -> checkpoint key
	if og := mg.GetObjectGraphDef(); og != nil && vars != nil {
		keys, err := vars.objectKeys()
		if err != nil {
			return nil, err
		}
		for _, nd := range gd.GetNode() {
			fn := nd.GetAttr()["f"].GetFunc().GetName()
			cf, ok := og.GetConcreteFunctions()[fn]
			if !ok {
				continue
			}
			var ins []string
			for _, in := range nd.GetInput() {
				if !strings.HasPrefix(in, "^") {
					ins = append(ins, strings.Split(in, ":")[0])
				}
			}
			bi := cf.GetBoundInputs()
			if len(bi) > len(ins) {
				continue
			}
			for i, id := range bi {
				if k, ok := keys[id]; ok {
					bound[ins[len(ins)-len(bi)+i]] = k
				}
			}
		}
	}
	// Keep only what the signature's outputs need (the saver's string
	// constants and unrelated signatures are left out).
	byName := map[string]*tfpb.NodeDef{}
	for _, nd := range gd.GetNode() {
		byName[nd.GetName()] = nd
	}
	need := map[string]bool{}
	var stack []string
	for _, io := range g.Outputs {
		stack = append(stack, strings.Split(io.Tensor, ":")[0])
	}
	// The inputs are kept, read or not (a signature may name redundant
	// inputs), and the graph is cut there.
	for _, io := range g.Inputs {
		need[strings.Split(io.Tensor, ":")[0]] = true
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if need[n] || byName[n] == nil {
			continue
		}
		need[n] = true
		for _, in := range byName[n].GetInput() {
			if !strings.HasPrefix(in, "^") {
				stack = append(stack, strings.Split(in, ":")[0])
			}
		}
	}
	g.Nodes = make([]*tfpb.NodeDef, 0, len(need))
	for _, nd := range gd.GetNode() {
		if !need[nd.GetName()] {
			continue
		}
		switch nd.GetOp() {
		case "VariableV2", "VarHandleOp", "Variable":
			key := nd.GetName()
			if k, ok := bound[key]; ok {
				key = k
			} else if s := nd.GetAttr()["shared_name"].GetS(); len(s) > 0 && vars.has(string(s)) {
				key = string(s)
			}
			t, err := vars.tensor(key)
			if err != nil {
				return nil, fmt.Errorf("%s: variable %q: %w", file, nd.GetName(), err)
			}
			g.Nodes = append(g.Nodes, &tfpb.NodeDef{Name: nd.GetName(), Op: "Const", Attr: map[string]*tfpb.AttrValue{
				"dtype": {Value: &tfpb.AttrValue_Type{Type: t.GetDtype()}},
				"value": {Value: &tfpb.AttrValue_Tensor{Tensor: t}},
			}})
			g.Variables = append(g.Variables, nd.GetName())
			continue
		}
		g.Nodes = append(g.Nodes, nd)
	}
	if err := g.inline(); err != nil {
		return nil, err
	}
	return g, nil
}

// inline inlines g's function calls (Inline) and resolves its outputs
// through them.
func (g *Graph) inline() error {
	nodes, resolve, err := Inline(g.File, g.Nodes, g.Library)
	if err != nil {
		return err
	}
	g.Nodes = nodes
	for i := range g.Outputs {
		g.Outputs[i].Tensor = resolve(g.Outputs[i].Tensor)
	}
	return nil
}

func joinOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
