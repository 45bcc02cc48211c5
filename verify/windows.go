package verify

import (
	"github.com/onnxconv/onnxconv/canonical"
)

// axisTrace is one place an input's symbolic dim T reaches: axis of value
// v, whose length there is T*num/den (a Reshape folds other axes into it
// or splits it).
type axisTrace struct {
	v        *canonical.Value
	axis     int
	rank     int
	num, den int64
}

// maxTraceSteps bounds the values windowLeast visits from one input axis.
const maxTraceSteps = 256

// windowLeast returns the least size of axis ax (of rank rank) of input v
// that the convolution and pooling windows reading it need, following the
// axis through Reshape (constant shape), Unsqueeze, Squeeze, Transpose and
// elementwise operators; 0 when no window reads it. Where a Reshape
// folds the axis with others, the size also makes the folded length whole.
func windowLeast(v *canonical.Value, ax, rank int) int64 {
	least := int64(0)
	traceAxis(v, ax, rank, false, func(n *canonical.Node, t axisTrace) {
		if w := windowMin(n)[t.axis]; w > 1 {
			least = max(least, leastFor(w, t.num, t.den))
		}
	})
	return least
}

// traceAxis calls reads(n, t) for every node n that reads the traced axis
// as its input 0 (t: where the axis is there), following it as
// windowLeast says; throughPad also follows it through Pad (the length
// grows by the pads: the window's need is overstated, never understated).
// Nodes of subgraphs that read the value (captured from the outer graph)
// are among its uses.
func traceAxis(v *canonical.Value, ax, rank int, throughPad bool, reads func(n *canonical.Node, t axisTrace)) {
	queue := []axisTrace{{v: v, axis: ax, rank: rank, num: 1, den: 1}}
	seen := map[*canonical.Value]bool{}
	for steps := 0; len(queue) > 0 && steps < maxTraceSteps; steps++ {
		t := queue[0]
		queue = queue[1:]
		if seen[t.v] {
			continue
		}
		seen[t.v] = true
		for _, u := range t.v.Uses() {
			n := u.Node
			if n == nil {
				continue
			}
			if u.Index == 0 {
				reads(n, t)
			}
			if throughPad && n.OpType == "Pad" && u.Index == 0 && len(n.Outputs) > 0 && n.Outputs[0] != nil {
				next := t
				next.v = n.Outputs[0]
				queue = append(queue, next)
				continue
			}
			if next, ok := follow(n, u.Index, t); ok {
				queue = append(queue, next)
			}
		}
	}
}

// leastFor is the least T with T*num/den whole and at least w (0 when
// that is above maxLeast).
func leastFor(w, num, den int64) int64 {
	if num <= 0 || den <= 0 {
		return 0
	}
	t := max((w*den+num-1)/num, 1)
	for k := int64(0); k < den && (t*num)%den != 0; k++ {
		t++
	}
	if t > maxLeast {
		return 0 // not a size to generate: leave it to --dim
	}
	return t
}

// maxLeast bounds the sizes windowLeast asks for.
const maxLeast = 1 << 20

// sameShape are operators whose output 0 has the shape of input 0.
var sameShape = map[string]bool{
	"Identity": true, "Cast": true, "Relu": true, "LeakyRelu": true, "Sigmoid": true, "Tanh": true, "Abs": true,
	"Neg": true, "Exp": true, "Log": true, "Sqrt": true, "Clip": true, "Softplus": true, "Erf": true, "Elu": true,
	"Selu": true, "HardSigmoid": true, "HardSwish": true, "Dropout": true, "BatchNormalization": true,
	"InstanceNormalization": true, "Floor": true, "Ceil": true, "Round": true, "Reciprocal": true, "Gelu": true,
}

// broadcastOps are elementwise operators with broadcasting.
var broadcastOps = map[string]bool{"Add": true, "Sub": true, "Mul": true, "Div": true, "Pow": true, "PRelu": true, "Max": true, "Min": true}

// follow maps the traced axis through node n (t.v is its input idx): the
// output value, axis, rank and length factor, or false when the axis
// does not pass through (or cannot be followed).
func follow(n *canonical.Node, idx int, t axisTrace) (axisTrace, bool) {
	if len(n.Outputs) == 0 || n.Outputs[0] == nil {
		return axisTrace{}, false
	}
	out := t
	out.v = n.Outputs[0]
	switch {
	case sameShape[n.OpType] && idx == 0:
		return out, true
	case broadcastOps[n.OpType]:
		// Only when no other input has a higher rank (the axis keeps
		// its place).
		for i, in := range n.Inputs {
			if i == idx || in == nil {
				continue
			}
			r, ok := rankOf(in)
			if !ok || r > t.rank {
				return axisTrace{}, false
			}
		}
		return out, true
	case n.OpType == "Transpose" && idx == 0:
		perm := n.AttrInts("perm", nil)
		if perm == nil {
			out.axis = t.rank - 1 - t.axis
			return out, true
		}
		if len(perm) != t.rank {
			return axisTrace{}, false
		}
		for j, p := range perm {
			if int(p) == t.axis {
				out.axis = j
				return out, true
			}
		}
	case (n.OpType == "Unsqueeze" || n.OpType == "Squeeze") && idx == 0:
		axes, ok := axesOf(n)
		if !ok {
			return axisTrace{}, false
		}
		if n.OpType == "Unsqueeze" {
			out.rank = t.rank + len(axes)
			ins := map[int]bool{}
			for _, a := range axes {
				a := int(a)
				if a < 0 {
					a += out.rank
				}
				ins[a] = true
			}
			k := 0
			for j := 0; j < out.rank; j++ {
				if ins[j] {
					continue
				}
				if k == t.axis {
					out.axis = j
					return out, true
				}
				k++
			}
			return axisTrace{}, false
		}
		out.rank = t.rank - len(axes)
		shift := 0
		for _, a := range axes {
			a := int(a)
			if a < 0 {
				a += t.rank
			}
			if a == t.axis {
				return axisTrace{}, false
			}
			if a < t.axis {
				shift++
			}
		}
		out.axis = t.axis - shift
		return out, true
	case n.OpType == "Reshape" && idx == 0:
		return followReshape(n, t)
	}
	return axisTrace{}, false
}

// followReshape maps the axis through a Reshape to a constant shape: a 0
// copies it (allowzero unset), a -1 takes it with the other input axes
// folded in (all of them known).
func followReshape(n *canonical.Node, t axisTrace) (axisTrace, bool) {
	if len(n.Inputs) < 2 || n.Inputs[1] == nil || n.Inputs[1].Const == nil || n.AttrInt("allowzero", 0) != 0 {
		return axisTrace{}, false
	}
	shape, err := n.Inputs[1].Const.Int64s()
	if err != nil || len(shape) == 0 {
		return axisTrace{}, false
	}
	out := t
	out.v = n.Outputs[0]
	out.rank = len(shape)
	if t.axis < len(shape) && shape[t.axis] == 0 {
		return out, true
	}
	in := t.v
	if in.Type == nil {
		return axisTrace{}, false
	}
	_, ds, hasShape, ok := canonical.TensorTypeOf(in.Type)
	if !ok || !hasShape || len(ds) != t.rank {
		return axisTrace{}, false
	}
	kin := int64(1)
	for i, d := range ds {
		if i == t.axis {
			continue
		}
		if !d.Known {
			return axisTrace{}, false
		}
		kin *= d.Value
	}
	minus, kout := -1, int64(1)
	for j, s := range shape {
		switch {
		case s == -1 && minus < 0:
			minus = j
		case s == 0:
			if j >= len(ds) || j == t.axis || !ds[j].Known {
				return axisTrace{}, false
			}
			kout *= ds[j].Value
		case s > 0:
			kout *= s
		default:
			return axisTrace{}, false
		}
	}
	if minus < 0 || kin <= 0 || kout <= 0 || kin > 1<<31 || kout > 1<<31 {
		return axisTrace{}, false
	}
	out.axis = minus
	num, den := t.num*kin, t.den*kout
	g := gcd(num, den)
	out.num, out.den = num/g, den/g
	if out.num > 1<<40 || out.den > 1<<20 {
		return axisTrace{}, false
	}
	return out, true
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	if a == 0 {
		return 1
	}
	return a
}

// axesOf reads the axes of Unsqueeze/Squeeze: the attribute (before
// opset 13) or the constant second input.
func axesOf(n *canonical.Node) ([]int64, bool) {
	if a := n.Attr("axes"); a != nil {
		return n.AttrInts("axes", nil), true
	}
	if len(n.Inputs) < 2 || n.Inputs[1] == nil || n.Inputs[1].Const == nil {
		return nil, false
	}
	axes, err := n.Inputs[1].Const.Int64s()
	return axes, err == nil && len(axes) > 0
}

// rankOf is the rank of a value with a known shape or constant.
func rankOf(v *canonical.Value) (int, bool) {
	if v.Const != nil {
		return len(v.Const.Dims), true
	}
	if v.Type == nil {
		return 0, false
	}
	_, ds, hasShape, ok := canonical.TensorTypeOf(v.Type)
	return len(ds), ok && hasShape
}
