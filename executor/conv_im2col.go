package executor

import (
	"fmt"

	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// Conv on the pure-Go backend.
//
// simplego's ConvGeneral is a plain loop over every output element and
// kernel position (about 0.1 GFLOP/s on the fixtures), while its DotGeneral
// is a blocked matrix product that also splits the work over the workers.
// im2colConv rewrites a Conv as:
//
//  1. zero padding of the spatial axes (by concatenation: simplego has no
//     Pad op), only as much as the output windows reach;
//  2. "im2col": one strided Slice of the padded input per kernel position,
//     concatenated into cols [N, C, K, P] (K = kernel positions, P = output
//     positions); a 1×1 kernel needs no copy at all (cols is the input, or
//     one strided Slice of it);
//  3. one DotGeneral of the weights [M, C·K] with cols over (C, K), with the
//     groups as a batch axis; depthwise convolutions (one input and one
//     output channel per group) are K multiply-adds of the shifted slices
//     instead, which is cheaper than a batch of 1×K·K products.

// im2colMaxElems caps the size of the cols tensor (elements); beyond it the
// Conv falls back to ConvGeneral rather than allocate gigabytes.
const im2colMaxElems = 1 << 26

// useIm2col reports whether Conv on x should be lowered by im2colConv: the
// pure-Go backend, a dtype its DotGeneral handles, and cols of a sane size.
func (c *lctx) useIm2col(x, w *graph.Node, g *convGeom) bool {
	if _, ok := c.e.backend.(*simplego.Backend); !ok {
		return false
	}
	switch x.DType() {
	case dtypes.Float32, dtypes.Float64:
	default:
		return false
	}
	xs, ws := x.Shape().Dimensions, w.Shape().Dimensions
	if len(ws) != len(xs) {
		return false
	}
	elems := xs[0] * xs[1] // N·C
	for i := range g.out {
		elems *= g.out[i] * g.kernel[i]
	}
	return elems > 0 && elems <= im2colMaxElems
}

// lowerConvIm2col lowers the Conv of c (input x, weight w, geometry g) with
// im2colConv when useIm2col allows it, adding the bias and setting the
// output. It reports whether it did.
func lowerConvIm2col(c *lctx, x, w *graph.Node, g *convGeom) (bool, error) {
	if !c.useIm2col(x, w, g) {
		return false, nil
	}
	groups := int(c.AInt("group", 1))
	var y *graph.Node
	var err error
	if u := c.winogradU(x, g, groups); u != nil {
		y = winogradConv(x, u, g)
	} else if groups == 1 {
		y, err = im2colConvNHWC(x, c.convWeightMKC(w), g)
	} else {
		y, err = im2colConv(x, c.weightAs(w, groupedWeightDims(w, groups)...), w.Shape().Dimensions, g, groups)
	}
	if err != nil {
		return false, err
	}
	if c.Has(2) {
		y = graph.Add(y, c.convBias(y))
	}
	c.Out(0, y, c.DT(0))
	return true, nil
}

// convBiasMaxElems caps the size of a bias expanded on the host.
const convBiasMaxElems = 1 << 22

// convBias returns the Conv bias (input 2) to add to y [N, M, O...]: when
// the bias is constant, a host constant of y's full shape, so that the
// backend adds two flat arrays (simplego broadcasts element by element
// through a generic iterator, 7 % of squeezenet's time); otherwise the
// [1, M, 1...] vector to broadcast.
func (c *lctx) convBias(y *graph.Node) *graph.Node {
	dims := y.Shape().Dimensions
	s := c.in(2)
	if c.lowering && s.valStatic && s.h != nil && len(s.h.shape) == 1 && s.h.shape[0] == dims[1] && y.Shape().Size() <= convBiasMaxElems {
		inner := 1
		for _, d := range dims[2:] {
			inner *= d
		}
		var data any
		switch b := s.h.data.(type) {
		case []float32:
			data = expandBias(b, dims[0], inner)
		case []float64:
			data = expandBias(b, dims[0], inner)
		}
		if data != nil {
			return c.Const(&htensor{dt: s.h.dt, shape: append([]int{}, dims...), data: data})
		}
	}
	return channelVec(c.X(2), y.Rank())
}

// expandBias repeats bias b [M] to [n, M, inner] (row-major).
func expandBias[T any](b []T, n, inner int) []T {
	out := make([]T, 0, n*len(b)*inner)
	for i := 0; i < n; i++ {
		for _, v := range b {
			for j := 0; j < inner; j++ {
				out = append(out, v)
			}
		}
	}
	return out
}

// groupedWeightDims is the shape im2colConv reshapes the weight w [M,
// C/groups, K...] to: [groups, M/groups, C/groups·K] ([M, K] for a
// depthwise Conv); w's own shape when the group count does not divide M.
func groupedWeightDims(w *graph.Node, groups int) []int {
	ws := w.Shape().Dimensions
	k := 1
	for _, d := range ws[2:] {
		k *= d
	}
	if groups < 1 || ws[0]%groups != 0 {
		return ws
	}
	if ws[1] == 1 && ws[0] == groups {
		return []int{ws[0], k}
	}
	return []int{groups, ws[0] / groups, ws[1] * k}
}

// im2colConv computes the ONNX Conv of x [N, C, S...] with the weight w of
// shape ws [M, C/groups, K...] (w itself may already be reshaped, e.g. to
// groupedWeightDims) for the resolved geometry g (no bias), as described
// above.
func im2colConv(x, w *graph.Node, ws []int, g *convGeom, groups int) (*graph.Node, error) {
	xs := x.Shape().Dimensions
	ns := len(xs) - 2
	if len(ws) != ns+2 || len(g.kernel) != ns || len(g.out) != ns {
		return nil, fmt.Errorf("conv: input rank %d, weight rank %d, kernel %v do not match", len(xs), len(ws), g.kernel)
	}
	n, cin, m := xs[0], xs[1], ws[0]
	if groups < 1 || cin%groups != 0 || m%groups != 0 || ws[1] != cin/groups {
		return nil, fmt.Errorf("conv: %d input channels, weight %v and group %d do not match", cin, ws, groups)
	}
	for i := 0; i < ns; i++ {
		if ws[2+i] != g.kernel[i] {
			return nil, fmt.Errorf("conv: kernel_shape %v does not match weight %v", g.kernel, ws)
		}
	}
	cg, mg := cin/groups, m/groups
	p, k := 1, 1
	for i := 0; i < ns; i++ {
		p *= g.out[i]
		k *= g.kernel[i]
	}
	outDims := append([]int{n, m}, g.out...)
	if p == 0 || n == 0 {
		return graph.Zeros(x.Graph(), shapes.Make(x.DType(), outDims...)), nil
	}

	xp := padSpatialAxes(x, g, 2, 0)
	if cg == 1 && mg == 1 && groups > 1 {
		return depthwiseConv(xp, w, g, outDims), nil
	}

	// cols: [N, C, K, P]
	var cols *graph.Node
	if k == 1 {
		cols = graph.Reshape(windowSliceAxes(xp, g, make([]int, ns), 2), n, cin, 1, p)
	} else {
		parts := make([]*graph.Node, 0, k)
		forEachKernelPos(g.kernel, func(pos []int) {
			parts = append(parts, graph.Reshape(windowSliceAxes(xp, g, pos, 2), n, cin, 1, p))
		})
		cols = graph.Concatenate(parts, 2)
	}

	var y *graph.Node
	if groups == 1 {
		lhs := reshapeIfNeeded(w, m, cin*k)
		rhs := graph.Reshape(cols, n, cin*k, p)
		y = graph.DotGeneral(lhs, []int{1}, nil, rhs, []int{1}, nil) // [M, N, P]
		if n > 1 {
			y = graph.TransposeAllDims(y, 1, 0, 2)
		}
	} else {
		lhs := reshapeIfNeeded(w, groups, mg, cg*k)
		rhs := graph.Reshape(cols, n, groups, cg*k, p)
		y = graph.DotGeneral(lhs, []int{2}, []int{0}, rhs, []int{2}, []int{1}) // [G, Mg, N, P]
		y = graph.TransposeAllDims(y, 2, 0, 1, 3)
	}
	return graph.Reshape(y, outDims...), nil
}

// depthwiseConv is a Conv with one input and one output channel per group:
// the sum over kernel positions of the shifted input times that position's
// per-channel weight.
func depthwiseConv(xp, w *graph.Node, g *convGeom, outDims []int) *graph.Node {
	m := outDims[1]
	rank := len(outDims)
	k := 1
	for _, kk := range g.kernel {
		k *= kk
	}
	wk := reshapeIfNeeded(w, m, k)
	bdims := make([]int, rank)
	for i := range bdims {
		bdims[i] = 1
	}
	bdims[1] = m
	var acc *graph.Node
	idx := 0
	forEachKernelPos(g.kernel, func(pos []int) {
		wpos := graph.Reshape(graph.Slice(wk, graph.AxisRange(), graph.AxisElem(idx)), bdims...)
		term := graph.Mul(windowSliceAxes(xp, g, pos, 2), wpos)
		if acc == nil {
			acc = term
		} else {
			acc = graph.Add(acc, term)
		}
		idx++
	})
	return acc
}

// reshapeIfNeeded reshapes x to dims unless it already has them.
func reshapeIfNeeded(x *graph.Node, dims ...int) *graph.Node {
	if shapeEq(x.Shape().Dimensions, dims) {
		return x
	}
	return graph.Reshape(x, dims...)
}

// forEachKernelPos calls f with every kernel position, in row-major order
// (the order of the flattened weight).
func forEachKernelPos(kernel []int, f func(pos []int)) {
	pos := make([]int, len(kernel))
	for {
		f(pos)
		i := len(kernel) - 1
		for ; i >= 0; i-- {
			pos[i]++
			if pos[i] < kernel[i] {
				break
			}
			pos[i] = 0
		}
		if i < 0 {
			return
		}
	}
}
