package importers

import (
	"maps"
	"slices"

	"github.com/onnxconv/onnxconv/options"
)

// The option vocabulary of importers is the options package's (shared
// with the exporters): these names keep the importers' declarations
// short.
type (
	OptionKind       = options.Kind
	OptionSpec       = options.Spec
	ValueError       = options.ValueError
	Option[T any]    = options.Option[T]
	OptionSet[T any] = options.Set[T]
)

// The option kinds.
const (
	KindBool   = options.KindBool
	KindInt    = options.KindInt
	KindFloat  = options.KindFloat
	KindString = options.KindString
	KindEnum   = options.KindEnum
	KindList   = options.KindList
)

// CheckOptions checks opts against the specs of d, as data (the parser
// runs where the importer runs): an unknown key, when d declares options,
// or a value that does not fit its spec is an *OptionError. The plugin
// host checks a plugin importer's options with it before starting a
// process.
func CheckOptions(d Description, opts Options) error {
	known := options.Names(d.Options)
	for _, k := range opts.Keys() {
		i := slices.IndexFunc(d.Options, func(s OptionSpec) bool { return s.Name == k })
		if i < 0 {
			if len(d.Options) == 0 {
				continue // the importer itself refuses (or takes) it
			}
			return &OptionError{Importer: d.Name, Key: k, Value: opts[k], Known: known}
		}
		if _, err := d.Options[i].Check(opts[k]); err != nil {
			return &OptionError{Importer: d.Name, Key: k, Value: opts[k], Known: known, Err: err}
		}
	}
	return nil
}

// Keys returns the option keys in sorted order, so that an importer
// parsing them reports the same first error on every run.
func (o Options) Keys() []string {
	return slices.Sorted(maps.Keys(o))
}
