package executor

import (
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
)

// Quantization (host): QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, MatMulInteger, QLinearMatMul, ConvInteger,
// QLinearConv.

func registerQuant(r registry) {
	r.host(hostQuantize, "QuantizeLinear")
	r.host(hostDequantize, "DequantizeLinear")
	r.host(hostDynQuant, "DynamicQuantizeLinear")
	r.host(hostMatMulInteger, "MatMulInteger")
	r.host(hostQLinearMatMul, "QLinearMatMul")
	r.host(hostConvInteger, "ConvInteger")
	r.host(hostQLinearConv, "QLinearConv")
}

// paramIndex maps each element of shape x to the element of a scale or
// zero-point tensor of shape ps (scalar, per-axis 1-D, or blocked).
func paramIndex(x []int, ps []int, axis int, block int) []int {
	n := numel(x)
	idx := make([]int, n)
	if numel(ps) == 1 {
		return idx
	}
	pst := strides(ps)
	k := 0
	forEachIndex(x, func(o []int) {
		if len(ps) == 1 {
			idx[k] = o[axis]
		} else {
			f := 0
			for d, v := range o {
				if d == axis && block > 0 {
					v /= block
				}
				if ps[d] == 1 {
					v = 0
				}
				f += v * pst[d]
			}
			idx[k] = f
		}
		k++
	})
	return idx
}

func hostQuantize(c *lctx) error {
	xh, err := c.H(0)
	if err != nil {
		return err
	}
	sh, err := c.H(1)
	if err != nil {
		return err
	}
	out := canonical.Uint8
	var zp []float64
	var zpIdx []int
	axis := 0
	if sh.size() > 1 {
		if axis, err = normAxis(c.AInt("axis", 1), len(xh.shape)); err != nil {
			return err
		}
	}
	block := int(c.AInt("block_size", 0))
	if c.Has(2) {
		zh, err := c.H(2)
		if err != nil {
			return err
		}
		out = zh.dt
		zp = zh.f64()
		zpIdx = paramIndex(xh.shape, zh.shape, axis, block)
	} else if dt := c.AInt("output_dtype", 0); dt != 0 {
		out = canonical.DataType(dt)
	}
	x, s := xh.f64(), sh.f64()
	sIdx := paramIndex(xh.shape, sh.shape, axis, block)
	res := make([]float64, len(x))
	lo, hi, isInt := canonical.QuantRange(out)
	f32 := storageOf(xh.dt) == kF32
	for k, v := range x {
		q := v / s[sIdx[k]]
		if f32 {
			q = float64(float32(v) / float32(s[sIdx[k]]))
		}
		if isInt {
			q = math.RoundToEven(q)
			if zp != nil {
				q += zp[zpIdx[k]]
			}
			q = math.Max(lo, math.Min(hi, q))
		} else if zp != nil {
			q += zp[zpIdx[k]]
		}
		res[k] = q
	}
	if isInt {
		iv := make([]int64, len(res))
		for k, v := range res {
			iv[k] = int64(v)
		}
		c.OutH(0, fromI64(out, xh.shape, iv))
		return nil
	}
	c.OutH(0, castF64(res, xh.shape, out, c.AInt("saturate", 1) == 1, "nearest"))
	return nil
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func hostDequantize(c *lctx) error {
	xh, err := c.H(0)
	if err != nil {
		return err
	}
	sh, err := c.H(1)
	if err != nil {
		return err
	}
	axis := 0
	if sh.size() > 1 {
		if axis, err = normAxis(c.AInt("axis", 1), len(xh.shape)); err != nil {
			return err
		}
	}
	block := int(c.AInt("block_size", 0))
	if ok, err := dequant8F32(c, xh, sh, axis, block); ok || err != nil {
		return err
	}
	x, s := xh.f64(), sh.f64()
	sIdx := paramIndex(xh.shape, sh.shape, axis, block)
	var zp []float64
	var zpIdx []int
	if c.Has(2) {
		zh, err := c.H(2)
		if err != nil {
			return err
		}
		zp = zh.f64()
		zpIdx = paramIndex(xh.shape, zh.shape, axis, block)
	}
	res := make([]float64, len(x))
	for k, v := range x {
		if zp != nil {
			v -= zp[zpIdx[k]]
		}
		res[k] = v * s[sIdx[k]]
	}
	out := sh.dt
	if dt := c.AInt("output_dtype", 0); dt != 0 {
		out = canonical.DataType(dt)
	}
	c.OutH(0, castF64(res, xh.shape, out, true, "nearest"))
	return nil
}

// dequant8F32 is DequantizeLinear of an int8 or uint8 tensor to float32
// with a scalar or per-axis float32 scale (the form of a quantized
// weight), computed without the float64 copies and index tables of the
// general path: on a 2 GiB weight those took ~20 GiB (issue 39). It
// reports false when the node is not of that form. The numbers are the
// general path's: each is computed in float64 and rounded once.
func dequant8F32(c *lctx, xh, sh *htensor, axis, block int) (bool, error) {
	s, ok := sh.data.([]float32)
	if dt := canonical.DataType(c.AInt("output_dtype", 0)); !ok || sh.dt != canonical.Float || block != 0 || len(sh.shape) > 1 ||
		!is8bit(xh.dt) || dt != 0 && dt != canonical.Float {
		return false, nil
	}
	inner := 1
	if len(s) > 1 {
		if len(xh.shape) == 0 || xh.shape[axis] != len(s) {
			return false, nil
		}
		inner = numel(xh.shape[axis+1:])
	}
	var zd any
	if c.Has(2) {
		zh, err := c.H(2)
		if err != nil {
			return false, err
		}
		if zh.dt != xh.dt || zh.size() != len(s) {
			return false, nil
		}
		zd = zh.data
	}
	out := newH(canonical.Float, xh.shape)
	y := out.data.([]float32)
	switch x := xh.data.(type) {
	case []int8:
		zp, _ := zd.([]int8)
		ok = dequant8(x, zp, zd != nil, s, y, inner)
	case []uint8:
		zp, _ := zd.([]uint8)
		ok = dequant8(x, zp, zd != nil, s, y, inner)
	default:
		ok = false
	}
	if ok {
		c.OutH(0, out)
	}
	return ok, nil
}

// dequant8 sets y[k] = (x[k] - zp[c]) * s[c], c the channel of k (inner
// elements per channel, cycling through len(s)); false when hasZP but zp
// is not of x's type or size.
func dequant8[T int8 | uint8](x, zp []T, hasZP bool, s []float32, y []float32, inner int) bool {
	if len(x) != len(y) || hasZP && len(zp) != len(s) {
		return false
	}
	for k, v := range x {
		ch := 0
		if len(s) > 1 {
			ch = (k / inner) % len(s)
		}
		f := float64(v)
		if hasZP {
			f -= float64(zp[ch])
		}
		y[k] = float32(f * float64(s[ch]))
	}
	return true
}

func hostDynQuant(c *lctx) error {
	xh, err := c.H(0)
	if err != nil {
		return err
	}
	if x, ok := xh.data.([]float32); ok && xh.dt == canonical.Float {
		c.dynQuantF32(xh, x)
		return nil
	}
	x := xh.f64()
	mn, mx := 0.0, 0.0
	for _, v := range x {
		mn, mx = math.Min(mn, v), math.Max(mx, v)
	}
	// float32 arithmetic, as the reference computes
	scale32 := (float32(mx) - float32(mn)) / 255
	scale := float64(scale32)
	zp := 0.0
	if scale != 0 {
		zp = math.Max(0, math.Min(255, math.RoundToEven(float64(-float32(mn)/scale32))))
	}
	q := make([]int64, len(x))
	for k, v := range x {
		y := 0.0
		if scale != 0 {
			y = math.RoundToEven(float64(float32(v)/scale32)) + zp
		}
		q[k] = int64(math.Max(0, math.Min(255, y)))
	}
	c.OutH(0, fromI64(canonical.Uint8, xh.shape, q))
	c.OutH(1, fromF64(canonical.Float, nil, []float64{scale}))
	c.OutH(2, fromI64(canonical.Uint8, nil, []int64{int64(zp)}))
	return nil
}

// matmulF computes a numpy matmul of float64 data.
func matmulF(a []float64, as []int, b []float64, bs []int) ([]float64, []int, error) {
	ra, rb := len(as), len(bs)
	if ra == 1 {
		as = []int{1, as[0]}
	}
	if rb == 1 {
		bs = []int{bs[0], 1}
	}
	M, K, K2, N := as[len(as)-2], as[len(as)-1], bs[len(bs)-2], bs[len(bs)-1]
	if K != K2 {
		return nil, nil, fmt.Errorf("matmul of %v and %v", as, bs)
	}
	batch, err := bcastShape(as[:len(as)-2], bs[:len(bs)-2])
	if err != nil {
		return nil, nil, err
	}
	ia := bcastIdx(batch, as[:len(as)-2])
	ib := bcastIdx(batch, bs[:len(bs)-2])
	nb := numel(batch)
	out := make([]float64, nb*M*N)
	for p := 0; p < nb; p++ {
		ao, bo := ia[p]*M*K, ib[p]*K*N
		for i := 0; i < M; i++ {
			for j := 0; j < N; j++ {
				s := 0.0
				for k := 0; k < K; k++ {
					s += a[ao+i*K+k] * b[bo+k*N+j]
				}
				out[(p*M+i)*N+j] = s
			}
		}
	}
	sh := append([]int{}, batch...)
	if ra != 1 {
		sh = append(sh, M)
	}
	if rb != 1 {
		sh = append(sh, N)
	}
	return out, sh, nil
}

func subZP(c *lctx, i, zi int, rowAxis bool) ([]float64, []int, error) {
	h, err := c.H(i)
	if err != nil {
		return nil, nil, err
	}
	v := h.f64()
	if c.Has(zi) {
		z, err := c.H(zi)
		if err != nil {
			return nil, nil, err
		}
		zv := z.f64()
		r := len(h.shape)
		for k := range v {
			if len(zv) == 1 {
				v[k] -= zv[0]
			} else if rowAxis {
				v[k] -= zv[(k/h.shape[r-1])%h.shape[r-2]]
			} else {
				v[k] -= zv[k%h.shape[r-1]]
			}
		}
	}
	return v, h.shape, nil
}

func hostMatMulInteger(c *lctx) error {
	if y, shape, ok, err := c.intMatMul(0, 1, 2, 3); err != nil || ok {
		if ok {
			c.OutH(0, &htensor{dt: canonical.Int32, shape: shape, data: y})
		}
		return err
	}
	c.noteSlow("not 8-bit A by 2-D B with one zero point for A")
	a, as, err := subZP(c, 0, 2, true)
	if err != nil {
		return err
	}
	b, bs, err := subZP(c, 1, 3, false)
	if err != nil {
		return err
	}
	y, ys, err := matmulF(a, as, b, bs)
	if err != nil {
		return err
	}
	c.OutH(0, fromF64(canonical.Int32, ys, y))
	return nil
}

func hostQLinearMatMul(c *lctx) error {
	if y, shape, ok, err := c.intMatMul(0, 3, 2, 5); err != nil || ok {
		if err != nil {
			return err
		}
		return c.requantize(y, shape, 1, shape[len(shape)-1], nil)
	}
	c.noteSlow("not 8-bit A by 2-D B with one zero point for A")
	ah, err := c.H(0)
	if err != nil {
		return err
	}
	get := func(i int) ([]float64, error) {
		h, err := c.H(i)
		if err != nil {
			return nil, err
		}
		return h.f64(), nil
	}
	as, err := get(1)
	if err != nil {
		return err
	}
	az, err := get(2)
	if err != nil {
		return err
	}
	bh, err := c.H(3)
	if err != nil {
		return err
	}
	bsc, err := get(4)
	if err != nil {
		return err
	}
	bz, err := get(5)
	if err != nil {
		return err
	}
	ys, err := get(6)
	if err != nil {
		return err
	}
	zh, err := c.H(7)
	if err != nil {
		return err
	}
	yz := zh.f64()
	a := ah.f64()
	for k := range a {
		a[k] = (a[k] - az[0]) * as[0]
	}
	b := bh.f64()
	N := bh.shape[len(bh.shape)-1]
	for k := range b {
		j := k % N
		s, z := bsc[0], bz[0]
		if len(bsc) > 1 {
			s = bsc[j]
		}
		if len(bz) > 1 {
			z = bz[j]
		}
		b[k] = (b[k] - z) * s
	}
	y, sh, err := matmulF(a, ah.shape, b, bh.shape)
	if err != nil {
		return err
	}
	lo, hi, _ := canonical.QuantRange(zh.dt)
	iv := make([]int64, len(y))
	for k, v := range y {
		iv[k] = int64(math.Max(lo, math.Min(hi, math.RoundToEven(v/ys[0])+yz[0])))
	}
	c.OutH(0, fromI64(zh.dt, sh, iv))
	return nil
}

// convDirect is a direct N-D convolution in float64 (groups, strides,
// dilations, pads, auto_pad), used by the integer convolutions.
func convDirect(c *lctx, x []float64, xs []int, w []float64, ws []int) ([]float64, []int, error) {
	ns := len(xs) - 2
	kernel := ws[2:]
	if ks := c.AInts("kernel_shape", nil); ks != nil {
		kernel = toInts(ks)
	}
	g, err := resolveGeom(c, xs[2:], kernel, false)
	if err != nil {
		return nil, nil, err
	}
	groups := int(c.AInt("group", 1))
	N, C, M := xs[0], xs[1], ws[0]
	cg, mg := C/groups, M/groups
	out := append([]int{N, M}, g.out...)
	res := make([]float64, numel(out))
	xst := strides(xs[2:])
	spIn, spK, spO := numel(xs[2:]), numel(kernel), numel(g.out)
	for n := 0; n < N; n++ {
		for m := 0; m < M; m++ {
			gi := m / mg
			forEachIndexFlat(g.out, func(op []int, of int) {
				s := 0.0
				for ci := 0; ci < cg; ci++ {
					ch := gi*cg + ci
					forEachIndexFlat(kernel, func(kp []int, kf int) {
						f := 0
						for d := 0; d < ns; d++ {
							p := op[d]*g.strides[d] - g.padB[d] + kp[d]*g.dil[d]
							if p < 0 || p >= xs[2+d] {
								return
							}
							f += p * xst[d]
						}
						s += x[(n*C+ch)*spIn+f] * w[(m*cg+ci)*spK+kf]
					})
				}
				res[(n*M+m)*spO+of] = s
			})
		}
	}
	return res, out, nil
}

func hostConvInteger(c *lctx) error {
	if y, shape, ok, err := c.intConv(0, 1, 2, 3); err != nil || ok {
		if ok {
			c.OutH(0, &htensor{dt: canonical.Int32, shape: shape, data: y})
		}
		return err
	}
	c.noteSlow("not a 1-D or 2-D convolution of 8-bit values with one input zero point")
	xh, err := c.H(0)
	if err != nil {
		return err
	}
	wh, err := c.H(1)
	if err != nil {
		return err
	}
	x, w := xh.f64(), wh.f64()
	if c.Has(2) {
		z, err := c.H(2)
		if err != nil {
			return err
		}
		zv := z.f64()[0]
		for k := range x {
			x[k] -= zv
		}
	}
	if c.Has(3) {
		z, err := c.H(3)
		if err != nil {
			return err
		}
		zv := z.f64()
		per := wh.size() / wh.shape[0]
		for k := range w {
			if len(zv) == 1 {
				w[k] -= zv[0]
			} else {
				w[k] -= zv[k/per]
			}
		}
	}
	y, ys, err := convDirect(c, x, xh.shape, w, wh.shape)
	if err != nil {
		return err
	}
	c.OutH(0, fromF64(canonical.Int32, ys, y))
	return nil
}

func hostQLinearConv(c *lctx) error {
	if y, shape, ok, err := c.intConv(0, 3, 2, 5); err != nil || ok {
		if err != nil {
			return err
		}
		var bias []int32
		if c.Has(8) {
			bh, err := c.H(8)
			if err != nil {
				return err
			}
			if bh.size() != shape[1] {
				return fmt.Errorf("QLinearConv: bias of %d values for %d output channels", bh.size(), shape[1])
			}
			for _, v := range bh.i64() {
				bias = append(bias, int32(v))
			}
		}
		return c.requantize(y, shape, numel(shape[2:]), shape[1], bias)
	}
	c.noteSlow("not a 1-D or 2-D convolution of 8-bit values with one input zero point")
	get := func(i int) (*htensor, []float64, error) {
		h, err := c.H(i)
		if err != nil {
			return nil, nil, err
		}
		return h, h.f64(), nil
	}
	xh, x, err := get(0)
	if err != nil {
		return err
	}
	_, xs, err := get(1)
	if err != nil {
		return err
	}
	_, xz, err := get(2)
	if err != nil {
		return err
	}
	wh, w, err := get(3)
	if err != nil {
		return err
	}
	_, wsc, err := get(4)
	if err != nil {
		return err
	}
	_, wz, err := get(5)
	if err != nil {
		return err
	}
	_, ys, err := get(6)
	if err != nil {
		return err
	}
	yzh, yz, err := get(7)
	if err != nil {
		return err
	}
	for k := range x {
		x[k] = (x[k] - xz[0]) * xs[0]
	}
	per := wh.size() / wh.shape[0]
	for k := range w {
		m := k / per
		s, z := wsc[0], wz[0]
		if len(wsc) > 1 {
			s = wsc[m]
		}
		if len(wz) > 1 {
			z = wz[m]
		}
		w[k] = (w[k] - z) * s
	}
	y, shp, err := convDirect(c, x, xh.shape, w, wh.shape)
	if err != nil {
		return err
	}
	if c.Has(8) {
		_, b, err := get(8)
		if err != nil {
			return err
		}
		sp := numel(shp[2:])
		for k := range y {
			y[k] += b[(k/sp)%shp[1]] * xs[0] * wsc[minInt((k/sp)%shp[1], len(wsc)-1)]
		}
	}
	lo, hi, _ := canonical.QuantRange(yzh.dt)
	iv := make([]int64, len(y))
	for k, v := range y {
		iv[k] = int64(math.Max(lo, math.Min(hi, math.RoundToEven(v/ys[0])+yz[0])))
	}
	c.OutH(0, fromI64(yzh.dt, shp, iv))
	return nil
}

func minInt(a, b int) int {
	if a < b {
		return a
	}
	return b
}
