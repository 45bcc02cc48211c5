package tflite

import (
	"fmt"
	"math"
	"slices"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/layout"
	formats "github.com/onnxconv/onnxconv/formats/tflite"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

func emptyOpts(start func(*flatbuffers.Builder), end func(*flatbuffers.Builder) flatbuffers.UOffsetT) optFn {
	return func(b *flatbuffers.Builder) flatbuffers.UOffsetT { start(b); return end(b) }
}

// handlers maps each ONNX op that has its own converter to it; the Unary
// and Binary rows of the op table in formats/tflite are the one-to-one ops.
// TestOpTable checks that the ops exported here are the table's.
func handlers() map[string]func(*converter, *canonical.Node) error {
	return map[string]func(*converter, *canonical.Node) error{
		"Identity": (*converter).elide,
		"Dropout":  (*converter).elide,
		"Transpose": func(c *converter, n *canonical.Node) error {
			r := c.rank(n.Inputs[0])
			if r < 0 {
				return fmt.Errorf("input rank unknown")
			}
			p := intsOf(n.AttrInts("perm", nil))
			if len(p) == 0 {
				p = layout.Identity(r)
				slices.Reverse(p)
			}
			c.aliases[n.Outputs[0]] = alias{src: n.Inputs[0], perm: norm(p)}
			return nil
		},
		"Conv":              (*converter).conv,
		"ConvTranspose":     (*converter).convTranspose,
		"Gemm":              (*converter).gemm,
		"MatMul":            (*converter).matmul,
		"MaxPool":           (*converter).pool,
		"AveragePool":       (*converter).pool,
		"GlobalAveragePool": (*converter).globalPool,
		"GlobalMaxPool":     (*converter).globalPool,
		"Flatten":           (*converter).reshapeNode,
		"Reshape":           (*converter).reshapeNode,
		"Squeeze":           (*converter).reshapeNode,
		"Unsqueeze":         (*converter).reshapeNode,
		"Concat":            (*converter).concat,
		"Softmax":           (*converter).softmax,
		"LogSoftmax":        (*converter).softmax,
		"ReduceMean":        (*converter).reduce,
		"ReduceSum":         (*converter).reduce,
		"ReduceMax":         (*converter).reduce,
		"ReduceMin":         (*converter).reduce,
		"ReduceProd":        (*converter).reduce,
		"Gather":            (*converter).gather,
		"Slice":             (*converter).slice,
		"Pad":               (*converter).pad,
		"Clip":              (*converter).clip,
		"LeakyRelu": func(c *converter, n *canonical.Node) error {
			alpha := n.AttrFloat("alpha", 0.01)
			return c.unaryWith(n, fb.BuiltinOperatorLEAKY_RELU, fb.BuiltinOptionsLeakyReluOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
				fb.LeakyReluOptionsStart(b)
				fb.LeakyReluOptionsAddAlpha(b, alpha)
				return fb.LeakyReluOptionsEnd(b)
			})
		},
		"Gelu": func(c *converter, n *canonical.Node) error {
			approx := n.AttrString("approximate", "none") == "tanh"
			return c.unaryWith(n, fb.BuiltinOperatorGELU, fb.BuiltinOptionsGeluOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
				fb.GeluOptionsStart(b)
				fb.GeluOptionsAddApproximate(b, approx)
				return fb.GeluOptionsEnd(b)
			})
		},
		"Reciprocal":            (*converter).reciprocal,
		"BatchNormalization":    (*converter).batchNorm,
		"LayerNormalization":    (*converter).layerNorm,
		"Resize":                (*converter).resize,
		"Upsample":              (*converter).resize,
		"LSTM":                  (*converter).lstm,
		"GRU":                   (*converter).gru,
		"HardSigmoid":           (*converter).hardSigmoid,
		"InstanceNormalization": (*converter).instanceNorm,
		"GroupNormalization":    (*converter).groupNorm,
		"Split":                 (*converter).split,
		"TopK":                  (*converter).topK,
		"Where":                 (*converter).where,
		"Expand":                (*converter).expand,
		"Tile":                  (*converter).tile,
		"Cast":                  (*converter).cast,
		"CumSum":                (*converter).cumSum,
		"Range":                 (*converter).rangeOp,
		"GatherND":              (*converter).gatherND,
		"ArgMax":                (*converter).argMinMax,
		"ArgMin":                (*converter).argMinMax,
		"Sum":                   (*converter).sum,
		"Shape":                 (*converter).shapeOp,
		"Erf":                   (*converter).erf,
		"Einsum":                (*converter).einsum,
		"ReduceL1":              (*converter).reduceMore,
		"ReduceL2":              (*converter).reduceMore,
		"ReduceSumSquare":       (*converter).reduceMore,
		"ReduceLogSum":          (*converter).reduceMore,
		"ReduceLogSumExp":       (*converter).reduceMore,
	}
}

// elide writes n (formats/tflite Elided) as no op: its output is its input.
func (c *converter) elide(n *canonical.Node) error {
	c.aliases[n.Outputs[0]] = alias{src: n.Inputs[0]}
	return nil
}

func (c *converter) node(n *canonical.Node) error {
	if row, ok := formats.ElementwiseFor(n.OpType); ok {
		for attr, want := range row.Fixed {
			if v := n.AttrFloat(attr, want); v != want {
				return unsupported(n, "TFLite %s has %s %g, this node has %g", row.Name, attr, want, v)
			}
		}
		if row.Kind == formats.Unary {
			return c.unary(n, row.Builtin)
		}
		return c.binary(n, row.Builtin)
	}
	if h, ok := handlers()[n.OpType]; ok {
		return h(c, n)
	}
	if why, ok := c.controlWhy[n.Name]; ok && (n.OpType == "If" || n.OpType == "Loop") {
		return unsupported(n, "%s", why)
	}
	return unsupported(n, "op %s is not supported by the TFLite exporter", n.OpType)
}

// fuse returns the fused activation for the value out of n and the value
// the op's output tensor then stands for: a Relu or Clip(0,6)/(-1,1)
// that is out's only use is absorbed.
func (c *converter) fuse(out *canonical.Value) (fb.ActivationFunctionType, *canonical.Value) {
	uses := out.Uses()
	if len(uses) != 1 || slices.Contains(c.m.Graph.Outputs, out) {
		return fb.ActivationFunctionTypeNONE, out
	}
	u := uses[0].Node
	if u.Domain != "" || len(u.Outputs) != 1 || u.Outputs[0] == nil {
		return fb.ActivationFunctionTypeNONE, out
	}
	act := fb.ActivationFunctionTypeNONE
	switch u.OpType {
	case "Relu":
		act = fb.ActivationFunctionTypeRELU
	case "Clip":
		lo, hi, ok := c.clipBounds(u)
		switch {
		case ok && lo == 0 && hi == 6:
			act = fb.ActivationFunctionTypeRELU6
		case ok && lo == -1 && hi == 1:
			act = fb.ActivationFunctionTypeRELU_N1_TO_1
		}
	}
	if act == fb.ActivationFunctionTypeNONE {
		return act, out
	}
	c.skip[u] = true
	c.rep.Fused = append(c.rep.Fused, fmt.Sprintf("%s %q into %s %q", u.OpType, u.Name, c.cur.OpType, c.cur.Name))
	return act, u.Outputs[0]
}

func (c *converter) clipBounds(n *canonical.Node) (lo, hi float32, ok bool) {
	lo, hi = float32(math.Inf(-1)), float32(math.Inf(1))
	if c.m.Opset("") < 11 {
		return n.AttrFloat("min", lo), n.AttrFloat("max", hi), true
	}
	for i, dst := range []*float32{&lo, &hi} {
		if len(n.Inputs) > i+1 && n.Inputs[i+1] != nil {
			v := n.Inputs[i+1]
			if v.Const == nil {
				return 0, 0, false
			}
			f, err := v.Const.Float64s()
			if err != nil || len(f) != 1 {
				return 0, 0, false
			}
			*dst = float32(f[0])
		}
	}
	return lo, hi, true
}

// unary emits a one-input op in the layout its input has.
func (c *converter) unary(n *canonical.Node, op fb.BuiltinOperator) error {
	return c.unaryWith(n, op, 0, nil)
}

func (c *converter) unaryWith(n *canonical.Node, op fb.BuiltinOperator, ot fb.BuiltinOptions, opts optFn) error {
	r, err := c.native(n.Inputs[0])
	if err != nil {
		return err
	}
	out, err := c.newOut(n.Outputs[0], r.perm)
	if err != nil {
		return err
	}
	c.t.addOp(op, []int32{r.t}, []int32{out}, ot, opts, n.Name)
	return nil
}

// layoutFor picks the layout of an elementwise op over inputs: the native
// layout of the first non-constant input of the output's rank, when every
// other non-constant input has that rank too.
func (c *converter) layoutFor(inputs []*canonical.Value, rank int) ([]int, error) {
	var perm []int
	found := false
	for _, v := range inputs {
		if v == nil || v.Const != nil {
			continue
		}
		if c.rank(v) != rank {
			return nil, nil
		}
		if !found {
			r, err := c.native(v)
			if err != nil {
				return nil, err
			}
			perm, found = r.perm, true
		}
	}
	return perm, nil
}

// operand returns input v of an elementwise op computed in layout perm of
// rank: constants of lower rank are broadcast-expanded first.
func (c *converter) operand(v *canonical.Value, perm []int, rank int) (int32, error) {
	if perm == nil {
		return c.get(v, nil)
	}
	if v.Const != nil && len(v.Const.Dims) < rank {
		dims := append(make([]int64, rank-len(v.Const.Dims)), v.Const.Dims...)
		for i := 0; i < rank-len(v.Const.Dims); i++ {
			dims[i] = 1
		}
		if v.Const.DataType == canonical.Float {
			f, err := c.floats(v)
			if err != nil {
				return 0, err
			}
			t1, err := transposeData(f, dims, perm)
			if err != nil {
				return 0, err
			}
			return c.constF32(v.Name, t1, layout.Apply(dims, perm), len(f) > 1), nil
		}
		x, err := c.ints(v)
		if err != nil {
			return 0, err
		}
		y := make([]int32, len(x))
		t2, err := transposeData(x, dims, perm)
		if err != nil {
			return 0, err
		}
		for i, e := range t2 {
			y[i] = int32(e)
		}
		return c.constI32(v.Name, y, layout.Apply(dims, perm)), nil
	}
	return c.get(v, perm)
}

func (c *converter) binary(n *canonical.Node, op fb.BuiltinOperator) error {
	if len(n.Inputs) != 2 {
		return unsupported(n, "%d inputs (TFLite's op takes 2)", len(n.Inputs))
	}
	rank := c.rank(n.Outputs[0])
	perm, err := c.layoutFor(n.Inputs, rank)
	if err != nil {
		return err
	}
	var ins []int32
	for _, v := range n.Inputs {
		t, err := c.operand(v, perm, rank)
		if err != nil {
			return err
		}
		ins = append(ins, t)
	}
	act := fb.ActivationFunctionTypeNONE
	final := n.Outputs[0]
	var ot fb.BuiltinOptions
	var opts optFn
	switch op {
	case fb.BuiltinOperatorADD, fb.BuiltinOperatorSUB, fb.BuiltinOperatorMUL, fb.BuiltinOperatorDIV:
		if dt, _ := c.elemType(final); dt == fb.TensorTypeFLOAT32 {
			act, final = c.fuse(final)
		}
		a := act
		switch op {
		case fb.BuiltinOperatorADD:
			ot = fb.BuiltinOptionsAddOptions
			opts = func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
				fb.AddOptionsStart(b)
				fb.AddOptionsAddFusedActivationFunction(b, a)
				return fb.AddOptionsEnd(b)
			}
		case fb.BuiltinOperatorSUB:
			ot = fb.BuiltinOptionsSubOptions
			opts = func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
				fb.SubOptionsStart(b)
				fb.SubOptionsAddFusedActivationFunction(b, a)
				return fb.SubOptionsEnd(b)
			}
		case fb.BuiltinOperatorMUL:
			ot = fb.BuiltinOptionsMulOptions
			opts = func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
				fb.MulOptionsStart(b)
				fb.MulOptionsAddFusedActivationFunction(b, a)
				return fb.MulOptionsEnd(b)
			}
		case fb.BuiltinOperatorDIV:
			ot = fb.BuiltinOptionsDivOptions
			opts = func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
				fb.DivOptionsStart(b)
				fb.DivOptionsAddFusedActivationFunction(b, a)
				return fb.DivOptionsEnd(b)
			}
		}
	}
	out, err := c.newOut(final, perm)
	if err != nil {
		return err
	}
	c.t.addOp(op, ins, []int32{out}, ot, opts, n.Name)
	return nil
}

func (c *converter) reciprocal(n *canonical.Node) error {
	r, err := c.native(n.Inputs[0])
	if err != nil {
		return err
	}
	one := c.constF32("one", []float32{1}, []int64{}, false)
	out, err := c.newOut(n.Outputs[0], r.perm)
	if err != nil {
		return err
	}
	c.t.addOp(fb.BuiltinOperatorDIV, []int32{one, r.t}, []int32{out}, fb.BuiltinOptionsDivOptions, emptyOpts(fb.DivOptionsStart, fb.DivOptionsEnd), n.Name)
	return nil
}

func (c *converter) clip(n *canonical.Node) error {
	lo, hi, ok := c.clipBounds(n)
	if !ok {
		return unsupported(n, "Clip bounds are not constant")
	}
	switch {
	case lo == 0 && hi == 6:
		return c.unary(n, fb.BuiltinOperatorRELU6)
	case lo == -1 && hi == 1:
		return c.unary(n, fb.BuiltinOperatorRELU_N1_TO_1)
	case lo == 0 && math.IsInf(float64(hi), 1):
		return c.unary(n, fb.BuiltinOperatorRELU)
	}
	r, err := c.native(n.Inputs[0])
	if err != nil {
		return err
	}
	sh, _ := c.shape(n.Outputs[0])
	cur := r.t
	if !math.IsInf(float64(lo), -1) {
		t := c.tmp(n.Outputs[0].Name+";lo", fb.TensorTypeFLOAT32, layout.Apply(sh, r.perm))
		c.t.addOp(fb.BuiltinOperatorMAXIMUM, []int32{cur, c.constF32("min", []float32{lo}, []int64{}, false)}, []int32{t}, 0, nil, n.Name)
		cur = t
	}
	if math.IsInf(float64(hi), 1) {
		hi = math.MaxFloat32
	}
	out, err := c.newOut(n.Outputs[0], r.perm)
	if err != nil {
		return err
	}
	c.t.addOp(fb.BuiltinOperatorMINIMUM, []int32{cur, c.constF32("max", []float32{hi}, []int64{}, false)}, []int32{out}, 0, nil, n.Name)
	return nil
}

// spatial holds the 2-D window attributes of a conv or pool.
type spatial struct {
	k, s, d    [2]int64
	pads       [4]int64 // top, left, bottom, right
	padding    fb.Padding
	explicit   bool // pads need an explicit PAD op
	in         [2]int64
	ceilExtras [2]int64
}

func (c *converter) window(n *canonical.Node, x *canonical.Value, kernel []int64) (*spatial, error) {
	sh, err := c.shape(x)
	if err != nil {
		return nil, err
	}
	strides, dilations, pads := n.AttrInts("strides", nil), n.AttrInts("dilations", nil), n.AttrInts("pads", nil)
	if len(sh) == 3 && len(kernel) == 1 {
		// A 1-D window [N,C,W] runs as the 2-D window of height 1 on the
		// [N,C,1,W] view (to1D4 / from1D4 hold it as NHWC [N,1,W,C]).
		sh = []int64{sh[0], sh[1], 1, sh[2]}
		kernel = []int64{1, kernel[0]}
		if len(strides) == 1 {
			strides = []int64{1, strides[0]}
		}
		if len(dilations) == 1 {
			dilations = []int64{1, dilations[0]}
		}
		if len(pads) == 2 {
			pads = []int64{0, pads[0], 0, pads[1]}
		}
	}
	if len(sh) != 4 {
		return nil, unsupported(n, "only 1-D and 2-D windows (3-D or 4-D input) are supported, input has rank %d", len(sh))
	}
	if len(kernel) != 2 {
		return nil, unsupported(n, "kernel of rank %d (1-D or 2-D only)", len(kernel))
	}
	sp := &spatial{k: [2]int64{kernel[0], kernel[1]}, s: [2]int64{1, 1}, d: [2]int64{1, 1}, in: [2]int64{sh[2], sh[3]}}
	if len(strides) == 2 {
		sp.s = [2]int64{strides[0], strides[1]}
	}
	if len(dilations) == 2 {
		sp.d = [2]int64{dilations[0], dilations[1]}
	}
	auto := n.AttrString("auto_pad", "NOTSET")
	if len(pads) == 4 {
		sp.pads = [4]int64{pads[0], pads[1], pads[2], pads[3]}
	}
	var same [4]int64
	dyn := sh[2] < 0 || sh[3] < 0
	if !dyn {
		for i := 0; i < 2; i++ {
			same[i], same[i+2] = formats.SamePads(sh[2+i], sp.k[i], sp.s[i], sp.d[i])
		}
	}
	switch auto {
	case "SAME_UPPER":
		sp.padding = fb.PaddingSAME
		return sp, nil
	case "VALID":
		sp.padding = fb.PaddingVALID
		return sp, nil
	case "SAME_LOWER":
		if dyn {
			return nil, unsupported(n, "SAME_LOWER padding with dynamic spatial dims")
		}
		sp.pads = [4]int64{same[2], same[3], same[0], same[1]}
	}
	if n.AttrInt("ceil_mode", 0) != 0 {
		if dyn {
			return nil, unsupported(n, "ceil_mode with dynamic spatial dims")
		}
		for i := 0; i < 2; i++ {
			eff := (sp.k[i]-1)*sp.d[i] + 1
			span := sh[2+i] + sp.pads[i] + sp.pads[i+2] - eff
			outC := (span+sp.s[i]-1)/sp.s[i] + 1
			// A last window starting in the end padding is dropped (ONNX, torch).
			if (outC-1)*sp.s[i] >= sh[2+i]+sp.pads[i] {
				outC--
			}
			extra := (outC-1)*sp.s[i] + eff - (sh[2+i] + sp.pads[i] + sp.pads[i+2])
			if extra > 0 {
				sp.ceilExtras[i] = extra
				sp.pads[i+2] += extra
			}
		}
	}
	switch {
	case sp.pads == [4]int64{}:
		sp.padding = fb.PaddingVALID
	case !dyn && sp.pads == same:
		sp.padding = fb.PaddingSAME
	default:
		sp.padding = fb.PaddingVALID
		sp.explicit = true
	}
	return sp, nil
}

// padNHWC emits PAD (or PADV2 with value) of NHWC tensor in by sp.pads.
func (c *converter) padNHWC(in int32, sp *spatial, value float32, useV2 bool) int32 {
	sh := c.t.tensors[in].shape
	p := []int32{0, 0, int32(sp.pads[0]), int32(sp.pads[2]), int32(sp.pads[1]), int32(sp.pads[3]), 0, 0}
	pt := c.constI32("pads", p, []int64{4, 2})
	osh := []int64{sh[0], grow(sh[1], sp.pads[0]+sp.pads[2]), grow(sh[2], sp.pads[1]+sp.pads[3]), sh[3]}
	out := c.tmp(c.t.tensors[in].name+";padded", c.t.tensors[in].typ, osh)
	if useV2 {
		v := c.constF32("pad_value", []float32{value}, []int64{}, false)
		c.t.addOp(fb.BuiltinOperatorPADV2, []int32{in, pt, v}, []int32{out}, fb.BuiltinOptionsPadV2Options, emptyOpts(fb.PadV2OptionsStart, fb.PadV2OptionsEnd), nodeName(c.cur))
	} else {
		c.t.addOp(fb.BuiltinOperatorPAD, []int32{in, pt}, []int32{out}, fb.BuiltinOptionsPadOptions, emptyOpts(fb.PadOptionsStart, fb.PadOptionsEnd), nodeName(c.cur))
	}
	return out
}

func grow(d, by int64) int64 {
	if d < 0 {
		return -1
	}
	return d + by
}

func (c *converter) conv(n *canonical.Node) error {
	x, w := n.Inputs[0], n.Inputs[1]
	if w.Const == nil {
		return unsupported(n, "the weights are not constant (TFLite convolutions take constant filters here)")
	}
	wd := w.Const.Dims
	if len(wd) != 4 && len(wd) != 3 {
		return unsupported(n, "%d-D convolution (1-D and 2-D only)", len(wd)-2)
	}
	kernel := n.AttrInts("kernel_shape", nil)
	if kernel == nil {
		kernel = wd[2:]
	}
	sp, err := c.window(n, x, kernel)
	if err != nil {
		return err
	}
	xs, _ := c.shape(x)
	if len(wd) == 3 {
		// the weights [M,C/g,K] as [M,C/g,1,K]: the same data
		wd = []int64{wd[0], wd[1], 1, wd[2]}
	}
	group := n.AttrInt("group", 1)
	M, cg := wd[0], wd[1]
	cin := cg * group
	wf, err := c.floats(w)
	if err != nil {
		return err
	}
	bias := make([]float32, M)
	if len(n.Inputs) > 2 && n.Inputs[2] != nil {
		if n.Inputs[2].Const == nil {
			return unsupported(n, "the bias is not constant")
		}
		if bias, err = c.floats(n.Inputs[2]); err != nil {
			return err
		}
	}
	in, err := c.windowIn(x)
	if err != nil {
		return err
	}
	if sp.explicit {
		in = c.padNHWC(in, sp, 0, false)
	}
	act, final := c.fuse(n.Outputs[0])
	out, done, err := c.windowOut(final)
	if err != nil {
		return err
	}
	convOpts := func(s *spatial, a fb.ActivationFunctionType) optFn {
		return func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.Conv2DOptionsStart(b)
			fb.Conv2DOptionsAddPadding(b, s.padding)
			fb.Conv2DOptionsAddStrideH(b, int32(s.s[0]))
			fb.Conv2DOptionsAddStrideW(b, int32(s.s[1]))
			fb.Conv2DOptionsAddDilationHFactor(b, int32(s.d[0]))
			fb.Conv2DOptionsAddDilationWFactor(b, int32(s.d[1]))
			fb.Conv2DOptionsAddFusedActivationFunction(b, a)
			return fb.Conv2DOptionsEnd(b)
		}
	}
	switch {
	case group == 1:
		t3, err := transposeData(wf, wd, layout.ToLast(4))
		if err != nil {
			return err
		}
		filt := c.constF32(w.Name, t3, layout.Apply(wd, layout.ToLast(4)), true)
		bt := c.constF32(n.Name+"_bias", bias, []int64{M}, true)
		c.t.addOp(fb.BuiltinOperatorCONV_2D, []int32{in, filt, bt}, []int32{out}, fb.BuiltinOptionsConv2DOptions, convOpts(sp, act), n.Name)
	case cg == 1 && len(xs) >= 3 && (xs[1] == group || xs[1] < 0) && M%group == 0:
		mult := M / group
		t4, err := transposeData(wf, wd, layout.ToIHWO(4))
		if err != nil {
			return err
		}
		filt := c.constF32(w.Name, t4, []int64{1, wd[2], wd[3], M}, true)
		bt := c.constF32(n.Name+"_bias", bias, []int64{M}, true)
		s, a := sp, act
		c.t.addOp(fb.BuiltinOperatorDEPTHWISE_CONV_2D, []int32{in, filt, bt}, []int32{out}, fb.BuiltinOptionsDepthwiseConv2DOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.DepthwiseConv2DOptionsStart(b)
			fb.DepthwiseConv2DOptionsAddPadding(b, s.padding)
			fb.DepthwiseConv2DOptionsAddStrideH(b, int32(s.s[0]))
			fb.DepthwiseConv2DOptionsAddStrideW(b, int32(s.s[1]))
			fb.DepthwiseConv2DOptionsAddDilationHFactor(b, int32(s.d[0]))
			fb.DepthwiseConv2DOptionsAddDilationWFactor(b, int32(s.d[1]))
			fb.DepthwiseConv2DOptionsAddDepthMultiplier(b, int32(mult))
			fb.DepthwiseConv2DOptionsAddFusedActivationFunction(b, a)
			return fb.DepthwiseConv2DOptionsEnd(b)
		}, n.Name)
	default:
		// Grouped: SPLIT on channels, one CONV_2D per group, CONCATENATION.
		if M%group != 0 {
			return unsupported(n, "group %d does not divide %d output channels", group, M)
		}
		ins := c.t.tensors[in].shape
		parts := make([]int32, group)
		for i := range parts {
			parts[i] = c.tmp(fmt.Sprintf("%s;group%d", x.Name, i), fb.TensorTypeFLOAT32, []int64{ins[0], ins[1], ins[2], cin / group})
		}
		axis := c.constI32("axis", []int32{3}, []int64{})
		c.t.addOp(fb.BuiltinOperatorSPLIT, []int32{axis, in}, parts, fb.BuiltinOptionsSplitOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.SplitOptionsStart(b)
			fb.SplitOptionsAddNumSplits(b, int32(group))
			return fb.SplitOptionsEnd(b)
		}, n.Name)
		mg := M / group
		gw := make([]int64, 4)
		copy(gw, wd)
		gw[0] = mg
		per := int(mg * cg * wd[2] * wd[3])
		osh := c.t.tensors[out].shape
		outs := make([]int32, group)
		for i := range outs {
			t5, err := transposeData(wf[i*per:(i+1)*per], gw, layout.ToLast(4))
			if err != nil {
				return err
			}
			filt := c.constF32(fmt.Sprintf("%s;group%d", w.Name, i), t5, layout.Apply(gw, layout.ToLast(4)), true)
			bt := c.constF32(fmt.Sprintf("%s_bias;group%d", n.Name, i), bias[int64(i)*mg:int64(i+1)*mg], []int64{mg}, true)
			outs[i] = c.tmp(fmt.Sprintf("%s;group%d", final.Name, i), fb.TensorTypeFLOAT32, []int64{osh[0], osh[1], osh[2], mg})
			c.t.addOp(fb.BuiltinOperatorCONV_2D, []int32{parts[i], filt, bt}, []int32{outs[i]}, fb.BuiltinOptionsConv2DOptions, convOpts(sp, act), n.Name)
		}
		c.t.addOp(fb.BuiltinOperatorCONCATENATION, outs, []int32{out}, fb.BuiltinOptionsConcatenationOptions, concatOpts(3), n.Name)
	}
	done()
	return nil
}

func concatOpts(axis int) optFn {
	return func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.ConcatenationOptionsStart(b)
		fb.ConcatenationOptionsAddAxis(b, int32(axis))
		return fb.ConcatenationOptionsEnd(b)
	}
}

func (c *converter) convTranspose(n *canonical.Node) error {
	x, w := n.Inputs[0], n.Inputs[1]
	if w.Const == nil || len(w.Const.Dims) != 4 {
		return unsupported(n, "weights must be a constant 4-D tensor")
	}
	if g := n.AttrInt("group", 1); g != 1 {
		return unsupported(n, "group %d (TRANSPOSE_CONV has no groups)", g)
	}
	if d := n.AttrInts("dilations", nil); len(d) == 2 && (d[0] != 1 || d[1] != 1) {
		return unsupported(n, "dilations %v (TRANSPOSE_CONV has none)", d)
	}
	outPad := n.AttrInts("output_padding", []int64{0, 0})
	if len(outPad) != 2 || outPad[0] < 0 || outPad[1] < 0 {
		return unsupported(n, "output_padding %v", outPad)
	}
	if n.AttrInts("output_shape", nil) != nil {
		return unsupported(n, "output_shape attribute")
	}
	if a := n.AttrString("auto_pad", "NOTSET"); a != "NOTSET" && a != "VALID" {
		return unsupported(n, "auto_pad %s", a)
	}
	wd := w.Const.Dims // [C, M, kh, kw]
	xs, err := c.shape(x)
	if err != nil {
		return err
	}
	s := []int64{1, 1}
	if st := n.AttrInts("strides", nil); len(st) == 2 {
		s = st
	}
	pads := n.AttrInts("pads", []int64{0, 0, 0, 0})
	if xs[2] < 0 || xs[3] < 0 {
		return unsupported(n, "dynamic spatial dims")
	}
	fullH, fullW := (xs[2]-1)*s[0]+wd[2], (xs[3]-1)*s[1]+wd[3]
	wf, err := c.floats(w)
	if err != nil {
		return err
	}
	M := wd[1]
	t6, err := transposeData(wf, wd, layout.ToIHWO(4))
	if err != nil {
		return err
	}
	filt := c.constF32(w.Name, t6, []int64{M, wd[2], wd[3], wd[0]}, true)
	in, err := c.get(x, layout.ToLast(4))
	if err != nil {
		return err
	}
	osh := c.constI32("output_shape", []int32{int32(max(xs[0], 1)), int32(fullH), int32(fullW), int32(M)}, []int64{4})
	fullT := c.tmp(n.Outputs[0].Name+";full", fb.TensorTypeFLOAT32, []int64{xs[0], fullH, fullW, M})
	c.t.addOp(fb.BuiltinOperatorTRANSPOSE_CONV, []int32{osh, filt, in}, []int32{fullT}, fb.BuiltinOptionsTransposeConvOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.TransposeConvOptionsStart(b)
		fb.TransposeConvOptionsAddPadding(b, fb.PaddingVALID)
		fb.TransposeConvOptionsAddStrideH(b, int32(s[0]))
		fb.TransposeConvOptionsAddStrideW(b, int32(s[1]))
		return fb.TransposeConvOptionsEnd(b)
	}, n.Name)
	cur := fullT
	// output_padding adds rows and columns at the end that no input
	// reaches (they hold the bias alone): zeros after TRANSPOSE_CONV,
	// where the end padding does not crop them away.
	if extraH, extraW := max(outPad[0]-pads[2], 0), max(outPad[1]-pads[3], 0); extraH > 0 || extraW > 0 {
		pt := c.constI32("pads", []int32{0, 0, 0, int32(extraH), 0, int32(extraW), 0, 0}, []int64{4, 2})
		t := c.tmp(n.Outputs[0].Name+";output_padding", fb.TensorTypeFLOAT32, []int64{xs[0], fullH + extraH, fullW + extraW, M})
		c.t.addOp(fb.BuiltinOperatorPAD, []int32{cur, pt}, []int32{t}, fb.BuiltinOptionsPadOptions, emptyOpts(fb.PadOptionsStart, fb.PadOptionsEnd), n.Name)
		cur = t
		fullH, fullW = fullH+extraH, fullW+extraW
		pads = []int64{pads[0], pads[1], pads[2] - outPad[0] + extraH, pads[3] - outPad[1] + extraW}
	} else {
		pads = []int64{pads[0], pads[1], pads[2] - outPad[0], pads[3] - outPad[1]}
	}
	if slices.ContainsFunc(pads, func(v int64) bool { return v != 0 }) {
		oh, ow := fullH-pads[0]-pads[2], fullW-pads[1]-pads[3]
		b := c.constI32("begin", []int32{0, int32(pads[0]), int32(pads[1]), 0}, []int64{4})
		sz := c.constI32("size", []int32{-1, int32(oh), int32(ow), -1}, []int64{4})
		t := c.tmp(n.Outputs[0].Name+";cropped", fb.TensorTypeFLOAT32, []int64{xs[0], oh, ow, M})
		c.t.addOp(fb.BuiltinOperatorSLICE, []int32{cur, b, sz}, []int32{t}, fb.BuiltinOptionsSliceOptions, emptyOpts(fb.SliceOptionsStart, fb.SliceOptionsEnd), n.Name)
		cur = t
	}
	act, final := c.fuse(n.Outputs[0])
	out, err := c.newOut(final, layout.ToLast(4))
	if err != nil {
		return err
	}
	bias := make([]float32, M)
	if len(n.Inputs) > 2 && n.Inputs[2] != nil {
		if n.Inputs[2].Const == nil {
			return unsupported(n, "the bias is not constant")
		}
		if bias, err = c.floats(n.Inputs[2]); err != nil {
			return err
		}
	}
	bt := c.constF32(n.Name+"_bias", bias, []int64{M}, true)
	c.t.addOp(fb.BuiltinOperatorADD, []int32{cur, bt}, []int32{out}, fb.BuiltinOptionsAddOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.AddOptionsStart(b)
		fb.AddOptionsAddFusedActivationFunction(b, act)
		return fb.AddOptionsEnd(b)
	}, n.Name)
	return nil
}

func fcOpts(act fb.ActivationFunctionType, keep bool) optFn {
	return func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.FullyConnectedOptionsStart(b)
		fb.FullyConnectedOptionsAddFusedActivationFunction(b, act)
		fb.FullyConnectedOptionsAddKeepNumDims(b, keep)
		return fb.FullyConnectedOptionsEnd(b)
	}
}

func (c *converter) gemm(n *canonical.Node) error {
	a, bv := n.Inputs[0], n.Inputs[1]
	alpha, beta := n.AttrFloat("alpha", 1), n.AttrFloat("beta", 1)
	transA, transB := n.AttrInt("transA", 0) != 0, n.AttrInt("transB", 0) != 0
	if bv.Const == nil || len(bv.Const.Dims) != 2 {
		return unsupported(n, "B is not a constant matrix (not implemented)")
	}
	var perm []int
	if transA {
		perm = []int{1, 0}
	}
	in, err := c.get(a, perm)
	if err != nil {
		return err
	}
	bf, err := c.floats(bv)
	if err != nil {
		return err
	}
	bd := bv.Const.Dims
	if !transB {
		t7, err := transposeData(bf, bd, []int{1, 0})
		if err != nil {
			return err
		}
		bf = t7
		bd = []int64{bd[1], bd[0]}
	}
	N := bd[0]
	if alpha != 1 {
		for i := range bf {
			bf[i] *= alpha
		}
	}
	ins := []int32{in, c.constF32(bv.Name, bf, bd, true)}
	var addC *canonical.Value
	if len(n.Inputs) > 2 && n.Inputs[2] != nil && beta != 0 {
		cv := n.Inputs[2]
		cn, _ := canonical.NumElements(constDims(cv))
		if cv.Const != nil && (cn == N || cn == 1) && (len(cv.Const.Dims) <= 1 || cv.Const.Dims[0] == 1) {
			cf, err := c.floats(cv)
			if err != nil {
				return err
			}
			bias := make([]float32, N)
			for i := range bias {
				bias[i] = beta * cf[int64(i)%cn]
			}
			ins = append(ins, c.constF32(cv.Name, bias, []int64{N}, true))
		} else {
			addC = cv
		}
	}
	act, final := fb.ActivationFunctionTypeNONE, n.Outputs[0]
	if addC == nil {
		act, final = c.fuse(n.Outputs[0])
	}
	target := final
	var out int32
	if addC == nil {
		if out, err = c.newOut(final, nil); err != nil {
			return err
		}
	} else {
		sh, _ := c.shape(final)
		out = c.tmp(final.Name+";ab", fb.TensorTypeFLOAT32, sh)
	}
	c.t.addOp(fb.BuiltinOperatorFULLY_CONNECTED, ins, []int32{out}, fb.BuiltinOptionsFullyConnectedOptions, fcOpts(act, false), n.Name)
	if addC != nil {
		if beta != 1 {
			return unsupported(n, "a non-constant C with beta %g", beta)
		}
		ct, err := c.get(addC, nil)
		if err != nil {
			return err
		}
		o2, err := c.newOut(target, nil)
		if err != nil {
			return err
		}
		c.t.addOp(fb.BuiltinOperatorADD, []int32{out, ct}, []int32{o2}, fb.BuiltinOptionsAddOptions, emptyOpts(fb.AddOptionsStart, fb.AddOptionsEnd), n.Name)
	}
	return nil
}

func constDims(v *canonical.Value) []int64 {
	if v.Const == nil {
		return nil
	}
	return v.Const.Dims
}

func (c *converter) matmul(n *canonical.Node) error {
	a, bv := n.Inputs[0], n.Inputs[1]
	ra := c.rank(a)
	if ra < 2 {
		return unsupported(n, "A of rank %d (rank >= 2 supported)", ra)
	}
	in, err := c.get(a, nil)
	if err != nil {
		return err
	}
	if bv.Const != nil && len(bv.Const.Dims) == 2 {
		bf, err := c.floats(bv)
		if err != nil {
			return err
		}
		bd := bv.Const.Dims
		t8, err := transposeData(bf, bd, []int{1, 0})
		if err != nil {
			return err
		}
		w := c.constF32(bv.Name, t8, []int64{bd[1], bd[0]}, true)
		act, final := c.fuse(n.Outputs[0])
		out, err := c.newOut(final, nil)
		if err != nil {
			return err
		}
		c.t.addOp(fb.BuiltinOperatorFULLY_CONNECTED, []int32{in, w, -1}, []int32{out}, fb.BuiltinOptionsFullyConnectedOptions, fcOpts(act, ra > 2), n.Name)
		return nil
	}
	rb := c.rank(bv)
	if rb < 2 {
		return unsupported(n, "B of rank %d", rb)
	}
	// B^T as an alias of a Transpose node is free: BATCH_MATMUL's adj_y.
	adjY := false
	var bt int32
	if al, ok := c.aliases[bv]; ok && len(al.perm) == rb && isSwapLast(al.perm) {
		if bt, err = c.get(al.src, nil); err != nil {
			return err
		}
		adjY = true
	} else if bt, err = c.get(bv, nil); err != nil {
		return err
	}
	out, err := c.newOut(n.Outputs[0], nil)
	if err != nil {
		return err
	}
	c.t.addOp(fb.BuiltinOperatorBATCH_MATMUL, []int32{in, bt}, []int32{out}, fb.BuiltinOptionsBatchMatMulOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.BatchMatMulOptionsStart(b)
		fb.BatchMatMulOptionsAddAdjY(b, adjY)
		return fb.BatchMatMulOptionsEnd(b)
	}, n.Name)
	return nil
}

func isSwapLast(p []int) bool {
	r := len(p)
	for i := 0; i < r-2; i++ {
		if p[i] != i {
			return false
		}
	}
	return p[r-2] == r-1 && p[r-1] == r-2
}

func (c *converter) pool(n *canonical.Node) error {
	x := n.Inputs[0]
	sp, err := c.window(n, x, n.AttrInts("kernel_shape", nil))
	if err != nil {
		return err
	}
	if sp.d != [2]int64{1, 1} {
		return unsupported(n, "dilated pooling")
	}
	if len(n.Outputs) > 1 && n.Outputs[1] != nil {
		return unsupported(n, "MaxPool indices output")
	}
	in, err := c.windowIn(x)
	if err != nil {
		return err
	}
	op := fb.BuiltinOperatorMAX_POOL_2D
	if n.OpType == "AveragePool" {
		op = fb.BuiltinOperatorAVERAGE_POOL_2D
		incl := n.AttrInt("count_include_pad", 0) != 0
		switch {
		case incl && sp.pads != [4]int64{} && sp.ceilExtras == [2]int64{}:
			in = c.padNHWC(in, sp, 0, false)
			sp.padding, sp.explicit = fb.PaddingVALID, true
		case sp.explicit, sp.padding == fb.PaddingSAME && incl:
			return unsupported(n, "average pooling with padding %v, count_include_pad %v, ceil_mode %d has no TFLite equivalent", sp.pads, incl, n.AttrInt("ceil_mode", 0))
		}
	} else if sp.explicit {
		in = c.padNHWC(in, sp, -math.MaxFloat32, true)
	}
	act, final := c.fuse(n.Outputs[0])
	out, done, err := c.windowOut(final)
	if err != nil {
		return err
	}
	c.t.addOp(op, []int32{in}, []int32{out}, fb.BuiltinOptionsPool2DOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.Pool2DOptionsStart(b)
		fb.Pool2DOptionsAddPadding(b, sp.padding)
		fb.Pool2DOptionsAddStrideH(b, int32(sp.s[0]))
		fb.Pool2DOptionsAddStrideW(b, int32(sp.s[1]))
		fb.Pool2DOptionsAddFilterHeight(b, int32(sp.k[0]))
		fb.Pool2DOptionsAddFilterWidth(b, int32(sp.k[1]))
		fb.Pool2DOptionsAddFusedActivationFunction(b, act)
		return fb.Pool2DOptionsEnd(b)
	}, n.Name)
	done()
	return nil
}

func reducerOpts(keep bool) optFn {
	return func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.ReducerOptionsStart(b)
		fb.ReducerOptionsAddKeepDims(b, keep)
		return fb.ReducerOptionsEnd(b)
	}
}

func (c *converter) globalPool(n *canonical.Node) error {
	if c.rank(n.Inputs[0]) != 4 {
		return unsupported(n, "input rank %d (4 supported)", c.rank(n.Inputs[0]))
	}
	in, err := c.get(n.Inputs[0], layout.ToLast(4))
	if err != nil {
		return err
	}
	op := fb.BuiltinOperatorMEAN
	if n.OpType == "GlobalMaxPool" {
		op = fb.BuiltinOperatorREDUCE_MAX
	}
	out, err := c.newOut(n.Outputs[0], layout.ToLast(4))
	if err != nil {
		return err
	}
	axes := c.constI32("axes", []int32{1, 2}, []int64{2})
	c.t.addOp(op, []int32{in, axes}, []int32{out}, fb.BuiltinOptionsReducerOptions, reducerOpts(true), n.Name)
	return nil
}

// reshape emits RESHAPE(in) -> out with the shape tensor new.
func (c *converter) reshape(in, out int32, shape []int32) {
	st := c.constI32("shape", shape, []int64{int64(len(shape))})
	c.t.addOp(fb.BuiltinOperatorRESHAPE, []int32{in, st}, []int32{out}, fb.BuiltinOptionsReshapeOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		vec := int32Vec(b, fb.ReshapeOptionsStartNewShapeVector, shape)
		fb.ReshapeOptionsStart(b)
		fb.ReshapeOptionsAddNewShape(b, vec)
		return fb.ReshapeOptionsEnd(b)
	}, nodeName(c.cur))
}

func (c *converter) reshapeNode(n *canonical.Node) error {
	sh, err := c.shape(n.Outputs[0])
	if err != nil {
		return err
	}
	shape := make([]int32, len(sh))
	unknown := 0
	for i, d := range sh {
		shape[i] = int32(d)
		if d < 0 {
			unknown++
		}
	}
	if unknown > 1 {
		return unsupported(n, "output shape %v has more than one dynamic dim", sh)
	}
	in, err := c.get(n.Inputs[0], nil)
	if err != nil {
		return err
	}
	out, err := c.newOut(n.Outputs[0], nil)
	if err != nil {
		return err
	}
	c.reshape(in, out, shape)
	return nil
}

func normAxis(a int64, rank int) int {
	if a < 0 {
		a += int64(rank)
	}
	return int(a)
}

func (c *converter) concat(n *canonical.Node) error {
	rank := c.rank(n.Outputs[0])
	axis := normAxis(n.AttrInt("axis", 0), rank)
	perm, err := c.layoutFor(n.Inputs, rank)
	if err != nil {
		return err
	}
	var ins []int32
	for _, v := range n.Inputs {
		t, err := c.get(v, perm)
		if err != nil {
			return err
		}
		ins = append(ins, t)
	}
	out, err := c.newOut(n.Outputs[0], perm)
	if err != nil {
		return err
	}
	c.t.addOp(fb.BuiltinOperatorCONCATENATION, ins, []int32{out}, fb.BuiltinOptionsConcatenationOptions, concatOpts(layout.Axis(perm, axis)), n.Name)
	return nil
}

func (c *converter) softmax(n *canonical.Node) error {
	rank := c.rank(n.Inputs[0])
	def := int64(-1)
	if c.m.Opset("") < 13 {
		def = 1
	}
	axis := normAxis(n.AttrInt("axis", def), rank)
	if c.m.Opset("") < 13 && axis != rank-1 {
		return unsupported(n, "opset < 13 Softmax over axes %d.. of a rank-%d input (flattening semantics)", axis, rank)
	}
	// Hold the input in a layout where axis is last: the native one when
	// it already is, else move the axis to the end.
	r, err := c.native(n.Inputs[0])
	if err != nil {
		return err
	}
	perm := r.perm
	if layout.Axis(perm, axis) != rank-1 {
		perm = nil
		if axis != rank-1 {
			p := layout.Identity(rank)
			p = append(append(p[:axis:axis], p[axis+1:]...), axis)
			perm = p
		}
	}
	in, err := c.get(n.Inputs[0], perm)
	if err != nil {
		return err
	}
	out, err := c.newOut(n.Outputs[0], perm)
	if err != nil {
		return err
	}
	if n.OpType == "LogSoftmax" {
		c.t.addOp(fb.BuiltinOperatorLOG_SOFTMAX, []int32{in}, []int32{out}, fb.BuiltinOptionsLogSoftmaxOptions, emptyOpts(fb.LogSoftmaxOptionsStart, fb.LogSoftmaxOptionsEnd), n.Name)
		return nil
	}
	c.t.addOp(fb.BuiltinOperatorSOFTMAX, []int32{in}, []int32{out}, fb.BuiltinOptionsSoftmaxOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.SoftmaxOptionsStart(b)
		fb.SoftmaxOptionsAddBeta(b, 1)
		return fb.SoftmaxOptionsEnd(b)
	}, n.Name)
	return nil
}

var reduceOps = map[string]fb.BuiltinOperator{
	"ReduceMean": fb.BuiltinOperatorMEAN, "ReduceSum": fb.BuiltinOperatorSUM, "ReduceMax": fb.BuiltinOperatorREDUCE_MAX,
	"ReduceMin": fb.BuiltinOperatorREDUCE_MIN, "ReduceProd": fb.BuiltinOperatorREDUCE_PROD,
}

func (c *converter) reduceAxes(n *canonical.Node) ([]int64, error) {
	axes := n.AttrInts("axes", nil)
	if len(n.Inputs) > 1 && n.Inputs[1] != nil {
		a, err := c.ints(n.Inputs[1])
		if err != nil {
			return nil, unsupported(n, "axes are not constant")
		}
		axes = a
	}
	return axes, nil
}

func (c *converter) reduce(n *canonical.Node) error {
	rank := c.rank(n.Inputs[0])
	axes, err := c.reduceAxes(n)
	if err != nil {
		return err
	}
	if len(axes) == 0 {
		if n.AttrInt("noop_with_empty_axes", 0) != 0 {
			c.aliases[n.Outputs[0]] = alias{src: n.Inputs[0]}
			return nil
		}
		for i := 0; i < rank; i++ {
			axes = append(axes, int64(i))
		}
	}
	keep := n.AttrInt("keepdims", 1) != 0
	var perm []int
	if keep {
		r, err := c.native(n.Inputs[0])
		if err != nil {
			return err
		}
		perm = r.perm
	}
	in, err := c.get(n.Inputs[0], perm)
	if err != nil {
		return err
	}
	ax := make([]int32, len(axes))
	for i, a := range axes {
		ax[i] = int32(layout.Axis(perm, normAxis(a, rank)))
	}
	at := c.constI32("axes", ax, []int64{int64(len(ax))})
	out, err := c.newOut(n.Outputs[0], perm)
	if err != nil {
		return err
	}
	c.t.addOp(reduceOps[n.OpType], []int32{in, at}, []int32{out}, fb.BuiltinOptionsReducerOptions, reducerOpts(keep), n.Name)
	return nil
}

func (c *converter) gather(n *canonical.Node) error {
	rank := c.rank(n.Inputs[0])
	axis := normAxis(n.AttrInt("axis", 0), rank)
	idx := n.Inputs[1]
	sh, err := c.shape(n.Inputs[0])
	if err != nil {
		return err
	}
	var it int32
	if idx.Const != nil {
		x, err := c.ints(idx)
		if err != nil {
			return err
		}
		y := make([]int32, len(x))
		for i, v := range x {
			if v < 0 {
				if sh[axis] < 0 {
					return unsupported(n, "negative index on a dynamic axis")
				}
				v += sh[axis]
			}
			y[i] = int32(v)
		}
		it = c.constI32(idx.Name, y, idx.Const.Dims)
	} else if it, err = c.get(idx, nil); err != nil {
		return err
	}
	in, err := c.get(n.Inputs[0], nil)
	if err != nil {
		return err
	}
	out, err := c.newOut(n.Outputs[0], nil)
	if err != nil {
		return err
	}
	c.t.addOp(fb.BuiltinOperatorGATHER, []int32{in, it}, []int32{out}, fb.BuiltinOptionsGatherOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.GatherOptionsStart(b)
		fb.GatherOptionsAddAxis(b, int32(axis))
		return fb.GatherOptionsEnd(b)
	}, n.Name)
	return nil
}

func (c *converter) slice(n *canonical.Node) error {
	rank := c.rank(n.Inputs[0])
	sh, err := c.shape(n.Inputs[0])
	if err != nil {
		return err
	}
	var starts, ends, axes, steps []int64
	if c.m.Opset("") < 10 {
		starts, ends, axes = n.AttrInts("starts", nil), n.AttrInts("ends", nil), n.AttrInts("axes", nil)
	} else {
		get := func(i int) ([]int64, error) {
			if len(n.Inputs) > i && n.Inputs[i] != nil {
				x, err := c.ints(n.Inputs[i])
				if err != nil {
					return nil, unsupported(n, "input %d is not constant", i)
				}
				return x, nil
			}
			return nil, nil
		}
		if starts, err = get(1); err != nil {
			return err
		}
		if ends, err = get(2); err != nil {
			return err
		}
		if axes, err = get(3); err != nil {
			return err
		}
		if steps, err = get(4); err != nil {
			return err
		}
	}
	if axes == nil {
		for i := range starts {
			axes = append(axes, int64(i))
		}
	}
	r, err := c.native(n.Inputs[0])
	if err != nil {
		return err
	}
	perm := r.perm
	begin := make([]int32, rank)
	end := make([]int32, rank)
	stride := make([]int32, rank)
	var beginMask, endMask int32
	for j := 0; j < rank; j++ {
		stride[j] = 1
		beginMask |= 1 << j
		endMask |= 1 << j
	}
	for i, a := range axes {
		ax := normAxis(a, rank)
		j := layout.Axis(perm, ax)
		st := int64(1)
		if steps != nil {
			st = steps[i]
		}
		d := sh[ax]
		s, e := starts[i], ends[i]
		if d < 0 {
			if s < 0 || e < 0 || st < 0 {
				return unsupported(n, "slice of the dynamic axis %d with negative bounds or step", ax)
			}
		} else {
			clamp := func(v, lo, hi int64) int64 { return min(max(v, lo), hi) }
			if s < 0 {
				s += d
			}
			if e < 0 {
				e += d
			}
			if st > 0 {
				s, e = clamp(s, 0, d), clamp(e, 0, d)
			} else {
				s, e = clamp(s, 0, d-1), clamp(e, -1, d-1)
			}
		}
		beginMask &^= 1 << j
		endMask &^= 1 << j
		begin[j], stride[j] = int32(s), int32(st)
		if e > math.MaxInt32 {
			endMask |= 1 << j
		} else if e == -1 && st < 0 {
			endMask |= 1 << j
		} else {
			end[j] = int32(e)
		}
	}
	in, err := c.get(n.Inputs[0], perm)
	if err != nil {
		return err
	}
	bt := c.constI32("begin", begin, []int64{int64(rank)})
	et := c.constI32("end", end, []int64{int64(rank)})
	stt := c.constI32("strides", stride, []int64{int64(rank)})
	out, err := c.newOut(n.Outputs[0], perm)
	if err != nil {
		return err
	}
	bm, em := beginMask, endMask
	c.t.addOp(fb.BuiltinOperatorSTRIDED_SLICE, []int32{in, bt, et, stt}, []int32{out}, fb.BuiltinOptionsStridedSliceOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.StridedSliceOptionsStart(b)
		fb.StridedSliceOptionsAddBeginMask(b, bm)
		fb.StridedSliceOptionsAddEndMask(b, em)
		return fb.StridedSliceOptionsEnd(b)
	}, n.Name)
	return nil
}

func (c *converter) pad(n *canonical.Node) error {
	rank := c.rank(n.Inputs[0])
	pads := n.AttrInts("pads", nil)
	var value float32
	if c.m.Opset("") < 11 {
		value = n.AttrFloat("value", 0)
	} else {
		p, err := c.ints(n.Inputs[1])
		if err != nil {
			return unsupported(n, "pads are not constant")
		}
		pads = p
		if len(n.Inputs) > 2 && n.Inputs[2] != nil {
			if n.Inputs[2].Const == nil {
				return unsupported(n, "the pad value is not constant")
			}
			f, err := n.Inputs[2].Const.Float64s()
			if err != nil || len(f) != 1 {
				return unsupported(n, "the pad value is not a scalar")
			}
			value = float32(f[0])
		}
		if len(n.Inputs) > 3 && n.Inputs[3] != nil {
			return unsupported(n, "the axes input (not implemented)")
		}
	}
	if len(pads) != 2*rank {
		return unsupported(n, "%d pads for rank %d", len(pads), rank)
	}
	mode := n.AttrString("mode", "constant")
	r, err := c.native(n.Inputs[0])
	if err != nil {
		return err
	}
	perm := r.perm
	p := make([]int32, 2*rank)
	for j := 0; j < rank; j++ {
		a := j
		if perm != nil {
			a = perm[j]
		}
		if pads[a] < 0 || pads[a+rank] < 0 {
			return unsupported(n, "negative pads")
		}
		p[2*j], p[2*j+1] = int32(pads[a]), int32(pads[a+rank])
	}
	in, err := c.get(n.Inputs[0], perm)
	if err != nil {
		return err
	}
	pt := c.constI32("pads", p, []int64{int64(rank), 2})
	out, err := c.newOut(n.Outputs[0], perm)
	if err != nil {
		return err
	}
	switch mode {
	case "constant":
		if value == 0 {
			c.t.addOp(fb.BuiltinOperatorPAD, []int32{in, pt}, []int32{out}, fb.BuiltinOptionsPadOptions, emptyOpts(fb.PadOptionsStart, fb.PadOptionsEnd), n.Name)
		} else {
			vt := c.constF32("value", []float32{value}, []int64{}, false)
			c.t.addOp(fb.BuiltinOperatorPADV2, []int32{in, pt, vt}, []int32{out}, fb.BuiltinOptionsPadV2Options, emptyOpts(fb.PadV2OptionsStart, fb.PadV2OptionsEnd), n.Name)
		}
	case "reflect":
		c.t.addOp(fb.BuiltinOperatorMIRROR_PAD, []int32{in, pt}, []int32{out}, fb.BuiltinOptionsMirrorPadOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.MirrorPadOptionsStart(b)
			fb.MirrorPadOptionsAddMode(b, fb.MirrorPadModeREFLECT)
			return fb.MirrorPadOptionsEnd(b)
		}, n.Name)
	default:
		return unsupported(n, "pad mode %q", mode)
	}
	return nil
}

// batchNorm is MUL and ADD by per-channel constants (inference).
func (c *converter) batchNorm(n *canonical.Node) error {
	vals := make([][]float32, 4)
	for i := 0; i < 4; i++ {
		v := n.Inputs[i+1]
		if v == nil || v.Const == nil {
			return unsupported(n, "statistics are not constant (training mode)")
		}
		f, err := c.floats(v)
		if err != nil {
			return err
		}
		vals[i] = f
	}
	eps := float64(n.AttrFloat("epsilon", 1e-5))
	C := len(vals[0])
	scale, shift := make([]float32, C), make([]float32, C)
	for i := 0; i < C; i++ {
		s := float64(vals[0][i]) / math.Sqrt(float64(vals[3][i])+eps)
		scale[i] = float32(s)
		shift[i] = float32(float64(vals[1][i]) - float64(vals[2][i])*s)
	}
	rank := c.rank(n.Inputs[0])
	dims := make([]int64, rank)
	for i := range dims {
		dims[i] = 1
	}
	dims[1] = int64(C)
	r, err := c.native(n.Inputs[0])
	if err != nil {
		return err
	}
	perm := r.perm
	t9, err := transposeData(scale, dims, perm)
	if err != nil {
		return err
	}
	st := c.constF32(n.Name+"_scale", t9, layout.Apply(dims, perm), true)
	t10, err := transposeData(shift, dims, perm)
	if err != nil {
		return err
	}
	bt := c.constF32(n.Name+"_shift", t10, layout.Apply(dims, perm), true)
	sh, _ := c.shape(n.Outputs[0])
	mid := c.tmp(n.Outputs[0].Name+";scaled", fb.TensorTypeFLOAT32, layout.Apply(sh, perm))
	c.t.addOp(fb.BuiltinOperatorMUL, []int32{r.t, st}, []int32{mid}, fb.BuiltinOptionsMulOptions, emptyOpts(fb.MulOptionsStart, fb.MulOptionsEnd), n.Name)
	act, final := c.fuse(n.Outputs[0])
	out, err := c.newOut(final, perm)
	if err != nil {
		return err
	}
	c.t.addOp(fb.BuiltinOperatorADD, []int32{mid, bt}, []int32{out}, fb.BuiltinOptionsAddOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.AddOptionsStart(b)
		fb.AddOptionsAddFusedActivationFunction(b, act)
		return fb.AddOptionsEnd(b)
	}, n.Name)
	c.rep.Notes = append(c.rep.Notes, fmt.Sprintf("BatchNormalization %q: MUL and ADD by per-channel constants", n.Name))
	return nil
}

// layerNorm decomposes LayerNormalization into MEAN, SUB, MUL, MEAN, ADD,
// RSQRT, MUL (and MUL, ADD by scale and bias).
func (c *converter) layerNorm(n *canonical.Node) error {
	if len(n.Outputs) > 1 && (n.Outputs[1] != nil && len(n.Outputs[1].Uses()) > 0) {
		return unsupported(n, "Mean/InvStdDev outputs are used")
	}
	rank := c.rank(n.Inputs[0])
	axis := normAxis(n.AttrInt("axis", -1), rank)
	sh, err := c.shape(n.Inputs[0])
	if err != nil {
		return err
	}
	in, err := c.get(n.Inputs[0], nil)
	if err != nil {
		return err
	}
	var ax []int32
	red := append([]int64(nil), sh...)
	for a := axis; a < rank; a++ {
		ax = append(ax, int32(a))
		red[a] = 1
	}
	at := c.constI32("axes", ax, []int64{int64(len(ax))})
	base := n.Outputs[0].Name
	f32 := fb.TensorTypeFLOAT32
	mean := c.tmp(base+";mean", f32, red)
	c.t.addOp(fb.BuiltinOperatorMEAN, []int32{in, at}, []int32{mean}, fb.BuiltinOptionsReducerOptions, reducerOpts(true), n.Name)
	d := c.tmp(base+";centered", f32, sh)
	c.t.addOp(fb.BuiltinOperatorSUB, []int32{in, mean}, []int32{d}, fb.BuiltinOptionsSubOptions, emptyOpts(fb.SubOptionsStart, fb.SubOptionsEnd), n.Name)
	sq := c.tmp(base+";sq", f32, sh)
	c.t.addOp(fb.BuiltinOperatorMUL, []int32{d, d}, []int32{sq}, fb.BuiltinOptionsMulOptions, emptyOpts(fb.MulOptionsStart, fb.MulOptionsEnd), n.Name)
	vr := c.tmp(base+";var", f32, red)
	c.t.addOp(fb.BuiltinOperatorMEAN, []int32{sq, at}, []int32{vr}, fb.BuiltinOptionsReducerOptions, reducerOpts(true), n.Name)
	ve := c.tmp(base+";var_eps", f32, red)
	eps := c.constF32("epsilon", []float32{n.AttrFloat("epsilon", 1e-5)}, []int64{}, false)
	c.t.addOp(fb.BuiltinOperatorADD, []int32{vr, eps}, []int32{ve}, fb.BuiltinOptionsAddOptions, emptyOpts(fb.AddOptionsStart, fb.AddOptionsEnd), n.Name)
	rs := c.tmp(base+";rstd", f32, red)
	c.t.addOp(fb.BuiltinOperatorRSQRT, []int32{ve}, []int32{rs}, 0, nil, n.Name)
	norm := c.tmp(base+";normalized", f32, sh)
	c.t.addOp(fb.BuiltinOperatorMUL, []int32{d, rs}, []int32{norm}, fb.BuiltinOptionsMulOptions, emptyOpts(fb.MulOptionsStart, fb.MulOptionsEnd), n.Name)
	cur := norm
	hasBias := len(n.Inputs) > 2 && n.Inputs[2] != nil
	scaleOut := func() (int32, error) {
		if hasBias {
			return c.tmp(base+";scaled", f32, sh), nil
		}
		return c.newOut(n.Outputs[0], nil)
	}
	st, err := c.get(n.Inputs[1], nil)
	if err != nil {
		return err
	}
	o, err := scaleOut()
	if err != nil {
		return err
	}
	c.t.addOp(fb.BuiltinOperatorMUL, []int32{cur, st}, []int32{o}, fb.BuiltinOptionsMulOptions, emptyOpts(fb.MulOptionsStart, fb.MulOptionsEnd), n.Name)
	cur = o
	if hasBias {
		bt, err := c.get(n.Inputs[2], nil)
		if err != nil {
			return err
		}
		out, err := c.newOut(n.Outputs[0], nil)
		if err != nil {
			return err
		}
		c.t.addOp(fb.BuiltinOperatorADD, []int32{cur, bt}, []int32{out}, fb.BuiltinOptionsAddOptions, emptyOpts(fb.AddOptionsStart, fb.AddOptionsEnd), n.Name)
	}
	c.rep.Notes = append(c.rep.Notes, fmt.Sprintf("LayerNormalization %q decomposed (MEAN, SUB, MUL, MEAN, ADD, RSQRT, MUL)", n.Name))
	return nil
}

func (c *converter) resize(n *canonical.Node) error {
	if c.rank(n.Inputs[0]) != 4 {
		return unsupported(n, "rank %d (4-D only)", c.rank(n.Inputs[0]))
	}
	osh, err := c.shape(n.Outputs[0])
	if err != nil {
		return err
	}
	ish, _ := c.shape(n.Inputs[0])
	if osh[2] < 0 || osh[3] < 0 {
		return unsupported(n, "output spatial size is not static")
	}
	if osh[0] != ish[0] || osh[1] != ish[1] {
		return unsupported(n, "resizes batch or channels")
	}
	mode := n.AttrString("mode", "nearest")
	ctm := n.AttrString("coordinate_transformation_mode", "half_pixel")
	if n.OpType == "Upsample" || c.m.Opset("") < 11 {
		ctm = "asymmetric"
	}
	nearest := n.AttrString("nearest_mode", "round_prefer_floor")
	if n.OpType == "Upsample" || c.m.Opset("") < 11 {
		nearest = "floor"
	}
	var op fb.BuiltinOperator
	var align, half bool
	switch {
	case mode == "linear" && ctm == "half_pixel", mode == "linear" && ctm == "pytorch_half_pixel" && osh[2] > 1 && osh[3] > 1:
		op, half = fb.BuiltinOperatorRESIZE_BILINEAR, true
	case mode == "linear" && ctm == "align_corners":
		op, align = fb.BuiltinOperatorRESIZE_BILINEAR, true
	case mode == "linear" && ctm == "asymmetric":
		op = fb.BuiltinOperatorRESIZE_BILINEAR
	case mode == "nearest" && ctm == "asymmetric" && nearest == "floor":
		op = fb.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR
	case mode == "nearest" && ctm == "half_pixel" && nearest == "round_prefer_ceil":
		op, half = fb.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR, true
	case mode == "nearest" && ctm == "align_corners" && nearest == "round_prefer_ceil":
		op, align = fb.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR, true
	default:
		return unsupported(n, "mode %s with coordinate_transformation_mode %s and nearest_mode %s has no TFLite resize equivalent", mode, ctm, nearest)
	}
	in, err := c.get(n.Inputs[0], layout.ToLast(4))
	if err != nil {
		return err
	}
	size := c.constI32("size", []int32{int32(osh[2]), int32(osh[3])}, []int64{2})
	out, err := c.newOut(n.Outputs[0], layout.ToLast(4))
	if err != nil {
		return err
	}
	if op == fb.BuiltinOperatorRESIZE_BILINEAR {
		c.t.addOp(op, []int32{in, size}, []int32{out}, fb.BuiltinOptionsResizeBilinearOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.ResizeBilinearOptionsStart(b)
			fb.ResizeBilinearOptionsAddAlignCorners(b, align)
			fb.ResizeBilinearOptionsAddHalfPixelCenters(b, half)
			return fb.ResizeBilinearOptionsEnd(b)
		}, n.Name)
		return nil
	}
	c.t.addOp(op, []int32{in, size}, []int32{out}, fb.BuiltinOptionsResizeNearestNeighborOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		fb.ResizeNearestNeighborOptionsStart(b)
		fb.ResizeNearestNeighborOptionsAddAlignCorners(b, align)
		fb.ResizeNearestNeighborOptionsAddHalfPixelCenters(b, half)
		return fb.ResizeNearestNeighborOptionsEnd(b)
	}, n.Name)
	return nil
}

// hardSigmoid is clamp(alpha*x + beta, 0, 1) = RELU6(6*alpha*x + 6*beta) / 6:
// MUL, ADD with a fused RELU6, MUL (in the layout its input has).
func (c *converter) hardSigmoid(n *canonical.Node) error {
	alpha, beta := n.AttrFloat("alpha", 0.2), n.AttrFloat("beta", 0.5)
	r, err := c.native(n.Inputs[0])
	if err != nil {
		return err
	}
	sh, err := c.shape(n.Outputs[0])
	if err != nil {
		return err
	}
	sh = layout.Apply(sh, r.perm)
	base := n.Outputs[0].Name
	a := c.tmp(base+";scaled", fb.TensorTypeFLOAT32, sh)
	c.t.addOp(fb.BuiltinOperatorMUL, []int32{r.t, c.constF32("alpha6", []float32{6 * alpha}, []int64{}, false)}, []int32{a},
		fb.BuiltinOptionsMulOptions, emptyOpts(fb.MulOptionsStart, fb.MulOptionsEnd), n.Name)
	b := c.tmp(base+";relu6", fb.TensorTypeFLOAT32, sh)
	c.t.addOp(fb.BuiltinOperatorADD, []int32{a, c.constF32("beta6", []float32{6 * beta}, []int64{}, false)}, []int32{b},
		fb.BuiltinOptionsAddOptions, func(bd *flatbuffers.Builder) flatbuffers.UOffsetT {
			fb.AddOptionsStart(bd)
			fb.AddOptionsAddFusedActivationFunction(bd, fb.ActivationFunctionTypeRELU6)
			return fb.AddOptionsEnd(bd)
		}, n.Name)
	inf := math.Inf(1)
	c.derived[a] = derivedRange{src: n.Inputs[0], a: 6 * float64(alpha), lo: -inf, hi: inf}
	c.derived[b] = derivedRange{src: n.Inputs[0], a: 6 * float64(alpha), b: 6 * float64(beta), lo: 0, hi: 6}
	out, err := c.newOut(n.Outputs[0], r.perm)
	if err != nil {
		return err
	}
	c.t.addOp(fb.BuiltinOperatorMUL, []int32{b, c.constF32("sixth", []float32{1.0 / 6}, []int64{}, false)}, []int32{out},
		fb.BuiltinOptionsMulOptions, emptyOpts(fb.MulOptionsStart, fb.MulOptionsEnd), n.Name)
	return nil
}
