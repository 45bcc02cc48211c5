package executor

import (
	"fmt"
	"math"
	"sync"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor/kernels"
)

// The integer ops (ConvInteger, MatMulInteger, QLinearConv, QLinearMatMul)
// on the integer GEMM of executor/kernels: the 8-bit operands minus their
// zero points as int16, products summed exactly in int32 — the integers
// ONNX Runtime computes. QLinear outputs are requantized as ONNX Runtime's
// MLAS does: the int32 sum (plus the int32 bias) times the float32
// multiplier x_scale·w_scale/y_scale, rounded half to even, plus the
// output zero point, clamped. What these paths do not take (other element
// types, 3-D convolutions, a per-row zero point of A) runs the
// per-element float64 path of ops_quant.go, and the executor records it
// (Executor.SlowPaths, printed by bench).

// is8bit reports whether dt is uint8 or int8.
func is8bit(dt canonical.DataType) bool { return dt == canonical.Uint8 || dt == canonical.Int8 }

// int16Minus returns h's 8-bit values minus zp[i/per%len(zp)] as int16
// (per: the run of values sharing a zero point; zp nil: none).
func (c *lctx) int16Minus(h *htensor, zp []int32, per int) ([]int16, error) {
	n := h.size()
	out := make([]int16, n)
	if len(zp) > 1 && per < 1 {
		return nil, fmt.Errorf("%s: %d zero points for runs of %d values", c.n.OpType, len(zp), per)
	}
	var err error
	c.e.kern.Range(n, 1, func(lo, hi int) {
		if len(zp) <= 1 {
			z := int16(0)
			if len(zp) == 1 {
				z = int16(zp[0])
			}
			err = minus8(h.data, out, lo, hi, z)
			return
		}
		for i := lo; i < hi; {
			end := min(hi, (i/per+1)*per)
			if e := minus8(h.data, out, i, end, int16(zp[i/per%len(zp)])); e != nil {
				err = e
			}
			i = end
		}
	})
	return out, err
}

// minus8 sets out[i] = data[i] − z for lo ≤ i < hi, data []uint8 or []int8.
func minus8(data any, out []int16, lo, hi int, z int16) error {
	o := out[lo:hi]
	switch s := data.(type) {
	case []uint8:
		for i, v := range s[lo:hi] {
			o[i] = int16(v) - z
		}
	case []int8:
		for i, v := range s[lo:hi] {
			o[i] = int16(v) - z
		}
	default:
		return fmt.Errorf("expected 8-bit integer data, have %T", data)
	}
	return nil
}

// zeroPoints returns input i's values as int32 (nil when the input is
// absent) and whether it has at most max values (or exactly one).
func (c *lctx) zeroPoints(i, max int) ([]int32, bool, error) {
	if !c.Has(i) {
		return nil, true, nil
	}
	h, err := c.H(i)
	if err != nil {
		return nil, false, err
	}
	if !is8bit(h.dt) {
		return nil, false, nil
	}
	v := h.i64()
	zp := make([]int32, len(v))
	for k, x := range v {
		zp[k] = int32(x)
	}
	return zp, len(zp) == 1 || len(zp) == max, nil
}

// intConv computes the int32 sums of an integer convolution of input xi
// (zero point xzi, one value) by weight wi (zero point wzi, one value or
// one per output channel), NCHW or NCW; ok is false when the GEMM path
// does not take the case.
func (c *lctx) intConv(xi, wi, xzi, wzi int) (y []int32, shape []int, ok bool, err error) {
	xh, err := c.H(xi)
	if err != nil {
		return nil, nil, false, err
	}
	wh, err := c.H(wi)
	if err != nil {
		return nil, nil, false, err
	}
	r := len(xh.shape)
	if !is8bit(xh.dt) || !is8bit(wh.dt) || (r != 3 && r != 4) || len(wh.shape) != r {
		return nil, nil, false, nil
	}
	xz, okx, err := c.zeroPoints(xzi, 1)
	if err != nil || !okx {
		return nil, nil, false, err
	}
	M := wh.shape[0]
	wz, okw, err := c.zeroPoints(wzi, M)
	if err != nil || !okw {
		return nil, nil, false, err
	}
	groups := int(c.AInt("group", 1))
	N, C := xh.shape[0], xh.shape[1]
	if groups < 1 || C%groups != 0 || M%groups != 0 || wh.shape[1]*groups != C {
		return nil, nil, false, fmt.Errorf("%s: input of %d channels, weight %v, group %d", c.n.OpType, C, wh.shape, groups)
	}
	kernel := wh.shape[2:]
	if ks := c.AInts("kernel_shape", nil); ks != nil {
		if !shapeEq(toInts(ks), kernel) {
			return nil, nil, false, nil
		}
	}
	g, err := resolveGeom(c, xh.shape[2:], kernel, false)
	if err != nil {
		return nil, nil, false, err
	}
	ic := kernels.IConv{C: C / groups, H: 1, KH: 1, SH: 1, DH: 1, OH: 1}
	d := 0
	if r == 4 {
		ic.H, ic.KH, ic.SH, ic.DH, ic.PadT, ic.OH = xh.shape[2], kernel[0], g.strides[0], g.dil[0], g.padB[0], g.out[0]
		d = 1
	}
	ic.W, ic.KW, ic.SW, ic.DW, ic.PadL, ic.OW = xh.shape[r-1], kernel[d], g.strides[d], g.dil[d], g.padB[d], g.out[d]
	if ic.OH <= 0 || ic.OW <= 0 {
		return nil, nil, false, fmt.Errorf("%s: no output for input %v and kernel %v", c.n.OpType, xh.shape, kernel)
	}
	mg, k := M/groups, ic.C*ic.KH*ic.KW
	pack := func(h *htensor) ([]*kernels.IPacked, error) {
		w16, err := c.int16Minus(h, wz, k)
		if err != nil {
			return nil, err
		}
		ps := make([]*kernels.IPacked, groups)
		for gi := range ps {
			if ps[gi], err = kernels.PackIA(mg, k, w16[gi*mg*k:], k); err != nil {
				return nil, err
			}
		}
		return ps, nil
	}
	var pw []*kernels.IPacked
	if !c.Has(wzi) || c.in(wzi).valStatic {
		ent, err := c.packed(wi, packTag{kind: 'I', m: M, c: C, g: groups, kh: ic.KH, kw: ic.KW}, func(h *htensor) (packEntry, error) {
			ps, err := pack(h)
			return packEntry{ints: ps}, err
		})
		if err != nil {
			return nil, nil, false, err
		}
		pw = ent.ints
	}
	if pw == nil {
		if pw, err = pack(wh); err != nil {
			return nil, nil, false, err
		}
	}
	x16, err := c.int16Minus(xh, xz, 1)
	if err != nil {
		return nil, nil, false, err
	}
	shape = append([]int{N, M}, g.out...)
	y = make([]int32, numel(shape))
	plane, hw := ic.H*ic.W, ic.OH*ic.OW
	for n := 0; n < N; n++ {
		for gi := 0; gi < groups; gi++ {
			xs := x16[(n*C+gi*ic.C)*plane : (n*C+(gi+1)*ic.C)*plane]
			ys := y[(n*M+gi*mg)*hw : (n*M+(gi+1)*mg)*hw]
			if err := c.e.kern.IGemm(hw, pw[gi], ic.Columns(xs), ys, hw); err != nil {
				return nil, nil, false, fmt.Errorf("%s: %w", c.n.OpType, err)
			}
		}
	}
	return y, shape, true, nil
}

// intMatMul computes the int32 sums of A (input ai, any rank, zero point
// azi: one value) times B (input bi, 2-D, zero point bzi: one value or
// one per column); ok is false when the GEMM path does not take the case.
func (c *lctx) intMatMul(ai, bi, azi, bzi int) (y []int32, shape []int, ok bool, err error) {
	ah, err := c.H(ai)
	if err != nil {
		return nil, nil, false, err
	}
	bh, err := c.H(bi)
	if err != nil {
		return nil, nil, false, err
	}
	if !is8bit(ah.dt) || !is8bit(bh.dt) || len(ah.shape) < 1 || len(bh.shape) != 2 {
		return nil, nil, false, nil
	}
	K, N := bh.shape[0], bh.shape[1]
	if ah.shape[len(ah.shape)-1] != K {
		return nil, nil, false, fmt.Errorf("%s: A %v and B %v do not multiply", c.n.OpType, ah.shape, bh.shape)
	}
	az, oka, err := c.zeroPoints(azi, 1)
	if err != nil || !oka {
		return nil, nil, false, err
	}
	bz, okb, err := c.zeroPoints(bzi, N)
	if err != nil || !okb {
		return nil, nil, false, err
	}
	M := numel(ah.shape[:len(ah.shape)-1])
	a16, err := c.int16Minus(ah, az, 1)
	if err != nil {
		return nil, nil, false, err
	}
	b16, err := c.int16MinusCols(bh, bz, N)
	if err != nil {
		return nil, nil, false, err
	}
	pa, err := kernels.PackIA(M, K, a16, K)
	if err != nil {
		return nil, nil, false, err
	}
	shape = append(append([]int{}, ah.shape[:len(ah.shape)-1]...), N)
	y = make([]int32, M*N)
	if err := c.e.kern.IGemm(N, pa, kernels.IMatrix(K, N, b16), y, N); err != nil {
		return nil, nil, false, fmt.Errorf("%s: %w", c.n.OpType, err)
	}
	return y, shape, true, nil
}

// int16MinusCols is int16Minus for a matrix of n columns whose zero
// points are one per column (or one for all).
func (c *lctx) int16MinusCols(h *htensor, zp []int32, n int) ([]int16, error) {
	if len(zp) <= 1 {
		return c.int16Minus(h, zp, 1)
	}
	v, err := c.int16Minus(h, nil, 1)
	if err != nil {
		return nil, err
	}
	for i := range v {
		v[i] -= int16(zp[i%n])
	}
	return v, nil
}

// scales returns input i's float32 values.
func (c *lctx) scales(i int) ([]float32, error) {
	h, err := c.H(i)
	if err != nil {
		return nil, err
	}
	v := h.f64()
	s := make([]float32, len(v))
	for k, x := range v {
		s[k] = float32(x)
	}
	return s, nil
}

// requantize writes the output of QLinearConv or QLinearMatMul (inputs
// 1, 4 and 6 the scales of A, B and Y, 7 Y's zero point) from the int32
// sums y (channel of value k: k/inner%channels) plus bias[channel] (nil:
// none): float32(sum) times the channel's multiplier, rounded half to
// even, plus the zero point, clamped to its type.
func (c *lctx) requantize(y []int32, shape []int, inner, channels int, bias []int32) error {
	mult, err := c.multipliers(1, 4, 6)
	if err != nil {
		return err
	}
	zh, err := c.H(7)
	if err != nil {
		return err
	}
	if !is8bit(zh.dt) || zh.size() != 1 {
		return fmt.Errorf("%s: output zero point of type %v and %d values; uint8 or int8 and one value wanted", c.n.OpType, zh.dt, zh.size())
	}
	zp := float32(zh.i64()[0])
	lo64, hi64, _ := canonical.QuantRange(zh.dt)
	lo, hi := float32(lo64)-zp, float32(hi64)-zp
	out := newH(zh.dt, shape)
	q := func(k int) int32 {
		ch := k / inner % channels
		acc := y[k]
		if bias != nil {
			acc += bias[ch]
		}
		m := mult[0]
		if len(mult) > 1 {
			m = mult[ch]
		}
		v := min(max(float32(acc)*m, lo), hi)
		return int32(math.RoundToEven(float64(v))) + int32(zp)
	}
	switch s := out.data.(type) {
	case []uint8:
		c.e.kern.Range(len(y), 2, func(a, b int) {
			for k := a; k < b; k++ {
				s[k] = uint8(q(k))
			}
		})
	case []int8:
		c.e.kern.Range(len(y), 2, func(a, b int) {
			for k := a; k < b; k++ {
				s[k] = int8(q(k))
			}
		})
	}
	c.OutH(0, out)
	return nil
}

// multipliers returns ONNX Runtime's requantization multipliers
// a_scale·b_scale[i]/y_scale in float32, one per value of b_scale.
func (c *lctx) multipliers(ai, bi, yi int) ([]float32, error) {
	as, err := c.scales(ai)
	if err != nil {
		return nil, err
	}
	bs, err := c.scales(bi)
	if err != nil {
		return nil, err
	}
	ys, err := c.scales(yi)
	if err != nil {
		return nil, err
	}
	if len(as) != 1 || len(ys) != 1 || len(bs) == 0 {
		return nil, fmt.Errorf("%s: scales of %d, %d and %d values; one, one or per channel, and one wanted", c.n.OpType, len(as), len(bs), len(ys))
	}
	m := make([]float32, len(bs))
	for i, b := range bs {
		m[i] = as[0] * b / ys[0]
	}
	return m, nil
}

// noteSlow records that node n took its per-element path, and why.
func (c *lctx) noteSlow(why string) {
	c.e.slowMu.Lock()
	defer c.e.slowMu.Unlock()
	if c.e.slow == nil {
		c.e.slow = map[string]string{}
	}
	c.e.slow[fmt.Sprintf("%s %q", c.n.OpType, c.n.Name)] = why
}

// dynQuantF32 is DynamicQuantizeLinear on float32 data in float32, as
// ONNX Runtime computes it: the range [min(x, 0), max(x, 0)], scale
// (max − min)/255, zero point round(−min/scale) clamped to [0, 255], and
// each value round(x/scale) + zero point clamped (rounding half to even).
func (c *lctx) dynQuantF32(xh *htensor, x []float32) {
	n := len(x)
	var mu sync.Mutex
	mn, mx := float32(0), float32(0)
	c.e.kern.Range(n, 1, func(lo, hi int) {
		a, b := float32(0), float32(0)
		for _, v := range x[lo:hi] {
			if v < a {
				a = v
			}
			if v > b {
				b = v
			}
		}
		mu.Lock()
		mn, mx = min(mn, a), max(mx, b)
		mu.Unlock()
	})
	scale := (mx - mn) / 255
	zp := float32(0)
	if scale != 0 {
		zp = float32(math.RoundToEven(float64(min(max(-mn/scale, 0), 255))))
	}
	q := make([]uint8, n)
	if scale != 0 {
		// round(v/scale) + zp clamped to [0, 255]: v/scale is clamped to
		// [−256, 512] first (the same result after the final clamp), where
		// adding and subtracting 1.5·2²³ rounds half to even exactly.
		const magic = 12582912
		c.e.kern.Range(n, 2, func(lo, hi int) {
			o := q[lo:hi]
			for i, v := range x[lo:hi] {
				y := v / scale
				if !(y >= -256) { // NaN quantizes to 0, as in ONNX Runtime
					y = -256
				}
				if y > 512 {
					y = 512
				}
				r := (y + magic) - magic + zp
				if r < 0 {
					r = 0
				}
				if r > 255 {
					r = 255
				}
				o[i] = uint8(r)
			}
		})
	}
	c.OutH(0, &htensor{dt: canonical.Uint8, shape: append([]int{}, xh.shape...), data: q})
	c.OutH(1, fromF64(canonical.Float, nil, []float64{float64(scale)}))
	c.OutH(2, fromI64(canonical.Uint8, nil, []int64{int64(zp)}))
}

// okCastToF32: Cast of a host integer tensor (the int32 sums of
// ConvInteger or MatMulInteger, 8-bit values) to float32.
func okCastToF32(c *lctx) bool {
	if c.NIn() != 1 || !onHost(c, 0) || c.n.OpType != "Cast" || castTarget(c) != canonical.Float {
		return false
	}
	switch c.DT(0) {
	case canonical.Int32, canonical.Uint8, canonical.Int8:
		return true
	}
	return false
}

// kernelCastToF32 converts int32, uint8 or int8 values to float32 (int32
// rounded to nearest even where it has more than 24 bits, as Go's and
// C's conversions do).
func kernelCastToF32(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	y := c.newHAs(canonical.Float, h.shape, false)
	yd, _ := f32(y)
	var bad error
	c.e.kern.Range(len(yd), 1, func(lo, hi int) {
		o := yd[lo:hi]
		switch s := h.data.(type) {
		case []int32:
			for i, v := range s[lo:hi] {
				o[i] = float32(v)
			}
		case []uint8:
			for i, v := range s[lo:hi] {
				o[i] = float32(v)
			}
		case []int8:
			for i, v := range s[lo:hi] {
				o[i] = float32(v)
			}
		default:
			bad = fmt.Errorf("Cast: expected int32 or 8-bit data, have %T", h.data)
		}
	})
	if bad != nil {
		return bad
	}
	c.OutH(0, y)
	return nil
}
