package executor

import (
	"fmt"
	"math"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/onnxconv/onnxconv/canonical"
)

// MatMul, Gemm, convolutions and pools (with MaxUnpool, Col2Im),
// normalizations (Layer, RMS, Batch, Instance; host: LpNormalization,
// MeanVarianceNormalization, LRN, GroupNormalization), Dropout.

func registerNN(r registry) {
	r.lower(lowerMatMul, "MatMul")
	r.lower(lowerGemm, "Gemm")
	r.lower(lowerLayerNorm, "LayerNormalization")
	r.lower(lowerBatchNorm, "BatchNormalization")
	r.lower(lowerInstanceNorm, "InstanceNormalization")
	r.lower(lowerDropout, "Dropout")
	r.lower(lowerRMSNorm, "RMSNormalization")
	r.lower(lowerConv, "Conv")
	for _, k := range []string{"MaxPool", "AveragePool", "LpPool", "GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool"} {
		k := k
		r.lower(func(c *lctx) error { return lowerPool(c, k) }, k)
	}
	r.host(hostMaxPool, "MaxPool")
	r.host(hostConvTranspose, "ConvTranspose")
	r.host(hostDeformConv, "DeformConv")
	r.host(hostMaxUnpool, "MaxUnpool")
	r.host(hostCol2Im, "Col2Im")
	r.host(hostLpNorm, "LpNormalization")
	r.host(hostMVN, "MeanVarianceNormalization")
	r.host(hostLRN, "LRN")
	r.host(hostGroupNorm, "GroupNormalization")
}

func lowerMatMul(c *lctx) error {
	dt := c.DT(0)
	if _, ok := gomlxDType(dt); !ok {
		return errUseHost
	}
	a, b := c.X(0), c.X(1)
	ra, rb := a.Rank(), b.Rank()
	if ra == 1 {
		a = graph.Reshape(a, 1, a.Shape().Dimensions[0])
	}
	if rb == 1 {
		b = graph.Reshape(b, b.Shape().Dimensions[0], 1)
	}
	// broadcast batch dims
	as, bs := a.Shape().Dimensions, b.Shape().Dimensions
	batch, err := bcastShape(as[:len(as)-2], bs[:len(bs)-2])
	if err != nil {
		return err
	}
	a = bcastTo(a, append(append([]int{}, batch...), as[len(as)-2:]...))
	b = bcastTo(b, append(append([]int{}, batch...), bs[len(bs)-2:]...))
	nb := len(batch)
	bax := make([]int, nb)
	for i := range bax {
		bax[i] = i
	}
	y := graph.DotGeneral(a, []int{nb + 1}, bax, b, []int{nb}, bax)
	out := append([]int{}, batch...)
	if ra != 1 {
		out = append(out, as[len(as)-2])
	}
	if rb != 1 {
		out = append(out, bs[len(bs)-1])
	}
	c.Out(0, graph.Reshape(y, out...), dt)
	return nil
}

func lowerGemm(c *lctx) error {
	dt := c.DT(0)
	if _, ok := gomlxDType(dt); !ok {
		return errUseHost
	}
	a, b := c.X(0), c.X(1)
	if c.AInt("transA", 0) == 1 {
		a = graph.TransposeAllDims(a, 1, 0)
	}
	if c.AInt("transB", 0) == 1 {
		b = graph.TransposeAllDims(b, 1, 0)
	}
	y := graph.DotGeneral(a, []int{1}, nil, b, []int{0}, nil)
	if alpha := float64(c.AFloat("alpha", 1)); alpha != 1 {
		y = graph.Mul(y, scalarLike(y, alpha))
	}
	if c.Has(2) {
		cc := c.X(2)
		if beta := float64(c.AFloat("beta", 1)); beta != 1 {
			cc = graph.Mul(cc, scalarLike(cc, beta))
		}
		y = graph.Add(y, bcastTo(cc, y.Shape().Dimensions))
	}
	c.Out(0, y, dt)
	return nil
}

func lowerLayerNorm(c *lctx) error {
	dt := c.DT(0)
	if !isFloatType(dt) {
		return errUseHost
	}
	x := c.X(0)
	sh := x.Shape().Dimensions
	r := len(sh)
	ax, err := normAxis(c.AInt("axis", -1), r)
	if err != nil {
		return err
	}
	eps := float64(c.AFloat("epsilon", 1e-5))
	var axes []int
	for i := ax; i < r; i++ {
		axes = append(axes, i)
	}
	mean := graph.ReduceAndKeep(x, graph.ReduceMean, axes...)
	d := graph.Sub(x, mean)
	v := graph.ReduceAndKeep(graph.Mul(d, d), graph.ReduceMean, axes...)
	inv := graph.Rsqrt(graph.Add(v, scalarLike(v, eps)))
	y := graph.Mul(d, inv)
	y = graph.Mul(y, bcastTo(c.X(1), sh))
	if c.Has(2) {
		y = graph.Add(y, bcastTo(c.X(2), sh))
	}
	c.Out(0, y, dt)
	if c.HasOut(1) {
		c.Out(1, mean, dt)
	}
	if c.HasOut(2) {
		c.Out(2, inv, dt)
	}
	return nil
}

func lowerRMSNorm(c *lctx) error {
	dt := c.DT(0)
	if !isFloatType(dt) {
		return errUseHost
	}
	x := c.X(0)
	sh := x.Shape().Dimensions
	r := len(sh)
	ax, err := normAxis(c.AInt("axis", -1), r)
	if err != nil {
		return err
	}
	eps := float64(c.AFloat("epsilon", 1e-5))
	var axes []int
	for i := ax; i < r; i++ {
		axes = append(axes, i)
	}
	ms := graph.ReduceAndKeep(graph.Mul(x, x), graph.ReduceMean, axes...)
	y := graph.Mul(x, graph.Rsqrt(graph.Add(ms, scalarLike(ms, eps))))
	y = graph.Mul(y, bcastTo(c.X(1), sh))
	c.Out(0, y, dt)
	return nil
}

// channelVec reshapes a [C] vector to broadcast over NC... inputs.
func channelVec(v *graph.Node, rank int) *graph.Node {
	dims := make([]int, rank)
	for i := range dims {
		dims[i] = 1
	}
	dims[1] = v.Shape().Dimensions[0]
	return graph.Reshape(v, dims...)
}

func lowerBatchNorm(c *lctx) error {
	dt := c.DT(0)
	if !isFloatType(dt) {
		return errUseHost
	}
	training := c.AInt("training_mode", 0) == 1 || c.NOut() > 1 && c.ver < 14 && c.HasOut(1)
	x := c.X(0)
	sh := x.Shape().Dimensions
	r := len(sh)
	eps := float64(c.AFloat("epsilon", 1e-5))
	conv := func(i int) *graph.Node {
		v := c.X(i)
		if v.DType() != x.DType() {
			v = graph.ConvertDType(v, x.DType())
		}
		return v
	}
	scale, bias, mean, variance := conv(1), conv(2), conv(3), conv(4)
	if training {
		axes := []int{0}
		for i := 2; i < r; i++ {
			axes = append(axes, i)
		}
		bm := graph.ReduceMean(x, axes...)
		d := graph.Sub(x, channelVec(bm, r))
		bv := graph.ReduceMean(graph.Mul(d, d), axes...)
		y := graph.Mul(d, graph.Rsqrt(graph.Add(channelVec(bv, r), scalarLike(d, eps))))
		y = graph.Add(graph.Mul(y, channelVec(scale, r)), channelVec(bias, r))
		c.Out(0, y, dt)
		mom := float64(c.AFloat("momentum", 0.9))
		if c.HasOut(1) {
			c.Out(1, graph.Add(graph.MulScalar(mean, mom), graph.MulScalar(bm, 1-mom)), c.DT(3))
		}
		if c.HasOut(2) {
			c.Out(2, graph.Add(graph.MulScalar(variance, mom), graph.MulScalar(bv, 1-mom)), c.DT(4))
		}
		return nil
	}
	y := graph.Sub(x, channelVec(mean, r))
	y = graph.Mul(y, graph.Rsqrt(graph.Add(channelVec(variance, r), scalarLike(y, eps))))
	y = graph.Add(graph.Mul(y, channelVec(scale, r)), channelVec(bias, r))
	c.Out(0, y, dt)
	return nil
}

func lowerInstanceNorm(c *lctx) error {
	dt := c.DT(0)
	if !isFloatType(dt) {
		return errUseHost
	}
	x := c.X(0)
	r := x.Rank()
	eps := float64(c.AFloat("epsilon", 1e-5))
	var axes []int
	for i := 2; i < r; i++ {
		axes = append(axes, i)
	}
	mean := graph.ReduceAndKeep(x, graph.ReduceMean, axes...)
	d := graph.Sub(x, mean)
	v := graph.ReduceAndKeep(graph.Mul(d, d), graph.ReduceMean, axes...)
	y := graph.Mul(d, graph.Rsqrt(graph.Add(v, scalarLike(v, eps))))
	y = graph.Add(graph.Mul(y, channelVec(c.X(1), r)), channelVec(c.X(2), r))
	c.Out(0, y, dt)
	return nil
}

func lowerDropout(c *lctx) error {
	dt := c.DT(0)
	training := false
	if c.ver >= 12 && c.Has(2) {
		t, err := c.H(2)
		if err != nil {
			return err
		}
		training = t.i64()[0] != 0
	}
	if training {
		ratio := 0.5
		if c.Has(1) {
			rh, err := c.H(1)
			if err != nil {
				return err
			}
			ratio = rh.f64()[0]
		}
		if ratio != 0 {
			return errUseHost // random mask: ops_random.go
		}
	}
	x := c.X(0)
	c.Out(0, x, dt)
	if c.HasOut(1) {
		mask := graph.GreaterOrEqual(graph.OnesLike(graph.ConvertDType(x, gdt(canonical.Float))), graph.Scalar(x.Graph(), gdt(canonical.Float), 0))
		if c.ver < 10 {
			c.Out(1, graph.ConvertDType(mask, x.DType()), dt)
		} else {
			c.Out(1, mask, canonical.Bool)
		}
	}
	return nil
}

var _ = math.Sqrt

// convGeom is the resolved geometry of a Conv or pool.
type convGeom struct {
	kernel, strides, dil []int
	padB, padE           []int
	out                  []int
}

func resolveGeom(c *lctx, in []int, kernel []int, ceil bool) (*convGeom, error) {
	n := len(in)
	g := &convGeom{kernel: kernel, strides: make([]int, n), dil: make([]int, n), padB: make([]int, n), padE: make([]int, n), out: make([]int, n)}
	st, dl, pads := c.AInts("strides", nil), c.AInts("dilations", nil), c.AInts("pads", nil)
	for i := 0; i < n; i++ {
		g.strides[i], g.dil[i] = 1, 1
		if st != nil {
			g.strides[i] = int(st[i])
		}
		if dl != nil {
			g.dil[i] = int(dl[i])
		}
		if pads != nil {
			g.padB[i], g.padE[i] = int(pads[i]), int(pads[i+n])
		}
	}
	ap := c.AStr("auto_pad", "NOTSET")
	for i := 0; i < n; i++ {
		ek := (kernel[i]-1)*g.dil[i] + 1
		switch ap {
		case "SAME_UPPER", "SAME_LOWER":
			o := (in[i] + g.strides[i] - 1) / g.strides[i]
			total := (o-1)*g.strides[i] + ek - in[i]
			if total < 0 {
				total = 0
			}
			if ap == "SAME_UPPER" {
				g.padB[i] = total / 2
			} else {
				g.padB[i] = total - total/2
			}
			g.padE[i] = total - g.padB[i]
			g.out[i] = o
		case "VALID":
			g.padB[i], g.padE[i] = 0, 0
			g.out[i] = (in[i]-ek)/g.strides[i] + 1
		default:
			span := in[i] + g.padB[i] + g.padE[i] - ek
			if ceil {
				o := (span+g.strides[i]-1)/g.strides[i] + 1
				// the last window must start inside the input or left padding
				if (o-1)*g.strides[i] >= in[i]+g.padB[i] {
					o--
				}
				g.out[i] = o
			} else {
				g.out[i] = span/g.strides[i] + 1
			}
		}
		if g.out[i] < 0 {
			return nil, fmt.Errorf("kernel larger than the padded input")
		}
	}
	return g, nil
}

func lowerConv(c *lctx) error {
	dt := c.DT(0)
	if !isFloatType(dt) {
		return errUseHost
	}
	x, w := c.X(0), c.X(1)
	xs, ws := x.Shape().Dimensions, w.Shape().Dimensions
	ns := len(xs) - 2
	if ns < 1 {
		return fmt.Errorf("Conv needs a spatial dimension")
	}
	kernel := ws[2:]
	if ks := c.AInts("kernel_shape", nil); ks != nil {
		kernel = toInts(ks)
	}
	g, err := resolveGeom(c, xs[2:], kernel, false)
	if err != nil {
		return err
	}
	if done, err := lowerConvIm2col(c, x, w, g); done || err != nil {
		return err
	}
	axes := graph.ConvolveAxesConfig{InputBatch: 0, InputChannels: 1, KernelOutputChannels: 0, KernelInputChannels: 1, OutputBatch: 0, OutputChannels: 1}
	pads := make([][2]int, ns)
	for i := 0; i < ns; i++ {
		axes.InputSpatial = append(axes.InputSpatial, i+2)
		axes.KernelSpatial = append(axes.KernelSpatial, i+2)
		axes.OutputSpatial = append(axes.OutputSpatial, i+2)
		pads[i] = [2]int{g.padB[i], g.padE[i]}
	}
	groups := int(c.AInt("group", 1))
	y := graph.ConvGeneral(x, w, axes, g.strides, pads, nil, g.dil, groups, 1)
	if c.Has(2) {
		y = graph.Add(y, channelVec(c.X(2), len(xs)))
	}
	c.Out(0, y, dt)
	return nil
}

func lowerPool(c *lctx, kind string) error {
	dt := c.DT(0)
	if !isFloatType(dt) || c.NOut() > 1 && c.HasOut(1) {
		return errUseHost
	}
	x := c.X(0)
	xs := x.Shape().Dimensions
	r := len(xs)
	ns := r - 2
	if strings.HasPrefix(kind, "Global") {
		axes := make([]int, ns)
		for i := range axes {
			axes[i] = i + 2
		}
		var y *graph.Node
		switch kind {
		case "GlobalMaxPool":
			y = graph.ReduceAndKeep(x, graph.ReduceMax, axes...)
		case "GlobalAveragePool":
			y = graph.ReduceAndKeep(x, graph.ReduceMean, axes...)
		default:
			p := float64(c.AInt("p", 2))
			y = graph.Pow(graph.ReduceAndKeep(graph.Pow(graph.Abs(x), scalarLike(x, p)), graph.ReduceSum, axes...), scalarLike(x, 1/p))
		}
		c.Out(0, y, dt)
		return nil
	}
	kernel := toInts(c.AInts("kernel_shape", nil))
	if len(kernel) != ns {
		return fmt.Errorf("kernel_shape %v for %d spatial dims", kernel, ns)
	}
	g, err := resolveGeom(c, xs[2:], kernel, c.AInt("ceil_mode", 0) == 1)
	if err != nil {
		return err
	}
	if kind == "MaxPool" {
		if done, err := lowerMaxPoolSlices(c, x, g); done || err != nil {
			return err
		}
	}
	win := append([]int{1, 1}, kernel...)
	strides := append([]int{1, 1}, g.strides...)
	dil := append([]int{1, 1}, g.dil...)
	pads := [][2]int{{0, 0}, {0, 0}}
	for i := 0; i < ns; i++ {
		// extra end padding so that ceil_mode windows exist
		need := (g.out[i]-1)*g.strides[i] + (kernel[i]-1)*g.dil[i] + 1 - (xs[2+i] + g.padB[i])
		pe := g.padE[i]
		if need > pe {
			pe = need
		}
		pads = append(pads, [2]int{g.padB[i], pe})
	}
	var y *graph.Node
	switch kind {
	case "MaxPool":
		y = graph.BackendReduceWindow(x, backends.ReduceOpMax, win, strides, nil, dil, pads)
	case "LpPool":
		p := float64(c.AInt("p", 2))
		s := graph.BackendReduceWindow(graph.Pow(graph.Abs(x), scalarLike(x, p)), backends.ReduceOpSum, win, strides, nil, dil, pads)
		y = graph.Pow(s, scalarLike(s, 1/p))
	default: // AveragePool
		s := graph.BackendReduceWindow(x, backends.ReduceOpSum, win, strides, nil, dil, pads)
		if c.AInt("count_include_pad", 0) == 1 {
			// divisor counts the explicit pads but not the ceil extension
			ones := graph.OnesLike(x)
			padsIn := [][2]int{{0, 0}, {0, 0}}
			for i := 0; i < ns; i++ {
				padsIn = append(padsIn, [2]int{0, 0})
			}
			_ = padsIn
			cnt := graph.BackendReduceWindow(padWith(ones, g, ns, 1), backends.ReduceOpSum, win, strides, nil, dil, shiftPads(pads, g, ns))
			y = graph.Div(s, cnt)
		} else {
			cnt := graph.BackendReduceWindow(graph.OnesLike(x), backends.ReduceOpSum, win, strides, nil, dil, pads)
			y = graph.Div(s, cnt)
		}
	}
	c.Out(0, y, dt)
	return nil
}

// padWith pads x's spatial dims by the explicit pads with value v (by
// concatenation: simplego has no Pad).
func padWith(x *graph.Node, g *convGeom, ns int, v float64) *graph.Node {
	for i := 0; i < ns; i++ {
		ax := i + 2
		dims := x.Shape().Dimensions
		parts := []*graph.Node{}
		if g.padB[i] > 0 {
			d := append([]int{}, dims...)
			d[ax] = g.padB[i]
			parts = append(parts, graph.FillScalar(x.Graph(), shapes.Make(x.DType(), d...), v))
		}
		parts = append(parts, x)
		if g.padE[i] > 0 {
			d := append([]int{}, dims...)
			d[ax] = g.padE[i]
			parts = append(parts, graph.FillScalar(x.Graph(), shapes.Make(x.DType(), d...), v))
		}
		if len(parts) > 1 {
			x = graph.Concatenate(parts, ax)
		}
	}
	return x
}

// shiftPads removes the explicit pads (already materialized by padWith),
// keeping the ceil-mode extension.
func shiftPads(pads [][2]int, g *convGeom, ns int) [][2]int {
	out := append([][2]int{}, pads...)
	for i := 0; i < ns; i++ {
		out[i+2] = [2]int{0, pads[i+2][1] - g.padE[i]}
		if out[i+2][1] < 0 {
			out[i+2][1] = 0
		}
	}
	return out
}

// hostMaxPool computes MaxPool with its Indices output.
func hostMaxPool(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	xs := h.shape
	ns := len(xs) - 2
	kernel := toInts(c.AInts("kernel_shape", nil))
	g, err := resolveGeom(c, xs[2:], kernel, c.AInt("ceil_mode", 0) == 1)
	if err != nil {
		return err
	}
	colMajor := c.AInt("storage_order", 0) == 1
	out := append([]int{xs[0], xs[1]}, g.out...)
	v := h.f64()
	res := make([]float64, numel(out))
	ind := make([]int64, numel(out))
	sp := numel(xs[2:])
	st := strides(xs[2:])
	k := 0
	forEachIndex(out, func(o []int) {
		base := (o[0]*xs[1] + o[1]) * sp
		best, bi := math.Inf(-1), -1
		forEachIndex(kernel, func(kk []int) {
			f := 0
			for d := 0; d < ns; d++ {
				p := o[2+d]*g.strides[d] - g.padB[d] + kk[d]*g.dil[d]
				if p < 0 || p >= xs[2+d] {
					return
				}
				f += p * st[d]
			}
			if x := v[base+f]; x > best || bi < 0 {
				best, bi = x, f
			}
		})
		res[k] = best
		if colMajor && ns == 2 {
			i, j := bi/xs[3], bi%xs[3]
			ind[k] = int64((o[0]*xs[1]+o[1])*sp + j*xs[2] + i)
		} else {
			ind[k] = int64(base + bi)
		}
		k++
	})
	c.OutH(0, fromF64(h.dt, out, res))
	if c.HasOut(1) {
		c.OutH(1, fromI64(canonical.Int64, out, ind))
	}
	return nil
}

// hostConvTranspose computes ConvTranspose directly.
func hostConvTranspose(c *lctx) error {
	xh, err := c.H(0)
	if err != nil {
		return err
	}
	wh, err := c.H(1)
	if err != nil {
		return err
	}
	xs, ws := xh.shape, wh.shape
	ns := len(xs) - 2
	cin := xs[1]
	kernel, strd, dil, pb, out, groups, cout := convTransposeGeom(c, xs, ws)
	oshp := append([]int{xs[0], cout}, out...)
	res := make([]float64, numel(oshp))
	x, w := xh.f64(), wh.f64()
	cinG, coutG := cin/groups, cout/groups
	spIn, spOut, spK := numel(xs[2:]), numel(out), numel(kernel)
	ost := strides(out)
	for n := 0; n < xs[0]; n++ {
		for gI := 0; gI < groups; gI++ {
			for ic := 0; ic < cinG; ic++ {
				ci := gI*cinG + ic
				xin := x[(n*cin+ci)*spIn : (n*cin+ci+1)*spIn]
				kidx := 0
				_ = kidx
				forEachIndexFlat(xs[2:], func(ip []int, fi int) {
					xv := xin[fi]
					if xv == 0 {
						return
					}
					forEachIndexFlat(kernel, func(kp []int, fk int) {
						f := 0
						for d := 0; d < ns; d++ {
							p := ip[d]*strd[d] + kp[d]*dil[d] - pb[d]
							if p < 0 || p >= out[d] {
								return
							}
							f += p * ost[d]
						}
						for oc := 0; oc < coutG; oc++ {
							co := gI*coutG + oc
							res[(n*cout+co)*spOut+f] += xv * w[(ci*coutG+oc)*spK+fk]
						}
					})
				})
			}
		}
	}
	if c.Has(2) {
		bh, err := c.H(2)
		if err != nil {
			return err
		}
		b := bh.f64()
		for n := 0; n < xs[0]; n++ {
			for co := 0; co < cout; co++ {
				for k := 0; k < spOut; k++ {
					res[(n*cout+co)*spOut+k] += b[co]
				}
			}
		}
	}
	c.OutH(0, fromF64(xh.dt, oshp, res))
	return nil
}

// convTransposeGeom resolves a ConvTranspose's geometry on inputs of
// shapes xs and ws: the kernel, strides, dilations, begin pads and output
// spatial sizes, the groups and the output channels.
func convTransposeGeom(c *lctx, xs, ws []int) (kernel, strd, dil, pb, out []int, groups, cout int) {
	ns := len(xs) - 2
	groups = int(c.AInt("group", 1))
	cout = ws[1] * groups
	kernel = ws[2:]
	if ks := c.AInts("kernel_shape", nil); ks != nil {
		kernel = toInts(ks)
	}
	stv, dlv, pads := c.AInts("strides", nil), c.AInts("dilations", nil), c.AInts("pads", nil)
	opad, oshape := c.AInts("output_padding", nil), c.AInts("output_shape", nil)
	strd, dil, pb, out = make([]int, ns), make([]int, ns), make([]int, ns), make([]int, ns)
	pe := make([]int, ns)
	ap := c.AStr("auto_pad", "NOTSET")
	for i := 0; i < ns; i++ {
		strd[i], dil[i] = 1, 1
		if stv != nil {
			strd[i] = int(stv[i])
		}
		if dlv != nil {
			dil[i] = int(dlv[i])
		}
		if pads != nil {
			pb[i], pe[i] = int(pads[i]), int(pads[i+ns])
		}
		op := 0
		if opad != nil {
			op = int(opad[i])
		}
		full := (xs[2+i]-1)*strd[i] + (kernel[i]-1)*dil[i] + 1 + op
		if oshape != nil || ap == "SAME_UPPER" || ap == "SAME_LOWER" {
			target := xs[2+i] * strd[i]
			if oshape != nil {
				target = int(oshape[len(oshape)-ns+i])
			}
			total := full - target
			half := total / 2
			if total < 0 && total%2 != 0 {
				half-- // floor division, as the reference does
			}
			if ap == "SAME_UPPER" {
				pb[i], pe[i] = half, total-half
			} else {
				pb[i], pe[i] = total-half, half
			}
		}
		out[i] = full - pb[i] - pe[i]
	}
	return kernel, strd, dil, pb, out, groups, cout
}

func forEachIndexFlat(shape []int, f func(idx []int, flat int)) {
	k := 0
	forEachIndex(shape, func(idx []int) {
		f(idx, k)
		k++
	})
}

// hostDeformConv is the 2-D deformable convolution.
func hostDeformConv(c *lctx) error {
	xh, err := c.H(0)
	if err != nil {
		return err
	}
	wh, err := c.H(1)
	if err != nil {
		return err
	}
	oh, err := c.H(2)
	if err != nil {
		return err
	}
	if len(xh.shape) != 4 {
		return fmt.Errorf("DeformConv supports 2-D inputs only")
	}
	N, C, H, W := xh.shape[0], xh.shape[1], xh.shape[2], xh.shape[3]
	M, kH, kW := wh.shape[0], wh.shape[2], wh.shape[3]
	g, err := resolveGeom(c, xh.shape[2:], []int{kH, kW}, false)
	if err != nil {
		return err
	}
	OH, OW := oh.shape[2], oh.shape[3]
	groups, og := int(c.AInt("group", 1)), int(c.AInt("offset_group", 1))
	x, w, offs := xh.f64(), wh.f64(), oh.f64()
	var bias, mask []float64
	if c.Has(3) {
		bh, err := c.H(3)
		if err != nil {
			return err
		}
		bias = bh.f64()
	}
	if c.Has(4) {
		mh, err := c.H(4)
		if err != nil {
			return err
		}
		mask = mh.f64()
	}
	K := kH * kW
	cg, mg, cpo := C/groups, M/groups, C/og
	bil := func(img []float64, y, xx float64) float64 {
		if y <= -1 || y >= float64(H) || xx <= -1 || xx >= float64(W) {
			return 0
		}
		y0, x0 := int(math.Floor(y)), int(math.Floor(xx))
		ly, lx := y-float64(y0), xx-float64(x0)
		at := func(r, q int) float64 {
			if r < 0 || r >= H || q < 0 || q >= W {
				return 0
			}
			return img[r*W+q]
		}
		return (1-ly)*(1-lx)*at(y0, x0) + (1-ly)*lx*at(y0, x0+1) + ly*(1-lx)*at(y0+1, x0) + ly*lx*at(y0+1, x0+1)
	}
	out := make([]float64, N*M*OH*OW)
	for n := 0; n < N; n++ {
		for m := 0; m < M; m++ {
			gi := m / mg
			for py := 0; py < OH; py++ {
				for px := 0; px < OW; px++ {
					s := 0.0
					if bias != nil {
						s = bias[m]
					}
					for ci := 0; ci < cg; ci++ {
						ch := gi*cg + ci
						grp := ch / cpo
						img := x[(n*C+ch)*H*W : (n*C+ch+1)*H*W]
						for ky := 0; ky < kH; ky++ {
							for kx := 0; kx < kW; kx++ {
								k := ky*kW + kx
								dy := offs[((n*og*2*K+grp*2*K+2*k)*OH+py)*OW+px]
								dx := offs[((n*og*2*K+grp*2*K+2*k+1)*OH+py)*OW+px]
								y := float64(py*g.strides[0]-g.padB[0]+ky*g.dil[0]) + dy
								xx := float64(px*g.strides[1]-g.padB[1]+kx*g.dil[1]) + dx
								v := bil(img, y, xx)
								if mask != nil {
									v *= mask[((n*og*K+grp*K+k)*OH+py)*OW+px]
								}
								s += v * w[((m*cg+ci)*kH+ky)*kW+kx]
							}
						}
					}
					out[((n*M+m)*OH+py)*OW+px] = s
				}
			}
		}
	}
	c.OutH(0, fromF64(xh.dt, []int{N, M, OH, OW}, out))
	return nil
}

// alongAxis calls f with the flat indices of each 1-D line along axis.
func alongAxis(shape []int, axis int, f func(idx []int)) {
	st := strides(shape)
	outer := append([]int{}, shape...)
	outer[axis] = 1
	forEachIndex(outer, func(o []int) {
		base := 0
		for d, x := range o {
			base += x * st[d]
		}
		idx := make([]int, shape[axis])
		for j := range idx {
			idx[j] = base + j*st[axis]
		}
		f(idx)
	})
}

func hostLpNorm(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	ax, err := normAxis(c.AInt("axis", -1), len(h.shape))
	if err != nil {
		return err
	}
	p := c.AInt("p", 2)
	v := h.f64()
	alongAxis(h.shape, ax, func(idx []int) {
		s := 0.0
		for _, i := range idx {
			if p == 1 {
				s += math.Abs(v[i])
			} else {
				s += v[i] * v[i]
			}
		}
		if p != 1 {
			s = math.Sqrt(s)
		}
		for _, i := range idx {
			if s != 0 {
				v[i] /= s
			}
		}
	})
	c.OutH(0, fromF64(h.dt, h.shape, v))
	return nil
}

// reduceGroups normalizes v over groups of elements sharing the
// coordinates not in axes.
func normalizeOver(shape []int, axes []int, v []float64, eps float64, varOnly bool) {
	red := map[int]bool{}
	for _, a := range axes {
		red[a] = true
	}
	out := append([]int{}, shape...)
	for a := range red {
		out[a] = 1
	}
	ost := strides(out)
	n := numel(out)
	sum, sq, cnt := make([]float64, n), make([]float64, n), make([]float64, n)
	grp := make([]int, len(v))
	k := 0
	forEachIndex(shape, func(o []int) {
		f := 0
		for d, x := range o {
			if !red[d] {
				f += x * ost[d]
			}
		}
		grp[k] = f
		sum[f] += v[k]
		cnt[f]++
		k++
	})
	for k := range v {
		sq[grp[k]] += (v[k] - sum[grp[k]]/cnt[grp[k]]) * (v[k] - sum[grp[k]]/cnt[grp[k]])
	}
	for k := range v {
		g := grp[k]
		m := sum[g] / cnt[g]
		sd := math.Sqrt(sq[g]/cnt[g] + eps)
		v[k] = (v[k] - m) / sd
	}
}

func hostMVN(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	axes := toInts(c.AInts("axes", []int64{0, 2, 3}))
	v := h.f64()
	normalizeOver(h.shape, axes, v, 1e-9, false)
	c.OutH(0, fromF64(h.dt, h.shape, v))
	return nil
}

func hostLRN(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	alpha, beta, bias := float64(c.AFloat("alpha", 1e-4)), float64(c.AFloat("beta", 0.75)), float64(c.AFloat("bias", 1))
	size := int(c.AInt("size", 1))
	v := h.f64()
	out := make([]float64, len(v))
	C := h.shape[1]
	st := strides(h.shape)
	k := 0
	forEachIndex(h.shape, func(o []int) {
		s := 0.0
		lo := o[1] - (size-1)/2
		hi := o[1] + int(math.Ceil(float64(size-1)/2))
		for ch := lo; ch <= hi; ch++ {
			if ch < 0 || ch >= C {
				continue
			}
			x := v[k+(ch-o[1])*st[1]]
			s += x * x
		}
		out[k] = v[k] / math.Pow(bias+alpha/float64(size)*s, beta)
		k++
	})
	c.OutH(0, fromF64(h.dt, h.shape, out))
	return nil
}

func hostGroupNorm(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	sc, err := c.H(1)
	if err != nil {
		return err
	}
	bi, err := c.H(2)
	if err != nil {
		return err
	}
	G := int(c.AInt("num_groups", 1))
	eps := float64(c.AFloat("epsilon", 1e-5))
	N, C := h.shape[0], h.shape[1]
	sp := numel(h.shape[2:])
	v := h.f64()
	normalizeOver([]int{N, G, C / G * sp}, []int{2}, v, eps, false)
	s, b := sc.f64(), bi.f64()
	perGroupScale := len(s) == G && G != C
	for k := range v {
		ch := (k / sp) % C
		si := ch
		if perGroupScale {
			si = ch / (C / G)
		}
		v[k] = v[k]*s[si] + b[si]
	}
	c.OutH(0, fromF64(h.dt, h.shape, v))
	return nil
}

func hostMaxUnpool(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	ind, err := c.Ints(1)
	if err != nil {
		return err
	}
	ks := toInts(c.AInts("kernel_shape", nil))
	ns := len(ks)
	st, pads := c.AInts("strides", nil), c.AInts("pads", nil)
	out := append([]int{}, h.shape...)
	for i := 0; i < ns; i++ {
		s := 1
		if st != nil {
			s = int(st[i])
		}
		p := 0
		if pads != nil {
			p = int(pads[i] + pads[i+ns])
		}
		out[2+i] = (h.shape[2+i]-1)*s + ks[i] - p
	}
	def := out
	if c.Has(2) {
		os, err := c.Ints(2)
		if err != nil {
			return err
		}
		out = toInts(os)
	}
	res := make([]float64, numel(out))
	v := h.f64()
	dst, ost := strides(def), strides(out)
	for k, i := range ind {
		// indices address the default-shaped output; re-address them
		f, rem := 0, int(i)
		for d := range def {
			x := rem / dst[d]
			rem %= dst[d]
			f += x * ost[d]
		}
		if f >= 0 && f < len(res) {
			res[f] = v[k]
		}
	}
	c.OutH(0, fromF64(h.dt, out, res))
	return nil
}

func hostCol2Im(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	imgv, err := c.Ints(1)
	if err != nil {
		return err
	}
	blkv, err := c.Ints(2)
	if err != nil {
		return err
	}
	img, blk := toInts(imgv), toInts(blkv)
	nd := len(img)
	dil, pads, st := c.AInts("dilations", nil), c.AInts("pads", nil), c.AInts("strides", nil)
	d, pb, s := make([]int, nd), make([]int, nd), make([]int, nd)
	outBlocks := make([]int, nd)
	for i := 0; i < nd; i++ {
		d[i], s[i] = 1, 1
		pe := 0
		if dil != nil {
			d[i] = int(dil[i])
		}
		if st != nil {
			s[i] = int(st[i])
		}
		if pads != nil {
			pb[i], pe = int(pads[i]), int(pads[i+nd])
		}
		outBlocks[i] = (img[i]+pb[i]+pe-(d[i]*(blk[i]-1)+1))/s[i] + 1
	}
	N := h.shape[0]
	kb := numel(blk)
	C := h.shape[1] / kb
	L := h.shape[2]
	v := h.f64()
	out := make([]float64, N*C*numel(img))
	ist := strides(img)
	for n := 0; n < N; n++ {
		for ch := 0; ch < C; ch++ {
			forEachIndexFlat(blk, func(kp []int, kf int) {
				forEachIndexFlat(outBlocks, func(bp []int, l int) {
					if l >= L {
						return
					}
					f := 0
					for i := 0; i < nd; i++ {
						p := bp[i]*s[i] - pb[i] + kp[i]*d[i]
						if p < 0 || p >= img[i] {
							return
						}
						f += p * ist[i]
					}
					out[(n*C+ch)*numel(img)+f] += v[((n*C+ch)*kb+kf)*L+l]
				})
			})
		}
	}
	c.OutH(0, fromF64(h.dt, append([]int{N, C}, img...), out))
	return nil
}
