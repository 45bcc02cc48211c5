package executor

import (
	"github.com/onnxconv/onnxconv/canonical"
)

// HardSwish exported as two nodes. Before opset 14 torch exports
// MobileNet-v3's HardSwish as y = Mul(x, HardSigmoid(x; alpha=1/6,
// beta=0.5)): two kernel steps, each a pass over a full activation
// tensor, and x (a Conv's output) read twice, so that the Conv cannot
// take them as its epilogue (fuse.go). fuseHardSwish rewrites each such
// pair of kernel steps into one HardSwish kernel step reading x alone;
// fuseSteps then chains it to the Conv. kernels.HardSwish computes
// v·max(0, min(1, v·float32(1/6) + 0.5)) per element: the HardSigmoid
// kernel's operations with the same constants, then the Mul's product
// (float32 multiplication commutes, for NaNs too: both operands then
// carry x's payload), so the results are bit-identical
// (TestHardSwishPairBits).

// hardSwishAlpha is HardSwish's slope as a float32 attribute holds it.
const hardSwishAlpha = float32(1.0 / 6)

// fuseHardSwish replaces each HardSigmoid kernel step (alpha exactly
// float32(1/6), beta 0.5) whose output only a Mul kernel step reads, with
// the HardSigmoid's input as the Mul's other operand, by one HardSwish
// step in the HardSigmoid's place writing the Mul's output; the Mul step
// goes. Neither value in between may be a graph output or kept.
func fuseHardSwish(gi *graphInfo, steps []step, keep map[*canonical.Value]bool) []step {
	return fuseGateMul(gi, steps, keep, isHardSwishSigmoid, "HardSwish")
}

// fuseGateMul replaces each kernel step that gate accepts (one input x,
// one output s) whose output only a Mul kernel step reads, with x as the
// Mul's other operand, by one op step in the gate's place (the gate's
// kernel) writing the Mul's output; the Mul step goes. Neither value in
// between may be a graph output or kept.
func fuseGateMul(gi *graphInfo, steps []step, keep map[*canonical.Value]bool, gate func(*hostStep) bool, op string) []step {
	u := usesOf(steps)
	readers, reader := u.readers, u.lastReader
	removed := map[int]bool{}
	for k, st := range steps {
		hs, ok := st.(*hostStep)
		if !ok || !gate(hs) {
			continue
		}
		x, s := hs.n.Inputs[0], hs.n.Outputs[0]
		if readers[s] != 1 || keep[s] || !gi.defs[s] || gi.lastUse[s] == outputUse {
			continue
		}
		j := reader[s]
		mul, ok := steps[j].(*hostStep)
		if !ok || j <= k || removed[j] || !mul.packs || mul.n.OpType != "Mul" || !plainDomain(mul.n) ||
			len(mul.n.Inputs) != 2 || len(mul.n.Outputs) != 1 || mul.n.Outputs[0] == nil || len(mul.n.Attributes) != 0 || len(mul.n.OuterValues()) != 0 {
			continue
		}
		if a, b := mul.n.Inputs[0], mul.n.Inputs[1]; !(a == x && b == s || a == s && b == x) {
			continue
		}
		n := *mul.n
		n.OpType, n.Inputs = op, []*canonical.Value{x}
		steps[k] = &hostStep{n: &n, impl: hs.impl, ver: hs.ver, packs: true}
		removed[j] = true
	}
	return withoutSteps(steps, removed)
}

// isHardSwishSigmoid reports whether h is a HardSigmoid kernel step
// (float32: kernelHard's steps are float32 alone, okUnaryHost) with
// HardSwish's constants.
func isHardSwishSigmoid(h *hostStep) bool {
	n := h.n
	if !h.packs || n.OpType != "HardSigmoid" || !plainDomain(n) || len(n.Inputs) != 1 || n.Inputs[0] == nil ||
		len(n.Outputs) != 1 || n.Outputs[0] == nil || len(n.OuterValues()) != 0 {
		return false
	}
	alpha, beta := n.Attr("alpha"), n.Attr("beta")
	return alpha != nil && alpha.Type == canonical.AttrFloat && alpha.F == hardSwishAlpha &&
		(beta == nil || beta.Type == canonical.AttrFloat && beta.F == 0.5)
}
