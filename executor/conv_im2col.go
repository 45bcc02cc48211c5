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
	y, err := im2colConv(x, w, g, int(c.AInt("group", 1)), speedSplitTmp())
	if err != nil {
		return false, err
	}
	if c.Has(2) {
		y = graph.Add(y, channelVec(c.X(2), y.Rank()))
	}
	c.Out(0, y, c.DT(0))
	return true, nil
}

// im2colConv computes the ONNX Conv of x [N, C, S...] with w [M, C/groups,
// K...] for the resolved geometry g (no bias), as described above. split
// is the number of parts the output channels are cut into so that the
// backend's workers share the product (1: no split).
func im2colConv(x, w *graph.Node, g *convGeom, groups, split int) (*graph.Node, error) {
	xs, ws := x.Shape().Dimensions, w.Shape().Dimensions
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

	xp := padSpatial(x, g, 0)
	if cg == 1 && mg == 1 && groups > 1 {
		return depthwiseConv(xp, w, g, outDims), nil
	}

	// cols: [N, C, K, P]
	var cols *graph.Node
	if k == 1 {
		cols = graph.Reshape(windowSlice(xp, g, make([]int, ns)), n, cin, 1, p)
	} else {
		parts := make([]*graph.Node, 0, k)
		forEachKernelPos(g.kernel, func(pos []int) {
			parts = append(parts, graph.Reshape(windowSlice(xp, g, pos), n, cin, 1, p))
		})
		cols = graph.Concatenate(parts, 2)
	}

	var y *graph.Node
	if groups == 1 && split > 1 && m%split == 0 && m/split >= 4 {
		// The output channels as a batch axis of split parts: simplego
		// runs the parts of a batch on separate workers (it parallelizes
		// small products over the batch only). cols is repeated per part,
		// a copy of 2/M of the product's work per element.
		lhs := graph.Reshape(w, split, m/split, cin*k)
		rhs := graph.BroadcastToDims(graph.Reshape(cols, 1, n, cin*k, p), split, n, cin*k, p)
		y = graph.DotGeneral(lhs, []int{2}, []int{0}, rhs, []int{2}, []int{0}) // [S, M/S, N, P]
		if n > 1 {
			y = graph.TransposeAllDims(y, 2, 0, 1, 3)
		}
	} else if groups == 1 {
		lhs := graph.Reshape(w, m, cin*k)
		rhs := graph.Reshape(cols, n, cin*k, p)
		y = graph.DotGeneral(lhs, []int{1}, nil, rhs, []int{1}, nil) // [M, N, P]
		if n > 1 {
			y = graph.TransposeAllDims(y, 1, 0, 2)
		}
	} else {
		lhs := graph.Reshape(w, groups, mg, cg*k)
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
	wk := graph.Reshape(w, m, k)
	bdims := make([]int, rank)
	for i := range bdims {
		bdims[i] = 1
	}
	bdims[1] = m
	var acc *graph.Node
	idx := 0
	forEachKernelPos(g.kernel, func(pos []int) {
		wpos := graph.Reshape(graph.Slice(wk, graph.AxisRange(), graph.AxisElem(idx)), bdims...)
		term := graph.Mul(windowSlice(xp, g, pos), wpos)
		if acc == nil {
			acc = term
		} else {
			acc = graph.Add(acc, term)
		}
		idx++
	})
	return acc
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

// windowSlice takes, from the padded input xp, the input element that
// kernel position pos meets at every output position: [N, C, O...].
func windowSlice(xp *graph.Node, g *convGeom, pos []int) *graph.Node {
	dims := xp.Shape().Dimensions
	specs := []graph.SliceAxisSpec{graph.AxisRange(), graph.AxisRange()}
	identity := true
	for i := range g.out {
		start := pos[i] * g.dil[i]
		end := start + (g.out[i]-1)*g.strides[i] + 1
		if start != 0 || end != dims[2+i] || g.strides[i] != 1 && g.out[i] > 1 {
			identity = false
		}
		spec := graph.AxisRange(start, end)
		if g.strides[i] != 1 {
			spec = spec.Stride(g.strides[i])
		}
		specs = append(specs, spec)
	}
	if identity {
		return xp
	}
	return graph.Slice(xp, specs...)
}
