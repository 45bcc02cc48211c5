// Package onnxspec is the operator schema registry of onnxconv: every version
// of every operator of the ai.onnx, ai.onnx.ml, ai.onnx.preview and
// ai.onnx.preview.training domains, generated from the ONNX 1.22
// specification (docs/Changelog.md and docs/Changelog-ml.md).
//
// The registry is a read-only table built into the binary. The *Schema
// values returned by Lookup, Versions and All point into that table and
// must not be modified; call Clone for a private copy.
//
// This package imports no other onnxconv package, so that canonical/check,
// canonical/infer and opset/convert can all depend on it.
package onnxspec

import (
	"fmt"
	"math"
	"strings"
)

// Domain names. The default ONNX domain is spelled "" in models; "ai.onnx"
// is accepted as an alias everywhere a domain is taken as an argument.
const (
	DomainONNX     = ""
	DomainONNXName = "ai.onnx"
	DomainML       = "ai.onnx.ml"
	DomainPreview  = "ai.onnx.preview"
	DomainTraining = "ai.onnx.preview.training"
)

// Unbounded is the MaxInputs or MaxOutputs of an operator whose last formal
// parameter is variadic (the "&#8734;" of the spec), as in ONNX's C++
// OpSchema (std::numeric_limits<int>::max()).
const Unbounded = math.MaxInt32

// Option tells how many actual values a formal input or output takes.
type Option uint8

// The three parameter options of the ONNX OpSchema.
const (
	Single   Option = iota // exactly one value
	Optional               // zero or one value (an empty name means absent)
	Variadic               // MinArity or more values; only the last parameter
)

var optionNames = [...]string{Single: "single", Optional: "optional", Variadic: "variadic"}

// String returns "single", "optional" or "variadic".
func (o Option) String() string {
	if int(o) < len(optionNames) {
		return optionNames[o]
	}
	return fmt.Sprintf("Option(%d)", uint8(o))
}

// MarshalText makes Option appear as its name in JSON.
func (o Option) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// Differentiability of a formal parameter as stated by the spec.
type Differentiability uint8

// Differentiability values; DiffUnknown means the spec does not say.
const (
	DiffUnknown Differentiability = iota
	Differentiable
	NonDifferentiable
)

var diffNames = [...]string{DiffUnknown: "unspecified", Differentiable: "differentiable", NonDifferentiable: "non-differentiable"}

// String returns "unspecified", "differentiable" or "non-differentiable".
func (d Differentiability) String() string {
	if int(d) < len(diffNames) {
		return diffNames[d]
	}
	return fmt.Sprintf("Differentiability(%d)", uint8(d))
}

// MarshalText makes Differentiability appear as its name in JSON.
func (d Differentiability) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// AttrType is the type of an attribute. The numeric values are those of
// onnx.AttributeProto.AttributeType, so a canonical attribute type converts
// with a plain integer conversion.
type AttrType int32

// Attribute types, numbered as in onnx.proto.
const (
	AttrUndefined     AttrType = 0
	AttrFloat         AttrType = 1
	AttrInt           AttrType = 2
	AttrString        AttrType = 3
	AttrTensor        AttrType = 4
	AttrGraph         AttrType = 5
	AttrFloats        AttrType = 6
	AttrInts          AttrType = 7
	AttrStrings       AttrType = 8
	AttrTensors       AttrType = 9
	AttrGraphs        AttrType = 10
	AttrSparseTensor  AttrType = 11
	AttrSparseTensors AttrType = 12
	AttrTypeProto     AttrType = 13
	AttrTypeProtos    AttrType = 14
)

var attrTypeNames = [...]string{
	"UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH", "FLOATS", "INTS",
	"STRINGS", "TENSORS", "GRAPHS", "SPARSE_TENSOR", "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS",
}

// String returns the onnx.proto name of the type, e.g. "INTS".
func (t AttrType) String() string {
	if t >= 0 && int(t) < len(attrTypeNames) {
		return attrTypeNames[t]
	}
	return fmt.Sprintf("AttrType(%d)", int32(t))
}

// MarshalText makes AttrType appear as its name in JSON.
func (t AttrType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// ParseAttrType is the inverse of AttrType.String.
func ParseAttrType(s string) (AttrType, error) {
	for i, n := range attrTypeNames {
		if n == s {
			return AttrType(i), nil
		}
	}
	return AttrUndefined, fmt.Errorf("opset: unknown attribute type %q", s)
}

// FormalParameter is one formal input or output of an operator.
type FormalParameter struct {
	Name string `json:"name"`
	// TypeStr is a type parameter name ("T") bound by a TypeConstraint of
	// the schema, or a concrete type ("tensor(int64)").
	TypeStr string `json:"type"`
	Option  Option `json:"option"`
	// MinArity is the least number of values a Variadic parameter takes
	// (derived from the "#### Inputs (min - max)" header); 1 for Single,
	// 0 for Optional.
	MinArity int `json:"min_arity"`
	// Homogeneous is false only for "(variadic, heterogeneous)" parameters,
	// whose values may each bind the type parameter to a different type.
	Homogeneous       bool              `json:"homogeneous"`
	Differentiability Differentiability `json:"differentiability"`
}

// Attribute is one attribute of an operator.
type Attribute struct {
	Name     string   `json:"name"`
	Type     AttrType `json:"type"`
	Required bool     `json:"required,omitempty"`
	// Default is the default value as written in the spec ("0", "NOTSET",
	// "['Tanh', 'Tanh']"), "" when there is none. The spec rounds floats to
	// five decimals; DefaultFloat carries the exact value where the spec
	// states it.
	Default string `json:"default,omitempty"`
	// HasDefault reports whether the spec gives a default.
	HasDefault bool `json:"has_default,omitempty"`
	// DefaultParsed reports whether Default was parsed into the field that
	// matches Type (DefaultInt for INT, DefaultInts for INTS, ...).
	DefaultParsed  bool      `json:"default_parsed,omitempty"`
	DefaultInt     int64     `json:"default_int,omitempty"`
	DefaultFloat   float32   `json:"default_float,omitempty"`
	DefaultString  string    `json:"default_string,omitempty"`
	DefaultInts    []int64   `json:"default_ints,omitempty"`
	DefaultFloats  []float32 `json:"default_floats,omitempty"`
	DefaultStrings []string  `json:"default_strings,omitempty"`
}

// TypeConstraint binds a type parameter to the types it may take.
type TypeConstraint struct {
	Param string `json:"param"`
	// Allowed are type strings: "tensor(float)", "seq(tensor(int64))",
	// "optional(tensor(uint8))", "map(string, int64)", ...
	Allowed     []string `json:"allowed"`
	Description string   `json:"description,omitempty"`
}

// Schema is one version of one operator.
type Schema struct {
	// Domain is "" for ai.onnx, otherwise the domain name.
	Domain       string `json:"domain"`
	Name         string `json:"name"`
	SinceVersion int    `json:"since_version"`
	// Deprecated marks a version the spec deprecates: it must not be used,
	// and the spec gives it no signature (its Inputs, Outputs, Attributes
	// and TypeConstraints are empty). It is usually the last version (the
	// operator was removed, e.g. Upsample-10, Scatter-11), but not always:
	// GroupNormalization-18 is deprecated and superseded by
	// GroupNormalization-21.
	Deprecated bool `json:"deprecated,omitempty"`
	// Experimental: the spec says "No versioning maintained for
	// experimental ops".
	Experimental bool `json:"experimental,omitempty"`
	// Summary is the first sentences of the spec's description.
	Summary string `json:"summary,omitempty"`

	Inputs          []FormalParameter `json:"inputs"`
	Outputs         []FormalParameter `json:"outputs"`
	Attributes      []Attribute       `json:"attributes"`
	TypeConstraints []TypeConstraint  `json:"type_constraints"`

	MinInputs  int `json:"min_inputs"`
	MaxInputs  int `json:"max_inputs"`
	MinOutputs int `json:"min_outputs"`
	MaxOutputs int `json:"max_outputs"`

	// FunctionBody would hold the operator's function body in ONNX text
	// syntax for ops defined as functions. It is always empty here: the
	// Changelog docs carry no bodies; they would come from the
	// FunctionBody(...) / SetContextDependentFunctionBodyBuilder calls in
	// onnx/defs/*/defs.cc of the ONNX source tree.
	FunctionBody string `json:"function_body,omitempty"`
}

// DomainName returns the domain spelled out ("ai.onnx" for the default).
func (s *Schema) DomainName() string { return DisplayDomain(s.Domain) }

// String returns "domain.Name-version", e.g. "ai.onnx.Softmax-13".
func (s *Schema) String() string {
	return fmt.Sprintf("%s.%s-%d", s.DomainName(), s.Name, s.SinceVersion)
}

// Input returns the formal input with the given name.
func (s *Schema) Input(name string) (*FormalParameter, bool) {
	for i := range s.Inputs {
		if s.Inputs[i].Name == name {
			return &s.Inputs[i], true
		}
	}
	return nil, false
}

// Output returns the formal output with the given name.
func (s *Schema) Output(name string) (*FormalParameter, bool) {
	for i := range s.Outputs {
		if s.Outputs[i].Name == name {
			return &s.Outputs[i], true
		}
	}
	return nil, false
}

// Attribute returns the attribute with the given name.
func (s *Schema) Attribute(name string) (*Attribute, bool) {
	for i := range s.Attributes {
		if s.Attributes[i].Name == name {
			return &s.Attributes[i], true
		}
	}
	return nil, false
}

// TypeConstraint returns the constraint of the type parameter param.
func (s *Schema) TypeConstraint(param string) (*TypeConstraint, bool) {
	for i := range s.TypeConstraints {
		if s.TypeConstraints[i].Param == param {
			return &s.TypeConstraints[i], true
		}
	}
	return nil, false
}

// AllowedTypes returns the types a formal parameter with type string
// typeStr may take: the constraint's list for a type parameter, or the
// concrete type itself.
func (s *Schema) AllowedTypes(typeStr string) []string {
	if tc, ok := s.TypeConstraint(typeStr); ok {
		return tc.Allowed
	}
	return []string{typeStr}
}

// Clone returns a deep copy that the caller may modify.
func (s *Schema) Clone() *Schema {
	c := *s
	c.Inputs = append([]FormalParameter(nil), s.Inputs...)
	c.Outputs = append([]FormalParameter(nil), s.Outputs...)
	c.Attributes = make([]Attribute, len(s.Attributes))
	for i, a := range s.Attributes {
		a.DefaultInts = append([]int64(nil), a.DefaultInts...)
		a.DefaultFloats = append([]float32(nil), a.DefaultFloats...)
		a.DefaultStrings = append([]string(nil), a.DefaultStrings...)
		c.Attributes[i] = a
	}
	c.TypeConstraints = make([]TypeConstraint, len(s.TypeConstraints))
	for i, tc := range s.TypeConstraints {
		tc.Allowed = append([]string(nil), tc.Allowed...)
		c.TypeConstraints[i] = tc
	}
	return &c
}

// NormalizeDomain maps "ai.onnx" to "" and returns other domains unchanged.
func NormalizeDomain(domain string) string {
	if domain == DomainONNXName {
		return DomainONNX
	}
	return domain
}

// DisplayDomain maps "" to "ai.onnx" and returns other domains unchanged.
func DisplayDomain(domain string) string {
	if domain == DomainONNX {
		return DomainONNXName
	}
	return domain
}

// FormatArity formats an input or output count range as the spec does:
// "2", "2 - 3" or "1 - inf".
func FormatArity(lo, hi int) string {
	switch {
	case hi == Unbounded:
		return fmt.Sprintf("%d - inf", lo)
	case lo == hi:
		return fmt.Sprint(lo)
	default:
		return fmt.Sprintf("%d - %d", lo, hi)
	}
}

// describeParam is "name: T (optional, differentiable)".
func describeParam(p FormalParameter) string {
	var tags []string
	if p.Option != Single {
		tags = append(tags, p.Option.String())
	}
	if p.Option == Variadic && !p.Homogeneous {
		tags = append(tags, "heterogeneous")
	}
	if p.Option == Variadic && p.MinArity != 1 {
		tags = append(tags, fmt.Sprintf("min %d", p.MinArity))
	}
	if p.Differentiability != DiffUnknown {
		tags = append(tags, p.Differentiability.String())
	}
	s := p.Name + ": " + p.TypeStr
	if len(tags) > 0 {
		s += " (" + strings.Join(tags, ", ") + ")"
	}
	return s
}
