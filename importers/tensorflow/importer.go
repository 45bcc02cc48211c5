// Package tensorflow imports TensorFlow frozen GraphDef (.pb) files,
// SavedModel folders (saved_model.pb + variables/ tensor bundle) and TF1
// checkpoints (.meta) into canonical ONNX models. formats/tensorflow reads
// the file (protobuf code tfpb, generated from TensorFlow 2.15's .proto
// files), picks the graph and signature, restores variables from the
// tensor bundle as constants and inlines function calls; TF ops are mapped
// by importers/tfops, the one TF-op mapping of onnxconv; TF1 Switch/Merge
// control flow it cannot recover is refused with a clear error. Its
// reference runtime is tfjs (runtimes/tfjs runs the same frozen graph as a
// TF.js graph model).
package tensorflow

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/onnxconv/onnxconv/canonical"
	tftf "github.com/onnxconv/onnxconv/formats/tensorflow"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/custom"
	"github.com/onnxconv/onnxconv/importers/tfops"
	"github.com/onnxconv/onnxconv/options"
)

// Name is the importer and format name.
const Name = "tensorflow"

// MaxFileSize bounds saved_model.pb, .meta and frozen .pb files.
const MaxFileSize = tftf.MaxFileSize

// Options are the importer options.
type Options struct {
	// Signature is the SavedModel signature (default serving_default).
	Signature string
	// Opset is the ai.onnx opset (0: tfops's default).
	Opset int
	// Inputs and Outputs, when set, replace the graph's (a GraphDef's
	// Placeholders and unread nodes, a SavedModel signature's): the
	// graph is cut at the named tensors (tfops.ParseTensors).
	Inputs, Outputs []tfops.IO
	// Custom is an ONNX file of functions defining TF ops the mapping
	// lacks (docs/custom.md), named after the op.
	Custom string
	// Warn, when set, receives the conversion's warnings.
	Warn func(string)
}

// New returns the TensorFlow importer.
func New() importers.Importer { return importer{} }

type importer struct{}

// optionSet is every option of the importer, with its parser.
func optionSet() importers.OptionSet[Options] {
	return importers.OptionSet[Options]{Name: Name, Options: []importers.Option[Options]{
		options.String("signature", "serving_default", "SavedModel signature to convert", func(o *Options) *string { return &o.Signature }),
		options.Int("opset", "", "ai.onnx opset of the result (default: the TF-op mapping's)", func(o *Options) *int { return &o.Opset }).AtLeast(13),
		tfops.TensorsOption("inputs", "graph inputs, TF tensor names NAME:0,… (the graph is cut there, as tf2onnx --inputs; default the Placeholders or the signature's)",
			func(o *Options) *[]tfops.IO { return &o.Inputs }),
		tfops.TensorsOption("outputs", "graph outputs, TF tensor names NAME:0,… (as tf2onnx --outputs; default the unread nodes or the signature's)",
			func(o *Options) *[]tfops.IO { return &o.Outputs }),
		custom.Option(func(o *Options) *string { return &o.Custom }),
	}}
}

// Describe names the format "tensorflow" (.pb files; a SavedModel is given
// as its folder or its saved_model.pb).
func (importer) Describe() importers.Description {
	return importers.Description{
		Name:        Name,
		Format:      Name,
		Summary:     "TensorFlow frozen GraphDef (.pb), SavedModel (folder or saved_model.pb, variables/ bundle) or TF1 checkpoint (.meta beside its .index/.data bundle; -O inputs=/outputs= name the tensors)",
		Extensions:  []string{".pb", ".meta"},
		FolderFiles: []string{"saved_model.pb"},
		Runtime:     "tfjs", // runtimes/tfjs runs the graph, written as a TF.js graph model
		Options:     optionSet().Specs(),
	}
}

// Detect looks at the protobuf content: a SavedModel starts with
// saved_model_schema_version = 1 and a MetaGraphDef; a GraphDef with a
// NodeDef whose name and op are printable.
func (importer) Detect(path string, head []byte) float32 {
	if filepath.Ext(path) == ".meta" && len(head) > 2 && head[0] == 0x0a {
		return 0.7 // a MetaGraphDef: meta_info_def (field 1) first
	}
	return detect(head)
}

func detect(head []byte) float32 {
	if tftf.IsSavedModel(head) {
		return 0.9
	}
	// GraphDef: node (field 1) { name (1) ... op (2) ... }
	c := head
	if len(c) < 4 || c[0] != 0x0a {
		return 0
	}
	_, n := uvarint(c[1:])
	if n == 0 || 1+n >= len(c) || c[1+n] != 0x0a {
		return 0
	}
	c = c[1+n+1:]
	l, n := uvarint(c)
	if n == 0 || l == 0 || l > 1000 || uint64(len(c)-n) < l {
		return 0
	}
	if !printable(c[n : n+int(l)]) {
		return 0
	}
	c = c[n+int(l):]
	if len(c) < 3 || c[0] != 0x12 {
		return 0
	}
	l, n = uvarint(c[1:])
	if n == 0 || l == 0 || l > 200 || uint64(len(c)-1-n) < l || !printable(c[1+n:1+n+int(l)]) {
		return 0
	}
	return 0.8
}

// uvarint decodes a varint: the value and the bytes used (0 if none).
func uvarint(b []byte) (uint64, int) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, 0
	}
	return v, n
}

func printable(b []byte) bool {
	for _, x := range b {
		if x < 0x20 || x > 0x7e {
			return false
		}
	}
	return true
}

// ParseOptions reads "signature", "opset", "inputs", "outputs" and "custom"; an
// unknown key or a bad value is an *importers.OptionError.
func ParseOptions(m map[string]string) (Options, error) { return optionSet().Parse(m) }

// Import reads a frozen GraphDef file, a SavedModel folder, or a
// saved_model.pb (whose folder holds variables/).
func (importer) Import(ctx context.Context, path string, opts importers.Options) (*importers.Result, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	var warnings []string
	o.Warn = func(w string) { warnings = append(warnings, w) }
	mp, err := ImportFile(ctx, path, o)
	if err != nil {
		return nil, err
	}
	return &importers.Result{Model: mp, Warnings: warnings}, nil
}

// ImportFile converts the GraphDef, SavedModel or checkpoint at path to
// ONNX: formats/tensorflow reads it, frozen (variables as constants,
// function calls inlined), and tfops maps its ops.
func ImportFile(ctx context.Context, path string, o Options) (*canonical.Model, error) {
	lo := tftf.Options{Signature: o.Signature, Inputs: ios(o.Inputs), Outputs: ios(o.Outputs)}
	fg, err := tftf.Load(ctx, path, lo)
	var se *tftf.SignatureError
	if errors.As(err, &se) {
		return nil, &importers.OptionError{Importer: Name, Key: "signature", Value: se.Want, Known: options.Names(optionSet().Specs()),
			Err: fmt.Errorf("%w; choose one with -O signature=NAME, or name the graph's tensors with -O inputs=NAME:0,… -O outputs=NAME:0,…", se)}
	}
	if err != nil {
		return nil, fmt.Errorf("%s import: %w", Name, err)
	}
	file := fg.File
	nodes, err := neutralNodes(file, fg.Nodes, true)
	if err != nil {
		return nil, err
	}
	lib, err := functions(file, fg.Library, nodes)
	if err != nil {
		return nil, err
	}
	g := &tfops.Graph{Nodes: nodes, Name: filepath.Base(file), Functions: lib}
	if fg.Kind != tftf.KindGraphDef {
		g.Name = o.Signature
		if g.Name == "" {
			g.Name = "serving_default"
		}
	}
	for _, io := range fg.Inputs {
		g.Inputs = append(g.Inputs, tfops.IO{Name: io.Name, Tensor: io.Tensor})
	}
	for _, io := range fg.Outputs {
		g.Outputs = append(g.Outputs, tfops.IO{Name: io.Name, Tensor: io.Tensor})
	}
	m, err := convert(file, g, o)
	if err != nil {
		return nil, err
	}
	if fg.Chosen != "" {
		// The inference part of a training graph: the reference runtime
		// computes the same cut, and the summary says why.
		lo.Inputs, lo.Outputs = fg.Inputs, fg.Outputs
		importers.AddNote(m, fg.Chosen)
	}
	// The graph chosen, for the reference runtime (runtimes/tfjs).
	v, err := tftf.MarshalOptions(lo)
	if err != nil {
		m.Close()
		return nil, err
	}
	m.MetadataProps = append(m.MetadataProps, canonical.StringPair{Key: tftf.OptionsKey, Value: v})
	return m, nil
}

// ios converts tfops's IOs to formats/tensorflow's (nil stays nil).
func ios(in []tfops.IO) []tftf.IO {
	if in == nil {
		return nil
	}
	out := make([]tftf.IO, len(in))
	for i, io := range in {
		out[i] = tftf.IO{Name: io.Name, Tensor: io.Tensor}
	}
	return out
}

func convert(file string, g *tfops.Graph, o Options) (*canonical.Model, error) {
	var cs *custom.Set
	if o.Custom != "" {
		var err error
		if cs, err = custom.Load(o.Custom); err != nil {
			return nil, err
		}
	}
	mp, err := tfops.Convert(g, tfops.Options{Opset: o.Opset, File: file, Warn: o.Warn, Custom: cs})
	if err != nil {
		return nil, err
	}
	return mp, nil
}
