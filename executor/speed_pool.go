package executor

import (
	"math"

	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// MaxPool on the pure-Go backend.
//
// simplego's ReduceWindow walks every output element and window position
// through a generic shape iterator (a quarter of squeezenet's time); the
// maximum of the K strided slices of the (-inf padded) input, one per
// window position, does the same work in K flat loops.

// lowerMaxPoolSlices lowers MaxPool of x (geometry g, ceil mode already
// resolved into g.out) as an element-wise maximum of strided slices when
// running on the pure-Go backend with a float32/float64 input. It reports
// whether it did.
func lowerMaxPoolSlices(c *lctx, x *graph.Node, g *convGeom) (bool, error) {
	if _, ok := c.e.backend.(*simplego.Backend); !ok {
		return false, nil
	}
	switch x.DType() {
	case dtypes.Float32, dtypes.Float64:
	default:
		return false, nil
	}
	k := 1
	for _, kk := range g.kernel {
		k *= kk
	}
	for _, o := range g.out {
		if o <= 0 {
			return false, nil
		}
	}
	if k < 1 || k > 64 {
		// Large windows: ReduceWindow does not build K slices.
		return false, nil
	}
	xp := padSpatialAxes(x, g, 2, math.Inf(-1))
	var y *graph.Node
	forEachKernelPos(g.kernel, func(pos []int) {
		s := windowSliceAxes(xp, g, pos, 2)
		if y == nil {
			y = s
		} else {
			y = graph.Max(y, s)
		}
	})
	c.Out(0, y, c.DT(0))
	return true, nil
}

// padSpatialAxes pads the spatial axes of x (first, first+1, ...) with v:
// the begin pads of g and as much at the end as the last window of g
// reaches.
func padSpatialAxes(x *graph.Node, g *convGeom, first int, v float64) *graph.Node {
	for i := range g.out {
		ax := i + first
		dims := x.Shape().Dimensions
		pb := g.padB[i]
		pe := (g.out[i]-1)*g.strides[i] + (g.kernel[i]-1)*g.dil[i] + 1 - (dims[ax] + pb)
		parts := make([]*graph.Node, 0, 3)
		if pb > 0 {
			d := append([]int{}, dims...)
			d[ax] = pb
			parts = append(parts, graph.FillScalar(x.Graph(), shapes.Make(x.DType(), d...), v))
		}
		parts = append(parts, x)
		if pe > 0 {
			d := append([]int{}, dims...)
			d[ax] = pe
			parts = append(parts, graph.FillScalar(x.Graph(), shapes.Make(x.DType(), d...), v))
		}
		if len(parts) > 1 {
			x = graph.Concatenate(parts, ax)
		}
	}
	return x
}
