package keraslayers

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/layout"
)

// moreLayers are the transposed convolution, cropping, Dot and the
// wrappers (Bidirectional, TimeDistributed); layerTable merges them in.
func moreLayers() map[string]layerFunc {
	return map[string]layerFunc{
		"Conv2DTranspose": (*layerCtx).convTranspose,
		"Conv1DTranspose": (*layerCtx).convTranspose,
		"Conv3DTranspose": (*layerCtx).convTranspose,
		"Cropping1D":      (*layerCtx).cropping,
		"Cropping2D":      (*layerCtx).cropping,
		"Cropping3D":      (*layerCtx).cropping,
		"Dot":             (*layerCtx).dot,
		"Bidirectional":   (*layerCtx).bidirectional,
		"TimeDistributed": (*layerCtx).timeDistributed,
	}
}

// convTranspose maps Conv{1,2,3}DTranspose (kernel [k..., out, in]) to
// ONNX ConvTranspose ([in, out, k...]). "same" crops floor((k−s)/2)
// before and the rest after, as TF does (output size in·s).
func (x *layerCtx) convTranspose(ins []*kval) ([]*kval, error) {
	v, nsp, err := x.spatialIn(ins, 3)
	if err != nil {
		return nil, err
	}
	if op, ok := x.l.cfg["output_padding"]; ok && op != nil {
		return nil, errors.New("output_padding is not supported")
	}
	k, kd, strides, dil, err := x.convKernel("kernel", nsp)
	if err != nil {
		return nil, err
	}
	// [k..., out, in] -> [in, out, k...]: FromHWIO reads [k..., I, O] and
	// writes [O, I, k...], so the roles of in and out swap.
	wv, wd, err := canonical.TransposeSlice(k, kd, layout.FromHWIO(len(kd)))
	if err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	ks := kd[:nsp]
	pads := make([]int64, 2*nsp)
	outPad := make([]int64, nsp)
	switch p := x.str("padding", "valid"); p {
	case "valid":
	case "same":
		for i := 0; i < nsp; i++ {
			keff := (ks[i]-1)*dil[i] + 1
			t := keff - strides[i]
			if t >= 0 {
				pads[i], pads[nsp+i] = t/2, t-t/2
			} else {
				outPad[i] = -t
			}
		}
	default:
		return nil, fmt.Errorf("padding %q is not supported", p)
	}
	in, err := x.c.cf(v)
	if err != nil {
		return nil, err
	}
	cv := []string{in, x.init("kernel", wd, wv)}
	if cv, err = x.withBias(cv); err != nil {
		return nil, err
	}
	y := x.c.b.Op("ConvTranspose", x.name(""), cv, canonical.IntsAttr("strides", strides...), canonical.IntsAttr("dilations", dil...),
		canonical.IntsAttr("kernel_shape", ks...), canonical.IntsAttr("pads", pads...), canonical.IntsAttr("output_padding", outPad...))
	return x.convOut(y, v)
}

// cropping maps Cropping1D/2D/3D as one Slice over the spatial axes.
func (x *layerCtx) cropping(ins []*kval) ([]*kval, error) {
	v, nsp, err := x.spatialIn(ins, 3)
	if err != nil {
		return nil, err
	}
	before, after, err := x.beforeAfter("cropping", nsp)
	if err != nil {
		return nil, err
	}
	cf := v.cf != ""
	in := v.cf
	first := int64(2)
	if !cf {
		in, first = v.cl, 1
	}
	var starts, ends, axes []int64
	for i := 0; i < nsp; i++ {
		if before[i] < 0 || after[i] < 0 || before[i] > maxDim || after[i] > maxDim {
			return nil, fmt.Errorf("cropping %v, %v is out of range", before, after)
		}
		e := -after[i]
		if after[i] == 0 {
			e = math.MaxInt64
		}
		starts, ends, axes = append(starts, before[i]), append(ends, e), append(axes, first+int64(i))
	}
	b := x.c.b
	y := b.Op("Slice", x.name(""), []string{in, b.Ints("starts", starts...), b.Ints("ends", ends...), b.Ints("axes", axes...)})
	return []*kval{out(y, v.rank, cf, v.dt)}, nil
}

// dot maps Dot (Keras batch_dot over the given axes, optionally on
// L2-normalized inputs) to an Einsum.
func (x *layerCtx) dot(ins []*kval) ([]*kval, error) {
	if len(ins) != 2 {
		return nil, fmt.Errorf("takes two inputs, is given %d", len(ins))
	}
	a, bv := ins[0], ins[1]
	if a.rank < 2 || bv.rank < 2 || a.rank > 10 || bv.rank > 10 {
		return nil, fmt.Errorf("inputs of rank %d and %d", a.rank, bv.rank)
	}
	var ax [2]int64
	switch p := x.l.cfg["axes"].(type) {
	case float64:
		ax = [2]int64{int64(p), int64(p)}
	case []any:
		if len(p) != 2 {
			return nil, fmt.Errorf("axes %v", p)
		}
		ax = [2]int64{int64(toF(p[0])), int64(toF(p[1]))}
	default:
		return nil, fmt.Errorf("axes %v", x.l.cfg["axes"])
	}
	for i, r := range []int{a.rank, bv.rank} {
		if ax[i] < 0 {
			ax[i] += int64(r)
		}
		if ax[i] < 1 || ax[i] >= int64(r) {
			return nil, fmt.Errorf("axes %v for inputs of rank %d and %d", x.l.cfg["axes"], a.rank, bv.rank)
		}
	}
	b := x.c.b
	names := make([]string, 2)
	for i, v := range ins {
		s, err := x.c.cl(v)
		if err != nil {
			return nil, err
		}
		if x.boolean("normalize", false) {
			// x / sqrt(max(sum(x²), 1e-12)) along the axis, as l2_normalize.
			sq := b.Op("Mul", x.name(fmt.Sprintf("sq%d", i)), []string{s, s})
			sum := b.Op("ReduceSum", x.name(fmt.Sprintf("sumsq%d", i)), []string{sq, b.Ints("axes", ax[i])}, canonical.IntAttr("keepdims", 1))
			den := b.Op("Sqrt", x.name(fmt.Sprintf("norm%d", i)), []string{b.Op("Max", x.name(fmt.Sprintf("clamp%d", i)), []string{sum, b.Scalar("eps", 1e-12)})})
			s = b.Op("Div", x.name(fmt.Sprintf("normalized%d", i)), []string{s, den})
		}
		names[i] = s
	}
	letters := "bcdefghijklmnopqrstuvwxyz"
	next := 1
	la := []byte{'a'}
	for i := 1; i < a.rank; i++ {
		if int64(i) == ax[0] {
			la = append(la, 'z')
			continue
		}
		la = append(la, letters[next])
		next++
	}
	lb := []byte{'a'}
	for i := 1; i < bv.rank; i++ {
		if int64(i) == ax[1] {
			lb = append(lb, 'z')
			continue
		}
		lb = append(lb, letters[next])
		next++
	}
	outL := []byte{'a'}
	for _, l := range append(append([]byte{}, la[1:]...), lb[1:]...) {
		if l != 'z' {
			outL = append(outL, l)
		}
	}
	eq := string(la) + "," + string(lb) + "->" + string(outL)
	y := b.Op("Einsum", x.name(""), names, canonical.StringAttr("equation", eq))
	r := len(outL)
	if r == 1 { // Keras keeps a trailing axis of 1
		y = b.Op("Unsqueeze", x.name("expand"), []string{y, b.Ints("axes", 1)})
		r = 2
	}
	return []*kval{{cl: y, rank: r, dt: a.dt}}, nil
}

// inner reads the layer a wrapper holds (config "layer").
func (x *layerCtx) inner(prefix string) (*layerSpec, error) {
	m, ok := x.l.cfg["layer"].(map[string]any)
	if !ok {
		return nil, errors.New("the wrapped layer (config \"layer\") is missing")
	}
	s, err := x.c.spec(m)
	if err != nil {
		return nil, err
	}
	if prefix != "" {
		s.name = prefix + s.name
		cp := map[string]any{}
		for k, v := range s.cfg {
			cp[k] = v
		}
		cp["name"] = s.name
		s.cfg = cp
	}
	return s, nil
}

// fallbackWeights looks weights up by path, and answers with fixed ones
// for the wrapped layer's path when the lookup finds none.
type fallbackWeights struct {
	w        Weights
	path     string
	fallback []Weight
}

func (f fallbackWeights) LayerWeights(path []string) ([]Weight, error) {
	ws, err := f.w.LayerWeights(path)
	if err != nil || len(ws) > 0 || strings.Join(path, "/") != f.path {
		return ws, err
	}
	return f.fallback, nil
}

// callWrapped calls wrapped layer l inside this wrapper; when the file
// has no weights under its own path, fallback are its weights.
func (x *layerCtx) callWrapped(l *layerSpec, ins []*kval, fallback []Weight) ([]*kval, error) {
	c := x.c
	saved := c.w
	c.w = fallbackWeights{w: saved, path: strings.Join(append(append([]string{}, x.path...), l.name), "/"), fallback: fallback}
	defer func() { c.w = saved }()
	return c.call(l, x.path, ins)
}

// bidirectional maps Bidirectional around SimpleRNN/GRU/LSTM: a forward
// and a backward copy of the layer, the backward sequence put back in
// time order, merged by merge_mode.
func (x *layerCtx) bidirectional(ins []*kval) ([]*kval, error) {
	v, err := x.one(ins)
	if err != nil {
		return nil, err
	}
	fw, err := x.inner("forward_")
	if err != nil {
		return nil, err
	}
	bw, err := x.inner("backward_")
	if err != nil {
		return nil, err
	}
	if bl, ok := x.l.cfg["backward_layer"].(map[string]any); ok && bl != nil {
		return nil, errors.New("a separate backward_layer is not supported")
	}
	for _, s := range []*layerSpec{fw, bw} {
		if s.class != "SimpleRNN" && s.class != "GRU" && s.class != "LSTM" {
			return nil, fmt.Errorf("wraps a %s: SimpleRNN, GRU or LSTM only", s.class)
		}
		if b, _ := s.cfg["return_state"].(bool); b {
			return nil, errors.New("return_state=true is not supported inside Bidirectional")
		}
	}
	back, _ := bw.cfg["go_backwards"].(bool)
	bw.cfg["go_backwards"] = !back
	half := len(x.w) / 2
	fo, err := x.callWrapped(fw, []*kval{v}, x.w[:half])
	if err != nil {
		return nil, err
	}
	bo, err := x.callWrapped(bw, []*kval{v}, x.w[half:])
	if err != nil {
		return nil, err
	}
	b := x.c.b
	f, r := fo[0], bo[0]
	seq, _ := fw.cfg["return_sequences"].(bool)
	if seq {
		rev := b.Op("Slice", x.name("backward_in_time"), []string{r.cl, b.Ints("starts", -1), b.Ints("ends", math.MinInt64),
			b.Ints("axes", 1), b.Ints("steps", -1)})
		r = &kval{cl: rev, rank: r.rank, dt: r.dt}
	}
	switch mode := x.l.cfg["merge_mode"]; mode {
	case "concat":
		return []*kval{{cl: b.Op("Concat", x.name(""), []string{f.cl, r.cl}, canonical.IntAttr("axis", -1)), rank: f.rank, dt: f.dt}}, nil
	case "sum":
		return []*kval{{cl: b.Op("Add", x.name(""), []string{f.cl, r.cl}), rank: f.rank, dt: f.dt}}, nil
	case "mul":
		return []*kval{{cl: b.Op("Mul", x.name(""), []string{f.cl, r.cl}), rank: f.rank, dt: f.dt}}, nil
	case "ave":
		return []*kval{{cl: b.Op("Mean", x.name(""), []string{f.cl, r.cl}), rank: f.rank, dt: f.dt}}, nil
	case nil:
		return []*kval{f, r}, nil
	default:
		return nil, fmt.Errorf("merge_mode %v is not supported", mode)
	}
}

// timeDistributed applies the wrapped layer to every time step: the batch
// and time axes are merged, the layer applied, and split again.
func (x *layerCtx) timeDistributed(ins []*kval) ([]*kval, error) {
	v, err := x.one(ins)
	if err != nil {
		return nil, err
	}
	if v.rank < 3 {
		return nil, fmt.Errorf("input of rank %d: want [batch, time, ...]", v.rank)
	}
	l, err := x.inner("")
	if err != nil {
		return nil, err
	}
	in, err := x.c.cl(v)
	if err != nil {
		return nil, err
	}
	b := x.c.b
	shape := b.Op("Shape", x.name("shape"), []string{in})
	bt := b.Op("Slice", x.name("batch_time"), []string{shape, b.Ints("zero", 0), b.Ints("two", 2)})
	rest := b.Op("Slice", x.name("step_shape"), []string{shape, b.Ints("two", 2), b.Ints("end", math.MaxInt64)})
	merged := b.Op("Reshape", x.name("merged"), []string{in, b.Op("Concat", x.name("merged_shape"), []string{b.Ints("minus_one", -1), rest}, canonical.IntAttr("axis", 0))})
	outs, err := x.callWrapped(l, []*kval{{cl: merged, rank: v.rank - 1, dt: v.dt}}, x.w)
	if err != nil {
		return nil, err
	}
	res := make([]*kval, len(outs))
	for i, o := range outs {
		oc, err := x.c.cl(o)
		if err != nil {
			return nil, err
		}
		os := b.Op("Slice", x.name("out_step_shape"), []string{b.Op("Shape", x.name("out_shape"), []string{oc}), b.Ints("one", 1), b.Ints("end", math.MaxInt64)})
		y := b.Op("Reshape", x.name(""), []string{oc, b.Op("Concat", x.name("split_shape"), []string{bt, os}, canonical.IntAttr("axis", 0))})
		r := -1
		if o.rank >= 0 {
			r = o.rank + 1
		}
		res[i] = &kval{cl: y, rank: r, dt: o.dt}
	}
	return res, nil
}

// channelAxisConst shapes a per-channel constant for channel axis axis of
// a rank-r channels-last tensor.
func (x *layerCtx) channelAxisConst(variant string, v []float32, rank, axis int) string {
	dims := []int64{int64(len(v))}
	for i := axis + 1; i < rank; i++ {
		dims = append(dims, 1)
	}
	return x.init(fmt.Sprintf("%s_r%d_axis%d", variant, rank, axis), dims, v)
}
