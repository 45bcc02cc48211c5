package tflite

import (
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// SEGMENT_SUM, UNSORTED_SEGMENT_{SUM,PROD,MAX,MIN} (ScatterND with a
// reduction into the fill value of empty segments) and UNIQUE: the TFLite
// layout kept (native).

// segment is SEGMENT_SUM and the UNSORTED_SEGMENT_* ops: data rows
// scattered by segment id (ids shaped as data's leading dims) into
// [segments, data dims after the ids'] filled with the reduction's
// identity, as TFLite fills empty segments.
func (c *converter) segment(o *operator) error {
	sorted := o.code == fb.BuiltinOperatorSEGMENT_SUM
	n := 3
	if sorted {
		n = 2
	}
	if err := needInputs(o, n); err != nil {
		return err
	}
	dt, err := c.elemType(o.inputs[0])
	if err != nil {
		return err
	}
	red, fill := "add", 0.0
	switch o.code {
	case fb.BuiltinOperatorUNSORTED_SEGMENT_PROD:
		red, fill = "mul", 1
	case fb.BuiltinOperatorUNSORTED_SEGMENT_MAX:
		red, fill = "max", lowest(dt)
	case fb.BuiltinOperatorUNSORTED_SEGMENT_MIN:
		red, fill = "min", -lowest(dt)
		if dt == canonical.Int32 {
			fill = math.MaxInt32
		}
	}
	need := 16
	if red == "max" || red == "min" {
		need = 18
	}
	if c.opts.Opset < need {
		return fmt.Errorf("ScatterND with reduction %s needs opset %d", red, need)
	}
	ids, err := c.int64Of(o.inputs[1])
	if err != nil {
		return err
	}
	k := int64(len(c.tensor(o.inputs[1]).shape))
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		var num string
		if sorted {
			mx := c.b.Op("ReduceMax", y+"_max_id", []string{ids}, canonical.IntAttr("keepdims", 0))
			last := c.b.Op("Add", y+"_last", []string{mx, c.i64(y+"_one", 1)})
			num = c.b.Op("Reshape", y+"_segments", []string{last, c.constI64(y+"_shape1", []int64{1})})
		} else {
			s, err := c.int64Of(o.inputs[2])
			if err != nil {
				return err
			}
			num = c.b.Op("Reshape", y+"_segments", []string{s, c.constI64(y+"_shape1", []int64{1})})
		}
		shape := c.b.Op("Shape", y+"_data_shape", []string{x})
		rest := c.b.Op("Slice", y+"_rest", []string{shape, c.constI64(y+"_k", []int64{k}), c.constI64(y+"_end", []int64{math.MaxInt64})})
		outShape := c.b.Op("Concat", y+"_out_shape", []string{num, rest}, canonical.IntAttr("axis", 0))
		init := c.b.Op("Expand", y+"_init", []string{c.b.Number(y+"_fill", dt, nil, fill), outShape})
		idx := c.b.Op("Unsqueeze", y+"_idx", []string{ids, c.constI64(y+"_axis", []int64{-1})})
		c.node("ScatterND", []string{init, idx, x}, []string{y}, canonical.StringAttr("reduction", red))
		return nil
	})
}

// lowest is the lowest finite value of a numeric type.
func lowest(dt canonical.DataType) float64 {
	switch dt {
	case canonical.Float:
		return -math.MaxFloat32
	case canonical.Int32:
		return math.MinInt32
	case canonical.Int8:
		return math.MinInt8
	case canonical.Int16:
		return math.MinInt16
	case canonical.Uint8, canonical.Uint16, canonical.Uint32:
		return 0
	}
	return -math.MaxFloat64
}

// unique is UNIQUE: the values in the order of their first occurrence and,
// for each input element, the index of its value.
func (c *converter) uniqueOp(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	if len(o.outputs) != 2 {
		return fmt.Errorf("%d outputs, want 2", len(o.outputs))
	}
	if len(c.tensor(o.inputs[0]).shape) != 1 {
		return fmt.Errorf("UNIQUE of a rank-%d input (TFLite takes 1-D)", len(c.tensor(o.inputs[0]).shape))
	}
	x, err := c.floatValue(o.inputs[0], native)
	if err != nil {
		return err
	}
	vals := c.output(o.outputs[0], native)
	inv := c.unique(c.base[o.outputs[1]] + "_i64")
	c.node("Unique", []string{x}, []string{vals, "", inv}, canonical.IntAttr("sorted", 0))
	if err := c.finish(o.outputs[0], native, vals); err != nil {
		return err
	}
	return c.castOut(o.outputs[1], inv)
}

// embeddingLookupSparse is EMBEDDING_LOOKUP_SPARSE: each weighted
// embedding row added (ScatterND) into the output row its sparse index
// names (all but the last coordinate), then divided by the row's weight
// sum (MEAN) or the root of its squared weights (SQRTN); empty rows zero.
func (c *converter) embeddingLookupSparse(o *operator) error {
	if err := needInputs(o, 5); err != nil {
		return err
	}
	opt, err := options[fb.EmbeddingLookupSparseOptions](o, fb.BuiltinOptionsEmbeddingLookupSparseOptions)
	if err != nil {
		return err
	}
	rt, vt := c.tensor(o.inputs[1]), c.tensor(o.inputs[4])
	if len(rt.shape) != 2 || rt.shape[1] < 1 || len(vt.shape) < 2 {
		return fmt.Errorf("indices %v (want [N, rank]) or embeddings %v (want rank 2 or more)", rt.shape, vt.shape)
	}
	r, e := rt.shape[1], len(vt.shape)-1
	ids, err := c.int64Of(o.inputs[0])
	if err != nil {
		return err
	}
	rows, err := c.int64Of(o.inputs[1])
	if err != nil {
		return err
	}
	dense, err := c.int64Of(o.inputs[2])
	if err != nil {
		return err
	}
	w, err := c.floatValue(o.inputs[3], native)
	if err != nil {
		return err
	}
	vals, err := c.floatValue(o.inputs[4], native)
	if err != nil {
		return err
	}
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		lead := c.b.Op("Slice", y+"_rows", []string{rows, c.constI64(y+"_zero", []int64{0}), c.constI64(y+"_rank_1", []int64{r - 1}), c.constI64(y+"_axis1", []int64{1})})
		outer := c.b.Op("Slice", y+"_outer", []string{dense, c.constI64(y+"_zero0", []int64{0}), c.constI64(y+"_rank_1b", []int64{r - 1})})
		inner := c.b.Op("Slice", y+"_inner", []string{c.b.Op("Shape", y+"_emb_shape", []string{vals}), c.constI64(y+"_one", []int64{1}), c.constI64(y+"_end", []int64{math.MaxInt64})})
		trail := make([]int64, e)
		for i := range trail {
			trail[i] = int64(-1 - i)
		}
		wcol := c.b.Op("Unsqueeze", y+"_w", []string{w, c.constI64(y+"_trail", trail)})
		emb := c.b.Op("Mul", y+"_weighted", []string{c.b.Op("Gather", y+"_emb", []string{vals, ids}, canonical.IntAttr("axis", 0)), wcol})
		zero := c.scalarF32(c.unique(y+"_zero_f"), 0)
		sum := c.b.Op("ScatterND", y+"_sum", []string{
			c.b.Op("Expand", y+"_zeros", []string{zero, c.b.Op("Concat", y+"_shape", []string{outer, inner}, canonical.IntAttr("axis", 0))}),
			lead, emb}, canonical.StringAttr("reduction", "add"))
		if opt.Combiner() == fb.CombinerTypeSUM {
			c.node("Identity", []string{sum}, []string{y})
			return nil
		}
		ws := w
		if opt.Combiner() == fb.CombinerTypeSQRTN {
			ws = c.b.Op("Mul", y+"_w2", []string{w, w})
		}
		den := c.b.Op("ScatterND", y+"_den", []string{c.b.Op("Expand", y+"_den_zeros", []string{zero, outer}), lead, ws}, canonical.StringAttr("reduction", "add"))
		if opt.Combiner() == fb.CombinerTypeSQRTN {
			den = c.b.Op("Sqrt", y+"_den_sqrt", []string{den})
		}
		den = c.b.Op("Unsqueeze", y+"_den_col", []string{den, c.constI64(y+"_trail2", trail)})
		empty := c.b.Op("Equal", y+"_empty", []string{den, zero})
		safe := c.b.Op("Where", y+"_den_safe", []string{empty, c.scalarF32(c.unique(y+"_one_f"), 1), den})
		c.node("Div", []string{sum, safe}, []string{y})
		return nil
	})
}
