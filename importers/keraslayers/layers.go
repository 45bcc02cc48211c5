package keraslayers

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/layout"
)

type layerFunc func(x *layerCtx, ins []*kval) ([]*kval, error)

// layerCtx is one call of one layer.
type layerCtx struct {
	c    *converter
	l    *layerSpec
	path []string
	w    []Weight
	pos  int
}

// weight returns the layer's weight called name (or, when the file gives
// no names, the next one in Keras's order).
func (x *layerCtx) weight(name string) (*canonical.Tensor, error) {
	named := false
	for _, w := range x.w {
		if w.Name != "" {
			named = true
		}
		if w.Name == name {
			return w.Tensor, nil
		}
	}
	if !named && x.pos < len(x.w) {
		x.pos++
		return x.w[x.pos-1].Tensor, nil
	}
	return nil, fmt.Errorf("weight %q is missing (the file has %d weights for this layer)", name, len(x.w))
}

func (x *layerCtx) floats(name string) ([]float32, []int64, error) {
	t, err := x.weight(name)
	if err != nil {
		return nil, nil, err
	}
	v, err := t.Float32s()
	if err != nil {
		return nil, nil, fmt.Errorf("weight %q: %w", name, err)
	}
	return v, t.Dims, nil
}

func (x *layerCtx) str(k, def string) string {
	if s, ok := x.l.cfg[k].(string); ok {
		return s
	}
	return def
}

func (x *layerCtx) boolean(k string, def bool) bool {
	if b, ok := x.l.cfg[k].(bool); ok {
		return b
	}
	return def
}

func (x *layerCtx) num(k string, def float64) float64 {
	if f, ok := x.l.cfg[k].(float64); ok {
		return f
	}
	return def
}

// tuple reads an int or a list of n ints (kernel_size, strides, ...).
func (x *layerCtx) tuple(k string, n int, def int64) ([]int64, error) {
	out := make([]int64, n)
	switch v := x.l.cfg[k].(type) {
	case nil:
		for i := range out {
			out[i] = def
		}
	case float64:
		for i := range out {
			out[i] = int64(v)
		}
	case []any:
		if len(v) != n {
			return nil, fmt.Errorf("%s %v: want %d values", k, v, n)
		}
		for i, e := range v {
			f, ok := e.(float64)
			if !ok {
				return nil, fmt.Errorf("%s %v is not a list of integers", k, v)
			}
			out[i] = int64(f)
		}
	default:
		return nil, fmt.Errorf("%s %v is not an integer or a list", k, v)
	}
	for _, e := range out {
		if e < 0 || e > 1<<20 {
			return nil, fmt.Errorf("%s %v is out of range", k, out)
		}
	}
	return out, nil
}

func (x *layerCtx) one(ins []*kval) (*kval, error) {
	if len(ins) != 1 {
		return nil, fmt.Errorf("takes one input, is given %d", len(ins))
	}
	return ins[0], nil
}

func (x *layerCtx) channelsLast() error {
	if f := x.str("data_format", "channels_last"); f != "channels_last" {
		return fmt.Errorf("data_format %s is not supported (channels_last only)", f)
	}
	return nil
}

func (x *layerCtx) name(suffix string) string {
	if suffix == "" {
		return x.l.name
	}
	return x.l.name + "_" + suffix
}

// init adds an initializer once per layer weight and variant (shared
// layers reuse it).
func (x *layerCtx) init(variant string, dims []int64, v []float32) string {
	k := fmt.Sprint(x.path, "/", variant)
	if n, ok := x.c.inits[k]; ok {
		return n
	}
	n := x.c.b.F32(x.name(variant), dims, v)
	x.c.inits[k] = n
	return n
}

func out(name string, rank int, cf bool, dt canonical.DataType) *kval {
	if cf {
		return &kval{cf: name, rank: rank, dt: dt}
	}
	return &kval{cl: name, rank: rank, dt: dt}
}

func layerTable() map[string]layerFunc {
	ident := func(x *layerCtx, ins []*kval) ([]*kval, error) { v, err := x.one(ins); return []*kval{v}, err }
	merge := func(op string) layerFunc {
		return func(x *layerCtx, ins []*kval) ([]*kval, error) { return x.merge(ins, op) }
	}
	t := map[string]layerFunc{
		"InputLayer":             ident,
		"Dropout":                ident,
		"SpatialDropout1D":       ident,
		"SpatialDropout2D":       ident,
		"SpatialDropout3D":       ident,
		"GaussianNoise":          ident,
		"GaussianDropout":        ident,
		"AlphaDropout":           ident,
		"ActivityRegularization": ident,
		"Masking":                (*layerCtx).masking,
		"Dense":                  (*layerCtx).dense,
		"Activation":             (*layerCtx).activationLayer,
		"ReLU":                   (*layerCtx).reluLayer,
		"LeakyReLU":              (*layerCtx).leakyReLU,
		"ELU":                    (*layerCtx).eluLayer,
		"Softmax":                (*layerCtx).softmaxLayer,
		"PReLU":                  (*layerCtx).prelu,
		"Conv1D":                 (*layerCtx).conv,
		"Conv2D":                 (*layerCtx).conv,
		"Conv3D":                 (*layerCtx).conv,
		"DepthwiseConv2D":        (*layerCtx).conv,
		"SeparableConv1D":        (*layerCtx).conv,
		"SeparableConv2D":        (*layerCtx).conv,
		"MaxPooling1D":           (*layerCtx).pool,
		"MaxPooling2D":           (*layerCtx).pool,
		"MaxPooling3D":           (*layerCtx).pool,
		"AveragePooling1D":       (*layerCtx).pool,
		"AveragePooling2D":       (*layerCtx).pool,
		"AveragePooling3D":       (*layerCtx).pool,
		"GlobalAveragePooling1D": (*layerCtx).globalPool,
		"GlobalAveragePooling2D": (*layerCtx).globalPool,
		"GlobalAveragePooling3D": (*layerCtx).globalPool,
		"GlobalMaxPooling1D":     (*layerCtx).globalPool,
		"GlobalMaxPooling2D":     (*layerCtx).globalPool,
		"GlobalMaxPooling3D":     (*layerCtx).globalPool,
		"BatchNormalization":     (*layerCtx).batchNorm,
		"LayerNormalization":     (*layerCtx).layerNorm,
		"Flatten":                (*layerCtx).flatten,
		"Reshape":                (*layerCtx).reshape,
		"Permute":                (*layerCtx).permute,
		"RepeatVector":           (*layerCtx).repeatVector,
		"Add":                    merge("Add"),
		"Subtract":               merge("Sub"),
		"Multiply":               merge("Mul"),
		"Maximum":                merge("Max"),
		"Minimum":                merge("Min"),
		"Average":                merge("Mean"),
		"Concatenate":            (*layerCtx).concat,
		"Embedding":              (*layerCtx).embedding,
		"SimpleRNN":              (*layerCtx).rnn,
		"GRU":                    (*layerCtx).rnn,
		"LSTM":                   (*layerCtx).rnn,
		"ZeroPadding1D":          (*layerCtx).zeroPad,
		"ZeroPadding2D":          (*layerCtx).zeroPad,
		"ZeroPadding3D":          (*layerCtx).zeroPad,
		"UpSampling1D":           (*layerCtx).upSample,
		"UpSampling2D":           (*layerCtx).upSample,
		"Rescaling":              (*layerCtx).rescaling,
	}
	for k, f := range moreLayers() {
		t[k] = f
	}
	return t
}

// dense: y = x·kernel + bias, then the activation.
func (x *layerCtx) dense(ins []*kval) ([]*kval, error) {
	v, err := x.one(ins)
	if err != nil {
		return nil, err
	}
	k, kd, err := x.floats("kernel")
	if err != nil {
		return nil, err
	}
	if len(kd) != 2 {
		return nil, fmt.Errorf("kernel of shape %v: want 2-D", kd)
	}
	b := x.c.b
	in, err := x.c.cl(v)
	if err != nil {
		return nil, err
	}
	y := b.Op("MatMul", x.name("matmul"), []string{in, x.init("kernel", kd, k)})
	if x.boolean("use_bias", true) {
		bias, bd, err := x.floats("bias")
		if err != nil {
			return nil, err
		}
		y = b.Op("Add", x.name("bias"), []string{y, x.init("bias", bd, bias)})
	}
	y, err = x.activation(x.str("activation", "linear"), y, -1)
	if err != nil {
		return nil, err
	}
	return []*kval{{cl: y, rank: v.rank, dt: canonical.Float}}, nil
}

// activation applies a Keras activation by name to y (channel axis caxis
// for softmax: -1 channels-last).
func (x *layerCtx) activation(name, y string, caxis int64) (string, error) {
	b := x.c.b
	n := x.name(name)
	switch name {
	case "linear", "":
		return y, nil
	case "relu":
		return b.Op("Relu", n, []string{y}), nil
	case "relu6":
		return b.Op("Clip", n, []string{y, b.Scalar("zero", 0), b.Scalar("six", 6)}), nil
	case "sigmoid":
		return b.Op("Sigmoid", n, []string{y}), nil
	case "tanh":
		return b.Op("Tanh", n, []string{y}), nil
	case "softmax":
		return b.Op("Softmax", n, []string{y}, canonical.IntAttr("axis", caxis)), nil
	case "log_softmax":
		return b.Op("LogSoftmax", n, []string{y}, canonical.IntAttr("axis", caxis)), nil
	case "elu":
		return b.Op("Elu", n, []string{y}), nil
	case "selu":
		return b.Op("Selu", n, []string{y}, canonical.FloatAttr("alpha", 1.6732632423543772), canonical.FloatAttr("gamma", 1.0507009873554805)), nil
	case "softplus":
		return b.Op("Softplus", n, []string{y}), nil
	case "softsign":
		return b.Op("Softsign", n, []string{y}), nil
	case "exponential":
		return b.Op("Exp", n, []string{y}), nil
	case "hard_sigmoid":
		alpha := float32(0.2)
		if x.c.keras3 {
			alpha = 1.0 / 6
		}
		return b.Op("HardSigmoid", n, []string{y}, canonical.FloatAttr("alpha", alpha), canonical.FloatAttr("beta", 0.5)), nil
	case "swish", "silu":
		return b.Op("Mul", n, []string{y, b.Op("Sigmoid", n+"_sigmoid", []string{y})}), nil
	case "mish":
		return b.Op("Mul", n, []string{y, b.Op("Tanh", n+"_tanh", []string{b.Op("Softplus", n+"_softplus", []string{y})})}), nil
	case "gelu":
		// Keras's default gelu is the exact (erf) form: 0.5x(1+erf(x/√2)).
		e := b.Op("Erf", n+"_erf", []string{b.Op("Mul", n+"_scaled", []string{y, b.Scalar("inv_sqrt2", float32(1/math.Sqrt2))})})
		h := b.Op("Add", n+"_one", []string{e, b.Scalar("one", 1)})
		return b.Op("Mul", n, []string{b.Op("Mul", n+"_half", []string{y, b.Scalar("half", 0.5)}), h}), nil
	case "leaky_relu":
		return b.Op("LeakyRelu", n, []string{y}, canonical.FloatAttr("alpha", 0.2)), nil
	}
	return "", fmt.Errorf("activation %q is not supported", name)
}

// activationName reads a Keras activation config: a string, or Keras 3's
// {"class_name": ..., "config": {"name": ...}} object.
func activationName(v any) string {
	switch a := v.(type) {
	case string:
		return a
	case map[string]any:
		if cfg, ok := a["config"].(map[string]any); ok {
			if s, ok := cfg["name"].(string); ok {
				return s
			}
		}
		if s, ok := a["class_name"].(string); ok {
			return s
		}
	}
	return "linear"
}

// elementwise applies build to v in whichever layout v has (channels
// first preferred), keeping it.
func (x *layerCtx) elementwise(v *kval, build func(in string, cf bool) (string, error)) ([]*kval, error) {
	cf := v.cl == "" && v.cf != ""
	in := v.cl
	if cf {
		in = v.cf
	}
	y, err := build(in, cf)
	if err != nil {
		return nil, err
	}
	return []*kval{out(y, v.rank, cf, v.dt)}, nil
}

func (x *layerCtx) activationLayer(ins []*kval) ([]*kval, error) {
	v, err := x.one(ins)
	if err != nil {
		return nil, err
	}
	name := activationName(x.l.cfg["activation"])
	return x.elementwise(v, func(in string, cf bool) (string, error) {
		axis := int64(-1)
		if cf {
			axis = 1
		}
		return x.activation(name, in, axis)
	})
}

func (x *layerCtx) reluLayer(ins []*kval) ([]*kval, error) {
	v, err := x.one(ins)
	if err != nil {
		return nil, err
	}
	maxV, hasMax := x.l.cfg["max_value"].(float64)
	slope := x.num("negative_slope", 0)
	thr := x.num("threshold", 0)
	if slope != 0 || thr != 0 {
		return nil, errors.New("negative_slope and threshold other than 0 are not supported")
	}
	b := x.c.b
	return x.elementwise(v, func(in string, cf bool) (string, error) {
		if hasMax {
			return b.Op("Clip", x.name(""), []string{in, b.Scalar("zero", 0), b.Scalar("max", float32(maxV))}), nil
		}
		return b.Op("Relu", x.name(""), []string{in}), nil
	})
}

func (x *layerCtx) leakyReLU(ins []*kval) ([]*kval, error) {
	v, err := x.one(ins)
	if err != nil {
		return nil, err
	}
	alpha := x.num("alpha", x.num("negative_slope", 0.3))
	return x.elementwise(v, func(in string, cf bool) (string, error) {
		return x.c.b.Op("LeakyRelu", x.name(""), []string{in}, canonical.FloatAttr("alpha", float32(alpha))), nil
	})
}

func (x *layerCtx) eluLayer(ins []*kval) ([]*kval, error) {
	v, err := x.one(ins)
	if err != nil {
		return nil, err
	}
	alpha := x.num("alpha", 1)
	return x.elementwise(v, func(in string, cf bool) (string, error) {
		return x.c.b.Op("Elu", x.name(""), []string{in}, canonical.FloatAttr("alpha", float32(alpha))), nil
	})
}

func (x *layerCtx) softmaxLayer(ins []*kval) ([]*kval, error) {
	v, err := x.one(ins)
	if err != nil {
		return nil, err
	}
	axis := int64(x.num("axis", -1))
	if axis != -1 && axis != int64(v.rank-1) {
		in, err := x.c.cl(v)
		if err != nil {
			return nil, err
		}
		return []*kval{{cl: x.c.b.Op("Softmax", x.name(""), []string{in}, canonical.IntAttr("axis", axis)), rank: v.rank, dt: v.dt}}, nil
	}
	return x.elementwise(v, func(in string, cf bool) (string, error) {
		a := int64(-1)
		if cf {
			a = 1
		}
		return x.c.b.Op("Softmax", x.name(""), []string{in}, canonical.IntAttr("axis", a)), nil
	})
}

// channelConst returns a per-channel constant shaped to broadcast against
// a rank-r tensor in the given layout.
func (x *layerCtx) channelConst(variant string, v []float32, rank int, cf bool) string {
	dims := []int64{int64(len(v))}
	if cf {
		for i := 2; i < rank; i++ {
			dims = append(dims, 1)
		}
	}
	return x.init(fmt.Sprintf("%s_r%d_cf%v", variant, rank, cf), dims, v)
}

func (x *layerCtx) prelu(ins []*kval) ([]*kval, error) {
	v, err := x.one(ins)
	if err != nil {
		return nil, err
	}
	a, ad, err := x.floats("alpha")
	if err != nil {
		return nil, err
	}
	if v.rank < 0 || len(ad) != v.rank-1 {
		return nil, fmt.Errorf("alpha of shape %v for an input of rank %d", ad, v.rank)
	}
	perChannel := true
	for _, d := range ad[:len(ad)-1] {
		if d != 1 {
			perChannel = false
		}
	}
	if perChannel && v.cl == "" {
		return x.elementwise(v, func(in string, cf bool) (string, error) {
			return x.c.b.Op("PRelu", x.name(""), []string{in, x.channelConst("alpha", a, v.rank, true)}), nil
		})
	}
	in, err := x.c.cl(v)
	if err != nil {
		return nil, err
	}
	return []*kval{{cl: x.c.b.Op("PRelu", x.name(""), []string{in, x.init("alpha", ad, a)}), rank: v.rank, dt: v.dt}}, nil
}

func (x *layerCtx) padAttr(k, strides, dil []int64) ([]*canonical.Attribute, error) {
	switch p := x.str("padding", "valid"); p {
	case "valid":
		return []*canonical.Attribute{canonical.StringAttr("auto_pad", "VALID")}, nil
	case "same":
		return []*canonical.Attribute{canonical.StringAttr("auto_pad", "SAME_UPPER")}, nil
	case "causal":
		if len(k) != 1 {
			return nil, errors.New("causal padding is for 1-D convolutions")
		}
		return []*canonical.Attribute{canonical.IntsAttr("pads", []int64{(k[0] - 1) * dil[0], 0}...)}, nil
	default:
		return nil, fmt.Errorf("padding %q is not supported", p)
	}
}

func (x *layerCtx) conv(ins []*kval) ([]*kval, error) {
	v, nsp, err := x.spatialIn(ins, 3)
	if err != nil {
		return nil, err
	}
	cls := x.l.class
	depthwise := cls == "DepthwiseConv2D"
	separable := cls == "SeparableConv1D" || cls == "SeparableConv2D"
	kname := "kernel"
	if depthwise || separable {
		kname = "depthwise_kernel"
	}
	k, kd, strides, dil, err := x.convKernel(kname, nsp)
	if err != nil {
		return nil, err
	}
	ks := kd[:nsp]
	pads, err := x.padAttr(ks, strides, dil)
	if err != nil {
		return nil, err
	}
	attrs := append(pads, canonical.IntsAttr("strides", strides...), canonical.IntsAttr("dilations", dil...), canonical.IntsAttr("kernel_shape", ks...))
	in, err := x.c.cf(v)
	if err != nil {
		return nil, err
	}
	b := x.c.b
	var y string
	if depthwise || separable {
		cin := kd[nsp]
		md, err := layout.DepthwiseHWIO(kd)
		if err != nil {
			return nil, err
		}
		wv, wd, err := canonical.TransposeSlice(k, md, layout.FromHWIO(len(md)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kname, err)
		}
		dw := []string{in, x.init(kname, wd, wv)}
		if depthwise {
			if dw, err = x.withBias(dw); err != nil {
				return nil, err
			}
		}
		y = b.Op("Conv", x.name("depthwise"), dw, append(attrs, canonical.IntAttr("group", cin))...)
		if separable {
			pk, pd, err := x.floats("pointwise_kernel")
			if err != nil {
				return nil, err
			}
			pv, pdd, err := canonical.TransposeSlice(pk, pd, layout.FromHWIO(len(pd)))
			if err != nil {
				return nil, fmt.Errorf("pointwise_kernel: %w", err)
			}
			pw := []string{y, x.init("pointwise_kernel", pdd, pv)}
			if pw, err = x.withBias(pw); err != nil {
				return nil, err
			}
			one := make([]int64, nsp)
			for i := range one {
				one[i] = 1
			}
			y = b.Op("Conv", x.name("pointwise"), pw, canonical.IntsAttr("kernel_shape", one...))
		}
	} else {
		wv, wd, err := canonical.TransposeSlice(k, kd, layout.FromHWIO(len(kd)))
		if err != nil {
			return nil, fmt.Errorf("kernel: %w", err)
		}
		cv := []string{in, x.init("kernel", wd, wv)}
		if cv, err = x.withBias(cv); err != nil {
			return nil, err
		}
		groups := int64(x.num("groups", 1))
		if groups > 1 {
			attrs = append(attrs, canonical.IntAttr("group", groups))
		}
		y = b.Op("Conv", x.name(""), cv, attrs...)
	}
	return x.convOut(y, v)
}

func (x *layerCtx) pool(ins []*kval) ([]*kval, error) {
	v, nsp, err := x.spatialIn(ins, 3)
	if err != nil {
		return nil, err
	}
	pk := "pool_size"
	if _, ok := x.l.cfg[pk]; !ok {
		pk = "pool_length" // Keras 1
	}
	k, err := x.tuple(pk, nsp, 2)
	if err != nil {
		return nil, err
	}
	s := k
	if x.l.cfg["strides"] != nil {
		if s, err = x.tuple("strides", nsp, 1); err != nil {
			return nil, err
		}
	}
	pads, err := x.padAttr(k, s, nil)
	if err != nil {
		return nil, err
	}
	in, err := x.c.cf(v)
	if err != nil {
		return nil, err
	}
	op := "MaxPool"
	if x.l.class[:3] == "Ave" {
		op = "AveragePool"
	}
	y := x.c.b.Op(op, x.name(""), []string{in}, append(pads, canonical.IntsAttr("kernel_shape", k...), canonical.IntsAttr("strides", s...))...)
	return []*kval{{cf: y, rank: v.rank, dt: v.dt}}, nil
}

func (x *layerCtx) globalPool(ins []*kval) ([]*kval, error) {
	v, err := x.one(ins)
	if err != nil {
		return nil, err
	}
	if err := x.channelsLast(); err != nil {
		return nil, err
	}
	if v.rank < 3 {
		return nil, fmt.Errorf("input of rank %d", v.rank)
	}
	op := "ReduceMean"
	if x.l.class[:9] == "GlobalMax" {
		op = "ReduceMax"
	}
	keep := x.boolean("keepdims", false)
	k := int64(0)
	if keep {
		k = 1
	}
	b := x.c.b
	reduce := func(in string, axes []int64) string {
		if b.Opset >= 18 {
			return b.Op(op, x.name(""), []string{in, b.Ints("axes", axes...)}, canonical.IntAttr("keepdims", k))
		}
		return b.Op(op, x.name(""), []string{in}, canonical.IntsAttr("axes", axes...), canonical.IntAttr("keepdims", k))
	}
	if v.cf != "" || v.cl == "" {
		in, _ := x.c.cf(v)
		var axes []int64
		for i := 2; i < v.rank; i++ {
			axes = append(axes, int64(i))
		}
		y := reduce(in, axes)
		if keep {
			return []*kval{{cf: y, rank: v.rank, dt: v.dt}}, nil
		}
		return []*kval{{cl: y, rank: 2, dt: v.dt}}, nil
	}
	var axes []int64
	for i := 1; i < v.rank-1; i++ {
		axes = append(axes, int64(i))
	}
	r := 2
	if keep {
		r = v.rank
	}
	return []*kval{{cl: reduce(v.cl, axes), rank: r, dt: v.dt}}, nil
}

// batchNorm: inference form y = x·s + (beta − mean·s), s = gamma/√(var+ε),
// over the last axis.
func (x *layerCtx) batchNorm(ins []*kval) ([]*kval, error) {
	v, err := x.one(ins)
	if err != nil {
		return nil, err
	}
	axis := x.normAxis()
	if axis < 0 && axis != -100 && v.rank > 0 {
		axis += v.rank
	}
	if axis < 1 || axis >= v.rank {
		return nil, fmt.Errorf("axis %v: one axis other than the batch is supported", x.l.cfg["axis"])
	}
	eps := x.num("epsilon", 1e-3)
	gamma, beta, err := x.scaleCenter()
	if err != nil {
		return nil, err
	}
	mean, _, err := x.floats("moving_mean")
	if err != nil {
		return nil, err
	}
	vr, _, err := x.floats("moving_variance")
	if err != nil {
		return nil, err
	}
	c := len(mean)
	if len(vr) != c || (gamma != nil && len(gamma) != c) || (beta != nil && len(beta) != c) {
		return nil, errors.New("gamma, beta, moving_mean and moving_variance differ in size")
	}
	s := make([]float32, c)
	o := make([]float32, c)
	for i := range s {
		g := 1.0
		if gamma != nil {
			g = float64(gamma[i])
		}
		sc := g / math.Sqrt(float64(vr[i])+eps)
		s[i] = float32(sc)
		bt := 0.0
		if beta != nil {
			bt = float64(beta[i])
		}
		o[i] = float32(bt - float64(mean[i])*sc)
	}
	b := x.c.b
	if axis != v.rank-1 {
		in, err := x.c.cl(v)
		if err != nil {
			return nil, err
		}
		m := b.Op("Mul", x.name("scale"), []string{in, x.channelAxisConst("scale", s, v.rank, axis)})
		return []*kval{{cl: b.Op("Add", x.name(""), []string{m, x.channelAxisConst("offset", o, v.rank, axis)}), rank: v.rank, dt: v.dt}}, nil
	}
	return x.elementwise(v, func(in string, cf bool) (string, error) {
		m := b.Op("Mul", x.name("scale"), []string{in, x.channelConst("scale", s, v.rank, cf)})
		return b.Op("Add", x.name(""), []string{m, x.channelConst("offset", o, v.rank, cf)}), nil
	})
}

func (x *layerCtx) layerNorm(ins []*kval) ([]*kval, error) {
	v, err := x.one(ins)
	if err != nil {
		return nil, err
	}
	axis := x.normAxis()
	if axis != -1 && axis != v.rank-1 {
		return nil, fmt.Errorf("axis %v: only the last axis is supported", x.l.cfg["axis"])
	}
	in, err := x.c.cl(v)
	if err != nil {
		return nil, err
	}
	eps := x.num("epsilon", 1e-3)
	gamma, beta, err := x.scaleCenter()
	if err != nil {
		return nil, err
	}
	n := len(gamma)
	if n == 0 {
		n = len(beta)
	}
	if n == 0 {
		return nil, errors.New("LayerNormalization without scale and center: not supported")
	}
	if gamma == nil {
		gamma = make([]float32, n)
		for i := range gamma {
			gamma[i] = 1
		}
	}
	lin := []string{in, x.init("gamma", []int64{int64(n)}, gamma)}
	if beta != nil {
		lin = append(lin, x.init("beta", []int64{int64(n)}, beta))
	}
	y := x.c.b.Op("LayerNormalization", x.name(""), lin, canonical.IntAttr("axis", -1), canonical.FloatAttr("epsilon", float32(eps)))
	return []*kval{{cl: y, rank: v.rank, dt: v.dt}}, nil
}

func (x *layerCtx) flatten(ins []*kval) ([]*kval, error) {
	v, err := x.one(ins)
	if err != nil {
		return nil, err
	}
	in, err := x.c.cl(v)
	if err != nil {
		return nil, err
	}
	return []*kval{{cl: x.c.b.Op("Flatten", x.name(""), []string{in}, canonical.IntAttr("axis", 1)), rank: 2, dt: v.dt}}, nil
}

func (x *layerCtx) reshape(ins []*kval) ([]*kval, error) {
	v, err := x.one(ins)
	if err != nil {
		return nil, err
	}
	ts, ok := x.l.cfg["target_shape"].([]any)
	if !ok {
		return nil, errors.New("target_shape is missing")
	}
	shape := []int64{0}
	for _, e := range ts {
		f, ok := e.(float64)
		if !ok || f < -1 || f > maxDim {
			return nil, fmt.Errorf("target_shape %v is not a list of sizes", ts)
		}
		shape = append(shape, int64(f))
	}
	in, err := x.c.cl(v)
	if err != nil {
		return nil, err
	}
	b := x.c.b
	return []*kval{{cl: b.Op("Reshape", x.name(""), []string{in, b.Ints(x.name("shape"), shape...)}), rank: len(shape), dt: v.dt}}, nil
}

func (x *layerCtx) permute(ins []*kval) ([]*kval, error) {
	v, err := x.one(ins)
	if err != nil {
		return nil, err
	}
	d, ok := x.l.cfg["dims"].([]any)
	if !ok || len(d) != v.rank-1 {
		return nil, fmt.Errorf("dims %v for an input of rank %d", x.l.cfg["dims"], v.rank)
	}
	perm := []int64{0}
	for _, e := range d {
		f, ok := e.(float64)
		if !ok || f < 1 || int(f) >= v.rank {
			return nil, fmt.Errorf("dims %v is not a permutation", d)
		}
		perm = append(perm, int64(f))
	}
	in, err := x.c.cl(v)
	if err != nil {
		return nil, err
	}
	return []*kval{{cl: x.c.b.Transpose(in, perm, x.name("")), rank: v.rank, dt: v.dt}}, nil
}

func (x *layerCtx) repeatVector(ins []*kval) ([]*kval, error) {
	v, err := x.one(ins)
	if err != nil {
		return nil, err
	}
	n := int64(x.num("n", 1))
	if n < 1 || n > maxDim || v.rank != 2 {
		return nil, fmt.Errorf("n=%d on an input of rank %d", n, v.rank)
	}
	b := x.c.b
	u := b.Op("Unsqueeze", x.name("unsqueeze"), []string{v.cl, b.Ints("axes", 1)})
	return []*kval{{cl: b.Op("Tile", x.name(""), []string{u, b.Ints("repeats", 1, n, 1)}), rank: 3, dt: v.dt}}, nil
}

func (x *layerCtx) merge(ins []*kval, op string) ([]*kval, error) {
	if len(ins) < 2 && op != "Mean" {
		return nil, fmt.Errorf("takes at least two inputs, is given %d", len(ins))
	}
	if op == "Sub" && len(ins) != 2 {
		return nil, fmt.Errorf("Subtract takes two inputs, is given %d", len(ins))
	}
	cf := allChannelsFirst(ins, ins[0].rank)
	names, err := x.inputNames(ins, cf)
	if err != nil {
		return nil, err
	}
	b := x.c.b
	var y string
	switch op {
	case "Add", "Mul":
		y = names[0]
		for i, n := range names[1:] {
			y = b.Op(op, x.name(fmt.Sprint(i)), []string{y, n})
		}
	default:
		y = b.Op(op, x.name(""), names)
	}
	return []*kval{out(y, ins[0].rank, cf, ins[0].dt)}, nil
}

func (x *layerCtx) concat(ins []*kval) ([]*kval, error) {
	r := ins[0].rank
	axis := int64(x.num("axis", -1))
	if r < 0 {
		return nil, errors.New("inputs of unknown rank")
	}
	if axis < 0 {
		axis += int64(r)
	}
	if axis < 0 || axis >= int64(r) {
		return nil, fmt.Errorf("axis %v for rank %d", x.l.cfg["axis"], r)
	}
	cf := r >= 3 && allChannelsFirst(ins, r)
	names, err := x.inputNames(ins, cf)
	if err != nil {
		return nil, err
	}
	if cf {
		ca := int64(layout.Axis(layout.ToFirst(r), int(axis)))
		return []*kval{{cf: x.c.b.Op("Concat", x.name(""), names, canonical.IntAttr("axis", ca)), rank: r, dt: ins[0].dt}}, nil
	}
	return []*kval{{cl: x.c.b.Op("Concat", x.name(""), names, canonical.IntAttr("axis", axis)), rank: r, dt: ins[0].dt}}, nil
}

// masking refuses a Masking layer: its mask changes what later layers
// compute (an RNN keeps its state on a masked step, a pooling or
// attention layer skips it), which the converted graph does not carry; as
// an identity the result would differ wherever a step is masked, and
// generated inputs, which never hold a masked step, would not show it.
func (x *layerCtx) masking(ins []*kval) ([]*kval, error) {
	return nil, errors.New("Masking is not supported (the mask changes what later layers compute: RNNs keep their state on masked steps)")
}

func (x *layerCtx) embedding(ins []*kval) ([]*kval, error) {
	v, err := x.one(ins)
	if err != nil {
		return nil, err
	}
	if x.boolean("mask_zero", false) {
		return nil, errors.New("mask_zero=true is not supported (the mask changes what later layers compute)")
	}
	e, ed, err := x.floats("embeddings")
	if err != nil {
		return nil, err
	}
	if len(ed) != 2 {
		return nil, fmt.Errorf("embeddings of shape %v: want 2-D", ed)
	}
	b := x.c.b
	in, err := x.c.cl(v)
	if err != nil {
		return nil, err
	}
	idx := b.Op("Cast", x.name("indices"), []string{in}, canonical.IntAttr("to", int64(canonical.Int64)))
	y := b.Op("Gather", x.name(""), []string{x.init("embeddings", ed, e), idx}, canonical.IntAttr("axis", 0))
	r := -1
	if v.rank >= 0 {
		r = v.rank + 1
	}
	return []*kval{{cl: y, rank: r, dt: canonical.Float}}, nil
}

func (x *layerCtx) zeroPad(ins []*kval) ([]*kval, error) {
	v, nsp, err := x.spatialIn(ins, 3)
	if err != nil {
		return nil, err
	}
	before, after, err := x.beforeAfter("padding", nsp)
	if err != nil {
		return nil, err
	}
	in, err := x.c.cf(v)
	if err != nil {
		return nil, err
	}
	pads := append(append(append([]int64{0, 0}, before...), 0, 0), after...)
	for _, p := range pads {
		if p < 0 || p > maxDim {
			return nil, fmt.Errorf("padding %v is out of range", pads)
		}
	}
	b := x.c.b
	return []*kval{{cf: b.Op("Pad", x.name(""), []string{in, b.Ints("pads", pads...)}), rank: v.rank, dt: v.dt}}, nil
}

func toF(v any) float64 {
	f, _ := v.(float64)
	return f
}

func (x *layerCtx) upSample(ins []*kval) ([]*kval, error) {
	v, nsp, err := x.spatialIn(ins, 2)
	if err != nil {
		return nil, err
	}
	sk := "size"
	if x.l.class == "UpSampling1D" {
		if _, ok := x.l.cfg["size"]; !ok {
			sk = "length"
		}
	}
	size, err := x.tuple(sk, nsp, 2)
	if err != nil {
		return nil, err
	}
	interp := x.str("interpolation", "nearest")
	if interp != "nearest" && interp != "bilinear" {
		return nil, fmt.Errorf("interpolation %q is not supported (nearest, bilinear)", interp)
	}
	in, err := x.c.cf(v)
	if err != nil {
		return nil, err
	}
	scales := []float32{1, 1}
	for _, s := range size {
		scales = append(scales, float32(s))
	}
	b := x.c.b
	attrs := []*canonical.Attribute{canonical.StringAttr("mode", "nearest"), canonical.StringAttr("coordinate_transformation_mode", "asymmetric"), canonical.StringAttr("nearest_mode", "floor")}
	if interp == "bilinear" {
		// TF.js resizes with resizeBilinear's defaults (no half-pixel
		// centers); Keras with tf.image.resize (half-pixel centers).
		ctm := "half_pixel"
		if strings.HasPrefix(x.c.kerasVersion, "tfjs") {
			ctm = "asymmetric"
		}
		attrs = []*canonical.Attribute{canonical.StringAttr("mode", "linear"), canonical.StringAttr("coordinate_transformation_mode", ctm)}
	}
	y := b.Op("Resize", x.name(""), []string{in, "", b.F32(x.name("scales"), []int64{int64(len(scales))}, scales)}, attrs...)
	return []*kval{{cf: y, rank: v.rank, dt: v.dt}}, nil
}

func (x *layerCtx) rescaling(ins []*kval) ([]*kval, error) {
	v, err := x.one(ins)
	if err != nil {
		return nil, err
	}
	s, ok := x.l.cfg["scale"].(float64)
	if !ok {
		return nil, errors.New("scale must be a number")
	}
	o := x.num("offset", 0)
	b := x.c.b
	return x.elementwise(v, func(in string, cf bool) (string, error) {
		m := b.Op("Mul", x.name("scale"), []string{in, b.Scalar("scale", float32(s))})
		return b.Op("Add", x.name(""), []string{m, b.Scalar("offset", float32(o))}), nil
	})
}
