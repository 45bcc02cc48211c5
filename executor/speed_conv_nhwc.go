package executor

import (
	"fmt"

	"github.com/gomlx/gomlx/pkg/core/graph"
)

// Channels-last im2col for ungrouped Conv on the pure-Go backend.
//
// simplego's DotGeneral first copies each operand into the layout
// [batch, cross, contracting] unless it is already in it. With cols built
// as [N·P, K·C] (output positions major, then kernel position, then
// channel) and the weights as [M, K·C], both operands are already in that
// layout: the only copies are one transpose of the input to channels last
// (1/K of cols), the K strided slices and their concatenation. The weight
// permutation [M, C, K] -> [M, K, C] is done once on the host when the
// weights are constant (initializers), in the graph otherwise.

// convWeightMKC returns the Conv weight w [M, C, K...] (input 1 of c) as
// [M, K·C]: the kernel positions flattened and moved before the channels.
func (c *lctx) convWeightMKC(w *graph.Node) *graph.Node {
	ws := w.Shape().Dimensions
	m, cin, k := ws[0], ws[1], 1
	for _, d := range ws[2:] {
		k *= d
	}
	if s := c.in(1); s.valStatic && s.h != nil && c.lowering {
		if h := permuteMCKToMKC(s.h, m, cin, k); h != nil {
			return c.Const(h)
		}
	}
	return graph.Reshape(graph.TransposeAllDims(graph.Reshape(w, m, cin, k), 0, 2, 1), m, k*cin)
}

// weightAs returns the Conv weight w (input 1 of c) reshaped to dims: a
// constant of that shape when the weight is constant (simplego copies a
// Reshape of a value it does not own, such as a constant, at every run).
func (c *lctx) weightAs(w *graph.Node, dims ...int) *graph.Node {
	if s := c.in(1); s.valStatic && s.h != nil && c.lowering && numel(dims) == numel(s.h.shape) {
		return c.Const(&htensor{dt: s.h.dt, shape: append([]int{}, dims...), data: s.h.data})
	}
	return graph.Reshape(w, dims...)
}

// permuteMCKToMKC returns h ([M, C, K] in row-major order) permuted to
// [M, K, C] and shaped [M, K·C], or nil if its storage is not float32 or
// float64.
func permuteMCKToMKC(h *htensor, m, cin, k int) *htensor {
	switch d := h.data.(type) {
	case []float32:
		return &htensor{dt: h.dt, shape: []int{m, k * cin}, data: permuteMCK(d, m, cin, k)}
	case []float64:
		return &htensor{dt: h.dt, shape: []int{m, k * cin}, data: permuteMCK(d, m, cin, k)}
	}
	return nil
}

func permuteMCK[T any](src []T, m, cin, k int) []T {
	dst := make([]T, len(src))
	for i := 0; i < m; i++ {
		base := i * cin * k
		for ci := 0; ci < cin; ci++ {
			for ki := 0; ki < k; ki++ {
				dst[base+ki*cin+ci] = src[base+ci*k+ki]
			}
		}
	}
	return dst
}

// im2colConvNHWC computes an ungrouped Conv of x [N, C, S...] with the
// weights wmkc [M, K·C] (see convWeightMKC) for the geometry g, no bias.
func im2colConvNHWC(x, wmkc *graph.Node, g *convGeom) (*graph.Node, error) {
	xs, ws := x.Shape().Dimensions, wmkc.Shape().Dimensions
	ns := len(xs) - 2
	n, cin := xs[0], xs[1]
	p, k := 1, 1
	for i := 0; i < ns; i++ {
		p *= g.out[i]
		k *= g.kernel[i]
	}
	if len(ws) != 2 || ws[1] != k*cin {
		return nil, fmt.Errorf("conv: weight %v does not match %d input channels and kernel %v", ws, cin, g.kernel)
	}
	m := ws[0]
	outDims := append([]int{n, m}, g.out...)
	if p == 0 || n == 0 {
		wdims := append([]int{m, cin}, g.kernel...)
		return im2colConv(x, graph.Reshape(graph.TransposeAllDims(graph.Reshape(wmkc, m, k, cin), 0, 2, 1), wdims...), wdims, g, 1)
	}
	// x channels last: [N, S..., C]
	perm := make([]int, 0, ns+2)
	perm = append(perm, 0)
	for i := 0; i < ns; i++ {
		perm = append(perm, i+2)
	}
	perm = append(perm, 1)
	xt := graph.TransposeAllDims(x, perm...)
	xp := padSpatialAxes(xt, g, 1, 0)
	var cols *graph.Node
	if k == 1 {
		cols = graph.Reshape(windowSliceAxes(xp, g, make([]int, ns), 1), n*p, cin)
	} else {
		// [N, O..., K·C] by concatenating the channels: no per-part reshape
		// (simplego runs every op, reshapes included, as its own task).
		parts := make([]*graph.Node, 0, k)
		forEachKernelPos(g.kernel, func(pos []int) {
			parts = append(parts, windowSliceAxes(xp, g, pos, 1))
		})
		cols = graph.Reshape(graph.Concatenate(parts, ns+1), n*p, k*cin)
	}
	y := graph.DotGeneral(wmkc, []int{1}, nil, cols, []int{1}, nil) // [M, N·P]
	if n > 1 {
		y = graph.TransposeAllDims(graph.Reshape(y, m, n, p), 1, 0, 2)
	}
	return graph.Reshape(y, outDims...), nil
}

// windowSliceAxes is windowSlice for spatial axes starting at axis first.
func windowSliceAxes(xp *graph.Node, g *convGeom, pos []int, first int) *graph.Node {
	dims := xp.Shape().Dimensions
	specs := make([]graph.SliceAxisSpec, len(dims))
	for i := range specs {
		specs[i] = graph.AxisRange()
	}
	identity := true
	for i := range g.out {
		start := pos[i] * g.dil[i]
		end := start + (g.out[i]-1)*g.strides[i] + 1
		if start != 0 || end != dims[first+i] || g.strides[i] != 1 && g.out[i] > 1 {
			identity = false
		}
		spec := graph.AxisRange(start, end)
		if g.strides[i] != 1 {
			spec = spec.Stride(g.strides[i])
		}
		specs[first+i] = spec
	}
	if identity {
		return xp
	}
	return graph.Slice(xp, specs...)
}
