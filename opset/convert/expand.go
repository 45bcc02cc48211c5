package convert

import (
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
)

// expand rewrites sc.n, an op that does not exist below sc.new's version,
// into ops valid at opset to. It either replaces the node (sc.replaced) or
// renames it to an older op that the walk then carries on with.
func (c *converter) expand(sc *stepCtx, to int) error {
	n := sc.n
	if n.Domain == "ai.onnx.ml" {
		return expandML(sc, to)
	}
	keep := fmt.Sprintf("keep opset >= %d", sc.new.SinceVersion)
	switch n.OpType {
	case "Resize":
		// Resize-10 (X, scales; nearest or linear) is Upsample-9.
		n.OpType = "Upsample"
		return nil
	case "ScatterElements":
		if err := sc.normalizeAxes([]string{"axis"}); err != nil {
			return err
		}
		n.OpType = "Scatter"
		return nil
	case "CastLike":
		dt := elemType(n.Input(1))
		if dt == canonical.Undefined {
			return needShapes("the type of the target_type input is known",
				"CastLike does not exist before opset 15; it becomes Cast only when the type of %q is known", n.Input(1).Name)
		}
		b := newBuilder(sc, to)
		attrs := []*canonical.Attribute{canonical.IntAttr("to", int64(dt))}
		if a := n.Attr("saturate"); a != nil && to >= 19 {
			attrs = append(attrs, a)
		}
		return b.finish(b.op("Cast", []*canonical.Value{n.Input(0)}, attrs...))
	case "GreaterOrEqual", "LessOrEqual":
		return expandCompareOrEqual(sc, to)
	case "Celu":
		return expandCelu(sc, to)
	case "SwiGLU":
		return expandSwiGLU(sc, to)
	case "HardSwish":
		b := newBuilder(sc, to)
		x := n.Input(0)
		hs := b.op("HardSigmoid", []*canonical.Value{x}, canonical.FloatAttr("alpha", 1.0/6), canonical.FloatAttr("beta", 0.5))
		return b.finish(b.op("Mul", []*canonical.Value{x, hs}))
	case "Mish":
		b := newBuilder(sc, to)
		x := n.Input(0)
		t := b.op("Tanh", []*canonical.Value{b.op("Softplus", []*canonical.Value{x})})
		return b.finish(b.op("Mul", []*canonical.Value{x, t}))
	case "Swish":
		b := newBuilder(sc, to)
		x := n.Input(0)
		alpha := float64(n.AttrFloat("alpha", 1))
		in := x
		if alpha != 1 {
			in = b.op("Mul", []*canonical.Value{x, b.scalar(alpha)})
		}
		return b.finish(b.op("Mul", []*canonical.Value{x, b.op("Sigmoid", []*canonical.Value{in})}))
	case "ThresholdedRelu":
		b := newBuilder(sc, to)
		x := n.Input(0)
		gt := b.op("Greater", []*canonical.Value{x, b.scalar(float64(n.AttrFloat("alpha", 1)))})
		dt := b.dt
		if dt == canonical.Undefined {
			dt = canonical.Float
		}
		mask := b.op("Cast", []*canonical.Value{gt}, canonical.IntAttr("to", int64(dt)))
		return b.finish(b.op("Mul", []*canonical.Value{x, mask}))
	case "Gelu":
		if to < 9 && n.AttrString("approximate", "none") == "none" {
			return blocked("target opset 9 or later (Erf)", "Gelu needs Erf, which does not exist before opset 9")
		}
		b := newBuilder(sc, to)
		x := n.Input(0)
		var inner *canonical.Value
		if n.AttrString("approximate", "none") == "tanh" {
			x3 := b.op("Mul", []*canonical.Value{b.op("Mul", []*canonical.Value{x, x}), x})
			s := b.op("Add", []*canonical.Value{x, b.op("Mul", []*canonical.Value{x3, b.scalar(0.044715)})})
			inner = b.op("Tanh", []*canonical.Value{b.op("Mul", []*canonical.Value{s, b.scalar(math.Sqrt(2 / math.Pi))})})
		} else {
			inner = b.op("Erf", []*canonical.Value{b.op("Div", []*canonical.Value{x, b.scalar(math.Sqrt2)})})
		}
		onePlus := b.op("Add", []*canonical.Value{inner, b.scalar(1)})
		y := b.op("Mul", []*canonical.Value{b.op("Mul", []*canonical.Value{x, b.scalar(0.5)}), onePlus})
		return b.finish(y)
	case "LayerNormalization":
		return expandLayerNorm(sc, to)
	case "Attention":
		return expandAttention(sc, to)
	case "RotaryEmbedding":
		return expandRotary(sc, to)
	case "NegativeLogLikelihoodLoss":
		return expandNLL(sc, to)
	case "SoftmaxCrossEntropyLoss":
		return expandSCE(sc, to)
	case "RMSNormalization":
		return expandRMSNorm(sc, to)
	case "TensorScatter":
		return expandTensorScatter(sc, to)
	case "GroupNormalization":
		return expandGroupNorm(sc, to)
	case "Trilu":
		return expandTrilu(sc, to)
	}
	if handled, err := expandExtra(sc, to); handled {
		return err
	}
	return noExpansion(keep, "%s does not exist before opset %d and onnxconv has no expansion for it", n.OpType, sc.new.SinceVersion)
}

// expandCelu writes Celu as its function body, alpha*Elu(x/alpha), which
// every float type of Elu (float16, float, double) computes; bfloat16
// (allowed from Celu-28, not by Elu) is computed in float between Casts.
func expandCelu(sc *stepCtx, to int) error {
	n := sc.n
	b := newBuilder(sc, to)
	alpha := float64(n.AttrFloat("alpha", 1))
	x := n.Input(0)
	dt := elemType(x)
	if dt == canonical.BFloat16 {
		if to < 13 {
			return blocked("target opset 13 or later (Cast to/from bfloat16)", "bfloat16 Celu computes in float between Casts, and Cast handles bfloat16 from opset 13")
		}
		b.dt = canonical.Float
		x = b.op("Cast", []*canonical.Value{x}, canonical.IntAttr("to", int64(canonical.Float)))
	}
	y := b.op("Mul", []*canonical.Value{b.op("Elu", []*canonical.Value{b.op("Div", []*canonical.Value{x, b.scalar(alpha)})}), b.scalar(alpha)})
	if dt == canonical.BFloat16 {
		y = b.op("Cast", []*canonical.Value{y}, canonical.IntAttr("to", int64(canonical.BFloat16)))
	}
	return b.finish(y)
}

// expandSwiGLU writes SwiGLU-28 as Swish_alpha(A) * B with Swish as
// A * Sigmoid(alpha*A) at every opset: ONNX Runtime 1.30 has no Swish
// kernel (measured: "Could not find an implementation for Swish(24)").
func expandSwiGLU(sc *stepCtx, to int) error {
	n := sc.n
	b := newBuilder(sc, to)
	a, v := n.Input(0), n.Input(1)
	in := a
	if alpha := float64(n.AttrFloat("alpha", 1)); alpha != 1 {
		in = b.op("Mul", []*canonical.Value{a, b.scalar(alpha)})
	}
	gate := b.op("Mul", []*canonical.Value{a, b.op("Sigmoid", []*canonical.Value{in})})
	return b.finish(b.op("Mul", []*canonical.Value{gate, v}))
}

func expandCompareOrEqual(sc *stepCtx, to int) error {
	n := sc.n
	a, bb := n.Input(0), n.Input(1)
	strict := "Greater"
	if n.OpType == "LessOrEqual" {
		strict = "Less"
	}
	b := newBuilder(sc, to)
	dt := elemType(a)
	isFloat := dt == canonical.Float || dt == canonical.Double || dt == canonical.Float16 || dt == canonical.BFloat16
	if to >= 11 {
		// Or(strict, Equal) keeps NaN comparisons false.
		y := b.op("Or", []*canonical.Value{b.op(strict, []*canonical.Value{a, bb}), b.op("Equal", []*canonical.Value{a, bb})})
		return b.finish(y)
	}
	if isFloat || dt == canonical.Undefined {
		return blocked("target opset 11 or later", "%s on floating-point (or unknown) types needs Equal on floats, which exists from opset 11", n.OpType)
	}
	opposite := "Less"
	if strict == "Less" {
		opposite = "Greater"
	}
	y := b.op("Not", []*canonical.Value{b.op(opposite, []*canonical.Value{a, bb})})
	return b.finish(y)
}

// normAxes returns the axes from axis to the last one, negative when the
// rank is unknown (valid for ReduceMean from opset 11).
func normAxes(sc *stepCtx, axis int64, to int) ([]int64, int, bool, error) {
	r, known := rankOf(sc.n.Input(0))
	if !known {
		if axis >= 0 || to < 11 {
			return nil, 0, false, needShapes("the input's rank is known",
				"%s axis %d: the input's rank is needed to list the reduced axes", sc.n.OpType, axis)
		}
		var axes []int64
		for a := axis; a < 0; a++ {
			axes = append(axes, a)
		}
		return axes, 0, false, nil
	}
	a := axisValue(axis, r)
	if a < 0 || a >= int64(r) {
		return nil, 0, false, blocked("", "axis %d is out of range for rank %d", axis, r)
	}
	var axes []int64
	for x := a; x < int64(r); x++ {
		axes = append(axes, x)
	}
	return axes, r, true, nil
}

func expandLayerNorm(sc *stepCtx, to int) error {
	n := sc.n
	axes, _, _, err := normAxes(sc, n.AttrInt("axis", -1), to)
	if err != nil {
		return err
	}
	eps := float64(n.AttrFloat("epsilon", 1e-5))
	b := newBuilder(sc, to)
	x, scale, bias := n.Input(0), n.Input(1), n.Input(2)
	mean := b.reduce("ReduceMean", x, axes, true)
	d := b.op("Sub", []*canonical.Value{x, mean})
	variance := b.reduce("ReduceMean", b.op("Mul", []*canonical.Value{d, d}), axes, true)
	std := b.op("Sqrt", []*canonical.Value{b.op("Add", []*canonical.Value{variance, b.scalar(eps)})})
	y := b.op("Div", []*canonical.Value{d, std})
	y = b.op("Mul", []*canonical.Value{y, scale})
	if bias != nil {
		y = b.op("Add", []*canonical.Value{y, bias})
	}
	outs := []*canonical.Value{y}
	if n.Output(1) != nil {
		outs = append(outs, mean)
	}
	if n.Output(2) != nil {
		for len(outs) < 2 {
			outs = append(outs, nil)
		}
		outs = append(outs, b.op("Reciprocal", []*canonical.Value{std}))
	}
	return b.finish(outs...)
}

func expandRMSNorm(sc *stepCtx, to int) error {
	n := sc.n
	axes, _, _, err := normAxes(sc, n.AttrInt("axis", -1), to)
	if err != nil {
		return err
	}
	eps := float64(n.AttrFloat("epsilon", 1e-5))
	b := newBuilder(sc, to)
	x, scale := n.Input(0), n.Input(1)
	ms := b.reduce("ReduceMean", b.op("Mul", []*canonical.Value{x, x}), axes, true)
	rms := b.op("Sqrt", []*canonical.Value{b.op("Add", []*canonical.Value{ms, b.scalar(eps)})})
	y := b.op("Mul", []*canonical.Value{b.op("Div", []*canonical.Value{x, rms}), scale})
	return b.finish(y)
}

// expandGroupNorm expands GroupNormalization-21 (scale and bias per
// channel) into a reshape to [N, G, -1], a normalisation over the last
// axis, a reshape back and a per-channel affine transform.
func expandGroupNorm(sc *stepCtx, to int) error {
	n := sc.n
	if sc.new.SinceVersion != 21 {
		return noExpansion("convert the model to opset 21 first", "GroupNormalization-18 (per-group scale) has no expansion")
	}
	r, ok := rankOf(n.Input(0))
	if !ok || r < 3 {
		return needShapes("the input's rank is known", "GroupNormalization needs the input's rank (>= 3) to expand")
	}
	if to < 13 {
		return blocked("target opset 13 or later", "the expansion of GroupNormalization uses opset-13 forms")
	}
	g := n.AttrInt("num_groups", 0)
	eps := float64(n.AttrFloat("epsilon", 1e-5))
	b := newBuilder(sc, to)
	x, scale, bias := n.Input(0), n.Input(1), n.Input(2)
	grouped := b.op("Reshape", []*canonical.Value{x, b.constI([]int64{3}, 0, g, -1)})
	mean := b.reduce("ReduceMean", grouped, []int64{2}, true)
	d := b.op("Sub", []*canonical.Value{grouped, mean})
	variance := b.reduce("ReduceMean", b.op("Mul", []*canonical.Value{d, d}), []int64{2}, true)
	norm := b.op("Div", []*canonical.Value{d, b.op("Sqrt", []*canonical.Value{b.op("Add", []*canonical.Value{variance, b.scalar(eps)})})})
	back := b.op("Reshape", []*canonical.Value{norm, b.op("Shape", []*canonical.Value{x})})
	trailing := make([]int64, r-2)
	for i := range trailing {
		trailing[i] = int64(i + 1)
	}
	s := b.unsqueeze(scale, trailing...)
	bi := b.unsqueeze(bias, trailing...)
	y := b.op("Add", []*canonical.Value{b.op("Mul", []*canonical.Value{back, s}), bi})
	return b.finish(y)
}

// expandTrilu builds the triangle mask as a constant when the last two
// dims and k are known.
func expandTrilu(sc *stepCtx, to int) error {
	n := sc.n
	dims, ok := shapeOf(n.Input(0))
	if !ok || len(dims) < 2 {
		return needShapes("the input's shape is known", "Trilu needs the last two dims to build its mask")
	}
	k := int64(0)
	if kv := n.Input(1); kv != nil {
		t := constValue(kv)
		if t == nil {
			return blocked("make k a constant", "Trilu's k input %q must be constant to expand", kv.Name)
		}
		ks, err := tensorInts(t)
		if err != nil || len(ks) != 1 {
			return blocked("", "Trilu's k input %q: want one integer", kv.Name)
		}
		k = ks[0]
	}
	if to < 9 {
		return blocked("target opset 9 or later (Where)", "the expansion of Trilu uses Where")
	}
	upper := n.AttrInt("upper", 1) != 0
	rows, cols := dims[len(dims)-2], dims[len(dims)-1]
	mask := make([]byte, rows*cols)
	for i := int64(0); i < rows; i++ {
		for j := int64(0); j < cols; j++ {
			keep := j-i >= k
			if !upper {
				keep = j-i <= k
			}
			if keep {
				mask[i*cols+j] = 1
			}
		}
	}
	b := newBuilder(sc, to)
	mv, err := sc.constant("mask", canonical.NewTensor("", canonical.Bool, []int64{rows, cols}, mask))
	if err != nil {
		return err
	}
	if elemType(n.Input(0)) == canonical.Bool {
		// ONNX Runtime's CPU Where has no bool kernel: a bool triangle
		// is the input and the mask.
		return b.finish(b.op("And", []*canonical.Value{n.Input(0), mv}))
	}
	y := b.op("Where", []*canonical.Value{mv, n.Input(0), b.scalar(0)})
	return b.finish(y)
}
