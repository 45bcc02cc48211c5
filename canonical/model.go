// Package canonical holds onnxconv's in-memory ONNX model: a use-def graph
// of Nodes and Values, with lazily loaded tensors, that converts to and from
// the ONNX protobuf messages (package onnxpb) without losing anything.
//
// Every importer produces this model, the opset adapter rewrites it, the
// executor runs it and the exporters write it. It knows no framework but
// ONNX and runs nothing.
//
// Losslessness: each canonical object that mirrors a protobuf message keeps
// a "shell" — the message as read, with the fields that canonical models
// structurally cleared. The shell carries unknown fields and the presence of
// optional fields, so ToProto(FromProto(m)) is proto.Equal to m.
package canonical

import (
	"sync"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// DefaultDomain is the operator set domain of the core ONNX operators; the
// empty string and "ai.onnx" both name it.
const DefaultDomain = ""

// MLDomain is the domain of the classical machine-learning operators.
const MLDomain = "ai.onnx.ml"

// OpsetID is one entry of a model's (or function's) opset_import list.
type OpsetID struct {
	Domain  string
	Version int64
	shell   *onnxpb.OperatorSetIdProto
}

// StringPair is one metadata_props entry.
type StringPair struct {
	Key, Value string
	shell      *onnxpb.StringStringEntryProto
}

// Model is a whole ONNX model.
type Model struct {
	IRVersion       int64
	OpsetImports    []OpsetID
	ProducerName    string
	ProducerVersion string
	Domain          string
	ModelVersion    int64
	DocString       string
	Graph           *Graph
	Functions       []*Function
	MetadataProps   []StringPair

	// TrainingInfo and Configuration are kept as protobuf messages: onnxconv
	// carries them through unchanged.
	TrainingInfo  []*onnxpb.TrainingInfoProto
	Configuration []*onnxpb.DeviceConfigurationProto

	// Dir is the folder external data locations are relative to ("" for a
	// model that was not read from a file).
	Dir string

	shell *onnxpb.ModelProto
	// own holds the mappings and files the model's tensors may alias,
	// shared with the model's clones (see Clone); nil when there are none.
	own *owner
	// closed is set by Close.
	closed bool
	// ext maps the external data files of a model read from a folder.
	ext *extFiles
	// src is the mapped model file of a model read by Load.
	src *mappedSource
}

// Opset returns the version of domain imported by the model, or 0 when the
// model does not import it. "" and "ai.onnx" are the same domain.
func (m *Model) Opset(domain string) int64 {
	domain = normDomain(domain)
	for _, o := range m.OpsetImports {
		if normDomain(o.Domain) == domain {
			return o.Version
		}
	}
	return 0
}

// SetOpset sets (or adds) the imported version of domain.
func (m *Model) SetOpset(domain string, version int64) {
	nd := normDomain(domain)
	for i := range m.OpsetImports {
		if normDomain(m.OpsetImports[i].Domain) == nd {
			m.OpsetImports[i].Version = version
			return
		}
	}
	m.OpsetImports = append(m.OpsetImports, OpsetID{Domain: domain, Version: version})
}

// Function returns the model-local function with that domain, name and
// overload, or nil.
func (m *Model) Function(domain, name, overload string) *Function {
	for _, f := range m.Functions {
		if f.Domain == domain && f.Name == name && f.Overload == overload {
			return f
		}
	}
	return nil
}

// Close releases the memory-mapped model file (for a model read by Load)
// and external data files. The model's tensors must not be used afterwards:
// their data lived in those mappings.
//
// Clones of the model (see Clone) share these mappings: they are released
// when the last of the model and its clones is closed, so a clone stays
// usable after the model it was cloned from is closed. Closing twice is a
// no-op.
func (m *Model) Close() error {
	m.closed = true
	m.src = nil
	o := m.own
	m.own = nil
	if o == nil {
		return nil
	}
	return o.release()
}

// owner counts the models (an original and its clones) that share the
// mappings of one loaded model, and releases them when the last one closes.
type owner struct {
	mu      sync.Mutex
	refs    int
	closers []func() error
	ext     *extFiles
}

func (o *owner) acquire() {
	o.mu.Lock()
	o.refs++
	o.mu.Unlock()
}

func (o *owner) release() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.refs--
	if o.refs > 0 {
		return nil
	}
	var first error
	for _, c := range o.closers {
		if err := c(); err != nil && first == nil {
			first = err
		}
	}
	o.closers = nil
	if o.ext != nil {
		if err := o.ext.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func normDomain(d string) string {
	if d == "ai.onnx" {
		return ""
	}
	return d
}

// Function is a model-local function (FunctionProto). Its body is a Graph
// whose Inputs and Outputs are untyped Values.
type Function struct {
	Domain   string
	Name     string
	Overload string
	// Attributes lists attribute names without defaults; AttributeDefaults
	// holds those that have a default value (attribute_proto).
	Attributes        []string
	AttributeDefaults []*Attribute
	OpsetImports      []OpsetID
	DocString         string
	MetadataProps     []StringPair
	Body              *Graph

	shell *onnxpb.FunctionProto
}

// Opset returns the version of domain imported by the function, or 0.
func (f *Function) Opset(domain string) int64 {
	domain = normDomain(domain)
	for _, o := range f.OpsetImports {
		if normDomain(o.Domain) == domain {
			return o.Version
		}
	}
	return 0
}
