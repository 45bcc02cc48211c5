package kernels

import (
	"math"
	"slices"
)

// Fused single-pass host kernels for the normalizations, softmax and the
// per-channel affine map of an inference BatchNormalization. Sums and
// variances accumulate in float64 (two passes over each row/plane: mean,
// then squared deviations), the outputs are float32.

// ScaleShiftBlocks sets y = x·s[i] + b[i] over the i-th block of inner
// elements of x, cycling through s and b (len(s) == len(b) = C; x is
// N·C blocks): an inference BatchNormalization folded to one scale and
// shift per channel.
//
// first is the index of x's first block (x may be a range of blocks):
// block i uses channel (first+i) mod C.
//
// Each element is float32(x·s) + b, two roundings (never a fused
// multiply-add): the AVX2 path (scaleShiftSIMD) has the Go loop's bits.
func ScaleShiftBlocks(x, s, b, y []float32, inner, first int) {
	c := len(s)
	if c == 0 || inner == 0 {
		return
	}
	y = y[:len(x)]
	for blk := 0; blk*inner < len(x); blk++ {
		sc, sh := s[(first+blk)%c], b[(first+blk)%c]
		xs, ys := x[blk*inner:(blk+1)*inner], y[blk*inner:(blk+1)*inner]
		if &xs[0] != &ys[0] {
			copy(ys, xs)
		}
		scaleShift(ys, sc, sh)
	}
}

// scaleShift sets y = float32(y·sc) + sh: the Go loop, or the AVX2 one
// set during package initialization (never changed afterwards).
var scaleShift = scaleShiftGeneric

func scaleShiftGeneric(y []float32, sc, sh float32) {
	for j, v := range y {
		y[j] = float32(v*sc) + sh
	}
}

// BatchNormScaleShift folds inference BatchNormalization parameters into
// one scale and shift per channel: s = gamma / sqrt(var + eps),
// b = beta − mean·s (computed in float64).
func BatchNormScaleShift(gamma, beta, mean, variance []float32, eps float64, s, b []float32) {
	for i := range s {
		sc := float64(gamma[i]) / math.Sqrt(float64(variance[i])+eps)
		s[i] = float32(sc)
		b[i] = float32(float64(beta[i]) - float64(mean[i])*sc)
	}
}

// meanVar returns the mean and (biased) variance of x, in float64 with
// sixteen interleaved partial sums per pass (lane l sums x[16i+l] in
// order; a single chain of dependent adds runs at the adder's latency),
// the lanes then added in a fixed tree, then the tail in order; the
// variance's squares are fused multiply-adds. The order is fixed, so the
// result depends on nothing but x; the AVX2 passes (sum16, sqDev16) are
// lane for lane the Go loops' operations.
func meanVar(x []float32) (float64, float64) {
	if len(x) == 0 {
		return 0, 0
	}
	h := len(x) &^ 15
	s := sum16(x[:h])
	t := reduce16(&s)
	for _, v := range x[h:] {
		t += float64(v)
	}
	m := t / float64(len(x))
	q := sqDev16(x[:h], m)
	u := reduce16(&q)
	for _, v := range x[h:] {
		d := float64(v) - m
		u = math.FMA(d, d, u)
	}
	return m, u / float64(len(x))
}

// reduce16 adds the 16 lanes in a fixed tree.
func reduce16(s *[16]float64) float64 {
	for w := 8; w >= 1; w /= 2 {
		for l := 0; l < w; l++ {
			s[l] += s[l+w]
		}
	}
	return s[0]
}

// sum16 returns s[l] = Σ float64(x[16i+l]) over x (a multiple of 16 long);
// sqDev16 returns q[l] = Σ fma(d, d, ·) with d = float64(x[16i+l]) − m
// (the lanes are returned, not written through a pointer: a pointer given
// to a function variable escapes, and meanVar allocated both arrays on
// every call);
// normApply sets y = (x − m)·a + b. Go loops, or SIMD versions set during
// package initialization (never changed afterwards), with the same
// results.
var (
	sum16     = sum16Generic
	sqDev16   = sqDev16Generic
	normApply = normApplyGeneric
)

func sum16Generic(x []float32) (s [16]float64) {
	for i := 0; i+16 <= len(x); i += 16 {
		v := (*[16]float32)(x[i : i+16])
		for l := range s {
			s[l] += float64(v[l])
		}
	}
	return s
}

func sqDev16Generic(x []float32, m float64) (q [16]float64) {
	for i := 0; i+16 <= len(x); i += 16 {
		v := (*[16]float32)(x[i : i+16])
		for l := range q {
			d := float64(v[l]) - m
			q[l] = math.FMA(d, d, q[l])
		}
	}
	return q
}

func normApplyGeneric(x []float32, m, a, b float32, y []float32) {
	y = y[:len(x)]
	for j, v := range x {
		y[j] = (v-m)*a + b
	}
}

// InstanceNorm normalizes each plane of inner elements of x (N·C planes)
// to zero mean and unit variance, then applies scale[c] and bias[c];
// x's first plane is plane first of the tensor.
func InstanceNorm(x, scale, bias, y []float32, inner, first int, eps float64) {
	c := len(scale)
	if c == 0 || inner == 0 {
		return
	}
	y = y[:len(x)]
	for p := 0; p*inner < len(x); p++ {
		xs, ys := x[p*inner:(p+1)*inner], y[p*inner:(p+1)*inner]
		m, v := meanVar(xs)
		a := float32(float64(scale[(first+p)%c]) / math.Sqrt(v+eps))
		normApply(xs, float32(m), a, bias[(first+p)%c], ys)
	}
}

// LayerNorm normalizes each row of len(scale) elements of x, then
// applies scale and bias (nil: none) elementwise.
func LayerNorm(x, scale, bias, y []float32, eps float64) {
	n := len(scale)
	if n == 0 {
		return
	}
	y = y[:len(x)]
	for o := 0; o+n <= len(x); o += n {
		xs, ys := x[o:o+n], y[o:o+n]
		m, v := meanVar(xs)
		inv := float32(1 / math.Sqrt(v+eps))
		mf := float32(m)
		if bias == nil {
			for j, xv := range xs {
				ys[j] = (xv - mf) * inv * scale[j]
			}
		} else {
			for j, xv := range xs {
				ys[j] = (xv-mf)*inv*scale[j] + bias[j]
			}
		}
	}
}

// Softmax sets each row of n elements of y to the softmax of x's row
// (max subtracted, exp32, the sum in float64). With AVX2 the maximum, the
// sum (8 float64 lanes, added in lane order at the end) and the scaling
// run 8 lanes at a time: the maximum and the scaling are the same values
// as a loop's, the sum may differ from a sequential float64 sum in its
// last bits (far below float32's). With AVX-512 (softmaxRows) a row of a
// multiple of 8 values is one pass of each on 16 lanes, in one call for
// all rows: the same bits.
func Softmax(x, y []float32, n int) {
	if n == 0 {
		return
	}
	y = y[:len(x)]
	o := 0
	if softmaxRows != nil && n%8 == 0 {
		// Whole rows in one call each run; a row holding a NaN the old
		// way (the fast rows give the same bits).
		end := len(x) / n * n
		for o < end {
			o += n * softmaxRows((end-o)/n, n, &x[o], &y[o])
			if o < end {
				softmaxRow(x[o:o+n], y[o:o+n])
				o += n
			}
		}
	}
	for ; o+n <= len(x); o += n {
		softmaxRow(x[o:o+n], y[o:o+n])
	}
}

// softmaxRow is Softmax of one row: the maximum, the exponentials, their
// float64 sum, the scaling.
func softmaxRow(xs, ys []float32) {
	expSub(xs, rowMax(xs), ys)
	scale(float32(1/sumF64(ys)), ys, ys)
}

// softmaxRows, when not nil, sets rows rows of n values of y (n a
// multiple of 8) to softmaxRow of x's, stopping before a row that holds a
// NaN; it returns the number of rows done. Set during package
// initialization (AVX-512), never changed afterwards.
var softmaxRows func(rows, n int, x, y *float32) int

// rowMax returns the maximum of x (−Inf when empty; NaN if any is NaN),
// sumF64 the float64 sum of x, scale sets y = x·a; each a Go loop or a
// SIMD version set during package initialization (never changed
// afterwards).
var (
	rowMax = rowMaxGeneric
	sumF64 = sumF64Generic
	scale  = scaleGeneric
	divSc  = divScalarGeneric
)

func rowMaxGeneric(x []float32) float32 {
	mx := float32(math.Inf(-1))
	for _, v := range x {
		if v > mx || v != v {
			mx = v
		}
	}
	return mx
}

func sumF64Generic(x []float32) float64 {
	s := 0.0
	for _, v := range x {
		s += float64(v)
	}
	return s
}

func scaleGeneric(a float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = v * a
	}
}

// DivScalar sets y = x / a elementwise (IEEE division: the same values on
// every path).
func DivScalar(x []float32, a float32, y []float32) { divSc(x, a, y) }

func divScalarGeneric(x []float32, a float32, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = v / a
	}
}

// AvgPool2D computes y = the mean over each window of x; includePad
// counts the window positions in the padding (ONNX count_include_pad),
// else only those inside the input. Windows are clipped to the padded
// extent H+PT+PB (ceil mode windows past it count only up to it).
func (x *Context) AvgPool2D(p Pool2D, pb, pr int, includePad bool, in, y []float32) error {
	if err := p.check(in, y); err != nil {
		return err
	}
	planes := p.N * p.C
	x.rangeWork(planes, p.OH*p.OW*p.KH*p.KW*tapWork, func(lo, hi int) { avgPoolPlanes(&p, pb, pr, includePad, in, y, lo, hi) })
	return nil
}

// avgPoolPlanes runs AvgPool2D on planes [lo, hi).
func avgPoolPlanes(p *Pool2D, pb, pr int, includePad bool, in, y []float32, lo, hi int) {
	if p.PT == 0 && p.PL == 0 && (p.OH-1)*p.SH+(p.KH-1)*p.DH < p.H && (p.OW-1)*p.SW+(p.KW-1)*p.DW < p.W {
		avgPoolInside(p, in, y, lo, hi)
		return
	}
	avgPoolGeneral(p, pb, pr, includePad, in, y, lo, hi)
}

// avgPoolGeneral is avgPoolPlanes for any geometry: each tap checked
// against the input and the padded extent.
func avgPoolGeneral(p *Pool2D, pb, pr int, includePad bool, in, y []float32, lo, hi int) {
	for pl := lo; pl < hi; pl++ {
		xc := in[pl*p.H*p.W : (pl+1)*p.H*p.W]
		yc := y[pl*p.OH*p.OW : (pl+1)*p.OH*p.OW]
		for oh := 0; oh < p.OH; oh++ {
			h0 := oh*p.SH - p.PT
			for ow := 0; ow < p.OW; ow++ {
				w0 := ow*p.SW - p.PL
				s := float32(0)
				cnt, cntPad := 0, 0
				for kh := 0; kh < p.KH; kh++ {
					ih := h0 + kh*p.DH
					if ih >= p.H+pb {
						break
					}
					for kw := 0; kw < p.KW; kw++ {
						iw := w0 + kw*p.DW
						if iw >= p.W+pr {
							break
						}
						cntPad++
						if ih < 0 || ih >= p.H || iw < 0 || iw >= p.W {
							continue
						}
						s += xc[ih*p.W+iw]
						cnt++
					}
				}
				d := cnt
				if includePad {
					d = cntPad
				}
				if d == 0 {
					yc[oh*p.OW+ow] = 0
					continue
				}
				yc[oh*p.OW+ow] = s / float32(d)
			}
		}
	}
}

// avgPoolInside is avgPoolPlanes when every window lies inside the input
// (DenseNet's 2×2 stride-2 transitions): the same sums in the same order
// (from 0, row by row) over KH·KW values, without the per-tap bounds.
func avgPoolInside(p *Pool2D, in, y []float32, lo, hi int) {
	d := float32(p.KH * p.KW)
	for pl := lo; pl < hi; pl++ {
		xc := in[pl*p.H*p.W : (pl+1)*p.H*p.W]
		yc := y[pl*p.OH*p.OW : (pl+1)*p.OH*p.OW]
		for oh := 0; oh < p.OH; oh++ {
			yr := yc[oh*p.OW : (oh+1)*p.OW]
			r0 := xc[oh*p.SH*p.W:]
			if p.KH == 2 && p.KW == 2 && p.DH == 1 && p.DW == 1 {
				r1 := r0[p.W:]
				for ow := range yr {
					c := ow * p.SW
					s := float32(0)
					s += r0[c]
					s += r0[c+1]
					s += r1[c]
					s += r1[c+1]
					yr[ow] = s / d
				}
				continue
			}
			for ow := range yr {
				s := float32(0)
				for kh := 0; kh < p.KH; kh++ {
					row := r0[kh*p.DH*p.W+ow*p.SW:]
					for kw := 0; kw < p.KW; kw++ {
						s += row[kw*p.DW]
					}
				}
				yr[ow] = s / d
			}
		}
	}
}

// Tanh sets y = tanh(x) for the ONNX Tanh op: TanhFast, the rational
// approximation ONNX Runtime's MLAS computes too (absolute error below
// 1e-6, relative about 1e-7 near 0; AVX2 8 lanes at a time), not
// float64 math.Tanh per element (15 % of a GPT-2 prefill, whose GELU is
// exported with Tanh).
func Tanh(x, y []float32) { TanhFast(x, y) }

// Transpose permutes the axes of x (shape, row-major) into y: y's axis i
// is x's axis perm[i]. Runs of x's last axes that stay y's last axes are
// copied whole.
func Transpose(x []float32, shape, perm []int, y []float32) {
	TransposeRows(x, shape, perm, y, 0, TransposeRowCount(shape, perm))
}

// coalesceAxes returns the transpose (shape, perm) with the axes of
// length 1 dropped and the axes that stay side by side in order (x's
// axes a and a+1 as y's consecutive axes) merged into one: the same
// element order with the fewest axes, so that a copied run is as long as
// it can be (a channel shuffle of [1, 2, 58, 28, 28] by [0, 2, 1, 3, 4]
// is [2, 58, 784] by [1, 0, 2]: runs of a whole plane, not of a row).
func coalesceAxes(shape, perm []int) (cs, cp []int) {
	at := make([]int, len(shape)) // kept axis index of each axis, or −1
	var kept []int
	for a, d := range shape {
		at[a] = -1
		if d != 1 {
			at[a] = len(kept)
			kept = append(kept, d)
		}
	}
	var p []int
	for _, a := range perm {
		if at[a] >= 0 {
			p = append(p, at[a])
		}
	}
	if len(p) == 0 {
		return []int{1}, []int{0}
	}
	pos := make([]int, len(kept)) // position of each kept axis in p
	for k, a := range p {
		pos[a] = k
	}
	group := make([]int, len(kept))
	for a, d := range kept {
		if a > 0 && pos[a] == pos[a-1]+1 {
			group[a] = group[a-1]
			cs[len(cs)-1] *= d
			continue
		}
		group[a] = len(cs)
		cs = append(cs, d)
	}
	for k, a := range p {
		if k == 0 || group[a] != group[p[k-1]] {
			cp = append(cp, group[a])
		}
	}
	return cs, cp
}

// TransposeRowCount is the number of rows (runs of y's last axis, once
// the axes are coalesced: see coalesceAxes) that TransposeRows splits y
// into.
func TransposeRowCount(shape, perm []int) int {
	shape, perm = coalesceAxes(shape, perm)
	r := len(shape)
	if r == 0 {
		return 1
	}
	inner := shape[perm[r-1]]
	if inner == 0 {
		return 0
	}
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n / inner
}

// TransposeRows is Transpose for rows r0 ≤ row < r1 of y only (rows are
// runs of y's last coalesced axis, see TransposeRowCount): each row is written the
// same whatever the split.
func TransposeRows(x []float32, shape, perm []int, y []float32, r0, r1 int) {
	if len(x) == 0 {
		return
	}
	if a, b, ok := swapsLastTwo(shape, perm); ok {
		// Batches of a×b matrices transposed (NCHW ↔ NHWC among them):
		// in tiles, each source row's run read once.
		for r := r0; r < r1; {
			n, j := r/b, r%b
			k := min(b, j+r1-r)
			transpose2D(x[n*a*b:(n+1)*a*b], a, b, y[n*a*b:(n+1)*a*b], j, k)
			r += k - j
		}
		return
	}
	transposeRows(shape, perm, y, r0, r1, func(dst []float32, src, stride int) {
		if stride == 1 {
			copy(dst, x[src:src+len(dst)])
			return
		}
		for j := range dst {
			dst[j] = x[src+j*stride]
		}
	})
}

// swapsLastTwo reports whether the transpose of shape by perm, coalesced,
// is a batch of a×b matrices each transposed (perm [1, 0] or [0, 2, 1]),
// with a and b at least 2.
func swapsLastTwo(shape, perm []int) (a, b int, ok bool) {
	cs, cp := coalesceAxes(shape, perm)
	switch {
	case len(cs) == 2 && cp[0] == 1:
		a, b = cs[0], cs[1]
	case len(cs) == 3 && cp[0] == 0 && cp[1] == 2:
		a, b = cs[1], cs[2]
	default:
		return 0, 0, false
	}
	return a, b, a >= 2 && b >= 2
}

// transpose8x8 (nil: none) is transpose8x8AVX2: tiles 8×8 blocks of x
// (rows ldx floats apart), the t-th from row 8t, stored transposed into
// y (rows ldy floats apart) from column 8t; set during package
// initialization and read-only afterwards.
var transpose8x8 func(tiles int, x *float32, ldx int, y *float32, ldy int)

// transpose2D sets rows j0 ≤ j < j1 of y (b×a) to the columns of x
// (a×b): y[j·a+i] = x[i·b+j], in tiles of 8×8 (a tile reads 8 runs of
// 8 floats and writes 8, with SIMD shuffles when there are; the strided
// loop reads one float of each line it loads).
func transpose2D(x []float32, a, b int, y []float32, j0, j1 int) {
	const t = 8
	_ = x[a*b-1]
	_ = y[a*b-1]
	for jt := j0; jt < j1; jt += t {
		je := min(jt+t, j1)
		it := 0
		if je-jt == t && a >= t {
			if transpose8x8 != nil {
				transpose8x8(a/t, &x[jt], b, &y[jt*a], a)
				it = a / t * t
			} else {
				for ; it+t <= a; it += t {
					for j := jt; j < je; j++ {
						yr := y[j*a+it : j*a+it+t]
						s := x[it*b+j : (it+t-1)*b+j+1]
						yr[0], yr[1], yr[2], yr[3] = s[0], s[b], s[2*b], s[3*b]
						yr[4], yr[5], yr[6], yr[7] = s[4*b], s[5*b], s[6*b], s[7*b]
					}
				}
			}
		}
		for j := jt; j < je; j++ {
			for i := it; i < a; i++ {
				y[j*a+i] = x[i*b+j]
			}
		}
	}
}

// TransposeRowsParts is TransposeRows of x, the concatenation of parts
// (read where they are: a Concat of the channels of one image followed by
// a channel shuffle copies each element once, not twice).
func TransposeRowsParts(parts [][]float32, shape, perm []int, y []float32, r0, r1 int) {
	ends := make([]int, len(parts)) // x-offset where each part ends
	n := 0
	for i, p := range parts {
		n += len(p)
		ends[i] = n
	}
	if n == 0 {
		return
	}
	// part returns the part holding x[src] and src's offset in it.
	part := func(src int) ([]float32, int) {
		i, _ := slices.BinarySearch(ends, src+1)
		return parts[i], src - (ends[i] - len(parts[i]))
	}
	transposeRows(shape, perm, y, r0, r1, func(dst []float32, src, stride int) {
		if stride != 1 {
			for j := range dst {
				p, o := part(src + j*stride)
				dst[j] = p[o]
			}
			return
		}
		for len(dst) > 0 {
			p, o := part(src)
			k := copy(dst, p[o:])
			dst, src = dst[k:], src+k
		}
	})
}

// transposeRows runs the rows r0 ≤ row < r1 of the Transpose of a source
// of shape by perm into y: run copies y's row dst from the source's
// elements src, src+stride, ….
func transposeRows(shape, perm []int, y []float32, r0, r1 int, run func(dst []float32, src, stride int)) {
	shape, perm = coalesceAxes(shape, perm)
	r := len(shape)
	if r0 >= r1 {
		return
	}
	st := make([]int, r)
	s := 1
	for i := r - 1; i >= 0; i-- {
		st[i] = s
		s *= shape[i]
	}
	out := make([]int, r)
	ost := make([]int, r) // x-stride of each y axis
	for i, p := range perm {
		out[i], ost[i] = shape[p], st[p]
	}
	inner, innerStride := out[r-1], ost[r-1]
	// The index over y's outer axes of row r0.
	idx := make([]int, r-1)
	for d, q := r-2, r0; d >= 0; d-- {
		idx[d] = q % out[d]
		q /= out[d]
	}
	for o := r0 * inner; o < r1*inner; o += inner {
		src := 0
		for d, v := range idx {
			src += v * ost[d]
		}
		run(y[o:o+inner], src, innerStride)
		for d := r - 2; d >= 0; d-- {
			idx[d]++
			if idx[d] < out[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// LayerNormDecomposedRow is one row of the nine-node LayerNormalization
// of pre-17 exports (executor/fuse_layernorm.go): m = mean(x) (the sum in
// float64), d = x − m, v = mean(float32(d²)) (in float64), sd =
// float32(√(float32(v) + eps)), y = float32(d/sd)·gamma + beta, each in
// float32 as the nine kernels compute it. With AVX2 the sums run in 8
// float64 lanes (added in lane order at the end: the last bits of a sum
// may differ from a sequential one, far below float32's) and the rest
// 8 lanes at a time with the same float32 operations.
func LayerNormDecomposedRow(x, y, gamma, beta []float32, eps float32) {
	inner := len(x)
	if inner == 0 {
		return
	}
	y, gamma, beta = y[:inner], gamma[:inner], beta[:inner]
	m := float32(sumF64(x) / float64(inner))
	q := subSq(x, m, y)
	sd := float32(math.Sqrt(float64(float32(q/float64(inner)) + eps)))
	normAffine(y, sd, gamma, beta)
}

// subSq sets y = x − m and returns the float64 sum of float32(d·d);
// normAffine sets y = float32(y/sd)·g + b. Go loops, or SIMD versions
// set during package initialization (never changed afterwards).
var (
	subSq      = subSqGeneric
	normAffine = normAffineGeneric
)

func subSqGeneric(x []float32, m float32, y []float32) float64 {
	y = y[:len(x)]
	q := 0.0
	for i, v := range x {
		d := v - m
		y[i] = d
		q += float64(float32(d * d))
	}
	return q
}

func normAffineGeneric(y []float32, sd float32, g, b []float32) {
	g, b = g[:len(y)], b[:len(y)]
	for i, d := range y {
		y[i] = float32(float32(d/sd)*g[i]) + b[i]
	}
}
