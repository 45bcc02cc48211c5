package tflite

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	clayout "github.com/onnxconv/onnxconv/canonical/layout"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// Matrix products: FULLY_CONNECTED, BATCH_MATMUL.

func (c *converter) fullyConnected(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	opt, err := options[fb.FullyConnectedOptions](o, fb.BuiltinOptionsFullyConnectedOptions)
	if err != nil {
		return err
	}
	if opt.WeightsFormat() != fb.FullyConnectedOptionsWeightsFormatDEFAULT {
		return fmt.Errorf("weights format %s is not supported", opt.WeightsFormat())
	}
	xt, wt, yt := c.tensor(o.inputs[0]), c.tensor(o.inputs[1]), c.tensor(o.outputs[0])
	if len(wt.shape) != 2 || wt.shape[1] <= 0 || wt.shape[0] <= 0 {
		return fmt.Errorf("weights %q have shape %v, want static [units, depth]", wt.name, wt.shape)
	}
	units, depth := wt.shape[0], wt.shape[1]
	// int8: XNNPACK's integer sum and float32 requantization, exactly (exact8.go).
	if done, err := c.exactFC(o, opt.FusedActivationFunction()); done || err != nil {
		return err
	}
	var x, w string
	// An NCHW 4-D input flattened as a whole: permute the weight columns
	// instead of transposing the activation back to NHWC.
	if c.prefers(o.inputs[0]) == nchw && wt.data != nil && xt.shape[1] > 0 && xt.shape[2] > 0 && xt.shape[3] > 0 &&
		xt.shape[1]*xt.shape[2]*xt.shape[3] == depth {
		h, wd, ch := xt.shape[1], xt.shape[2], xt.shape[3]
		if x, err = c.floatValue(o.inputs[0], nchw); err != nil {
			return err
		}
		// W[u, h, w, c] -> W[u, c, h, w]
		tmp := *wt
		tmp.shape = []int64{units, h, wd, ch}
		data, _, err := canonical.TransposeBytes(wt.data, elemSize(wt.typ), tmp.shape, clayout.ToFirst(4))
		if err != nil {
			return err
		}
		tmp.data = data
		tmp.shape = []int64{units, depth}
		if w, err = c.weightFromTensor(&tmp, "_chw"); err != nil {
			return err
		}
	} else {
		if x, err = c.floatValue(o.inputs[0], native); err != nil {
			return err
		}
		if w, err = c.floatValue(o.inputs[1], native); err != nil {
			return err
		}
	}
	ins := []string{x, w}
	if b := c.in(o, 2); b >= 0 {
		bv, err := c.floatValue(b, native)
		if err != nil {
			return err
		}
		ins = append(ins, bv)
	}
	needFlat := !(len(xt.shape) == 2 && xt.shape[1] == depth)
	shapeSrc := ins[0] // the input before flattening
	outShape := yt.shape
	if len(outShape) == 0 {
		return fmt.Errorf("output %q is a scalar", yt.name)
	}
	if needFlat && isQuant(xt) && len(xt.q.scale) == 1 {
		// Flatten the quantized tensor and dequantize after: the Reshape
		// stays outside the QDQ unit, as ONNX Runtime's QDQ passes expect.
		lay := native
		if c.flt[layoutKey{int(o.inputs[0]), nchw}] == ins[0] {
			lay = nchw
		}
		src, err := c.rawValue(int(o.inputs[0]), lay)
		if err != nil {
			return err
		}
		flat := c.unique(c.base[o.inputs[0]] + "_flat")
		c.node("Reshape", []string{src, c.constI64(flat+"_shape", []int64{-1, depth})}, []string{flat})
		scale, zp, err := c.qparams(xt)
		if err != nil {
			return err
		}
		dq := c.unique(flat + "_dq")
		c.node("DequantizeLinear", []string{flat, scale, zp}, []string{dq})
		ins[0] = dq
		needFlat = false
	}
	return c.emit(o.outputs[0], native, opt.FusedActivationFunction(), func(y string) error {
		gemmOut := y
		if needFlat {
			flat := c.unique(y + "_flat_input")
			c.node("Reshape", []string{ins[0], c.constI64(flat+"_shape", []int64{-1, depth})}, []string{flat})
			ins[0] = flat
		}
		reshapeOut := len(outShape) != 2
		if reshapeOut {
			gemmOut = c.unique(y + "_2d")
		}
		c.node("Gemm", ins, []string{gemmOut}, canonical.IntAttr("transB", 1))
		if reshapeOut {
			// keep_num_dims: the input's leading dims, then units. One
			// dynamic dim becomes -1; more are read from the input's shape
			// (Reshape's 0 would copy the 2-D product's dims, not the
			// input's).
			shape := append([]int64(nil), outShape...)
			shape[len(shape)-1] = units
			dynamic := 0
			for i := range shape {
				if shape[i] < 0 {
					shape[i] = -1
					dynamic++
				}
			}
			var target string
			if dynamic <= 1 {
				target = c.constI64(y+"_shape", shape)
			} else {
				full := c.unique(y + "_input_shape")
				c.node("Shape", []string{shapeSrc}, []string{full})
				lead := c.unique(y + "_lead_shape")
				c.node("Slice", []string{full, c.constI64(lead+"_starts", []int64{0}), c.constI64(lead+"_ends", []int64{-1})}, []string{lead})
				target = c.unique(y + "_shape")
				c.node("Concat", []string{lead, c.constI64(y+"_units", []int64{units})}, []string{target}, canonical.IntAttr("axis", 0))
			}
			c.node("Reshape", []string{gemmOut, target}, []string{y})
		}
		return nil
	})
}

// weightFromTensor makes an initializer (plus DequantizeLinear) from a
// modified copy of a constant tensor.
func (c *converter) weightFromTensor(t *tensor, suffix string) (string, error) {
	dt, err := onnxType(t.typ)
	if err != nil {
		return "", err
	}
	name := c.addInit(c.base[t.index]+suffix, dt, t.shape, t.data)
	if !isQuant(t) {
		return name, nil
	}
	if t.typ == fb.TensorTypeINT64 {
		return "", fmt.Errorf("int64 weights are not supported")
	}
	scale, zp, err := c.qparams(t)
	if err != nil {
		return "", err
	}
	dq := c.unique(name + "_dq")
	var attrs []*canonical.Attribute
	if len(t.q.scale) > 1 {
		attrs = append(attrs, canonical.IntAttr("axis", int64(t.q.dim)))
	}
	c.node("DequantizeLinear", []string{name, scale, zp}, []string{dq}, attrs...)
	return dq, nil
}

func (c *converter) batchMatMul(o *operator) error {
	if err := needInputs(o, 2); err != nil {
		return err
	}
	opt, err := options[fb.BatchMatMulOptions](o, fb.BuiltinOptionsBatchMatMulOptions)
	if err != nil {
		return err
	}
	var ins []string
	for k, adj := range []bool{opt.AdjX(), opt.AdjY()} {
		v, err := c.floatValue(o.inputs[k], native)
		if err != nil {
			return err
		}
		r := len(c.tensor(o.inputs[k]).shape)
		if r < 2 {
			return fmt.Errorf("operand %d has rank %d", k, r)
		}
		if adj {
			perm := make([]int64, r)
			for i := range perm {
				perm[i] = int64(i)
			}
			perm[r-2], perm[r-1] = perm[r-1], perm[r-2]
			t := c.unique(v + "_adjoint")
			c.node("Transpose", []string{v}, []string{t}, canonical.IntsAttr("perm", perm...))
			v = t
		}
		ins = append(ins, v)
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		c.node("MatMul", ins, []string{y})
		return nil
	})
}
