package tflite

import (
	"encoding/binary"
	"fmt"
	"math"

	flatbuffers "github.com/google/flatbuffers/go"

	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

type initer interface {
	Init(buf []byte, i flatbuffers.UOffsetT)
}

// options decodes an operator's builtin options of the expected union type.
// An operator without options gets an empty table, so every field reads as
// its schema default.
func options[T any, P interface {
	*T
	initer
}](o *operator, want fb.BuiltinOptions) (P, error) {
	p := P(new(T))
	got := o.raw.BuiltinOptionsType()
	if got == want {
		var tab flatbuffers.Table
		if o.raw.BuiltinOptions(&tab) {
			p.Init(tab.Bytes, tab.Pos)
			return p, nil
		}
	} else if got != fb.BuiltinOptionsNONE {
		return nil, fmt.Errorf("builtin options are %s, want %s", got, want)
	}
	return emptyOptions[T, P](), nil
}

// emptyOptions is an options table without fields: each reads as its
// schema default.
func emptyOptions[T any, P interface {
	*T
	initer
}]() P {
	p := P(new(T))
	b := flatbuffers.NewBuilder(16)
	b.StartObject(0)
	end := b.EndObject()
	b.Finish(end)
	buf := b.FinishedBytes()
	p.Init(buf, flatbuffers.GetUOffsetT(buf))
	return p
}

// options2 decodes an operator's builtin_options_2 (the StableHLO
// builtins' options) of the expected union type; absent options read as
// the schema defaults.
func options2[T any, P interface {
	*T
	initer
}](o *operator, want fb.BuiltinOptions2) (P, error) {
	got := o.raw.BuiltinOptions2Type()
	if got == want {
		var tab flatbuffers.Table
		if o.raw.BuiltinOptions2(&tab) {
			p := P(new(T))
			p.Init(tab.Bytes, tab.Pos)
			return p, nil
		}
	} else if got != fb.BuiltinOptions2NONE {
		return nil, fmt.Errorf("builtin options 2 are %s, want %s", got, want)
	}
	return emptyOptions[T, P](), nil
}

// ---- reading constant tensors ---------------------------------------------

// constInts reads an integer constant tensor (int32 or int64).
func (c *converter) constInts(idx int32) ([]int64, error) {
	if idx < 0 {
		return nil, fmt.Errorf("missing constant input")
	}
	t := c.tensor(idx)
	if t.data == nil {
		return nil, fmt.Errorf("input %q must be a constant", t.name)
	}
	switch t.typ {
	case fb.TensorTypeINT32:
		out := make([]int64, len(t.data)/4)
		for i := range out {
			out[i] = int64(int32(binary.LittleEndian.Uint32(t.data[4*i:])))
		}
		return out, nil
	case fb.TensorTypeINT64:
		out := make([]int64, len(t.data)/8)
		for i := range out {
			out[i] = int64(binary.LittleEndian.Uint64(t.data[8*i:]))
		}
		return out, nil
	}
	return nil, fmt.Errorf("constant %q is %s, want INT32 or INT64", t.name, t.typ)
}

// constFloats reads a constant as float32 values, dequantizing if needed.
func (c *converter) constFloats(idx int32) ([]float32, error) {
	t := c.tensor(idx)
	if t.data == nil {
		return nil, fmt.Errorf("input %q must be a constant", t.name)
	}
	switch t.typ {
	case fb.TensorTypeFLOAT32:
		out := make([]float32, len(t.data)/4)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.data[4*i:]))
		}
		return out, nil
	case fb.TensorTypeINT8, fb.TensorTypeUINT8, fb.TensorTypeINT16, fb.TensorTypeINT32:
		if t.q == nil || len(t.q.scale) != 1 {
			break
		}
		es := elemSize(t.typ)
		out := make([]float32, len(t.data)/es)
		for i := range out {
			var v int64
			switch t.typ {
			case fb.TensorTypeINT8:
				v = int64(int8(t.data[i]))
			case fb.TensorTypeUINT8:
				v = int64(t.data[i])
			case fb.TensorTypeINT16:
				v = int64(int16(binary.LittleEndian.Uint16(t.data[2*i:])))
			case fb.TensorTypeINT32:
				v = int64(int32(binary.LittleEndian.Uint32(t.data[4*i:])))
			}
			out[i] = float32(float64(v-t.q.zp[0]) * float64(t.q.scale[0]))
		}
		return out, nil
	}
	return nil, fmt.Errorf("constant %q of type %s cannot be read as float", t.name, t.typ)
}

func (c *converter) in(o *operator, i int) int32 {
	if i < len(o.inputs) {
		return o.inputs[i]
	}
	return -1
}

func needInputs(o *operator, n int) error {
	if len(o.inputs) < n {
		return fmt.Errorf("has %d inputs, needs at least %d", len(o.inputs), n)
	}
	for i := 0; i < n; i++ {
		if o.inputs[i] < 0 {
			return fmt.Errorf("required input %d is omitted", i)
		}
	}
	if len(o.outputs) < 1 {
		return fmt.Errorf("has no outputs")
	}
	return nil
}
