package executor

import (
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
)

// GridSample and AffineGrid (host).

func registerGrid(r registry) {
	r.host(hostGridSample, "GridSample")
	r.host(hostAffineGrid, "AffineGrid")
	r.host(hostRoiAlign, "RoiAlign")
}

func gsReflect(x, lo, hi float64) float64 {
	rng := hi - lo
	if rng <= 0 {
		return lo
	}
	if x < lo {
		dx := lo - x
		n := math.Floor(dx / rng)
		r := dx - n*rng
		if int(n)%2 == 0 {
			return lo + r
		}
		return hi - r
	}
	if x > hi {
		dx := x - hi
		n := math.Floor(dx / rng)
		r := dx - n*rng
		if int(n)%2 == 0 {
			return hi - r
		}
		return lo + r
	}
	return x
}

func hostGridSample(c *lctx) error {
	xh, err := c.H(0)
	if err != nil {
		return err
	}
	gh, err := c.H(1)
	if err != nil {
		return err
	}
	mode := c.AStr("mode", "linear")
	switch mode {
	case "bilinear":
		mode = "linear"
	case "bicubic":
		mode = "cubic"
	}
	pad := c.AStr("padding_mode", "zeros")
	align := c.AInt("align_corners", 0) == 1
	xs := xh.shape
	N, C := xs[0], xs[1]
	sp := xs[2:]
	nd := len(sp)
	gs := gh.shape
	outSp := gs[1 : len(gs)-1]
	if gs[len(gs)-1] != nd {
		return fmt.Errorf("grid last dim %d for %d spatial dims", gs[len(gs)-1], nd)
	}
	x, g := xh.f64(), gh.f64()
	nOut := numel(outSp)
	out := make([]float64, N*C*nOut)
	xst := strides(sp)
	spN := numel(sp)
	type tap struct {
		i int
		w float64
	}
	for n := 0; n < N; n++ {
		for p := 0; p < nOut; p++ {
			// per-dim taps; grid holds (x, y[, z]) = innermost dim first
			taps := make([][]tap, nd)
			zero := false
			for d := 0; d < nd; d++ {
				size := sp[d]
				gc := g[(n*nOut+p)*nd+(nd-1-d)]
				var v float64
				if align {
					v = (gc + 1) / 2 * float64(size-1)
				} else {
					v = ((gc+1)*float64(size) - 1) / 2
				}
				lo, hi := -0.5, float64(size)-0.5
				if align {
					lo, hi = 0, float64(size-1)
				}
				switch pad {
				case "border":
					v = math.Max(0, math.Min(float64(size-1), v))
				case "reflection":
					v = gsReflect(v, lo, hi)
				}
				fix := func(i int) (int, bool) {
					if i >= 0 && i < size {
						return i, true
					}
					switch pad {
					case "border":
						if i < 0 {
							return 0, true
						}
						return size - 1, true
					case "reflection":
						r := int(gsReflect(float64(i), lo, hi))
						if r < 0 {
							r = 0
						}
						if r >= size {
							r = size - 1
						}
						return r, true
					}
					return 0, false
				}
				var ts []tap
				switch mode {
				case "nearest":
					i := int(math.RoundToEven(v))
					if ii, ok := fix(i); ok {
						ts = append(ts, tap{ii, 1})
					} else {
						zero = true
					}
				case "cubic":
					f := math.Floor(v)
					t := v - f
					for k := -1; k <= 2; k++ {
						w := cubicW(t-float64(k), -0.75)
						if ii, ok := fix(int(f) + k); ok {
							ts = append(ts, tap{ii, w})
						}
					}
				default:
					f := math.Floor(v)
					t := v - f
					for k, w := range []float64{1 - t, t} {
						if ii, ok := fix(int(f) + k); ok {
							ts = append(ts, tap{ii, w})
						}
					}
				}
				taps[d] = ts
			}
			for ch := 0; ch < C; ch++ {
				if zero {
					continue
				}
				base := (n*C + ch) * spN
				s := 0.0
				var rec func(d, off int, w float64)
				rec = func(d, off int, w float64) {
					if d == nd {
						s += w * x[base+off]
						return
					}
					for _, t := range taps[d] {
						rec(d+1, off+t.i*xst[d], w*t.w)
					}
				}
				rec(0, 0, 1)
				out[(n*C+ch)*nOut+p] = s
			}
		}
	}
	c.OutH(0, fromF64(xh.dt, append([]int{N, C}, outSp...), out))
	return nil
}

func hostAffineGrid(c *lctx) error {
	th, err := c.H(0)
	if err != nil {
		return err
	}
	size, err := c.Ints(1)
	if err != nil {
		return err
	}
	align := c.AInt("align_corners", 0) == 1
	if len(size) != 4 && len(size) != 5 {
		return fmt.Errorf("size has %d values; AffineGrid takes N, C, H, W (or N, C, D, H, W)", len(size))
	}
	N := int(size[0])
	sp := toInts(size[2:])
	nd := len(sp)
	if len(th.shape) != 3 || th.shape[0] != N || th.shape[1] != nd || th.shape[2] != nd+1 {
		return fmt.Errorf("theta has shape %v, size %v needs [%d %d %d]", th.shape, size, N, nd, nd+1)
	}
	for _, d := range size {
		if d < 0 {
			return fmt.Errorf("size %v has a negative dim", size)
		}
	}
	if _, err := canonical.NumElements(append(append([]int64{}, size[:1]...), append(size[2:], int64(nd))...)); err != nil {
		return fmt.Errorf("size %v: %w", size, err)
	}
	theta := th.f64()
	lin := func(n, i int) float64 {
		if align {
			if n == 1 {
				return 0
			}
			return -1 + 2*float64(i)/float64(n-1)
		}
		return (2*float64(i)+1)/float64(n) - 1
	}
	nOut := numel(sp)
	out := make([]float64, N*nOut*nd)
	k := 0
	for n := 0; n < N; n++ {
		forEachIndex(sp, func(o []int) {
			// base coords (x, y[, z]) with x the innermost
			base := make([]float64, nd+1)
			for d := 0; d < nd; d++ {
				base[d] = lin(sp[nd-1-d], o[nd-1-d])
			}
			base[nd] = 1
			for r := 0; r < nd; r++ {
				s := 0.0
				for j := 0; j <= nd; j++ {
					s += theta[(n*nd+r)*(nd+1)+j] * base[j]
				}
				out[k] = s
				k++
			}
		})
	}
	c.OutH(0, fromF64(th.dt, append(append([]int{N}, sp...), nd), out))
	return nil
}

func hostRoiAlign(c *lctx) error {
	xh, err := c.H(0)
	if err != nil {
		return err
	}
	rh, err := c.H(1)
	if err != nil {
		return err
	}
	bi, err := c.Ints(2)
	if err != nil {
		return err
	}
	if len(xh.shape) != 4 || len(rh.shape) != 2 || rh.shape[1] != 4 || len(bi) != rh.shape[0] {
		return fmt.Errorf("X %v, rois %v and batch_indices of %d values do not fit (X [N C H W], rois [R 4], R batch indices)", xh.shape, rh.shape, len(bi))
	}
	N, C, H, W := xh.shape[0], xh.shape[1], xh.shape[2], xh.shape[3]
	for r, b := range bi {
		if b < 0 || b >= int64(N) {
			return fmt.Errorf("batch_indices[%d] = %d is outside the batch of X (%d)", r, b, N)
		}
	}
	oh, ow := int(c.AInt("output_height", 1)), int(c.AInt("output_width", 1))
	sr := int(c.AInt("sampling_ratio", 0))
	scale := float64(c.AFloat("spatial_scale", 1))
	halfPixel := c.AStr("coordinate_transformation_mode", "half_pixel") == "half_pixel"
	if c.ver < 16 {
		halfPixel = false
	}
	isMax := c.AStr("mode", "avg") == "max"
	x, rois := xh.f64(), rh.f64()
	R := rh.shape[0]
	out := make([]float64, R*C*oh*ow)
	off := 0.0
	if halfPixel {
		off = 0.5
	}
	for r := 0; r < R; r++ {
		b := int(bi[r])
		sw, sh := rois[r*4]*scale-off, rois[r*4+1]*scale-off
		ew, eh := rois[r*4+2]*scale-off, rois[r*4+3]*scale-off
		rw, rhh := ew-sw, eh-sh
		if !halfPixel {
			rw, rhh = math.Max(rw, 1), math.Max(rhh, 1)
		}
		bh, bw := rhh/float64(oh), rw/float64(ow)
		gh, gw := sr, sr
		if sr <= 0 {
			gh, gw = int(math.Ceil(rhh/float64(oh))), int(math.Ceil(rw/float64(ow)))
		}
		cnt := float64(maxInt(gh*gw, 1))
		for ch := 0; ch < C; ch++ {
			img := x[(b*C+ch)*H*W : (b*C+ch+1)*H*W]
			for ph := 0; ph < oh; ph++ {
				for pw := 0; pw < ow; pw++ {
					acc := 0.0
					first := true
					for iy := 0; iy < gh; iy++ {
						y := sh + float64(ph)*bh + (float64(iy)+0.5)*bh/float64(gh)
						for ix := 0; ix < gw; ix++ {
							xx := sw + float64(pw)*bw + (float64(ix)+0.5)*bw/float64(gw)
							var v float64
							if y < -1 || y > float64(H) || xx < -1 || xx > float64(W) {
								v = 0
								if isMax {
									if first || v > acc {
										acc = v
									}
									first = false
									continue
								}
								continue
							}
							yy, xc := math.Max(y, 0), math.Max(xx, 0)
							yl, xl := int(yy), int(xc)
							var yhg, xhg int
							if yl >= H-1 {
								yl, yhg, yy = H-1, H-1, float64(H-1)
							} else {
								yhg = yl + 1
							}
							if xl >= W-1 {
								xl, xhg, xc = W-1, W-1, float64(W-1)
							} else {
								xhg = xl + 1
							}
							ly, lx := yy-float64(yl), xc-float64(xl)
							hy, hx := 1-ly, 1-lx
							w1, w2, w3, w4 := hy*hx, hy*lx, ly*hx, ly*lx
							v1, v2, v3, v4 := img[yl*W+xl], img[yl*W+xhg], img[yhg*W+xl], img[yhg*W+xhg]
							if isMax {
								v = math.Max(math.Max(w1*v1, w2*v2), math.Max(w3*v3, w4*v4))
								if first || v > acc {
									acc = v
								}
								first = false
							} else {
								acc += w1*v1 + w2*v2 + w3*v3 + w4*v4
							}
						}
					}
					if !isMax {
						acc /= cnt
					}
					out[((r*C+ch)*oh+ph)*ow+pw] = acc
				}
			}
		}
	}
	c.OutH(0, fromF64(xh.dt, []int{R, C, oh, ow}, out))
	return nil
}
