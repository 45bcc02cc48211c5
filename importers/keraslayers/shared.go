package keraslayers

import (
	"fmt"
)

// The readings several layers share.

// spatialIn is the one input of a channels-last layer over 1 to
// maxSpatial spatial axes (convolutions, pooling, padding, cropping,
// upsampling), and the number of those axes.
func (x *layerCtx) spatialIn(ins []*kval, maxSpatial int) (*kval, int, error) {
	v, err := x.one(ins)
	if err != nil {
		return nil, 0, err
	}
	if err := x.channelsLast(); err != nil {
		return nil, 0, err
	}
	nsp := v.rank - 2
	if nsp < 1 || nsp > maxSpatial {
		return nil, 0, fmt.Errorf("input of rank %d", v.rank)
	}
	return v, nsp, nil
}

// beforeAfter reads config k (ZeroPadding's "padding", Cropping's
// "cropping") as the amounts before and after each of nsp spatial axes:
// one number for all, a pair for a 1-D layer, or per axis a number or a
// pair.
func (x *layerCtx) beforeAfter(k string, nsp int) (before, after []int64, err error) {
	before = make([]int64, nsp)
	after = make([]int64, nsp)
	switch p := x.l.cfg[k].(type) {
	case float64:
		for i := range before {
			before[i], after[i] = int64(p), int64(p)
		}
	case []any:
		if len(p) == 2 && nsp == 1 {
			before[0], after[0] = int64(toF(p[0])), int64(toF(p[1]))
			break
		}
		if len(p) != nsp {
			return nil, nil, fmt.Errorf("%s %v for %d spatial axes", k, p, nsp)
		}
		for i, e := range p {
			switch q := e.(type) {
			case float64:
				before[i], after[i] = int64(q), int64(q)
			case []any:
				if len(q) != 2 {
					return nil, nil, fmt.Errorf("%s %v", k, p)
				}
				before[i], after[i] = int64(toF(q[0])), int64(toF(q[1]))
			}
		}
	default:
		return nil, nil, fmt.Errorf("%s %v", k, x.l.cfg[k])
	}
	return before, after, nil
}

// normAxis reads a normalization's config "axis": a number or a list of
// one (as given, negative from the end); -1 when absent; -100 for a list
// of another length (more than one axis).
func (x *layerCtx) normAxis() int {
	axis := -1
	switch a := x.l.cfg["axis"].(type) {
	case float64:
		axis = int(a)
	case []any:
		if len(a) == 1 {
			if f, ok := a[0].(float64); ok {
				axis = int(f)
			}
		} else {
			axis = -100
		}
	}
	return axis
}

// scaleCenter reads a normalization's gamma (when scale, default true)
// and beta (when center, default true); each is nil when off.
func (x *layerCtx) scaleCenter() (gamma, beta []float32, err error) {
	if x.boolean("scale", true) {
		if gamma, _, err = x.floats("gamma"); err != nil {
			return nil, nil, err
		}
	}
	if x.boolean("center", true) {
		if beta, _, err = x.floats("beta"); err != nil {
			return nil, nil, err
		}
	}
	return gamma, beta, nil
}

// convKernel reads a convolution's kernel kname over nsp spatial axes
// (its weight and shape, [k..., in, out]), strides and dilation_rate.
func (x *layerCtx) convKernel(kname string, nsp int) (k []float32, kd, strides, dil []int64, err error) {
	k, kd, err = x.floats(kname)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if len(kd) != nsp+2 {
		return nil, nil, nil, nil, fmt.Errorf("%s of shape %v for %d spatial axes", kname, kd, nsp)
	}
	if strides, err = x.tuple("strides", nsp, 1); err != nil {
		return nil, nil, nil, nil, err
	}
	if dil, err = x.tuple("dilation_rate", nsp, 1); err != nil {
		return nil, nil, nil, nil, err
	}
	return k, kd, strides, dil, nil
}

// convOut applies the layer's activation to y, the channels-first output
// of a convolution of v.
func (x *layerCtx) convOut(y string, v *kval) ([]*kval, error) {
	y, err := x.activation(activationName(x.l.cfg["activation"]), y, 1)
	if err != nil {
		return nil, err
	}
	return []*kval{{cf: y, rank: v.rank, dt: v.dt}}, nil
}

// withBias appends the layer's bias to a Conv's inputs when use_bias
// (default true).
func (x *layerCtx) withBias(inputs []string) ([]string, error) {
	if !x.boolean("use_bias", true) {
		return inputs, nil
	}
	bias, bd, err := x.floats("bias")
	if err != nil {
		return nil, err
	}
	return append(inputs, x.init("bias", bd, bias)), nil
}

// allChannelsFirst tells whether every input is held channels first at
// rank r.
func allChannelsFirst(ins []*kval, r int) bool {
	for _, v := range ins {
		if v.cf == "" || v.rank != r {
			return false
		}
	}
	return true
}

// inputNames names the inputs channels first when cf, else channels last.
func (x *layerCtx) inputNames(ins []*kval, cf bool) ([]string, error) {
	names := make([]string, len(ins))
	for i, v := range ins {
		var err error
		if cf {
			names[i] = v.cf
		} else if names[i], err = x.c.cl(v); err != nil {
			return nil, err
		}
	}
	return names, nil
}
