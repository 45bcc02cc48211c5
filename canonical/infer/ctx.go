package infer

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/onnxspec"
)

// nctx is the inference context of one node.
type nctx struct {
	inf     *inferrer
	n       *canonical.Node
	s       *onnxspec.Schema
	ver     int
	path    string
	opsetOf func(string) int64
	out     []*onnxpb.TypeProto
	consts  []*cval
	seqs    [][]*onnxpb.TypeProto
	err     error
	failed  bool
}

func (c *nctx) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if c.inf.opts.Strict && c.err == nil {
		c.err = fmt.Errorf("infer: %s: node %s: %s", c.path, c.n, msg)
	}
	c.failed = true
	c.inf.issue(c.path, c.n, msg)
}

func (c *nctx) nin() int { return len(c.n.Inputs) }

func (c *nctx) in(i int) *canonical.Value { return c.n.Input(i) }

func (c *nctx) has(i int) bool { return c.n.Input(i) != nil }

func (c *nctx) inType(i int) *onnxpb.TypeProto {
	if v := c.in(i); v != nil {
		return v.Type
	}
	return nil
}

// t returns the element type and shape of tensor input i.
func (c *nctx) t(i int) (canonical.DataType, shape) {
	dt, s, _ := tensorOf(c.inType(i))
	return dt, s
}

func (c *nctx) shp(i int) shape { _, s := c.t(i); return s }

func (c *nctx) dt(i int) canonical.DataType { dt, _ := c.t(i); return dt }

// cv returns the known value of input i: a constant, or an empty tensor
// whose shape says it has no elements.
func (c *nctx) cv(i int) *cval {
	v := c.in(i)
	if v == nil {
		return nil
	}
	if k := c.inf.consts[v]; k != nil {
		return k
	}
	return emptyValue(v.Type)
}

// emptyValue returns the value of a tensor type with a zero-sized dim.
func emptyValue(t *onnxpb.TypeProto) *cval {
	dt, s, ok := tensorOf(t)
	if !ok || !s.ranked || dt == 0 {
		return nil
	}
	dims := make([]int64, s.rank())
	empty := false
	for i, d := range s.dims {
		if !d.Known {
			return nil
		}
		dims[i] = d.Value
		empty = empty || d.Value == 0
	}
	if !empty {
		return nil
	}
	if isFloatType(dt) {
		return &cval{dt: dt, shape: dims, fl: []float64{}}
	}
	return intCval(dt, dims, nil)
}

// ints returns input i as known int64 values.
func (c *nctx) ints(i int) ([]int64, bool) { return c.cv(i).allKnown() }

func (c *nctx) setType(i int, t *onnxpb.TypeProto) {
	if i < len(c.out) && t != nil {
		c.out[i] = t
	}
}

// set sets output i to a tensor of shape s with element type dt (or the
// schema-derived type when dt is 0).
func (c *nctx) set(i int, dt canonical.DataType, s shape) {
	if i >= len(c.out) {
		return
	}
	if dt == 0 {
		dt = c.outDT(i)
	}
	c.out[i] = tensorTP(dt, s)
}

// setShape sets output i's shape with its schema-derived element type.
func (c *nctx) setShape(i int, s shape) { c.set(i, 0, s) }

func (c *nctx) setConst(i int, v *cval) {
	if v == nil || v.numel() > maxConstElems {
		return
	}
	if c.consts == nil {
		c.consts = make([]*cval, len(c.out))
	}
	if i < len(c.consts) {
		c.consts[i] = v
	}
}

func (c *nctx) attrI(name string, def int64) int64 { return c.n.AttrInt(name, def) }
func (c *nctx) attrF(name string, def float32) float32 {
	return c.n.AttrFloat(name, def)
}
func (c *nctx) attrInts(name string) []int64  { return c.n.AttrInts(name, nil) }
func (c *nctx) attrS(name, def string) string { return c.n.AttrString(name, def) }
func (c *nctx) hasAttr(name string) bool      { return c.n.Attr(name) != nil }

// outDT derives output i's element type from the schema: a concrete type,
// or the type parameter as bound by an input.
func (c *nctx) outDT(i int) canonical.DataType {
	t := c.schemaOut(i)
	if dt, _, ok := tensorOf(t); ok {
		return dt
	}
	return 0
}

// schemaOut returns output i's type (without shape) from the schema.
func (c *nctx) schemaOut(i int) *onnxpb.TypeProto {
	if c.s == nil {
		return nil
	}
	f, ok := formalAt(c.s.Outputs, i)
	if !ok {
		return nil
	}
	if _, isParam := c.s.TypeConstraint(f.TypeStr); !isParam {
		return parseTypeStr(f.TypeStr)
	}
	for j, v := range c.n.Inputs {
		if v == nil || v.Type == nil {
			continue
		}
		fi, ok := formalAt(c.s.Inputs, j)
		if ok && fi.TypeStr == f.TypeStr {
			return stripShape(v.Type)
		}
	}
	if tc, ok := c.s.TypeConstraint(f.TypeStr); ok && len(tc.Allowed) == 1 {
		return parseTypeStr(tc.Allowed[0])
	}
	return nil
}

func stripShape(t *onnxpb.TypeProto) *onnxpb.TypeProto {
	if dt, _, ok := tensorOf(t); ok {
		return tensorTP(dt, unranked)
	}
	return t
}

func formalAt(fs []onnxspec.FormalParameter, i int) (onnxspec.FormalParameter, bool) {
	if i < len(fs) {
		return fs[i], true
	}
	if len(fs) > 0 && fs[len(fs)-1].Option == onnxspec.Variadic {
		return fs[len(fs)-1], true
	}
	return onnxspec.FormalParameter{}, false
}

// schemaTypes fills the outputs a handler left unset with the element type
// the schema gives them (shape unknown).
func (c *nctx) schemaTypes() {
	for i := range c.out {
		if c.out[i] != nil {
			// Fill a missing element type.
			if dt, s, ok := tensorOf(c.out[i]); ok && dt == 0 {
				if d := c.outDT(i); d != 0 {
					c.out[i] = tensorTP(d, s)
				}
			}
			continue
		}
		if t := c.schemaOut(i); t != nil {
			c.out[i] = t
		}
	}
}

// decode turns packed little-endian data into float64s (float types) or
// int64s (integer and bool types).
func decode(dt canonical.DataType, b []byte, n int) ([]float64, []int64, bool) {
	le := binary.LittleEndian
	switch dt {
	case canonical.Float:
		out := make([]float64, n)
		for i := range out {
			out[i] = float64(math.Float32frombits(le.Uint32(b[4*i:])))
		}
		return out, nil, true
	case canonical.Double:
		out := make([]float64, n)
		for i := range out {
			out[i] = math.Float64frombits(le.Uint64(b[8*i:]))
		}
		return out, nil, true
	case canonical.Float16:
		out := make([]float64, n)
		for i := range out {
			out[i] = half(le.Uint16(b[2*i:]))
		}
		return out, nil, true
	case canonical.BFloat16:
		out := make([]float64, n)
		for i := range out {
			out[i] = float64(math.Float32frombits(uint32(le.Uint16(b[2*i:])) << 16))
		}
		return out, nil, true
	}
	out := make([]int64, n)
	switch dt {
	case canonical.Int64:
		for i := range out {
			out[i] = int64(le.Uint64(b[8*i:]))
		}
	case canonical.Uint64:
		for i := range out {
			out[i] = int64(le.Uint64(b[8*i:]))
		}
	case canonical.Int32:
		for i := range out {
			out[i] = int64(int32(le.Uint32(b[4*i:])))
		}
	case canonical.Uint32:
		for i := range out {
			out[i] = int64(le.Uint32(b[4*i:]))
		}
	case canonical.Int16:
		for i := range out {
			out[i] = int64(int16(le.Uint16(b[2*i:])))
		}
	case canonical.Uint16:
		for i := range out {
			out[i] = int64(le.Uint16(b[2*i:]))
		}
	case canonical.Int8:
		for i := range out {
			out[i] = int64(int8(b[i]))
		}
	case canonical.Uint8, canonical.Bool:
		for i := range out {
			out[i] = int64(b[i])
		}
	default:
		return nil, nil, false
	}
	return nil, out, true
}

func half(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * frac / 1024 * math.Pow(2, -14)
	case 31:
		if frac == 0 {
			return sign * math.Inf(1)
		}
		return math.NaN()
	}
	return sign * (1 + frac/1024) * math.Pow(2, float64(exp-15))
}

// seqElems returns the element types of sequence input i when known.
func (c *nctx) seqElems(i int) ([]*onnxpb.TypeProto, bool) {
	v := c.in(i)
	if v == nil {
		return nil, false
	}
	e, ok := c.inf.seqs[v]
	return e, ok
}

func (c *nctx) setSeqElems(i int, e []*onnxpb.TypeProto) {
	if c.seqs == nil {
		c.seqs = make([][]*onnxpb.TypeProto, len(c.out))
	}
	if e == nil {
		e = []*onnxpb.TypeProto{}
	}
	if i < len(c.seqs) {
		c.seqs[i] = e
	}
}
