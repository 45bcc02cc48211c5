package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers/keraslayers"
	"github.com/onnxconv/onnxconv/verify"
)

// channelsFirst returns the graph inputs and outputs an importer made
// channels-first (layout=nchw) while the source framework computes them
// channels-last, from the model's metadata (keraslayers.MetaChannelsFirst).
func channelsFirst(m *canonical.Model) map[string]bool {
	for _, p := range m.MetadataProps {
		if p.Key == keraslayers.MetaChannelsFirst && p.Value != "" {
			out := map[string]bool{}
			for _, n := range strings.Split(p.Value, ",") {
				out[strings.TrimSpace(n)] = true
			}
			return out
		}
	}
	return nil
}

// channelsLastSource runs a channels-last source (TF.js, Keras) for a
// model imported channels-first: the named inputs are moved channels-last
// before the source runs, the named outputs back channels-first after.
type channelsLastSource struct {
	inner verify.Runner
	names map[string]bool
	ins   []*canonical.Value
	outs  []*canonical.Value
}

// lastPerm moves axis 1 to the end (NCHW -> NHWC); firstPerm is its
// inverse.
func lastPerm(rank int) []int {
	p := []int{0}
	for i := 2; i < rank; i++ {
		p = append(p, i)
	}
	return append(p, 1)
}

func firstPerm(rank int) []int {
	p := []int{0, rank - 1}
	for i := 1; i < rank-1; i++ {
		p = append(p, i)
	}
	return p
}

func (r channelsLastSource) Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error) {
	in := make([]*canonical.Tensor, len(inputs))
	for i, t := range inputs {
		in[i] = t
		if i < len(r.ins) && r.names[r.ins[i].Name] && len(t.Dims) >= 3 {
			x, err := t.Transpose(lastPerm(len(t.Dims)))
			if err != nil {
				return nil, fmt.Errorf("input %q to channels-last: %w", r.ins[i].Name, err)
			}
			in[i] = x
		}
	}
	got, err := r.inner.Run(ctx, in)
	if err != nil {
		return nil, err
	}
	for i, t := range got {
		if i < len(r.outs) && t != nil && r.names[r.outs[i].Name] && len(t.Dims) >= 3 {
			x, err := t.Transpose(firstPerm(len(t.Dims)))
			if err != nil {
				return nil, fmt.Errorf("output %q to channels-first: %w", r.outs[i].Name, err)
			}
			x.Name = t.Name
			got[i] = x
		}
	}
	return got, nil
}
