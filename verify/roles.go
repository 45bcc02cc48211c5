package verify

import (
	"fmt"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
)

// An integer graph input can mean something other than data: the axes an
// operator works along, or the shape it produces. Random values do not fit
// such an input ("axis 12 out of range", "cannot reshape"), so its role
// is read from how the graph uses it and its values generated in range,
// or, when the graph does not say enough, refused before verification
// with a message naming the input, its use and --inputs.

// roleKind is what an integer input means to the graph.
type roleKind int

const (
	roleData    roleKind = iota
	roleAxes             // axes of an operator: distinct values in [-rank, rank)
	roleShape            // a shape (or sizes, repeats) an operator produces
	roleSteps            // Slice steps: not zero
	roleDivisor          // integer Div/Mod divisor: not zero
	roleSqueeze          // Squeeze axes: dims of size 1
)

// role is the meaning of one input, from its first consumer that gives
// one.
type role struct {
	kind roleKind
	// rank: the rank roleAxes values index.
	rank int
	// values: roleShape's values, nil when the graph does not declare
	// them.
	values []int64
	// use names the consumer for messages: `the axes of ReduceSum node "r"`.
	use string
}

// axesInput gives the input index of the axes (or axis) of an operator and
// whether the rank they index grows by the number of axes (Unsqueeze).
func axesInput(n *canonical.Node) (index int, grows bool, ok bool) {
	switch n.OpType {
	case "ReduceSum", "CumSum", "CumProd",
		"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
		"ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare":
		return 1, false, true
	case "Unsqueeze":
		return 1, true, true
	case "Slice", "Pad":
		return 3, false, true
	case "DFT":
		return 2, false, true
	}
	return 0, false, false
}

// shapeInput gives the input index of a shape-valued input of an
// operator: its values are the dims of the node's first output (Reshape,
// Expand, ConstantOfShape, Resize sizes), or derived from them (Tile
// repeats, AffineGrid size).
func shapeInput(n *canonical.Node) (int, bool) {
	switch n.OpType {
	case "Reshape", "Expand", "Tile", "AffineGrid":
		return 1, true
	case "ConstantOfShape":
		return 0, true
	case "Resize":
		return 3, true
	}
	return 0, false
}

// knownDims returns the dims of v when every one is declared.
func knownDims(v *canonical.Value) ([]int64, bool) {
	if v == nil {
		return nil, false
	}
	_, ds, hasShape, ok := canonical.TensorTypeOf(v.Type)
	if !ok || !hasShape {
		return nil, false
	}
	out := make([]int64, len(ds))
	for i, d := range ds {
		if !d.Known {
			return nil, false
		}
		out[i] = d.Value
	}
	return out, true
}

// inputRole reads the role of v from its consumers (ai.onnx nodes of its
// graph).
func inputRole(v *canonical.Value) role {
	for _, u := range v.Uses() {
		n := u.Node
		if n == nil || (n.Domain != "" && n.Domain != "ai.onnx") {
			continue
		}
		if i, grows, ok := axesInput(n); ok && u.Index == i {
			r := role{kind: roleAxes, rank: -1, use: fmt.Sprintf("the axes of %s node %s", n.OpType, n)}
			rank, known := 0, false
			if n.Inputs[0] != nil {
				rank, known = rankOf(n.Inputs[0])
			}
			if known {
				r.rank = rank
				if grows {
					// Unsqueeze: the rank of its result.
					k := int64(1)
					if _, ds, _, ok := canonical.TensorTypeOf(v.Type); ok && len(ds) == 1 && ds[0].Known {
						k = ds[0].Value
					}
					r.rank += int(k)
				}
			}
			return r
		}
		if (n.OpType == "Div" || n.OpType == "Mod") && u.Index == 1 {
			return role{kind: roleDivisor, use: fmt.Sprintf("the divisor of %s node %s", n.OpType, n)}
		}
		if n.OpType == "Squeeze" && u.Index == 1 {
			r := role{kind: roleSqueeze, rank: -1, use: fmt.Sprintf("the axes of Squeeze node %s", n)}
			if d, ok := knownDims(n.Inputs[0]); ok {
				r.rank = len(d)
				for ax, x := range d {
					if x == 1 {
						r.values = append(r.values, int64(ax))
					}
				}
			}
			return r
		}
		if n.OpType == "Split" && u.Index == 1 {
			// The sizes of the parts: each output's dim along the axis.
			r := role{kind: roleShape, use: fmt.Sprintf("the split of Split node %s", n)}
			for _, o := range n.Outputs {
				d, ok := knownDims(o)
				ax := n.AttrInt("axis", 0)
				if ax < 0 {
					ax += int64(len(d))
				}
				if !ok || ax < 0 || ax >= int64(len(d)) {
					return role{kind: roleShape, use: r.use}
				}
				r.values = append(r.values, d[ax])
			}
			return r
		}
		if n.OpType == "SplitToSequence" && u.Index == 1 {
			// Split sizes that sum to the axis's length (a 1-D split of k
			// parts: equal parts, the rest in the last), or a scalar
			// chunk length: half of it, rounded up.
			r := role{kind: roleShape, use: fmt.Sprintf("the split of SplitToSequence node %s", n)}
			d, okD := knownDims(n.Inputs[0])
			sd, okS := knownDims(v)
			ax := n.AttrInt("axis", 0)
			if ax < 0 {
				ax += int64(len(d))
			}
			if !okD || !okS || ax < 0 || ax >= int64(len(d)) || len(sd) > 1 {
				return r
			}
			length := d[ax]
			if len(sd) == 0 {
				r.values = []int64{max((length+1)/2, 1)}
				return r
			}
			k := sd[0]
			if k <= 0 || k > length {
				return r
			}
			for i := range k {
				part := length / k
				if i == k-1 {
					part = length - part*(k-1)
				}
				r.values = append(r.values, part)
			}
			return r
		}
		if i, ok := positionInput(n); ok && u.Index == i {
			// A position within the sequence: 1 in a generated one
			// (GeneratedSequenceLength elements), else 0 (the front).
			pos := int64(0)
			if s := n.Inputs[0]; s != nil && s.Graph() != nil && slices.Contains(s.Graph().Inputs, s) {
				pos = 1
			}
			return role{kind: roleShape, values: []int64{pos}, use: fmt.Sprintf("the position of %s node %s", n.OpType, n)}
		}
		if n.OpType == "Slice" && u.Index == 4 {
			return role{kind: roleSteps, use: fmt.Sprintf("the steps of Slice node %s", n)}
		}
		if i, ok := shapeInput(n); ok && u.Index == i {
			r := role{kind: roleShape, use: fmt.Sprintf("the %s of %s node %s", map[bool]string{true: "repeats", false: "shape"}[n.OpType == "Tile"], n.OpType, n)}
			if n.OpType == "Resize" {
				r.use = fmt.Sprintf("the sizes of Resize node %s", n)
			}
			out, ok := knownDims(n.Outputs[0])
			if !ok {
				return r
			}
			switch n.OpType {
			case "Tile":
				in, ok := knownDims(n.Inputs[0])
				if !ok || len(in) != len(out) {
					return r
				}
				rep := make([]int64, len(out))
				for k := range out {
					if in[k] == 0 || out[k]%in[k] != 0 {
						return r
					}
					rep[k] = out[k] / in[k]
				}
				r.values = rep
			case "AffineGrid":
				// grid [N, H, W, 2] (or [N, D, H, W, 3]) from size
				// [N, C, H, W]: any C, 1 here.
				if len(out) < 3 {
					return r
				}
				r.values = append([]int64{out[0], 1}, out[1:len(out)-1]...)
			default:
				r.values = out
			}
			return r
		}
	}
	return role{}
}

// scalesOf returns the values of a float input that is the scales of a
// Resize (input 2) or Upsample (input 1): the declared result's dims over
// the input's, when both are declared.
func scalesOf(v *canonical.Value) ([]float64, string, bool) {
	for _, u := range v.Uses() {
		n := u.Node
		if n == nil || (n.Domain != "" && n.Domain != "ai.onnx") {
			continue
		}
		if !(n.OpType == "Resize" && u.Index == 2) && !(n.OpType == "Upsample" && u.Index == 1) {
			continue
		}
		use := fmt.Sprintf("the scales of %s node %s", n.OpType, n)
		in, ok1 := knownDims(n.Inputs[0])
		out, ok2 := knownDims(n.Outputs[0])
		if !ok1 || !ok2 || len(in) != len(out) {
			return nil, use, false
		}
		sc := make([]float64, len(in))
		for i := range in {
			if in[i] == 0 {
				return nil, use, false
			}
			sc[i] = float64(out[i]) / float64(in[i])
		}
		return sc, use, true
	}
	return nil, "", false
}

// fillRole returns the n values of an input with role r (draw(k) draws
// from [0, k)), or says why they cannot be generated.
func fillRole(name string, r role, n int, draw func(int64) int64) ([]int64, error) {
	switch r.kind {
	case roleAxes:
		if r.rank < 0 {
			return nil, fmt.Errorf("input %q is %s, whose rank the graph does not declare: its values cannot be generated; pass them with --inputs DIR", name, r.use)
		}
		if n > r.rank {
			return nil, fmt.Errorf("input %q is %s: %d distinct axes do not fit rank %d; pass its values with --inputs DIR", name, r.use, n, r.rank)
		}
		// Distinct axes: a random draw of n of the rank's axes.
		perm := make([]int64, r.rank)
		for i := range perm {
			perm[i] = int64(i)
		}
		for i := len(perm) - 1; i > 0; i-- {
			j := draw(int64(i + 1))
			perm[i], perm[j] = perm[j], perm[i]
		}
		return perm[:n], nil
	case roleSteps, roleDivisor:
		// 1 or 2 for a step (0 is invalid, larger ones skip most); 1 to 9
		// for a divisor (integer division by 0 is undefined).
		hi := int64(2)
		if r.kind == roleDivisor {
			hi = 9
		}
		out := make([]int64, n)
		for i := range out {
			out[i] = 1 + draw(hi)
		}
		return out, nil
	case roleSqueeze:
		if r.rank < 0 || len(r.values) < n {
			return nil, fmt.Errorf("input %q is %s: the graph does not declare %d dims of size 1 to squeeze; pass its values with --inputs DIR", name, r.use, n)
		}
		return r.values[:n], nil
	case roleShape:
		if r.values == nil {
			return nil, fmt.Errorf("input %q is %s, and the graph does not declare the shape it makes: its values cannot be generated; pass them with --inputs DIR (or give the node's output a shape)", name, r.use)
		}
		if len(r.values) != n {
			return nil, fmt.Errorf("input %q is %s: it holds %d values, the graph declares a result of rank %d; pass its values with --inputs DIR", name, r.use, n, len(r.values))
		}
		return r.values, nil
	}
	return nil, nil
}

// positionInput gives the input index of a sequence position.
func positionInput(n *canonical.Node) (int, bool) {
	switch n.OpType {
	case "SequenceInsert":
		return 2, true
	case "SequenceAt", "SequenceErase":
		return 1, true
	}
	return 0, false
}
