package protocol

import (
	"math"
	"slices"

	"github.com/onnxconv/onnxconv/options"
	"github.com/onnxconv/onnxconv/plugins/pluginpb"
)

// optionFromPB is the options.Spec a plugin sent, whole: the host
// lists it and checks values against it (importers.CheckOptions).
func optionFromPB(o *pluginpb.OptionSpec) options.Spec {
	s := options.Spec{Name: o.GetName(), Doc: o.GetDoc(), Kind: options.Kind(o.GetKind()),
		Default: o.GetDefaultValue(), Values: slices.Clone(o.GetValues())}
	bound := func(v int64) *int {
		n := int(max(min(v, math.MaxInt32), math.MinInt32))
		return &n
	}
	if o.Min != nil {
		s.Min = bound(o.GetMin())
	}
	if o.Max != nil {
		s.Max = bound(o.GetMax())
	}
	return s
}

// optionToPB is the wire form of s.
func optionToPB(s options.Spec) *pluginpb.OptionSpec {
	o := &pluginpb.OptionSpec{Name: s.Name, Doc: s.Doc, Kind: string(s.Kind), DefaultValue: s.Default, Values: slices.Clone(s.Values)}
	if s.Min != nil {
		v := int64(*s.Min)
		o.Min = &v
	}
	if s.Max != nil {
		v := int64(*s.Max)
		o.Max = &v
	}
	return o
}
