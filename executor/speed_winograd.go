package executor

import (
	"github.com/gomlx/gomlx/pkg/core/graph"
)

// Winograd F(2×2, 3×3) for 3×3, stride 1, undilated, ungrouped 2-D Conv on
// the pure-Go backend.
//
// The output is cut into 2×2 tiles; each tile needs a 4×4 input patch d.
// With the transforms V = Bᵀ d B (input, additions only), U = G g Gᵀ
// (weights, done once on the host) and Y = Aᵀ M A (output, additions
// only), the 36 multiplications per tile and channel pair of the direct
// method become 16: M[ξ] = U[ξ] · V[ξ] for the 16 positions ξ of the 4×4
// transformed tile, which is one DotGeneral with a batch axis of 16
// ([16, M, C] × [16, tiles, C]), already in DotGeneral's preferred layout
// (no operand copy) and spread over the backend's workers by batch.
//
// Bᵀ = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
// G  = [1 0 0; ½ ½ ½; ½ -½ ½; 0 0 1]
// Aᵀ = [1 1 1 0; 0 1 -1 -1]

// Winograd is used when its 16 multiplications per 2×2 tile, tiles
// rounded up, are at most winogradMaxMulRatio of the direct method's
// 9·OH·OW: every output side but 1 (3×3 outputs: 64 vs 81, measured 4 %
// less CPU on squeezenet than im2col; 1×1: 16 vs 9).
const winogradMaxMulRatio = 0.8

// useWinograd reports whether the Conv (groups, geometry g, input x) fits
// F(2×2, 3×3) and is large enough to gain from it.
func useWinograd(x *graph.Node, g *convGeom, groups int) bool {
	if groups != 1 || len(g.kernel) != 2 || x.Rank() != 4 {
		return false
	}
	for i := 0; i < 2; i++ {
		if g.kernel[i] != 3 || g.strides[i] != 1 || g.dil[i] != 1 || g.out[i] < 1 {
			return false
		}
	}
	th, tw := (g.out[0]+1)/2, (g.out[1]+1)/2
	return float64(16*th*tw) <= winogradMaxMulRatio*float64(9*g.out[0]*g.out[1])
}

// winogradU returns the transformed weights of the Conv of c as a graph
// constant when Winograd applies (see useWinograd) and the weights are
// constant, nil otherwise.
func (c *lctx) winogradU(x *graph.Node, g *convGeom, groups int) *graph.Node {
	if !c.lowering || !useWinograd(x, g, groups) {
		return nil
	}
	s := c.in(1)
	if !s.valStatic || s.h == nil || len(s.h.shape) != 4 || s.h.shape[1] != x.Shape().Dimensions[1] {
		return nil
	}
	u := winogradWeights(s.h)
	if u == nil {
		return nil
	}
	return c.Const(u)
}

// winogradWeights returns U = G g Gᵀ of the constant Conv weight h [M, C,
// 3, 3] as a host tensor [16, M, C] (position ξ = 4i+j major), or nil if
// the storage is not float32 or float64.
func winogradWeights(h *htensor) *htensor {
	if len(h.shape) != 4 || h.shape[2] != 3 || h.shape[3] != 3 {
		return nil
	}
	m, c := h.shape[0], h.shape[1]
	switch d := h.data.(type) {
	case []float32:
		return &htensor{dt: h.dt, shape: []int{16, m, c}, data: winogradU(d, m, c)}
	case []float64:
		return &htensor{dt: h.dt, shape: []int{16, m, c}, data: winogradU(d, m, c)}
	}
	return nil
}

func winogradU[T float32 | float64](w []T, m, c int) []T {
	gm := [4][3]float64{{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}}
	out := make([]T, 16*m*c)
	for mi := 0; mi < m; mi++ {
		for ci := 0; ci < c; ci++ {
			k := w[(mi*c+ci)*9 : (mi*c+ci)*9+9]
			// t = G g: [4, 3]
			var t [4][3]float64
			for i := 0; i < 4; i++ {
				for b := 0; b < 3; b++ {
					t[i][b] = gm[i][0]*float64(k[b]) + gm[i][1]*float64(k[3+b]) + gm[i][2]*float64(k[6+b])
				}
			}
			// U = t Gᵀ: [4, 4]
			for i := 0; i < 4; i++ {
				for j := 0; j < 4; j++ {
					u := t[i][0]*gm[j][0] + t[i][1]*gm[j][1] + t[i][2]*gm[j][2]
					out[((4*i+j)*m+mi)*c+ci] = T(u)
				}
			}
		}
	}
	return out
}

// winogradConv computes the Conv of x [N, C, H, W] with the transformed
// weights u [16, M, C] (see winogradWeights) for geometry g (3×3, stride
// 1, undilated), no bias: [N, M, OH, OW].
func winogradConv(x, u *graph.Node, g *convGeom) *graph.Node {
	xs := x.Shape().Dimensions
	n, c := xs[0], xs[1]
	m := u.Shape().Dimensions[1]
	oh, ow := g.out[0], g.out[1]
	th, tw := (oh+1)/2, (ow+1)/2
	nt := n * th * tw

	// Channels last, zero padded so that every tile has its 4×4 patch.
	xt := graph.TransposeAllDims(x, 0, 2, 3, 1) // [N, H, W, C]
	padG := &convGeom{kernel: g.kernel, strides: g.strides, dil: g.dil, padB: g.padB, padE: g.padE, out: []int{2 * th, 2 * tw}}
	xp := padSpatialAxes(xt, padG, 1, 0)
	tileG := &convGeom{kernel: g.kernel, strides: []int{2, 2}, dil: []int{1, 1}, out: []int{th, tw}}
	var d [4][4]*graph.Node
	for i := 0; i < 4; i++ {
		for j := 0; j < 4; j++ {
			d[i][j] = windowSliceAxes(xp, tileG, []int{i, j}, 1) // [N, th, tw, C]
		}
	}
	// V = Bᵀ d B
	var t, v [4][4]*graph.Node
	for j := 0; j < 4; j++ {
		t[0][j] = graph.Sub(d[0][j], d[2][j])
		t[1][j] = graph.Add(d[1][j], d[2][j])
		t[2][j] = graph.Sub(d[2][j], d[1][j])
		t[3][j] = graph.Sub(d[1][j], d[3][j])
	}
	// (Few ops matter: simplego runs each op as its own task.)
	parts := make([]*graph.Node, 0, 16)
	for i := 0; i < 4; i++ {
		v[i][0] = graph.Sub(t[i][0], t[i][2])
		v[i][1] = graph.Add(t[i][1], t[i][2])
		v[i][2] = graph.Sub(t[i][2], t[i][1])
		v[i][3] = graph.Sub(t[i][1], t[i][3])
		parts = append(parts, v[i][:]...)
	}
	vv := graph.Reshape(graph.Concatenate(parts, 0), 16, nt, c)           // [16, N·T, C]
	mm := graph.DotGeneral(u, []int{2}, []int{0}, vv, []int{2}, []int{0}) // [16, M, N·T]

	// Y = Aᵀ M A
	var e [4][4]*graph.Node
	for i := 0; i < 4; i++ {
		for j := 0; j < 4; j++ {
			e[i][j] = graph.Slice(mm, graph.AxisElem(4*i+j)) // [1, M, N·T]
		}
	}
	var s [2][4]*graph.Node
	for j := 0; j < 4; j++ {
		s[0][j] = graph.Add(graph.Add(e[0][j], e[1][j]), e[2][j])
		s[1][j] = graph.Sub(graph.Sub(e[1][j], e[2][j]), e[3][j])
	}
	rows := make([]*graph.Node, 2)
	for r := 0; r < 2; r++ {
		y0 := graph.Add(graph.Add(s[r][0], s[r][1]), s[r][2])
		y1 := graph.Sub(graph.Sub(s[r][1], s[r][2]), s[r][3])
		rows[r] = graph.Concatenate([]*graph.Node{
			graph.Reshape(y0, m, n, th, 1, tw, 1),
			graph.Reshape(y1, m, n, th, 1, tw, 1),
		}, 5)
	}
	y := graph.Reshape(graph.Concatenate(rows, 3), m, n, 2*th, 2*tw)
	if 2*th != oh || 2*tw != ow {
		y = graph.Slice(y, graph.AxisRange(), graph.AxisRange(), graph.AxisRange(0, oh), graph.AxisRange(0, ow))
	}
	if n > 1 {
		return graph.TransposeAllDims(y, 1, 0, 2, 3)
	}
	return graph.Reshape(y, n, m, oh, ow)
}
