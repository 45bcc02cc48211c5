package tflite

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/layout"
	unsupportedpkg "github.com/onnxconv/onnxconv/canonical/unsupported"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
)

// rep is a TFLite tensor holding transpose(value, perm) (perm nil: the
// value as it is).
type rep struct {
	perm []int
	t    int32
}

// alias is a value defined as transpose(src, perm) (ONNX Transpose,
// Identity) that is not emitted unless asked for in a layout no tensor has.
type alias struct {
	src  *canonical.Value
	perm []int
}

type converter struct {
	m    *canonical.Model
	opts Options
	rep  *Report
	t    *tmodel

	reps    map[*canonical.Value][]rep
	aliases map[*canonical.Value]alias
	skip    map[*canonical.Node]bool
	names   *canonical.Namer // the TFLite tensors' names
	cur     *canonical.Node
	// derived gives the int8 calibration range of intermediate tensors
	// that hold no ONNX value: an affine map of a value's range.
	derived map[int32]derivedRange
	// controlWhy says, by node name, why an If or Loop was not lowered
	// (lowerControl).
	controlWhy map[string]string
	// qdq is the quantization of a QDQ model (nil: a float model), which
	// the int8 quantizer uses instead of calibrating.
	qdq *qdqInfo
}

// derivedRange is the range of a*src + b, clamped to [lo, hi].
type derivedRange struct {
	src          *canonical.Value
	a, b, lo, hi float64
}

func newConverter(m *canonical.Model, opts Options, r *Report) *converter {
	return &converter{m: m, opts: opts, rep: r, t: newTModel(),
		reps: map[*canonical.Value][]rep{}, aliases: map[*canonical.Value]alias{},
		skip: map[*canonical.Node]bool{}, names: canonical.NewNamer(nil), derived: map[int32]derivedRange{}}
}

func isIdentity(p []int) bool {
	for i, v := range p {
		if v != i {
			return false
		}
	}
	return true
}

func norm(p []int) []int {
	if isIdentity(p) {
		return nil
	}
	return p
}

func full(p []int, rank int) []int {
	if p == nil {
		return layout.Identity(rank)
	}
	return p
}

func nodeName(n *canonical.Node) string {
	if n == nil {
		return ""
	}
	return n.Name
}

// shape is the ONNX shape of v, -1 for unknown dims.
func (c *converter) shape(v *canonical.Value) ([]int64, error) {
	if v.Const != nil {
		return append([]int64(nil), v.Const.Dims...), nil
	}
	if v.Type == nil {
		return nil, fmt.Errorf("value %q has no type (shape inference could not type it)", v.Name)
	}
	_, dims, has, ok := canonical.TensorTypeOf(v.Type)
	if !ok || !has {
		return nil, fmt.Errorf("value %q has no known rank", v.Name)
	}
	out := make([]int64, len(dims))
	for i, d := range dims {
		if d.Known {
			out[i] = d.Value
		} else {
			out[i] = -1
		}
	}
	return out, nil
}

func (c *converter) rank(v *canonical.Value) int {
	s, err := c.shape(v)
	if err != nil {
		return -1
	}
	return len(s)
}

// int64Type is the TFLite type of ONNX int64 tensors: INT32, as the
// constants are written. LiteRT.js refuses INT64 tensors ("Element type
// INT64 is not supported") and TFLite's kernels mostly take INT32 indices
// and shapes; an int64 graph input or output is INT32 in the file (the
// runtime casts at the edges).
const int64Type = fb.TensorTypeINT32

func ttype(dt canonical.DataType) (fb.TensorType, bool) {
	switch dt {
	case canonical.Float:
		return fb.TensorTypeFLOAT32, true
	case canonical.Float16:
		return fb.TensorTypeFLOAT16, true
	case canonical.Int64:
		return int64Type, true
	case canonical.Int32:
		return fb.TensorTypeINT32, true
	case canonical.Bool:
		return fb.TensorTypeBOOL, true
	case canonical.Int8:
		return fb.TensorTypeINT8, true
	case canonical.Uint8:
		return fb.TensorTypeUINT8, true
	}
	return 0, false
}

func (c *converter) elemType(v *canonical.Value) (fb.TensorType, error) {
	var dt canonical.DataType
	if v.Const != nil {
		dt = v.Const.DataType
	} else {
		var ok bool
		dt, _, _, ok = canonical.TensorTypeOf(v.Type)
		if !ok {
			return 0, fmt.Errorf("value %q is not a tensor", v.Name)
		}
	}
	tt, ok := ttype(dt)
	if !ok {
		return 0, fmt.Errorf("value %q has element type %s, which the exporter does not write", v.Name, dt)
	}
	return tt, nil
}

// newOut makes the tensor for v held in layout perm and records it.
func (c *converter) newOut(v *canonical.Value, perm []int) (int32, error) {
	perm = norm(perm)
	sh, err := c.shape(v)
	if err != nil {
		return 0, err
	}
	tt, err := c.elemType(v)
	if err != nil {
		return 0, err
	}
	name := v.Name
	if perm != nil {
		name += ";perm"
	}
	t := c.t.addTensor(c.names.Fresh(name), tt, layout.Apply(sh, perm), nil)
	c.reps[v] = append(c.reps[v], rep{perm: perm, t: t})
	return t, nil
}

// tmp makes an intermediate tensor.
func (c *converter) tmp(base string, typ fb.TensorType, shape []int64) int32 {
	return c.t.addTensor(c.names.Fresh(base), typ, shape, nil)
}

// native returns the layout v is cheapest to have in, and its tensor.
func (c *converter) native(v *canonical.Value) (rep, error) {
	if rs := c.reps[v]; len(rs) > 0 {
		return rs[0], nil
	}
	if a, ok := c.aliases[v]; ok {
		r, err := c.native(a.src)
		if err != nil {
			return rep{}, err
		}
		// t = transpose(src, L'); v = transpose(src, P): t holds v in Pinv∘L'.
		rank := len(a.perm)
		pinv := layout.Inverse(full(a.perm, rank))
		lp := full(r.perm, rank)
		l := make([]int, rank)
		for i := range l {
			l[i] = pinv[lp[i]]
		}
		return rep{perm: norm(l), t: r.t}, nil
	}
	if v.Const != nil {
		t, err := c.get(v, nil)
		return rep{t: t}, err
	}
	return rep{}, fmt.Errorf("value %q is used before it is computed", v.Name)
}

// get returns a tensor holding transpose(v, perm), emitting a TRANSPOSE or
// permuting a constant when no tensor has that layout yet.
func (c *converter) get(v *canonical.Value, perm []int) (int32, error) {
	perm = norm(perm)
	for _, r := range c.reps[v] {
		if slices.Equal(r.perm, perm) {
			return r.t, nil
		}
	}
	if a, ok := c.aliases[v]; ok {
		rank := c.rank(v)
		if rank < 0 {
			rank = len(a.perm)
		}
		ap := full(a.perm, rank)
		q := full(perm, rank)
		comp := make([]int, rank)
		for j := range comp {
			comp[j] = ap[q[j]]
		}
		t, err := c.get(a.src, comp)
		if err != nil {
			return 0, err
		}
		c.reps[v] = append(c.reps[v], rep{perm: perm, t: t})
		return t, nil
	}
	if v.Const != nil {
		t, err := c.constTensor(v, perm)
		if err != nil {
			return 0, err
		}
		c.reps[v] = append(c.reps[v], rep{perm: perm, t: t})
		return t, nil
	}
	r, err := c.native(v)
	if err != nil {
		return 0, err
	}
	rank := c.rank(v)
	if rank < 0 {
		return 0, fmt.Errorf("value %q: rank unknown, cannot change its layout", v.Name)
	}
	linv := layout.Inverse(full(r.perm, rank))
	q := full(perm, rank)
	rp := make([]int, rank)
	for j := range rp {
		rp[j] = linv[q[j]]
	}
	out, err := c.newOut(v, perm)
	if err != nil {
		return 0, err
	}
	if shp, ok := reshapeOnly(c.t.tensors[r.t].shape, rp); ok {
		// Only size-1 dims move (e.g. NHWC [1,1,1,C] to NCHW [1,C,1,1]):
		// a RESHAPE, no data movement.
		c.reshape(r.t, out, shp)
		return out, nil
	}
	c.transpose(r.t, rp, out)
	c.rep.LayoutTransposes++
	return out, nil
}

// transpose emits TRANSPOSE(in, perm) -> out.
func (c *converter) transpose(in int32, perm []int, out int32) {
	p := make([]int32, len(perm))
	for i, v := range perm {
		p[i] = int32(v)
	}
	pt := c.constI32("perm", p, []int64{int64(len(p))})
	c.t.addOp(fb.BuiltinOperatorTRANSPOSE, []int32{in, pt}, []int32{out}, fb.BuiltinOptionsTransposeOptions, emptyOpts(fb.TransposeOptionsStart, fb.TransposeOptionsEnd), nodeName(c.cur))
}

func (c *converter) constI32(base string, v []int32, shape []int64) int32 {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	if len(b) == 0 {
		b = []byte{}
	}
	name := base
	if c.cur != nil {
		name = c.cur.Name + "/" + base
	}
	return c.t.addTensor(c.names.Fresh(name), fb.TensorTypeINT32, shape, nonNil(b))
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// constF32 makes a float constant (float16 + DEQUANTIZE with
// Options.Float16 when weights is set).
func (c *converter) constF32(base string, v []float32, shape []int64, weights bool) int32 {
	name := base
	if c.cur != nil {
		name = c.cur.Name + "/" + base
	}
	if weights && c.opts.Float16 {
		b := make([]byte, 2*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint16(b[2*i:], canonical.Float32ToFloat16(x))
		}
		h := c.t.addTensor(c.names.Fresh(name+";fp16"), fb.TensorTypeFLOAT16, shape, nonNil(b))
		out := c.t.addTensor(c.names.Fresh(name), fb.TensorTypeFLOAT32, shape, nil)
		c.t.addOp(fb.BuiltinOperatorDEQUANTIZE, []int32{h}, []int32{out}, 0, nil, nodeName(c.cur))
		return out
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return c.t.addTensor(c.names.Fresh(name), fb.TensorTypeFLOAT32, shape, nonNil(b))
}

// transposeData permutes row-major data of dims by perm (nil: unchanged)
// with canonical's transpose.
func transposeData[T any](data []T, dims []int64, perm []int) ([]T, error) {
	if perm == nil {
		return data, nil
	}
	out, _, err := canonical.TransposeSlice(data, dims, perm)
	return out, err
}

func (c *converter) floats(v *canonical.Value) ([]float32, error) {
	f, err := v.Const.Float64s()
	if err != nil {
		return nil, fmt.Errorf("constant %q: %w", v.Name, err)
	}
	out := make([]float32, len(f))
	for i, x := range f {
		out[i] = float32(x)
	}
	return out, nil
}

func (c *converter) ints(v *canonical.Value) ([]int64, error) {
	if v == nil || v.Const == nil {
		return nil, fmt.Errorf("value %q is not a constant", valueName(v))
	}
	x, err := v.Const.Int64s()
	if err != nil {
		return nil, fmt.Errorf("constant %q: %w", v.Name, err)
	}
	return x, nil
}

func valueName(v *canonical.Value) string {
	if v == nil {
		return "(none)"
	}
	return v.Name
}

// constTensor writes initializer v in layout perm.
func (c *converter) constTensor(v *canonical.Value, perm []int) (int32, error) {
	dims := v.Const.Dims
	shape := layout.Apply(dims, perm)
	switch v.Const.DataType {
	case canonical.Float, canonical.Float16, canonical.Double, canonical.BFloat16:
		f, err := c.floats(v)
		if err != nil {
			return 0, err
		}
		t11, err := transposeData(f, dims, perm)
		if err != nil {
			return 0, err
		}
		return c.constF32(v.Name, t11, shape, len(f) > 1), nil
	case canonical.Int64, canonical.Int32, canonical.Int16, canonical.Int8, canonical.Uint8:
		x, err := c.ints(v)
		if err != nil {
			return 0, err
		}
		t12, err := transposeData(x, dims, perm)
		if err != nil {
			return 0, err
		}
		x = t12
		y := make([]int32, len(x))
		for i, e := range x {
			if e > math.MaxInt32 || e < math.MinInt32 {
				return 0, fmt.Errorf("constant %q: %d does not fit the int32 TFLite computes integers in", v.Name, e)
			}
			y[i] = int32(e)
		}
		return c.constI32(v.Name, y, shape), nil
	case canonical.Bool:
		raw, err := v.Const.Bytes()
		if err != nil {
			return 0, err
		}
		t13, err := transposeData(append([]byte(nil), raw...), dims, perm)
		if err != nil {
			return 0, err
		}
		raw = t13
		return c.t.addTensor(c.names.Fresh(v.Name), fb.TensorTypeBOOL, shape, nonNil(raw)), nil
	}
	return 0, fmt.Errorf("constant %q: element type %s not supported", v.Name, v.Const.DataType)
}

// wantsNHWC reports whether node n computes NHWC in TFLite.
func wantsNHWC(n *canonical.Node) bool {
	switch n.OpType {
	case "Conv", "ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Resize", "Upsample":
		return true
	case "Transpose":
		return slices.Equal(intsOf(n.AttrInts("perm", nil)), layout.ToLast(4))
	}
	return false
}

func intsOf(x []int64) []int {
	out := make([]int, len(x))
	for i, v := range x {
		out[i] = int(v)
	}
	return out
}

func layoutWords(perm []int, rank int) string {
	if perm == nil {
		return "as ONNX"
	}
	if rank == 4 && slices.Equal(perm, layout.ToLast(4)) {
		return "NHWC (the ONNX value is NCHW)"
	}
	if rank == 3 && slices.Equal(perm, layout.ToLast(3)) {
		return "NWC (the ONNX value is NCW)"
	}
	return fmt.Sprintf("transposed by %v from the ONNX layout", perm)
}

func (c *converter) run(ctx context.Context) error {
	g := c.m.Graph
	inits := map[*canonical.Value]bool{}
	for _, v := range g.Initializers {
		inits[v] = true
	}
	for _, v := range g.Inputs {
		if inits[v] || v.Const != nil {
			continue
		}
		sh, err := c.shape(v)
		if err != nil {
			return fmt.Errorf("input %q: %w", v.Name, err)
		}
		var perm []int
		if len(sh) == 4 && !c.opts.KeepNCHWIO {
			for _, u := range v.Uses() {
				if wantsNHWC(u.Node) {
					perm = layout.ToLast(4)
				}
			}
		}
		if len(sh) == 3 && !c.opts.KeepNCHWIO {
			for _, u := range v.Uses() {
				if wantsNWC(u.Node) {
					perm = layout.ToLast(3)
				}
			}
		}
		t, err := c.newOut(v, perm)
		if err != nil {
			return fmt.Errorf("input %q: %w", v.Name, err)
		}
		c.t.tensors[t].name = v.Name
		c.t.inputs = append(c.t.inputs, t)
		c.rep.Inputs = append(c.rep.Inputs, IO{Name: v.Name, Shape: c.t.tensors[t].shape, Perm: perm, Layout: layoutWords(perm, len(sh))})
		if perm != nil {
			c.rep.LayoutChanged = true
		}
	}
	nodes, err := g.TopoSort()
	if err != nil {
		return err
	}
	// Every node TFLite cannot express is collected, so that a user sees
	// them all at once; the nodes that read their outputs are not tried.
	errs := &unsupportedpkg.OpsError{Format: exportFormat, Stage: unsupportedpkg.StageExport}
	failed := map[*canonical.Value]bool{}
	for _, n := range nodes {
		if err := ctx.Err(); err != nil {
			return err
		}
		if c.skip[n] {
			continue
		}
		if slices.ContainsFunc(n.Inputs, func(v *canonical.Value) bool { return v != nil && failed[v] }) {
			for _, v := range n.Outputs {
				failed[v] = true
			}
			continue
		}
		c.cur = n
		if err := c.node(n); err != nil {
			var ue *unsupportedpkg.OpsError
			if errors.As(err, &ue) {
				for _, o := range ue.Ops {
					errs.AddOp(o)
				}
				for _, v := range n.Outputs {
					failed[v] = true
				}
				continue
			}
			return fmt.Errorf("node %q (%s): %w", n.Name, n.OpType, err)
		}
	}
	if err := errs.Err(); err != nil {
		return err
	}
	c.cur = nil
	used := map[int32]bool{}
	for _, v := range g.Outputs {
		var t int32
		var perm []int
		if c.opts.KeepNCHWIO {
			t, err = c.get(v, nil)
		} else {
			var r rep
			r, err = c.native(v)
			t, perm = r.t, r.perm
		}
		if err != nil {
			return fmt.Errorf("output %q: %w", v.Name, err)
		}
		if used[t] || c.t.tensors[t].buf != 0 || slices.Contains(c.t.inputs, t) {
			// An output that is another output, an input or a constant gets
			// a tensor of its own.
			sh := c.t.tensors[t].shape
			out := c.tmp(v.Name, c.t.tensors[t].typ, sh)
			shp := make([]int32, len(sh))
			for i, d := range sh {
				shp[i] = int32(d)
			}
			c.reshape(t, out, shp)
			t = out
		}
		used[t] = true
		for _, tt := range c.t.tensors {
			if tt.name == v.Name {
				tt.name = v.Name + ";onnx"
			}
		}
		c.t.tensors[t].name = v.Name
		c.t.outputs = append(c.t.outputs, t)
		c.rep.Outputs = append(c.rep.Outputs, IO{Name: v.Name, Shape: c.t.tensors[t].shape, Perm: perm, Layout: layoutWords(perm, len(c.t.tensors[t].shape))})
		if perm != nil {
			c.rep.LayoutChanged = true
		}
	}
	if c.opts.Float16 {
		c.rep.Notes = append(c.rep.Notes, "float weights stored as float16, each followed by DEQUANTIZE to float32")
	}
	return nil
}

// reshapeOnly reports whether transposing a tensor of shape by perm moves
// only dims of size 1, and returns the new shape (one dynamic dim at most,
// as -1).
func reshapeOnly(shape []int64, perm []int) ([]int32, bool) {
	last, dyn := -1, 0
	out := make([]int32, len(perm))
	for j, a := range perm {
		d := shape[a]
		out[j] = int32(d)
		if d < 0 {
			dyn++
		}
		if d == 1 {
			continue
		}
		if a < last {
			return nil, false
		}
		last = a
	}
	return out, dyn <= 1
}
