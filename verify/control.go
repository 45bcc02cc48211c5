package verify

import (
	"strconv"

	"github.com/onnxconv/onnxconv/canonical"
)

// Inputs that steer control flow or carry audio get values a real call
// would give (issue 45: a Silero VAD export compares its sample rate with
// 16000 and 8000 in an If, and reads its audio through an STFT written
// as a strided Conv).

// ifSelector returns the constant that a one-value input v is compared
// with (Equal) where the comparison decides an If — directly or through
// Not, Cast, Identity, And, Or or Xor: a sample rate choosing a branch.
// The first such comparison in the graph's order wins (the outer If's
// then branch).
func ifSelector(v *canonical.Value) (float64, bool) {
	for _, u := range v.Uses() {
		n := u.Node
		if n == nil || n.OpType != "Equal" || len(n.Inputs) != 2 || len(n.Outputs) == 0 || n.Outputs[0] == nil {
			continue
		}
		c, ok := constScalar(n.Inputs[1-u.Index])
		if ok && decidesIf(n.Outputs[0], 0) {
			return c, true
		}
	}
	return 0, false
}

// constTensor returns the value of an initializer or of a Constant
// node's value attribute, nil for anything else.
func constTensor(v *canonical.Value) *canonical.Tensor {
	if v == nil {
		return nil
	}
	if v.Const != nil {
		return v.Const
	}
	if p, _ := v.Producer(); p != nil && p.OpType == "Constant" {
		if a := p.Attr("value"); a != nil {
			return a.T
		}
	}
	return nil
}

// constScalar returns the value of a one-value initializer or Constant.
func constScalar(v *canonical.Value) (float64, bool) {
	t := constTensor(v)
	if t == nil {
		return 0, false
	}
	f, err := t.Float64s()
	if err != nil || len(f) != 1 {
		return 0, false
	}
	return f[0], true
}

// decidesIf reports whether the boolean b is an If's condition, directly
// or through logical operators and casts.
func decidesIf(b *canonical.Value, depth int) bool {
	if b == nil || depth > 4 {
		return false
	}
	for _, u := range b.Uses() {
		n := u.Node
		if n == nil {
			continue
		}
		switch n.OpType {
		case "If":
			if u.Index == 0 {
				return true
			}
		case "Not", "Cast", "Identity", "And", "Or", "Xor":
			if len(n.Outputs) > 0 && decidesIf(n.Outputs[0], depth+1) {
				return true
			}
		}
	}
	return false
}

// audioWindow is the least width of a Conv window over time samples: a
// frame of an STFT or a learned filterbank (an image Conv reads 1 to 11).
const audioWindow = 64

// audioFrames is how many frames a generated audio input holds.
const audioFrames = 4

// AudioDims returns, for the free last dim of every float graph input of
// rank 1 to 3 that a Conv with a window of at least audioWindow samples
// reads along it (through reshapes, pads and elementwise ops, and inside
// If, Loop and Scan bodies), the length of audioFrames frames of the
// widest such window: window + (audioFrames−1)·stride — a real call's
// length rather than one sample, which no STFT can frame.
func AudioDims(m *canonical.Model) map[string]int64 {
	out := map[string]int64{}
	for _, v := range GraphInputs(m) {
		dt, ds, hasShape, ok := canonical.TensorTypeOf(v.Type)
		if !ok || !hasShape || !canonical.IsFloatType(dt) || len(ds) < 1 || len(ds) > 3 || ds[len(ds)-1].Known {
			continue
		}
		ax := len(ds) - 1
		var best int64
		traceAxis(v, ax, len(ds), true, func(n *canonical.Node, t axisTrace) {
			if n.OpType != "Conv" {
				return
			}
			w := windowMin(n)[t.axis]
			if w < audioWindow {
				return
			}
			stride := int64(1)
			if st := n.AttrInts("strides", nil); t.axis-2 < len(st) {
				stride = max(st[t.axis-2], 1)
			}
			best = max(best, leastFor(w+(audioFrames-1)*stride, t.num, t.den))
		})
		if best > 0 {
			key := ds[ax].Param
			if key == "" {
				key = v.Name + ":" + strconv.Itoa(ax)
			}
			out[key] = best
		}
	}
	return out
}
