// Package tensorflow imports TensorFlow frozen GraphDef (.pb) files and
// SavedModel folders (saved_model.pb + variables/ tensor bundle) into
// canonical ONNX models. TF ops are mapped by importers/tfops, the one
// TF-op mapping of onnxconv; this package reads the protobufs (package
// tfpb, generated from TensorFlow 2.15's .proto files), picks the graph
// and signature, restores variables from the tensor bundle as constants,
// and refuses TF1 Switch/Merge control flow with a clear error.
package tensorflow

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/tensorflow/tfpb"
	"github.com/onnxconv/onnxconv/importers/tfops"
	"github.com/onnxconv/onnxconv/options"
)

// Name is the importer and format name.
const Name = "tensorflow"

// MaxFileSize bounds saved_model.pb and frozen .pb files (protobuf's
// 2 GiB limit).
const MaxFileSize = 2 << 30

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
	}}
}

// Describe names the format "tensorflow" (.pb files; a SavedModel is given
// as its folder or its saved_model.pb).
func (importer) Describe() importers.Description {
	return importers.Description{
		Name:       Name,
		Format:     Name,
		Summary:    "TensorFlow frozen GraphDef (.pb), SavedModel (folder or saved_model.pb, variables/ bundle) or TF1 checkpoint (.meta beside its .index/.data bundle; -O inputs=/outputs= name the tensors)",
		Extensions: []string{".pb", ".meta"},
		Options:    optionSet().Specs(),
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
	if len(head) >= 5 && head[0] == 0x08 && head[1] == 0x01 && head[2] == 0x12 {
		// varint length of the MetaGraphDef, then its meta_info_def (field 1)
		i := 3
		for i < len(head) && i < 8 && head[i]&0x80 != 0 {
			i++
		}
		if i+1 < len(head) && head[i+1] == 0x0a {
			return 0.9
		}
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

// ParseOptions reads "signature", "opset", "inputs" and "outputs"; an
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

// ImportFile converts the GraphDef or SavedModel at path to ONNX.
func ImportFile(ctx context.Context, path string, o Options) (*canonical.Model, error) {
	file := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		file = filepath.Join(path, "saved_model.pb")
	}
	data, err := importers.ReadFile(file, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("%s import: %w", Name, err)
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
		return savedModel(ctx, file, &tfpb.SavedModel{MetaGraphs: []*tfpb.MetaGraphDef{&mg}}, strings.TrimSuffix(file, ".meta"), o)
	}
	if detect(data) >= 0.9 || filepath.Base(file) == "saved_model.pb" {
		var sm tfpb.SavedModel
		if err := proto.Unmarshal(data, &sm); err != nil {
			return nil, &FormatError{File: file, What: fmt.Sprintf("not a SavedModel protobuf: %v", err)}
		}
		return savedModel(ctx, file, &sm, filepath.Join(filepath.Dir(file), "variables", "variables"), o)
	}
	var gd tfpb.GraphDef
	if err := proto.Unmarshal(data, &gd); err != nil {
		return nil, &FormatError{File: file, What: fmt.Sprintf("not a GraphDef protobuf: %v", err)}
	}
	nodes, err := neutralNodes(file, gd.GetNode(), true)
	if err != nil {
		return nil, err
	}
	if len(gd.GetLibrary().GetFunction()) > 0 {
		if nodes, _, err = inline(file, nodes, gd.GetLibrary()); err != nil {
			return nil, err
		}
	}
	lib, err := functions(file, gd.GetLibrary(), nodes)
	if err != nil {
		return nil, err
	}
	return convert(file, &tfops.Graph{Nodes: nodes, Name: filepath.Base(file), Functions: lib, Inputs: o.Inputs, Outputs: o.Outputs}, o)
}

func convert(file string, g *tfops.Graph, o Options) (*canonical.Model, error) {
	mp, err := tfops.Convert(g, tfops.Options{Opset: o.Opset, File: file, Warn: o.Warn})
	if err != nil {
		return nil, err
	}
	return mp, nil
}
