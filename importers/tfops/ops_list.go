package tfops

import (
	"errors"
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// TensorLists (TF2) and TensorArrays (TF1) are held as ONNX sequences of
// tensors: a list handle is a sequence value (value.seq), every op that
// changes a list returns a new sequence, and a While or a TF1 frame
// carries it as a loop variable. A TensorArray's flow value is its
// current sequence (its handle the sequence it started with), so reads
// follow the writes that the flow orders.

// listOps are the TensorList and TensorArray ops; opTable merges them
// in.
func listOps() map[string]opFunc {
	return map[string]opFunc{
		"EmptyTensorList":      (*converter).emptyList,
		"TensorListReserve":    (*converter).listReserve,
		"TensorListFromTensor": (*converter).listFromTensor,
		"TensorListGetItem":    (*converter).listGetItem,
		"TensorListSetItem":    (*converter).listSetItem,
		"TensorListStack":      (*converter).listStack,
		"TensorListGather":     (*converter).listGather,
		"TensorListScatter":    (*converter).listScatter,
		"TensorListScatterV2":  (*converter).listScatter,
		"TensorListSplit":      (*converter).listSplit,
		"TensorListConcat":     (*converter).listConcat,
		"TensorListConcatV2":   (*converter).listConcat,
		"TensorListLength":     (*converter).listLength,
		"TensorListPushBack":   (*converter).listPushBack,
		"TensorListPopBack":    (*converter).listPopBack,
		"TensorListResize":     (*converter).listResize,
		"TensorArrayV3":        (*converter).arrayNew,
		"TensorArrayWriteV3":   (*converter).arrayWrite,
		"TensorArrayReadV3":    (*converter).arrayRead,
		"TensorArrayGatherV3":  (*converter).arrayGather,
		"TensorArrayScatterV3": (*converter).arrayScatter,
		"TensorArrayConcatV3":  (*converter).arrayConcat,
		"TensorArraySplitV3":   (*converter).arraySplit,
		"TensorArraySizeV3":    (*converter).arraySize,
		"TensorArrayCloseV3":   func(*converter, *Node) error { return nil },
	}
}

// valueInfoOf is the value info of v (a sequence type for a list).
func valueInfoOf(name string, v *value, rank int) build.Info {
	vi := build.RankInfo(name, v.dt, rank)
	if v.seq {
		vi.Type = canonical.SequenceType(canonical.TensorTypeNoShape(v.dt))
	}
	return vi
}

// listIn returns data input i of n, which must be a list.
func (c *converter) listIn(n *Node, i int) (*value, error) {
	v, err := c.in(n, i)
	if err != nil {
		return nil, err
	}
	if !v.seq {
		return nil, fmt.Errorf("input %d is not a TensorList or TensorArray (a %s tensor)", i, v.dt)
	}
	return v, nil
}

func (c *converter) setSeq(n *Node, idx int, y string, dt canonical.DataType) {
	c.set(n, idx, &value{nhwc: y, rank: -1, dt: dt, seq: true})
}

// elemType is the element type of a list op (element_dtype, dtype or T).
func (c *converter) elemType(n *Node) (canonical.DataType, error) {
	for _, a := range []string{"element_dtype", "dtype", "T"} {
		if at, ok := n.Attrs[a]; ok && at.Type != "" {
			dt, ok := DataType(at.Type)
			if !ok {
				return 0, fmt.Errorf("%s %s is not supported", a, at.Type)
			}
			return dt, nil
		}
	}
	return canonical.Float, nil
}

// scalarIndex returns data input i as an int64 scalar.
func (c *converter) scalarIndex(n *Node, i int, what string) (string, error) {
	x, _, err := c.int64In(n, i, what)
	if err != nil {
		return "", err
	}
	return c.b.Op("Reshape", n.Name+"_"+what+"_scalar", []string{x, c.b.I64("scalar", []int64{0}, nil)}), nil
}

func (c *converter) emptyList(n *Node) error {
	dt, err := c.elemType(n)
	if err != nil {
		return err
	}
	c.setSeq(n, 0, c.b.Op("SequenceEmpty", n.Name, nil, canonical.IntAttr("dtype", int64(dt))), dt)
	return nil
}

// knownShape is a constant element shape without unknown dims, nil
// otherwise.
func knownShape(v *value) []int64 {
	if v.konst == nil {
		return nil
	}
	s, err := v.konst.Int64s()
	if err != nil {
		return nil
	}
	if len(v.konst.Dims) == 0 && len(s) == 1 && s[0] == -1 {
		return nil // unknown rank
	}
	for _, d := range s {
		if d < 0 {
			return nil
		}
	}
	if s == nil {
		s = []int64{}
	}
	return s
}

// listReserve is a list of num_elements zero tensors of the element
// shape (scalars when the shape is not known: every item is set before
// it is read).
func (c *converter) listReserve(n *Node) error {
	sv, err := c.in(n, 0)
	if err != nil {
		return err
	}
	cnt, err := c.scalarIndex(n, 1, "num_elements")
	if err != nil {
		return err
	}
	dt, err := c.elemType(n)
	if err != nil {
		return err
	}
	return c.reserve(n, 0, cnt, knownShape(sv), dt)
}

func (c *converter) reserve(n *Node, idx int, cnt string, shape []int64, dt canonical.DataType) error {
	full := c.b.Op("Concat", n.Name+"_shape", []string{c.b.Op("Reshape", n.Name+"_n", []string{cnt, c.b.Ints("one", 1)}), c.b.Ints("elem_shape", shape...)}, canonical.IntAttr("axis", 0))
	zeros := c.b.Op("Expand", n.Name+"_zeros", []string{c.castTo(n.Name+"_zero", c.b.Scalar("zero", 0), dt), full})
	c.setSeq(n, idx, c.b.Op("SplitToSequence", n.Name, []string{zeros}, canonical.IntAttr("axis", 0), canonical.IntAttr("keepdims", 0)), dt)
	return nil
}

func (c *converter) listFromTensor(n *Node) error {
	v, vn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	c.setSeq(n, 0, c.b.Op("SplitToSequence", n.Name, []string{vn}, canonical.IntAttr("axis", 0), canonical.IntAttr("keepdims", 0)), v.dt)
	return nil
}

func (c *converter) listGetItem(n *Node) error {
	l, err := c.listIn(n, 0)
	if err != nil {
		return err
	}
	i, err := c.scalarIndex(n, 1, "index")
	if err != nil {
		return err
	}
	c.setNHWC(n, 0, c.b.Op("SequenceAt", n.Name, []string{l.nhwc, i}), -1, l.dt)
	return nil
}

// setItem replaces item i of sequence l by x.
func (c *converter) setItem(name, l, i, x string) string {
	return c.b.Op("SequenceInsert", name, []string{c.b.Op("SequenceErase", name+"_erased", []string{l, i}), x, i})
}

func (c *converter) listSetItem(n *Node) error {
	l, err := c.listIn(n, 0)
	if err != nil {
		return err
	}
	i, err := c.scalarIndex(n, 1, "index")
	if err != nil {
		return err
	}
	_, xn, err := c.nhwcIn(n, 2)
	if err != nil {
		return err
	}
	c.setSeq(n, 0, c.setItem(n.Name, l.nhwc, i, xn), l.dt)
	return nil
}

func (c *converter) stack(name, l string) string {
	return c.b.Op("ConcatFromSequence", name, []string{l}, canonical.IntAttr("axis", 0), canonical.IntAttr("new_axis", 1))
}

// padded is sequence l with a zero item of shape appended, or "" when
// the shape is not known (nil). ConcatFromSequence refuses an empty
// sequence (ONNX Runtime: "Must have 1 or more inputs"), where TF stacks
// an empty list or TensorArray of a known element shape into a tensor of
// zero rows (issue 40: a TF1 loop over the boxes NonMaxSuppression kept,
// when it kept none); stacking the padded sequence and taking its first
// rows works for every length.
func (c *converter) padded(name, l string, shape []int64, dt canonical.DataType) string {
	if shape == nil {
		return ""
	}
	pad := c.b.Op("Expand", name+"_pad", []string{c.castTo(name+"_zero", c.b.Scalar("zero", 0), dt), c.b.Ints("elem_shape", shape...)})
	return c.b.Op("SequenceInsert", name+"_padded", []string{l, pad})
}

// gatherItems is Gather(stack(l), idx): items idx of sequence l, whose
// items have the given shape (nil: not known, then l must not be empty).
func (c *converter) gatherItems(name, l, idx string, shape []int64, dt canonical.DataType) string {
	if p := c.padded(name, l, shape, dt); p != "" {
		l = p
	}
	return c.b.Op("Gather", name, []string{c.stack(name+"_stacked", l), idx}, canonical.IntAttr("axis", 0))
}

func (c *converter) listStack(n *Node) error {
	l, err := c.listIn(n, 0)
	if err != nil {
		return err
	}
	sv, err := c.in(n, 1)
	if err != nil {
		return err
	}
	dt := l.dt
	p := c.padded(n.Name, l.nhwc, knownShape(sv), dt)
	if p == "" {
		c.setNHWC(n, 0, c.stack(n.Name, l.nhwc), -1, dt)
		return nil
	}
	cnt := c.b.Op("Reshape", n.Name+"_len", []string{c.b.Op("SequenceLength", n.Name+"_n", []string{l.nhwc}), c.b.Ints("one", 1)})
	c.setNHWC(n, 0, c.b.Op("Slice", n.Name, []string{c.stack(n.Name+"_stacked", p), c.b.Ints("zero", 0), cnt, c.b.Ints("axis0", 0)}), -1, dt)
	return nil
}

func (c *converter) listGather(n *Node) error {
	l, err := c.listIn(n, 0)
	if err != nil {
		return err
	}
	idx, _, err := c.int64In(n, 1, "indices")
	if err != nil {
		return err
	}
	sv, err := c.in(n, 2)
	if err != nil {
		return err
	}
	c.setNHWC(n, 0, c.gatherItems(n.Name, l.nhwc, idx, knownShape(sv), l.dt), -1, l.dt)
	return nil
}

// scatterSeq is the sequence whose item indices[j] is t[j] (zeros
// elsewhere), of length count (max(indices)+1 when count is "").
func (c *converter) scatterSeq(name, tn, idx, count string) string {
	if count == "" {
		count = c.b.Op("Add", name+"_count", []string{c.reduceOp("ReduceMax", name+"_max", idx, []int64{0}, true), c.b.Ints("one", 1)})
	} else {
		m := c.b.Op("Add", name+"_needed", []string{c.reduceOp("ReduceMax", name+"_max", idx, []int64{0}, true), c.b.Ints("one", 1)})
		count = c.b.Op("Max", name+"_count", []string{c.b.Op("Reshape", name+"_n", []string{count, c.b.Ints("one", 1)}), m})
	}
	rest := c.b.Op("Slice", name+"_rest", []string{c.b.Op("Shape", name+"_tshape", []string{tn}), c.b.Ints("one", 1), c.b.Ints("end", i64max)})
	base := c.b.Op("Expand", name+"_base", []string{c.like(0, tn), c.b.Op("Concat", name+"_shape", []string{count, rest}, canonical.IntAttr("axis", 0))})
	dense := c.b.Op("ScatterND", name+"_dense", []string{base, c.b.Op("Unsqueeze", name+"_idx", []string{idx, c.b.Ints("last", -1)}), tn})
	return c.b.Op("SplitToSequence", name, []string{dense}, canonical.IntAttr("axis", 0), canonical.IntAttr("keepdims", 0))
}

func (c *converter) listScatter(n *Node) error {
	t, tn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	idx, _, err := c.int64In(n, 1, "indices")
	if err != nil {
		return err
	}
	count := ""
	if n.Op == "TensorListScatterV2" {
		if count, _, err = c.int64In(n, 3, "num_elements"); err != nil {
			return err
		}
	}
	c.setSeq(n, 0, c.scatterSeq(n.Name, tn, idx, count), t.dt)
	return nil
}

func (c *converter) listSplit(n *Node) error {
	t, tn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	lengths, _, err := c.int64In(n, 2, "lengths")
	if err != nil {
		return err
	}
	c.setSeq(n, 0, c.b.Op("SplitToSequence", n.Name, []string{tn, lengths}, canonical.IntAttr("axis", 0)), t.dt)
	return nil
}

// lengthsOf is the int64 first-axis length of each item of sequence l.
func (c *converter) lengthsOf(name, l string, dt canonical.DataType) string {
	sb := c.b.Sub()
	in := sb.Fresh(name + "_item")
	first := sb.Op("Slice", name+"_len", []string{sb.Op("Shape", name+"_shape", []string{in}), sb.Ints("zero", 0), sb.Ints("one", 1)})
	body := sb.Graph(name+"_body", []build.Info{build.TensorInfo(in, dt, nil, true)}, []build.Info{build.TensorInfo(first, canonical.Int64, []int64{1}, false)})
	seq := c.b.Op("SequenceMap", name+"_lens", []string{l}, canonical.GraphAttr("body", body))
	return c.b.Op("ConcatFromSequence", name, []string{seq}, canonical.IntAttr("axis", 0))
}

func (c *converter) listConcat(n *Node) error {
	l, err := c.listIn(n, 0)
	if err != nil {
		return err
	}
	c.setNHWC(n, 0, c.b.Op("ConcatFromSequence", n.Name, []string{l.nhwc}, canonical.IntAttr("axis", 0)), -1, l.dt)
	c.setNHWC(n, 1, c.lengthsOf(n.Name+"_lengths", l.nhwc, l.dt), 1, canonical.Int64)
	return nil
}

func (c *converter) listLength(n *Node) error {
	l, err := c.listIn(n, 0)
	if err != nil {
		return err
	}
	c.setNHWC(n, 0, c.castTo(n.Name, c.b.Op("SequenceLength", n.Name+"_i64", []string{l.nhwc}), canonical.Int32), 0, canonical.Int32)
	return nil
}

func (c *converter) listPushBack(n *Node) error {
	l, err := c.listIn(n, 0)
	if err != nil {
		return err
	}
	_, xn, err := c.nhwcIn(n, 1)
	if err != nil {
		return err
	}
	c.setSeq(n, 0, c.b.Op("SequenceInsert", n.Name, []string{l.nhwc, xn}), l.dt)
	return nil
}

func (c *converter) listPopBack(n *Node) error {
	l, err := c.listIn(n, 0)
	if err != nil {
		return err
	}
	last := c.b.I64("last", nil, []int64{-1})
	c.setSeq(n, 0, c.b.Op("SequenceErase", n.Name, []string{l.nhwc, last}), l.dt)
	c.setNHWC(n, 1, c.b.Op("SequenceAt", n.Name+"_tensor", []string{l.nhwc, last}), -1, l.dt)
	return nil
}

// listResize stacks the list, cuts or zero-pads it to size items and
// splits it again (items of one shape).
func (c *converter) listResize(n *Node) error {
	l, err := c.listIn(n, 0)
	if err != nil {
		return err
	}
	size, _, err := c.int64In(n, 1, "size")
	if err != nil {
		return err
	}
	size = c.b.Op("Reshape", n.Name+"_size", []string{size, c.b.Ints("one", 1)})
	st := c.stack(n.Name+"_stacked", l.nhwc)
	shape := c.b.Op("Shape", n.Name+"_shape", []string{st})
	rank := c.b.Op("Size", n.Name+"_rank", []string{shape})
	// Pad the first axis to at least size, then slice to size.
	grow := c.b.Op("Max", n.Name+"_grow", []string{c.b.Op("Sub", n.Name+"_more", []string{size, c.b.Op("Slice", n.Name+"_len", []string{shape, c.b.Ints("zero", 0), c.b.Ints("one", 1)})}), c.b.Ints("zero", 0)})
	zeros := c.b.Op("Expand", n.Name+"_pad_rest", []string{c.b.Ints("zero", 0), c.b.Op("Sub", n.Name+"_rest", []string{c.b.Op("Mul", n.Name+"_2r", []string{rank, c.b.I64("two", nil, []int64{2})}), c.b.I64("one_s", nil, []int64{1})})})
	zeros = c.b.Op("Reshape", n.Name+"_pad_zeros", []string{zeros, c.b.Ints("flat", -1)})
	restLen := c.b.Op("Sub", n.Name+"_rl", []string{rank, c.b.I64("one_s", nil, []int64{1})})
	pads := c.b.Op("Concat", n.Name+"_pads", []string{
		c.b.Op("Slice", n.Name+"_p0", []string{zeros, c.b.Ints("zero", 0), c.b.Op("Reshape", n.Name+"_rl1", []string{rank, c.b.Ints("one", 1)})}),
		grow,
		c.b.Op("Slice", n.Name+"_p1", []string{zeros, c.b.Ints("zero", 0), c.b.Op("Reshape", n.Name+"_rl2", []string{restLen, c.b.Ints("one", 1)})}),
	}, canonical.IntAttr("axis", 0))
	padded := c.b.Op("Pad", n.Name+"_padded", []string{st, pads})
	cut := c.b.Op("Slice", n.Name+"_cut", []string{padded, c.b.Ints("zero", 0), size, c.b.Ints("axis0", 0)})
	c.setSeq(n, 0, c.b.Op("SplitToSequence", n.Name, []string{cut}, canonical.IntAttr("axis", 0), canonical.IntAttr("keepdims", 0)), l.dt)
	return nil
}

// arrayNew maps TensorArrayV3(size): handle and flow are the list of
// size items (see listReserve).
func (c *converter) arrayNew(n *Node) error {
	cnt, err := c.scalarIndex(n, 0, "size")
	if err != nil {
		return err
	}
	dt, err := c.elemType(n)
	if err != nil {
		return err
	}
	// Items of an unknown shape are reserved as scalars: each is
	// written before it is read.
	shape := elementShape(n)
	if shape == nil {
		shape = []int64{}
	}
	if err := c.reserve(n, 0, cnt, shape, dt); err != nil {
		return err
	}
	c.set(n, 1, c.vals[n.Name+":0"])
	return nil
}

// elementShape is the element_shape attribute of a TensorArray op when
// every dim is known ([] for scalars), nil otherwise.
func elementShape(n *Node) []int64 {
	a, ok := n.Attrs["element_shape"]
	if !ok || a.Shape == nil || a.Shape.UnknownRank {
		return nil
	}
	for _, d := range a.Shape.Dims {
		if d < 0 {
			return nil
		}
	}
	return append([]int64{}, a.Shape.Dims...)
}

// flow returns the TensorArray state a TensorArray op reads: its flow
// input (data input i).
func (c *converter) flow(n *Node, i int) (*value, error) {
	v, err := c.in(n, i)
	if err != nil {
		return nil, err
	}
	if !v.seq {
		return nil, errors.New("the flow input does not come from a TensorArray (a scalar flow passed through ops the mapping does not follow)")
	}
	return v, nil
}

func (c *converter) arrayWrite(n *Node) error {
	f, err := c.flow(n, 3)
	if err != nil {
		return err
	}
	i, err := c.scalarIndex(n, 1, "index")
	if err != nil {
		return err
	}
	_, xn, err := c.nhwcIn(n, 2)
	if err != nil {
		return err
	}
	c.setSeq(n, 0, c.setItem(n.Name, f.nhwc, i, xn), f.dt)
	return nil
}

func (c *converter) arrayRead(n *Node) error {
	f, err := c.flow(n, 2)
	if err != nil {
		return err
	}
	i, err := c.scalarIndex(n, 1, "index")
	if err != nil {
		return err
	}
	c.setNHWC(n, 0, c.b.Op("SequenceAt", n.Name, []string{f.nhwc, i}), -1, f.dt)
	return nil
}

func (c *converter) arrayGather(n *Node) error {
	f, err := c.flow(n, 2)
	if err != nil {
		return err
	}
	idx, _, err := c.int64In(n, 1, "indices")
	if err != nil {
		return err
	}
	c.setNHWC(n, 0, c.gatherItems(n.Name, f.nhwc, idx, elementShape(n), f.dt), -1, f.dt)
	return nil
}

// arrayScatter writes value[j] to item indices[j] of the array.
func (c *converter) arrayScatter(n *Node) error {
	f, err := c.flow(n, 3)
	if err != nil {
		return err
	}
	idx, _, err := c.int64In(n, 1, "indices")
	if err != nil {
		return err
	}
	_, tn, err := c.nhwcIn(n, 2)
	if err != nil {
		return err
	}
	// Stack the array, scatter the rows, split it again.
	st := c.stack(n.Name+"_stacked", f.nhwc)
	dense := c.b.Op("ScatterND", n.Name+"_dense", []string{st, c.b.Op("Unsqueeze", n.Name+"_idx", []string{idx, c.b.Ints("last", -1)}), tn})
	c.setSeq(n, 0, c.b.Op("SplitToSequence", n.Name, []string{dense}, canonical.IntAttr("axis", 0), canonical.IntAttr("keepdims", 0)), f.dt)
	return nil
}

func (c *converter) arrayConcat(n *Node) error {
	f, err := c.flow(n, 1)
	if err != nil {
		return err
	}
	c.setNHWC(n, 0, c.b.Op("ConcatFromSequence", n.Name, []string{f.nhwc}, canonical.IntAttr("axis", 0)), -1, f.dt)
	c.setNHWC(n, 1, c.lengthsOf(n.Name+"_lengths", f.nhwc, f.dt), 1, canonical.Int64)
	return nil
}

func (c *converter) arraySplit(n *Node) error {
	f, err := c.flow(n, 3)
	if err != nil {
		return err
	}
	_, tn, err := c.nhwcIn(n, 1)
	if err != nil {
		return err
	}
	lengths, _, err := c.int64In(n, 2, "lengths")
	if err != nil {
		return err
	}
	c.setSeq(n, 0, c.b.Op("SplitToSequence", n.Name, []string{tn, lengths}, canonical.IntAttr("axis", 0)), f.dt)
	return nil
}

func (c *converter) arraySize(n *Node) error {
	f, err := c.flow(n, 1)
	if err != nil {
		return err
	}
	c.setNHWC(n, 0, c.castTo(n.Name, c.b.Op("SequenceLength", n.Name+"_i64", []string{f.nhwc}), canonical.Int32), 0, canonical.Int32)
	return nil
}
