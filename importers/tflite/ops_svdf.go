package tflite

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// svdf is SVDF as TFLite's reference kernels compute it: float
// (EvalFloatSVDF), hybrid (EvalHybridSVDF: float input, state and output,
// int8 weights; see hybridFeature) and integer (EvalIntegerSVDF, see
// svdfInteger). Float: the state [batch, filters*memory] seen as [batch, filters,
// memory] moves one step left, the newest column is input x
// weights_featureᵀ; each filter's row is weighted by weights_time and
// summed, then groups of rank filters are summed into units, bias and the
// fused activation added. The state is a variable tensor: the updated value
// becomes the tensor's value for the ops after this one (the ONNX graph
// computes one invocation, from the state's initial value).
func (c *converter) svdf(o *operator) error {
	if err := needInputs(o, 3); err != nil {
		return err
	}
	if len(o.inputs) < 5 || o.inputs[4] < 0 {
		return fmt.Errorf("has no activation state input (input 4)")
	}
	opt, err := options[fb.SVDFOptions](o, fb.BuiltinOptionsSVDFOptions)
	if err != nil {
		return err
	}
	xt, wft, wtt, st := c.tensor(o.inputs[0]), c.tensor(o.inputs[1]), c.tensor(o.inputs[2]), c.tensor(o.inputs[4])
	kind, err := c.svdfKind(o, opt)
	if err != nil {
		return err
	}
	if len(wft.shape) != 2 || len(wtt.shape) != 2 || len(xt.shape) != 2 || len(st.shape) != 2 {
		return fmt.Errorf("input %v, weights_feature %v, weights_time %v, state %v: want rank 2 each", xt.shape, wft.shape, wtt.shape, st.shape)
	}
	filters, memory, rank := wft.shape[0], wtt.shape[1], int64(opt.Rank())
	if filters <= 0 || memory <= 0 || rank <= 0 || filters%rank != 0 || wtt.shape[0] != filters {
		return fmt.Errorf("weights_feature %v, weights_time %v and rank %d do not fit", wft.shape, wtt.shape, rank)
	}
	if st.shape[1] >= 0 && st.shape[1] != filters*memory {
		return fmt.Errorf("state %v, want [batch, %d]", st.shape, filters*memory)
	}
	units := filters / rank
	if kind == svdfInteger {
		return c.svdfInteger(o, filters, memory, rank)
	}
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	var wt string
	if kind == svdfHybrid && isQuant(wtt) {
		// TFLite dequantizes int8 time weights once (w * scale in float).
		if wt, err = c.dequantConst(wtt); err != nil {
			return err
		}
	} else if wt, err = c.floatValue(o.inputs[2], native); err != nil {
		return err
	}
	state, err := c.floatValue(o.inputs[4], native)
	if err != nil {
		return err
	}
	var bias string
	if b := c.in(o, 3); b >= 0 {
		if bias, err = c.floatValue(b, native); err != nil {
			return err
		}
	}
	y0 := c.base[o.outputs[0]]
	s3 := c.unique(y0 + "_state_3d")
	c.node("Reshape", []string{state, c.constI64(s3+"_shape", []int64{-1, filters, memory})}, []string{s3})
	old := c.unique(y0 + "_state_older")
	c.node("Slice", []string{s3, c.constI64(old+"_starts", []int64{1}), c.constI64(old+"_ends", []int64{memory}), c.constI64(old+"_axes", []int64{2})}, []string{old})
	var feat string
	if kind == svdfHybrid {
		if feat, err = c.hybridFeature(x, wft, y0); err != nil {
			return err
		}
	} else {
		wf, err := c.floatValue(o.inputs[1], native)
		if err != nil {
			return err
		}
		feat = c.unique(y0 + "_feature")
		c.node("Gemm", []string{x, wf}, []string{feat}, canonical.IntAttr("transB", 1))
	}
	feat3 := c.unique(y0 + "_feature_3d")
	c.node("Unsqueeze", []string{feat, c.constI64(feat3+"_axes", []int64{2})}, []string{feat3})
	next := c.unique(y0 + "_state_next_3d")
	c.node("Concat", []string{old, feat3}, []string{next}, canonical.IntAttr("axis", 2))
	weighted := c.unique(y0 + "_time_weighted")
	c.node("Mul", []string{next, wt}, []string{weighted})
	perFilter := c.unique(y0 + "_per_filter")
	c.node("ReduceSum", []string{weighted, c.constI64(perFilter+"_axes", []int64{2})}, []string{perFilter}, canonical.IntAttr("keepdims", 0))
	grouped := c.unique(y0 + "_grouped")
	c.node("Reshape", []string{perFilter, c.constI64(grouped+"_shape", []int64{-1, units, rank})}, []string{grouped})

	// The new state: the tensor's value from here on.
	nextState := c.unique(c.base[o.inputs[4]] + "_next")
	c.node("Reshape", []string{next, c.constI64(nextState+"_shape", []int64{-1, filters * memory})}, []string{nextState})
	c.raw[layoutKey{int(o.inputs[4]), native}] = nextState
	delete(c.raw, layoutKey{int(o.inputs[4]), nchw})
	delete(c.flt, layoutKey{int(o.inputs[4]), native})

	return c.emit(o.outputs[0], native, opt.FusedActivationFunction(), func(y string) error {
		sum := y
		if bias != "" {
			sum = c.unique(y + "_no_bias")
		}
		c.node("ReduceSum", []string{grouped, c.constI64(y+"_axes", []int64{2})}, []string{sum}, canonical.IntAttr("keepdims", 0))
		if bias != "" {
			c.node("Add", []string{sum, bias}, []string{y})
		}
		return nil
	})
}
