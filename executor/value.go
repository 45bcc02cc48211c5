package executor

import (
	"fmt"
	"strings"

	"github.com/gomlx/gomlx/pkg/core/graph"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor/kernels"
)

// Value is a model input or output that may be a sequence or an optional:
// exactly one of Tensor, Sequence (possibly empty, IsSequence set) or
// None (an optional without a value) describes it.
type Value struct {
	Tensor     *canonical.Tensor
	Sequence   []*canonical.Tensor
	IsSequence bool
	// ElemType is the element type of an empty sequence or of a None.
	ElemType canonical.DataType
	None     bool
}

// TensorValue wraps a tensor.
func TensorValue(t *canonical.Tensor) *Value { return &Value{Tensor: t} }

type slotKind int

const (
	kindTensor slotKind = iota
	kindSeq
	kindNone
)

// slot is the state of one value during a run: a host tensor, a GoMLX
// node of the segment being built, a sequence of host tensors, or none.
type slot struct {
	kind slotKind
	dt   canonical.DataType // logical element type (tensor, or sequence element)
	h    *htensor
	node *graph.Node
	seq  []*htensor
	// valStatic: the contents are determined by the input signature (and
	// constants); shapeStatic: the shape is.
	valStatic, shapeStatic bool
	seg                    *segment // segment that owns node
}

func (s *slot) isHost() bool { return s.kind != kindTensor || s.h != nil }

func (s *slot) shape() []int {
	if s.h != nil {
		return s.h.shape
	}
	if s.node != nil {
		return s.node.Shape().Dimensions
	}
	return nil
}

func (s *slot) sig(sb *strings.Builder) {
	switch s.kind {
	case kindNone:
		fmt.Fprintf(sb, "none:%d", s.dt)
	case kindSeq:
		fmt.Fprintf(sb, "seq:%d[", s.dt)
		for _, h := range s.seq {
			fmt.Fprintf(sb, "%v", h.shape)
		}
		sb.WriteByte(']')
	default:
		fmt.Fprintf(sb, "%d%v", s.dt, s.shape())
	}
}

func slotFromValue(v *Value) (*slot, error) {
	switch {
	case v == nil:
		return nil, fmt.Errorf("missing value")
	case v.None:
		return &slot{kind: kindNone, dt: v.ElemType}, nil
	case v.IsSequence || v.Sequence != nil:
		s := &slot{kind: kindSeq, dt: v.ElemType}
		for _, t := range v.Sequence {
			h, err := fromCanonical(t)
			if err != nil {
				return nil, err
			}
			s.dt = h.dt
			s.seq = append(s.seq, h)
		}
		return s, nil
	case v.Tensor != nil:
		h, err := borrowCanonical(v.Tensor)
		if err != nil {
			return nil, err
		}
		return &slot{kind: kindTensor, dt: h.dt, h: h}, nil
	}
	return nil, fmt.Errorf("empty value")
}

func (s *slot) toValue(name string) (*Value, error) {
	switch s.kind {
	case kindNone:
		return &Value{None: true, ElemType: s.dt}, nil
	case kindSeq:
		v := &Value{IsSequence: true, ElemType: s.dt, Sequence: []*canonical.Tensor{}}
		for i, h := range s.seq {
			t, err := h.toCanonical(fmt.Sprintf("%s[%d]", name, i))
			if err != nil {
				return nil, err
			}
			v.Sequence = append(v.Sequence, t)
		}
		return v, nil
	}
	if s.h == nil {
		return nil, fmt.Errorf("value was not materialized")
	}
	t, err := nchwOf(s.h).toCanonical(name)
	if err != nil {
		return nil, err
	}
	return &Value{Tensor: t}, nil
}

// env maps values to slots; subgraph runs chain to the enclosing env.
type env struct {
	vals map[*canonical.Value]*slot
	// dyn holds the entries of vals whose slots are not valStatic (all
	// but the initializers and constants): runBufs.release walks these
	// only, not the model's hundreds of weights, after every step that
	// drops a large value. set and del keep it in step with vals.
	dyn    map[*canonical.Value]*slot
	parent *env
	// bufs: the run's reusable output buffers (reuse.go); root env only.
	bufs *runBufs
	// deferConv: the Conv kernel of the step running now may leave its
	// work to the next step (an expandDwStep's expansion); pend holds
	// that work until the depthwise convolution's kernel runs it
	// (fuse_expanddw.go).
	deferConv bool
	pend      kernels.Pending
}

func newEnv(parent *env) *env {
	return &env{vals: map[*canonical.Value]*slot{}, dyn: map[*canonical.Value]*slot{}, parent: parent}
}

func (e *env) get(v *canonical.Value) *slot {
	for x := e; x != nil; x = x.parent {
		if s, ok := x.vals[v]; ok {
			return s
		}
	}
	return nil
}

func (e *env) set(v *canonical.Value, s *slot) {
	e.vals[v] = s
	if s == nil || s.valStatic {
		delete(e.dyn, v)
	} else {
		e.dyn[v] = s
	}
}

// del removes v from e.
func (e *env) del(v *canonical.Value) {
	delete(e.vals, v)
	delete(e.dyn, v)
}
