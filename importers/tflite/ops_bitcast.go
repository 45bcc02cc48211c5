package tflite

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// BITCAST reinterprets the little-endian bytes of its input as another
// type: of the same width, the same shape; of a narrower type, one more
// axis of width ratio; of a wider type, the last axis (of that ratio)
// folded. ONNX's BitCast (opset 26, same widths only) is beyond the
// opsets the importer writes, so between integers of 32 bits or fewer
// the graph computes it exactly in int64 arithmetic: each input element
// as its unsigned value (Mod 2^bits), split into or joined from its
// parts (Div and Mod, or Mul and ReduceSum by powers of 2^bits), back to
// a signed value where the output is signed. A constant input of any type
// is folded. A float computed by the graph is refused: no ONNX op before
// opset 26 reads a float's bits.

// bitcastInt reports whether t is an integer type of 32 bits or fewer.
func bitcastInt(t fb.TensorType) bool {
	switch t {
	case fb.TensorTypeINT8, fb.TensorTypeUINT8, fb.TensorTypeINT16, fb.TensorTypeUINT16, fb.TensorTypeINT32, fb.TensorTypeUINT32:
		return true
	}
	return false
}

func (c *converter) bitcast(o *operator) error {
	if err := needInputs(o, 1); err != nil {
		return err
	}
	in, out := c.tensor(o.inputs[0]), c.tensor(o.outputs[0])
	si, so := int64(elemSize(in.typ)), int64(elemSize(out.typ))
	if si == 0 || so == 0 || in.typ == fb.TensorTypeBOOL || out.typ == fb.TensorTypeBOOL || in.typ == fb.TensorTypeINT4 || out.typ == fb.TensorTypeINT4 {
		return fmt.Errorf("BITCAST of %s to %s is not supported", in.typ, out.typ)
	}
	want := append([]int64(nil), in.shape...)
	switch {
	case si > so:
		want = append(want, si/so)
	case si < so:
		if len(want) == 0 || want[len(want)-1] != so/si {
			return fmt.Errorf("input %q of shape %v: a %s to %s BITCAST needs a last axis of %d", in.name, in.shape, in.typ, out.typ, so/si)
		}
		want = want[:len(want)-1]
	}
	if len(want) != len(out.shape) {
		return fmt.Errorf("output %q has shape %v, the BITCAST gives %v", out.name, out.shape, want)
	}
	for i := range want {
		if want[i] != out.shape[i] && want[i] >= 0 && out.shape[i] >= 0 {
			return fmt.Errorf("output %q has shape %v, the BITCAST gives %v", out.name, out.shape, want)
		}
	}
	odt, err := onnxType(out.typ)
	if err != nil {
		return err
	}
	if in.data != nil {
		for _, d := range out.shape {
			if d < 0 {
				return fmt.Errorf("output %q of a constant has a dynamic shape %v", out.name, out.shape)
			}
		}
		if numel(out.shape)*so != int64(len(in.data)) {
			return fmt.Errorf("constant %q holds %d bytes, output %q of shape %v needs %d", in.name, len(in.data), out.name, out.shape, numel(out.shape)*so)
		}
		return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
			c.node("Identity", []string{c.addInit(c.unique(y+"_bits"), odt, out.shape, in.data)}, []string{y})
			return nil
		})
	}
	if !bitcastInt(in.typ) || !bitcastInt(out.typ) {
		return fmt.Errorf("BITCAST of %s to %s needs ONNX BitCast (opset 26, beyond the importer's opset 23): only integers of 32 bits or fewer are computed", in.typ, out.typ)
	}
	x, err := c.rawValue(int(o.inputs[0]), native)
	if err != nil {
		return err
	}
	bi, bo := 8*si, 8*so
	return c.emit(o.outputs[0], native, fb.ActivationFunctionTypeNONE, func(y string) error {
		i64 := func(base string, v ...int64) string {
			return c.b.Number(y+"_"+base, canonical.Int64, []int64{int64(len(v))}, f64s(v)...)
		}
		scalar := func(base string, v int64) string { return c.b.Number(y+"_"+base, canonical.Int64, nil, float64(v)) }
		u := c.b.Op("Cast", y+"_i64", []string{x}, canonical.IntAttr("to", int64(canonical.Int64)))
		u = c.b.Op("Mod", y+"_unsigned", []string{u, scalar("in_range", 1<<bi)})
		last := c.constI64(c.unique(y+"_last_axis"), []int64{-1})
		switch {
		case si > so:
			pows := make([]int64, si/so)
			for j := range pows {
				pows[j] = 1 << (bo * int64(j))
			}
			p := c.b.Op("Div", y+"_parts", []string{c.b.Op("Unsqueeze", y+"_split", []string{u, last}), i64("powers", pows...)})
			u = c.b.Op("Mod", y+"_part_bits", []string{p, scalar("out_range", 1<<bo)})
		case si < so:
			pows := make([]int64, so/si)
			for j := range pows {
				pows[j] = 1 << (bi * int64(j))
			}
			p := c.b.Op("Mul", y+"_placed", []string{u, i64("powers", pows...)})
			u = c.b.Op("ReduceSum", y+"_joined", []string{p, last}, canonical.IntAttr("keepdims", 0))
		}
		if isSignedInt(out.typ) {
			h := scalar("half", 1<<(bo-1))
			u = c.b.Op("Sub", y+"_signed", []string{c.b.Op("Mod", y+"_wrapped", []string{c.b.Op("Add", y+"_offset", []string{u, h}), scalar("wrap", 1<<bo)}), h})
		}
		c.node("Cast", []string{u}, []string{y}, canonical.IntAttr("to", int64(odt)))
		return nil
	})
}

func isSignedInt(t fb.TensorType) bool {
	return t == fb.TensorTypeINT8 || t == fb.TensorTypeINT16 || t == fb.TensorTypeINT32 || t == fb.TensorTypeINT64
}

func f64s(v []int64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
