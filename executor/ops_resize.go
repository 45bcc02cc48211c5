package executor

import (
	"fmt"
	"math"
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
	var scales []float64
	var sizes []int64
	var roi []float64
	mode := c.AStr("mode", "nearest")
	ctm := c.AStr("coordinate_transformation_mode", "half_pixel")
	nearestMode := c.AStr("nearest_mode", "round_prefer_floor")
	if c.n.OpType == "Upsample" || c.ver < 11 {
		ctm, nearestMode = "asymmetric", "floor"
		if c.n.OpType == "Upsample" && c.ver < 9 {
			for _, f := range c.AFloats("scales", nil) {
				scales = append(scales, float64(f))
			}
		} else {
			sh, err := c.H(1)
			if err != nil {
				return err
			}
			scales = sh.f64()
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
			roi = rh.f64()
		}
		if c.Has(2) {
			sh, err := c.H(2)
			if err != nil {
				return err
			}
			scales = sh.f64()
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
	fullScale := make([]float64, r)
	out := append([]int{}, h.shape...)
	for i := range fullScale {
		fullScale[i] = 1
	}
	if len(sizes) > 0 {
		policy := c.AStr("keep_aspect_ratio_policy", "stretch")
		if policy != "stretch" {
			s := math.Inf(1)
			if policy == "not_smaller" {
				s = math.Inf(-1)
			}
			for i, ax := range axes {
				v := float64(sizes[i]) / float64(h.shape[ax])
				if policy == "not_larger" {
					s = math.Min(s, v)
				} else {
					s = math.Max(s, v)
				}
			}
			for _, ax := range axes {
				fullScale[ax] = s
				out[ax] = int(math.Floor(s*float64(h.shape[ax]) + 0.5))
			}
		} else {
			for i, ax := range axes {
				out[ax] = int(sizes[i])
				fullScale[ax] = float64(sizes[i]) / float64(h.shape[ax])
			}
		}
	} else if len(scales) > 0 {
		for i, ax := range axes {
			fullScale[ax] = scales[i]
			out[ax] = int(math.Floor(float64(h.shape[ax]) * scales[i]))
		}
	} else {
		return fmt.Errorf("Resize needs scales or sizes")
	}
	if err := checkSize(out); err != nil {
		return err
	}
	roiStart, roiEnd := make([]float64, r), make([]float64, r)
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
	v := h.f64()
	cur := h.shape
	outside := make([][]bool, r)
	for ax := 0; ax < r; ax++ {
		in, on := h.shape[ax], out[ax]
		if in == on && fullScale[ax] == 1 && ctm != "tf_crop_and_resize" {
			continue
		}
		scale := fullScale[ax]
		tp := make([]taps, on)
		outside[ax] = make([]bool, on)
		for x := 0; x < on; x++ {
			xf := float64(x)
			var xo float64
			switch ctm {
			case "asymmetric":
				xo = xf / scale
			case "align_corners":
				if on == 1 {
					xo = 0
				} else {
					// the reference divides by the unrounded output length
					xo = xf * float64(in-1) / (scale*float64(in) - 1)
				}
			case "pytorch_half_pixel":
				if on > 1 {
					xo = (xf+0.5)/scale - 0.5
				} else {
					xo = 0
				}
			case "tf_crop_and_resize":
				s, e := roiStart[ax], roiEnd[ax]
				if on > 1 {
					xo = s*float64(in-1) + xf*(e-s)*float64(in-1)/float64(on-1)
				} else {
					xo = 0.5 * (s + e) * float64(in-1)
				}
				if xo < 0 || xo > float64(in-1) {
					outside[ax][x] = true
				}
			case "half_pixel_symmetric":
				adj := float64(on) / (scale * float64(in))
				center := float64(in) / 2
				off := center * (1 - adj)
				xo = off + (xf+0.5)/scale - 0.5
			default: // half_pixel
				xo = (xf+0.5)/scale - 0.5
			}
			t := &tp[x]
			switch mode {
			case "nearest":
				var i int
				fl := math.Floor(xo)
				frac := xo - fl
				switch nearestMode {
				case "floor":
					i = int(fl)
				case "ceil":
					i = int(math.Ceil(xo))
				case "round_prefer_ceil":
					if frac == 0.5 {
						i = int(fl) + 1
					} else {
						i = int(math.Round(xo))
					}
				default:
					if frac == 0.5 {
						i = int(fl)
					} else {
						i = int(math.Round(xo))
					}
				}
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
					fs = scale
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
		// apply along ax
		ns := append([]int{}, cur...)
		ns[ax] = on
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
