package importers

import (
	"maps"
	"slices"
)

// Keys returns the option keys in sorted order, so that an importer
// parsing them reports the same first error on every run.
func (o Options) Keys() []string {
	return slices.Sorted(maps.Keys(o))
}

// Names returns the names of specs, in order (for OptionError.Known).
func Names(specs []OptionSpec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}
