package importers

import (
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/layout"
)

// MetaChannelsFirst is the metadata_props key by which an importer says
// that it made graph inputs and outputs channels-first (layout=nchw) that
// its source framework computes channels-last: their names, comma
// separated. Being in the model, it crosses the plugin boundary with it.
const MetaChannelsFirst = "onnxconv.channels_first"

// SourceLayout returns how the source framework lays out the graph inputs
// and outputs of m, the model an importer made, by name: the source's
// tensor is the model's transposed by the permutation (channels moved
// last). Inputs and outputs in the model's layout are not listed; nil maps
// mean none differs.
func SourceLayout(m *canonical.Model) (ins, outs map[string][]int) {
	names := map[string]bool{}
	for _, p := range m.MetadataProps {
		if p.Key == MetaChannelsFirst && p.Value != "" {
			for _, n := range strings.Split(p.Value, ",") {
				names[strings.TrimSpace(n)] = true
			}
		}
	}
	if len(names) == 0 || m.Graph == nil {
		return nil, nil
	}
	perm := func(v *canonical.Value) []int {
		_, dims, hasShape, ok := canonical.TensorTypeOf(v.Type)
		if !ok || !hasShape || len(dims) < 3 || !names[v.Name] {
			return nil
		}
		return layout.ToLast(len(dims))
	}
	ins, outs = map[string][]int{}, map[string][]int{}
	for _, v := range m.Graph.Inputs {
		if p := perm(v); p != nil {
			ins[v.Name] = p
		}
	}
	for _, v := range m.Graph.Outputs {
		if p := perm(v); p != nil {
			outs[v.Name] = p
		}
	}
	return ins, outs
}
