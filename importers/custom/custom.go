// Package custom reads the ONNX definitions a user gives for the layers
// and ops onnxconv does not map: `-O custom=FILE.onnx`, an ONNX model file
// whose functions (FunctionProto, model.functions; the graph may be
// absent) are named after what they define — a Keras layer class
// (MultiplyBeta), a TF op name or a TFLite custom op name. An importer
// that meets an unmapped layer or op with a function of that name emits a
// node calling the function (its domain the function's) and copies the
// function into the model, where ONNX Runtime and the executor run it.
// docs/custom.md says what each importer passes to the function.
package custom

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/fsys"
	"github.com/onnxconv/onnxconv/options"
)

// OptionName is the importer option that names the file.
const OptionName = "custom"

// MaxFileBytes bounds the file Load reads.
const MaxFileBytes = 64 << 20

// Option is the "custom" importer option, stored in the field field
// returns.
func Option[T any](field func(*T) *string) options.Option[T] {
	return options.String(OptionName, "", "ONNX file of FunctionProtos named after the custom layers or ops it defines (docs/custom.md)", field).
		Then(func(_ *T, v string) error {
			if v == "" {
				return errors.New("give the path of an ONNX file of functions")
			}
			return nil
		})
}

// Hint is the sentence a refusal of an unmapped layer or op (what, e.g.
// "Keras layer class", name its name) ends with: how to supply it.
func Hint(what, name string) string {
	return fmt.Sprintf("to convert it, give its ONNX definition with -O %s=FILE.onnx: an ONNX file holding a function (FunctionProto) named %q that computes the %s (docs/custom.md)",
		OptionName, name, what)
}

// Set is the functions of one file, by name, and those a conversion
// calls (Call), which Attach adds to its model. Load one per conversion.
type Set struct {
	path   string
	byName map[string]*canonical.Function
	raw    map[string]*onnxpb.FunctionProto
	opsets []*onnxpb.OperatorSetIdProto
	ir     int64
	// used lists the functions called, in order; special caches the
	// specializations by name and attribute values.
	used    []*canonical.Function
	special map[string]*canonical.Function
}

// Load reads the ONNX file at path. A file that is not ONNX, holds no
// function, or two functions of one name, is an error naming it.
func Load(path string) (*Set, error) {
	data, err := fsys.ReadFile(path, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("custom definitions: %w", err)
	}
	var mp onnxpb.ModelProto
	if err := proto.Unmarshal(data, &mp); err != nil {
		return nil, fmt.Errorf("custom definitions %s: not an ONNX model file: %w", path, err)
	}
	m, err := canonical.FromProto(&mp, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("custom definitions %s: %w", path, err)
	}
	if len(m.Functions) == 0 {
		return nil, fmt.Errorf("custom definitions %s: the file holds no function (model.functions): write one FunctionProto per custom layer or op", path)
	}
	s := &Set{path: path, byName: map[string]*canonical.Function{}, raw: map[string]*onnxpb.FunctionProto{},
		opsets: mp.OpsetImport, ir: mp.GetIrVersion(), special: map[string]*canonical.Function{}}
	for i, f := range m.Functions {
		if _, dup := s.byName[f.Name]; dup {
			return nil, fmt.Errorf("custom definitions %s: two functions are named %q", path, f.Name)
		}
		if f.Domain == "" || f.Domain == "ai.onnx" {
			return nil, fmt.Errorf("custom definitions %s: function %q is in the ai.onnx domain: give it a domain of its own (e.g. \"custom\")", path, f.Name)
		}
		if f.Body == nil {
			return nil, fmt.Errorf("custom definitions %s: function %q has no body", path, f.Name)
		}
		s.byName[f.Name] = f
		s.raw[f.Name] = mp.Functions[i]
	}
	return s, nil
}

// Lookup returns the function named name, or nil (also on a nil Set).
func (s *Set) Lookup(name string) *canonical.Function {
	if s == nil {
		return nil
	}
	return s.byName[name]
}

// Names returns the names of the functions, sorted.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	out := make([]string, 0, len(s.byName))
	for k := range s.byName {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Call returns the function a node calling name with attrs must call,
// recorded for Attach. A function that declares attributes is specialized:
// a copy named NAME_N whose body holds the values (attrs, else the
// declared defaults) where it referenced them, so that the call carries
// no attribute and every runtime runs it alike. A declared attribute
// with no default that attrs lacks is an error naming it; attrs the
// function does not declare are dropped.
func (s *Set) Call(name string, attrs []*canonical.Attribute) (*canonical.Function, error) {
	f := s.Lookup(name)
	if f == nil {
		return nil, fmt.Errorf("custom definitions: no function %q", name)
	}
	raw := s.raw[name]
	if len(raw.Attribute) == 0 && len(raw.AttributeProto) == 0 {
		s.use(f)
		return f, nil
	}
	vals := map[string]*onnxpb.AttributeProto{}
	for _, d := range raw.AttributeProto {
		vals[d.GetName()] = d
	}
	for _, a := range attrs {
		if _, declared := vals[a.Name]; declared || slices.Contains(raw.Attribute, a.Name) {
			vals[a.Name] = attrProto(a)
		}
	}
	for _, n := range raw.Attribute {
		if vals[n] == nil {
			return nil, fmt.Errorf("custom definitions %s: function %q needs attribute %q, which the layer or node does not give", s.path, name, n)
		}
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	key := name
	for _, k := range keys {
		key += "\x00" + prototext.Format(vals[k])
	}
	if sf, ok := s.special[key]; ok {
		return sf, nil
	}
	fp := proto.Clone(raw).(*onnxpb.FunctionProto)
	fp.Name = proto.String(fmt.Sprintf("%s_%d", name, len(s.special)+1))
	fp.Attribute, fp.AttributeProto = nil, nil
	bind(fp.Node, vals)
	m, err := canonical.FromProto(&onnxpb.ModelProto{IrVersion: proto.Int64(s.ir), OpsetImport: s.opsets, Functions: []*onnxpb.FunctionProto{fp}}, "")
	if err != nil {
		return nil, fmt.Errorf("custom definitions %s: function %q with its attributes: %w", s.path, name, err)
	}
	sf := m.Functions[0]
	s.special[key] = sf
	s.use(sf)
	return sf, nil
}

func (s *Set) use(f *canonical.Function) {
	if !slices.Contains(s.used, f) {
		s.used = append(s.used, f)
	}
}

// bind replaces, in nodes and the graphs of their attributes, each
// attribute that references a function attribute by its value, or drops
// it when there is none (as ONNX does).
func bind(nodes []*onnxpb.NodeProto, vals map[string]*onnxpb.AttributeProto) {
	for _, n := range nodes {
		kept := n.Attribute[:0]
		for _, a := range n.Attribute {
			if ref := a.GetRefAttrName(); ref != "" {
				v := vals[ref]
				if v == nil {
					continue
				}
				b := proto.Clone(v).(*onnxpb.AttributeProto)
				b.Name = a.Name
				a = b
			}
			if a.G != nil {
				bind(a.G.Node, vals)
			}
			for _, g := range a.Graphs {
				bind(g.Node, vals)
			}
			kept = append(kept, a)
		}
		n.Attribute = kept
	}
}

// attrProto is a's value as an AttributeProto (the kinds a layer config
// or a TF node attribute gives: numbers, strings and their lists).
func attrProto(a *canonical.Attribute) *onnxpb.AttributeProto {
	p := &onnxpb.AttributeProto{Name: proto.String(a.Name), Type: a.Type.Enum()}
	switch a.Type {
	case canonical.AttrFloat:
		p.F = proto.Float32(a.F)
	case canonical.AttrInt:
		p.I = proto.Int64(a.I)
	case canonical.AttrString:
		p.S = a.S
	case canonical.AttrFloats:
		p.Floats = a.Floats
	case canonical.AttrInts:
		p.Ints = a.Ints
	case canonical.AttrStrings:
		p.Strings = a.Strings
	}
	return p
}

// Attach adds the functions the conversion called (Call) to m, with the
// opsets they import and their own domains (version 1). A function's
// ai.onnx opset must be the model's.
func (s *Set) Attach(m *canonical.Model) error {
	if s == nil {
		return nil
	}
	for _, f := range s.used {
		for _, o := range f.OpsetImports {
			have := m.Opset(o.Domain)
			switch {
			case have == 0:
				m.SetOpset(o.Domain, o.Version)
			case have != o.Version && (o.Domain == "" || o.Domain == "ai.onnx"):
				return fmt.Errorf("custom definitions %s: function %q imports ai.onnx opset %d, the model is at opset %d: write it for opset %d",
					s.path, f.Name, o.Version, have, have)
			}
		}
		if m.Opset(f.Domain) == 0 {
			m.SetOpset(f.Domain, 1)
		}
		m.Functions = append(m.Functions, f)
	}
	return nil
}
