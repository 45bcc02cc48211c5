package executor

import (
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor/kernels"
)

// Resize and Upsample (host), separable per axis.

func registerResize(r registry) {
	r.host(hostResize, "Resize")
	r.host(hostResize, "Upsample")
}

type taps struct {
	idx []int
	w   []float64
	out bool // coordinate outside the input (tf_crop_and_resize)
}

func cubicW(t, a float64) float64 {
	t = math.Abs(t)
	switch {
	case t <= 1:
		return (a+2)*t*t*t - (a+3)*t*t + 1
	case t < 2:
		return a*t*t*t - 5*a*t*t + 8*a*t - 4*a
	}
	return 0
}

func hostResize(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	r := len(h.shape)
	// Scales, sizes and coordinates are float32, as ONNX Runtime computes
	// them: in float64 a tie of the nearest modes (x.5) or a floor at an
	// integer falls on the other side of what ONNX Runtime picks.
	var scales []float32
	var sizes []int64
	var roi []float32
	mode := c.AStr("mode", "nearest")
	ctm := c.AStr("coordinate_transformation_mode", "half_pixel")
	nearestMode := c.AStr("nearest_mode", "round_prefer_floor")
	legacy := c.n.OpType == "Upsample" || c.ver < 11
	if legacy {
		ctm, nearestMode = "asymmetric", "floor"
		if c.n.OpType == "Upsample" && c.ver < 9 {
			scales = c.AFloats("scales", nil)
		} else {
			sh, err := c.H(1)
			if err != nil {
				return err
			}
			scales = f32s(sh.f64())
		}
		if mode == "bilinear" {
			mode = "linear"
		}
	} else {
		if c.Has(1) {
			rh, err := c.H(1)
			if err != nil {
				return err
			}
			roi = f32s(rh.f64())
		}
		if c.Has(2) {
			sh, err := c.H(2)
			if err != nil {
				return err
			}
			scales = f32s(sh.f64())
		}
		if c.Has(3) {
			if sizes, err = c.Ints(3); err != nil {
				return err
			}
		}
	}
	axes := make([]int, 0, r)
	if av := c.AInts("axes", nil); av != nil && c.ver >= 18 {
		for _, a := range av {
			ax, err := normAxis(a, r)
			if err != nil {
				return err
			}
			axes = append(axes, ax)
		}
	} else {
		for i := 0; i < r; i++ {
			axes = append(axes, i)
		}
	}
	fullScale := make([]float32, r)
	out := append([]int{}, h.shape...)
	for i := range fullScale {
		fullScale[i] = 1
	}
	if len(sizes) > 0 {
		policy := c.AStr("keep_aspect_ratio_policy", "stretch")
		if policy != "stretch" {
			s := float32(math.Inf(1))
			if policy == "not_smaller" {
				s = float32(math.Inf(-1))
			}
			for i, ax := range axes {
				v := float32(sizes[i]) / float32(h.shape[ax])
				if policy == "not_larger" {
					s = min(s, v)
				} else {
					s = max(s, v)
				}
			}
			for _, ax := range axes {
				fullScale[ax] = s
				out[ax] = int(math.Round(float64(s * float32(h.shape[ax]))))
			}
		} else {
			for i, ax := range axes {
				out[ax] = int(sizes[i])
				fullScale[ax] = float32(sizes[i]) / float32(h.shape[ax])
			}
		}
	} else if len(scales) > 0 {
		for i, ax := range axes {
			fullScale[ax] = scales[i]
			out[ax] = int(math.Floor(float64(h.shape[ax]) * float64(scales[i])))
		}
	} else {
		return fmt.Errorf("Resize needs scales or sizes")
	}
	if err := checkSize(out); err != nil {
		return err
	}
	roiStart, roiEnd := make([]float32, r), make([]float32, r)
	for i := range roiEnd {
		roiEnd[i] = 1
	}
	if len(roi) == 2*len(axes) {
		for i, ax := range axes {
			roiStart[ax], roiEnd[ax] = roi[i], roi[i+len(axes)]
		}
	}
	a := float64(c.AFloat("cubic_coeff_a", -0.75))
	exclude := c.AInt("exclude_outside", 0) == 1
	antialias := c.AInt("antialias", 0) == 1
	extrap := float64(c.AFloat("extrapolation_value", 0))
	// The taps of each resized axis (nil: the axis is left as it is).
	axTaps := make([][]taps, r)
	outside := make([][]bool, r)
	for ax := 0; ax < r; ax++ {
		in, on := h.shape[ax], out[ax]
		if in == on && fullScale[ax] == 1 && ctm != "tf_crop_and_resize" {
			continue
		}
		if in == 0 && on > 0 {
			return fmt.Errorf("%s: axis %d of input %v is empty, output %v is not", c.n.OpType, ax, h.shape, out)
		}
		scale := fullScale[ax]
		resized := float32(on)
		if len(sizes) == 0 {
			resized = scale * float32(in)
		}
		tp := make([]taps, on)
		outside[ax] = make([]bool, on)
		for x := 0; x < on; x++ {
			xo32 := origCoord(ctm, x, scale, in, on, resized, roiStart[ax], roiEnd[ax])
			if ctm == "tf_crop_and_resize" && (xo32 < 0 || xo32 > float32(in-1)) {
				outside[ax][x] = true
			}
			xo := float64(xo32)
			t := &tp[x]
			switch mode {
			case "nearest":
				i := nearestIndex(nearestMode, xo32, legacy && scale < 1)
				if i < 0 {
					i = 0
				}
				if i >= in {
					i = in - 1
				}
				t.idx, t.w = []int{i}, []float64{1}
			default:
				radius := 1.0
				if mode == "cubic" {
					radius = 2
				}
				fs := 1.0
				if antialias && scale < 1 {
					fs = float64(scale)
				}
				fl := int(math.Floor(xo))
				start := int(math.Floor(-radius/fs)) + 1
				lo, hi := fl+start, fl+1-start
				sum := 0.0
				for i := lo; i <= hi; i++ {
					d := (xo - float64(i)) * fs
					var w float64
					if mode == "cubic" {
						w = cubicW(d, a)
					} else {
						w = math.Max(0, 1-math.Abs(d))
					}
					if (i < 0 || i >= in) && exclude {
						continue
					}
					ii := i
					if ii < 0 {
						ii = 0
					}
					if ii >= in {
						ii = in - 1
					}
					t.idx = append(t.idx, ii)
					t.w = append(t.w, w)
					sum += w
				}
				if (exclude || (antialias && scale < 1)) && sum != 0 {
					for k := range t.w {
						t.w[k] /= sum
					}
				}
			}
		}
		axTaps[ax] = tp
	}
	if h.dt == canonical.Float && ctm != "tf_crop_and_resize" && lastTwoAxes(axTaps) {
		c.OutH(0, c.resizeF32(h, out, axTaps))
		return nil
	}
	v := h.f64()
	cur := h.shape
	for ax, tp := range axTaps {
		if tp == nil {
			continue
		}
		// apply along ax
		ns := append([]int{}, cur...)
		ns[ax] = out[ax]
		st := strides(cur)
		res := make([]float64, numel(ns))
		k := 0
		forEachIndex(ns, func(o []int) {
			base := 0
			for d, x := range o {
				if d != ax {
					base += x * st[d]
				}
			}
			s := 0.0
			t := tp[o[ax]]
			for j, i := range t.idx {
				s += t.w[j] * v[base+i*st[ax]]
			}
			res[k] = s
			k++
		})
		v, cur = res, ns
	}
	if ctm == "tf_crop_and_resize" {
		k := 0
		forEachIndex(out, func(o []int) {
			for d, x := range o {
				if outside[d] != nil && outside[d][x] {
					v[k] = extrap
					break
				}
			}
			k++
		})
	}
	if isIntType(h.dt) {
		for k := range v {
			v[k] = math.RoundToEven(v[k])
		}
	}
	c.OutH(0, fromF64(h.dt, out, v))
	return nil
}

// origCoord is the coordinate in the input of output index x along an
// axis of in elements resized to on, as ONNX Runtime computes it (float32;
// the conversions keep a product from being fused into an add).
// For align_corners, resized is the output length that divides: on when
// the sizes were given (as ONNX Runtime and the reference agree), the
// unrounded scale·in when scales were (the ONNX reference and its backend
// tests, onnx/onnx#2462; ONNX Runtime divides by on there).
func origCoord(ctm string, x int, scale float32, in, on int, resized, roiStart, roiEnd float32) float32 {
	xf := float32(x)
	switch ctm {
	case "asymmetric":
		return xf / scale
	case "align_corners":
		if on == 1 {
			return 0
		}
		return xf * float32(in-1) / (resized - 1)
	case "pytorch_half_pixel":
		if on > 1 {
			return (xf+0.5)/scale - 0.5
		}
		return 0
	case "tf_half_pixel_for_nn":
		return (xf + 0.5) / scale
	case "tf_crop_and_resize":
		if on > 1 {
			return float32(roiStart*float32(in-1)) + xf*(roiEnd-roiStart)*float32(in-1)/float32(on-1)
		}
		return float32(0.5 * float64(roiStart+roiEnd) * float64(in-1)) // in double, as ONNX Runtime
	case "half_pixel_symmetric":
		adj := float32(on) / float32(scale*float32(in))
		off := float32(float32(in)/2) * (1 - adj)
		return float32(float64(off) + (float64(xf)+0.5)/float64(scale) - 0.5) // in double, as ONNX Runtime
	}
	return (xf+0.5)/scale - 0.5 // half_pixel
}

// nearestIndex rounds a coordinate to an input index as nearest_mode says
// (not yet clamped to the input). Resize-10 and Upsample (legacy) round
// down, and up when the axis shrinks, as ONNX Runtime does. The round
// modes take a coordinate within tieEps of a half for the tie, as ONNX
// Runtime 1.30 does: a float32 coordinate whose exact value is x.5 (7 → 4
// asymmetric: 2·7/4) comes out one ulp off (3.4999998).
func nearestIndex(mode string, xo float32, legacyDown bool) int {
	fl := float32(math.Floor(float64(xo)))
	tie := math.Abs(float64(xo-fl)-0.5) <= tieEps
	switch {
	case legacyDown:
		return int(math.Ceil(float64(xo)))
	case mode == "floor":
		return int(fl)
	case mode == "ceil":
		return int(math.Ceil(float64(xo)))
	case tie && mode == "round_prefer_ceil":
		return int(fl) + 1
	case tie:
		return int(fl) // round_prefer_floor
	}
	return int(math.Round(float64(xo)))
}

// tieEps is how far from x.5 a coordinate still rounds as a tie (ONNX
// Runtime 1.30: 1e-6 in float32 coordinates; measured with
// fixtures/divergence: 14.499999 is a tie, 21.499998 is not).
const tieEps = 1e-6

// f32s converts float64 values to float32.
func f32s(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// lastTwoAxes reports whether only the last two axes (or one of them) of a
// tensor of rank 2 or more are resized.
func lastTwoAxes(axTaps [][]taps) bool {
	r := len(axTaps)
	if r < 2 {
		return false
	}
	for ax := 0; ax < r-2; ax++ {
		if axTaps[ax] != nil {
			return false
		}
	}
	return true
}

// resizeF32 resizes the last two axes of float32 h to out with the taps of
// each (nil: left as it is), plane by plane over the kernels' threads.
func (c *lctx) resizeF32(h *htensor, out []int, axTaps [][]taps) *htensor {
	x, _ := f32(h)
	r := len(out)
	ih, iw, oh, ow := h.shape[r-2], h.shape[r-1], out[r-2], out[r-1]
	ty, tx := axTaps[r-2], axTaps[r-1]
	y := c.newHAs(h.dt, out, false)
	yd, _ := f32(y)
	planes := numel(out[:r-2])
	run := func(lo, hi int) { resizePlanesF32(x, ih, iw, ty, tx, yd, oh, ow, lo, hi) }
	if c.e.kern == nil {
		run(0, planes)
	} else {
		c.e.kern.Range(planes, oh*ow, run)
	}
	return y
}

// resizePlanesF32 writes planes [lo, hi) of y (oh×ow each) resized from x
// (ih×iw each) with the taps of the rows ty and of the columns tx (nil:
// that axis is left as it is). Each output is the same float64 sum as the
// generic path's, rows first (bit-identical but for the sign of a zero);
// nearest taps (one, weight 1) are copies, linear ones (two) a pair of
// products.
func resizePlanesF32(x []float32, ih, iw int, ty, tx []taps, y []float32, oh, ow, lo, hi int) {
	near := func(tp []taps) bool {
		for _, t := range tp {
			if len(t.idx) != 1 || t.w[0] != 1 {
				return false
			}
		}
		return true
	}
	if near(ty) && near(tx) {
		var cols []int
		for _, t := range tx {
			cols = append(cols, t.idx[0])
		}
		// Each input column twice in order (a 2× up-sampling): one
		// SIMD pass a row.
		double := ow == 2*iw
		for ox, ix := range cols {
			double = double && ix == ox/2
		}
		for p := lo; p < hi; p++ {
			xp, yp := x[p*ih*iw:(p+1)*ih*iw], y[p*oh*ow:(p+1)*oh*ow]
			for oy := 0; oy < oh; oy++ {
				iy := oy
				if ty != nil {
					iy = ty[oy].idx[0]
				}
				src, dst := xp[iy*iw:(iy+1)*iw], yp[oy*ow:(oy+1)*ow]
				switch {
				case oy > 0 && ty != nil && ty[oy-1].idx[0] == iy:
					copy(dst, yp[(oy-1)*ow:oy*ow]) // the row above, up-sampled already
				case cols == nil:
					copy(dst, src)
				case double:
					kernels.Dup2(dst, src)
				default:
					for ox, ix := range cols {
						dst[ox] = src[ix]
					}
				}
			}
		}
		return
	}
	row := make([]float64, iw)
	cols := pairTaps(tx)
	w2x, twice := doubled(cols, iw)
	for p := lo; p < hi; p++ {
		xp, yp := x[p*ih*iw:(p+1)*ih*iw], y[p*oh*ow:(p+1)*oh*ow]
		for oy := 0; oy < oh; oy++ {
			switch {
			case ty == nil:
				for i, v := range xp[oy*iw : (oy+1)*iw] {
					row[i] = float64(v)
				}
			case len(ty[oy].idx) == 2:
				t := ty[oy]
				w0, w1 := t.w[0], t.w[1]
				r0, r1 := xp[t.idx[0]*iw:(t.idx[0]+1)*iw], xp[t.idx[1]*iw:(t.idx[1]+1)*iw]
				kernels.LerpRows(row, r0, r1, w0, w1)
			default:
				t := ty[oy]
				for i := range row {
					s := 0.0
					for j, iy := range t.idx {
						s += t.w[j] * float64(xp[iy*iw+i])
					}
					row[i] = s
				}
			}
			dst := yp[oy*ow : (oy+1)*ow]
			switch {
			case tx == nil:
				for i, v := range row {
					dst[i] = float32(v)
				}
			case twice:
				// The interior pairs in one SIMD pass, the two columns at
				// each edge as below.
				kernels.Lerp2x(dst[2:ow-2], row, &w2x)
				for _, ox := range [4]int{0, 1, ow - 2, ow - 1} {
					c := &cols[ox]
					dst[ox] = float32(c.w0*row[c.i0] + c.w1*row[c.i1])
				}
			case cols != nil:
				for ox := range dst {
					c := &cols[ox]
					dst[ox] = float32(c.w0*row[c.i0] + c.w1*row[c.i1])
				}
			default:
				for ox := range dst {
					t := tx[ox]
					s := 0.0
					for j, ix := range t.idx {
						s += t.w[j] * row[ix]
					}
					dst[ox] = float32(s)
				}
			}
		}
	}
}

// doubled reports whether the linear column taps cols (of ow = 2·iw
// outputs, iw ≥ 3) are a 2× up-sampling's: output 2i reads columns i−1
// and i, output 2i+1 columns i and i+1, with the same weights for every
// interior column (the edges, clamped, aside), and returns those weights
// (even pair, odd pair) as kernels.Lerp2x takes them.
func doubled(cols []tapPair, iw int) (w [4]float64, ok bool) {
	ow := len(cols)
	if cols == nil || ow != 2*iw || iw < 3 {
		return w, false
	}
	e, o := cols[2], cols[3]
	w = [4]float64{e.w0, e.w1, o.w0, o.w1}
	for ox := 2; ox < ow-2; ox++ {
		i, c := ox/2, cols[ox]
		want := tapPair{i - 1, i, e.w0, e.w1}
		if ox%2 == 1 {
			want = tapPair{i, i + 1, o.w0, o.w1}
		}
		if c != want {
			return w, false
		}
	}
	return w, true
}

// tapPair is a linear tap of two inputs.
type tapPair struct {
	i0, i1 int
	w0, w1 float64
}

// pairTaps returns tp as pairs when every tap has two inputs (linear),
// else nil.
func pairTaps(tp []taps) []tapPair {
	if tp == nil {
		return nil
	}
	out := make([]tapPair, len(tp))
	for k, t := range tp {
		if len(t.idx) != 2 {
			return nil
		}
		out[k] = tapPair{t.idx[0], t.idx[1], t.w[0], t.w[1]}
	}
	return out
}
