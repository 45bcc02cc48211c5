package infer

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

type dim = canonical.Dim

func kd(v int64) dim { return dim{Value: v, Known: true} }

// shape is a tensor shape; ranked is false when even the rank is unknown.
type shape struct {
	dims   []dim
	ranked bool
}

func ranked(dims []dim) shape { return shape{dims: dims, ranked: true} }

var unranked = shape{}

func knownShape(ds []int64) shape {
	out := make([]dim, len(ds))
	for i, d := range ds {
		out[i] = kd(d)
	}
	return ranked(out)
}

func (s shape) rank() int { return len(s.dims) }

func tensorTP(dt canonical.DataType, s shape) *onnxpb.TypeProto {
	et := int32(dt)
	tt := &onnxpb.TypeProto_Tensor{ElemType: &et}
	if s.ranked {
		tt.Shape = &onnxpb.TensorShapeProto{Dim: make([]*onnxpb.TensorShapeProto_Dimension, 0, len(s.dims))}
		for _, d := range s.dims {
			tt.Shape.Dim = append(tt.Shape.Dim, dimProto(d))
		}
	}
	return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: tt}}
}

func dimProto(d dim) *onnxpb.TensorShapeProto_Dimension {
	switch {
	case d.Known:
		return &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d.Value}}
	case d.Param != "":
		return &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: d.Param}}
	}
	return &onnxpb.TensorShapeProto_Dimension{}
}

func seqTP(elem *onnxpb.TypeProto) *onnxpb.TypeProto {
	return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_SequenceType{SequenceType: &onnxpb.TypeProto_Sequence{ElemType: elem}}}
}

func optTP(elem *onnxpb.TypeProto) *onnxpb.TypeProto {
	return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_OptionalType{OptionalType: &onnxpb.TypeProto_Optional{ElemType: elem}}}
}

func mapTP(key canonical.DataType, val *onnxpb.TypeProto) *onnxpb.TypeProto {
	k := int32(key)
	return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_MapType{MapType: &onnxpb.TypeProto_Map{KeyType: &k, ValueType: val}}}
}

// tensorOf returns the element type and shape of a tensor type.
func tensorOf(t *onnxpb.TypeProto) (canonical.DataType, shape, bool) {
	dt, dims, has, ok := canonical.TensorTypeOf(t)
	if !ok {
		return 0, unranked, false
	}
	if !has {
		return dt, unranked, true
	}
	if dims == nil {
		dims = []dim{}
	}
	return dt, ranked(dims), true
}

// parseTypeStr parses "tensor(float)", "seq(tensor(int64))", ... into a
// TypeProto without shape.
func parseTypeStr(s string) *onnxpb.TypeProto {
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return nil
	}
	kind, inner := s[:open], s[open+1:len(s)-1]
	switch kind {
	case "tensor":
		dt, ok := dtypeByName(inner)
		if !ok {
			return nil
		}
		return tensorTP(dt, unranked)
	case "seq":
		if e := parseTypeStr(inner); e != nil {
			return seqTP(e)
		}
	case "optional":
		if e := parseTypeStr(inner); e != nil {
			return optTP(e)
		}
	case "map":
		k, v, ok := strings.Cut(inner, ",")
		if !ok {
			return nil
		}
		kt, ok := dtypeByName(strings.TrimSpace(k))
		vt := parseTypeStr(strings.TrimSpace(v))
		if !ok || vt == nil {
			if dt, ok2 := dtypeByName(strings.TrimSpace(v)); ok2 && ok {
				vt = tensorTP(dt, unranked)
			} else {
				return nil
			}
		}
		return mapTP(kt, vt)
	}
	return nil
}

func dtypeByName(s string) (canonical.DataType, bool) {
	v, ok := onnxpb.TensorProto_DataType_value[strings.ToUpper(s)]
	return canonical.DataType(v), ok
}

func typeString(t *onnxpb.TypeProto) string {
	switch x := t.GetValue().(type) {
	case *onnxpb.TypeProto_TensorType:
		dt, s, _ := tensorOf(t)
		name := strings.ToLower(dt.String())
		if !s.ranked {
			return "tensor(" + name + ")"
		}
		parts := make([]string, len(s.dims))
		for i, d := range s.dims {
			parts[i] = dimString(d)
		}
		return fmt.Sprintf("tensor(%s)[%s]", name, strings.Join(parts, ","))
	case *onnxpb.TypeProto_SequenceType:
		return "seq(" + typeString(x.SequenceType.ElemType) + ")"
	case *onnxpb.TypeProto_OptionalType:
		return "optional(" + typeString(x.OptionalType.ElemType) + ")"
	case *onnxpb.TypeProto_MapType:
		return fmt.Sprintf("map(%s, %s)", strings.ToLower(canonical.DataType(x.MapType.GetKeyType()).String()), typeString(x.MapType.ValueType))
	case *onnxpb.TypeProto_SparseTensorType:
		return "sparse_tensor(" + strings.ToLower(canonical.DataType(x.SparseTensorType.GetElemType()).String()) + ")"
	}
	return "?"
}

func dimString(d dim) string {
	switch {
	case d.Known:
		return fmt.Sprint(d.Value)
	case d.Param != "":
		return d.Param
	}
	return "?"
}

// mergeDim combines two facts about one dim: a known value wins over a
// symbol, a symbol over unknown. conflict is true for two different known
// values.
func mergeDim(a, b dim) (dim, bool) {
	switch {
	case a.Known && b.Known:
		return a, a.Value != b.Value
	case a.Known:
		return a, false
	case b.Known:
		return b, false
	case a.Param != "":
		return a, false
	}
	return b, false
}

func mergeShape(a, b shape) (shape, string) {
	if !a.ranked {
		return b, ""
	}
	if !b.ranked {
		return a, ""
	}
	if len(a.dims) != len(b.dims) {
		return a, fmt.Sprintf("rank %d vs %d", len(a.dims), len(b.dims))
	}
	out := make([]dim, len(a.dims))
	for i := range a.dims {
		d, bad := mergeDim(a.dims[i], b.dims[i])
		if bad {
			return a, fmt.Sprintf("dim %d is %d vs %d", i, a.dims[i].Value, b.dims[i].Value)
		}
		out[i] = d
	}
	return ranked(out), ""
}

// mergeType merges declared type a with inferred type b; a's known facts
// win, b fills the gaps.
func mergeType(a, b *onnxpb.TypeProto) (*onnxpb.TypeProto, string) {
	switch x := a.GetValue().(type) {
	case *onnxpb.TypeProto_TensorType:
		if b.GetTensorType() == nil {
			return a, "kind differs"
		}
		adt, as, _ := tensorOf(a)
		bdt, bs, _ := tensorOf(b)
		dt := adt
		if dt == 0 {
			dt = bdt
		} else if bdt != 0 && bdt != adt {
			return a, fmt.Sprintf("element type %v vs %v", adt, bdt)
		}
		s, c := mergeShape(as, bs)
		if c != "" {
			return a, c
		}
		t := tensorTP(dt, s)
		// Keep denotations of the declared type.
		t.Denotation = a.Denotation
		if x.TensorType.Shape != nil {
			for i, d := range x.TensorType.Shape.Dim {
				if d.Denotation != nil && i < len(t.GetTensorType().Shape.Dim) {
					t.GetTensorType().Shape.Dim[i].Denotation = d.Denotation
				}
			}
		}
		return t, ""
	case *onnxpb.TypeProto_SequenceType:
		bs := b.GetSequenceType()
		if bs == nil {
			return a, "kind differs"
		}
		if x.SequenceType.ElemType == nil {
			return b, ""
		}
		if bs.ElemType == nil {
			return a, ""
		}
		e, c := mergeType(x.SequenceType.ElemType, bs.ElemType)
		return seqTP(e), c
	case *onnxpb.TypeProto_OptionalType:
		bo := b.GetOptionalType()
		if bo == nil {
			return a, "kind differs"
		}
		if x.OptionalType.ElemType == nil {
			return b, ""
		}
		if bo.ElemType == nil {
			return a, ""
		}
		e, c := mergeType(x.OptionalType.ElemType, bo.ElemType)
		return optTP(e), c
	case nil:
		return b, ""
	}
	return a, ""
}

// cval is a (partially) known tensor value: integer and bool elements as
// dims (known or symbolic), floats as float64, strings as bytes.
type cval struct {
	dt    canonical.DataType
	shape []int64
	ints  []dim
	fl    []float64
}

const maxConstElems = 1024

// int64Tensor returns c as an int64 tensor when it is an integer value
// whose elements are all known, or nil.
func (c *cval) int64Tensor(name string) *canonical.Tensor {
	if c == nil || !isIntType(c.dt) || c.dt == canonical.Bool || c.ints == nil {
		return nil
	}
	n := int64(1)
	for _, d := range c.shape {
		n *= d
	}
	if n != int64(len(c.ints)) {
		return nil
	}
	raw := make([]byte, 0, 8*len(c.ints))
	for _, d := range c.ints {
		if !d.Known {
			return nil
		}
		raw = binary.LittleEndian.AppendUint64(raw, uint64(d.Value))
	}
	return canonical.NewTensor(name, canonical.Int64, append([]int64(nil), c.shape...), raw)
}

func isIntType(dt canonical.DataType) bool {
	switch dt {
	case canonical.Int8, canonical.Int16, canonical.Int32, canonical.Int64,
		canonical.Uint8, canonical.Uint16, canonical.Uint32, canonical.Uint64, canonical.Bool:
		return true
	}
	return false
}

func isFloatType(dt canonical.DataType) bool {
	switch dt {
	case canonical.Float, canonical.Double, canonical.Float16, canonical.BFloat16:
		return true
	}
	return false
}

func (c *cval) numel() int {
	if c.ints != nil {
		return len(c.ints)
	}
	return len(c.fl)
}

// allKnown returns the int elements when all are known.
func (c *cval) allKnown() ([]int64, bool) {
	if c == nil || c.ints == nil && c.fl == nil {
		return nil, false
	}
	if c.ints == nil {
		out := make([]int64, len(c.fl))
		for i, f := range c.fl {
			out[i] = int64(f)
		}
		return out, true
	}
	out := make([]int64, len(c.ints))
	for i, d := range c.ints {
		if !d.Known {
			return nil, false
		}
		out[i] = d.Value
	}
	return out, true
}

func (c *cval) floats() ([]float64, bool) {
	if c == nil {
		return nil, false
	}
	if c.fl != nil || c.ints == nil {
		return c.fl, c.fl != nil || c.numel() == 0
	}
	out := make([]float64, len(c.ints))
	for i, d := range c.ints {
		if !d.Known {
			return nil, false
		}
		out[i] = float64(d.Value)
	}
	return out, true
}

func intCval(dt canonical.DataType, shp []int64, v []dim) *cval {
	if v == nil {
		v = []dim{}
	}
	return &cval{dt: dt, shape: shp, ints: v}
}

// constFromTensor decodes a small numeric tensor.
func constFromTensor(t *canonical.Tensor) *cval {
	n, err := t.NumElements()
	if err != nil || n > maxConstElems {
		return nil
	}
	shp := append([]int64{}, t.Dims...)
	if t.DataType == canonical.String {
		return nil
	}
	b, err := t.Bytes()
	if err != nil {
		return nil
	}
	vals, ints, ok := decode(t.DataType, b, int(n))
	if !ok {
		return nil
	}
	if ints != nil {
		ds := make([]dim, len(ints))
		for i, x := range ints {
			ds[i] = kd(x)
		}
		return intCval(t.DataType, shp, ds)
	}
	if vals == nil {
		vals = []float64{}
	}
	return &cval{dt: t.DataType, shape: shp, fl: vals}
}
