package executor

import "github.com/onnxconv/onnxconv/canonical"

// SiLU exported as two nodes. torch exports SiLU (EfficientNet's
// activation) as y = Mul(x, Sigmoid(x)): two kernel steps, each a pass
// over a full activation tensor, and x (a Conv's output) read twice, so
// that the Conv cannot take them as its epilogue (fuse.go). fuseSiLU
// rewrites each such pair of kernel steps into one step, the ONNX Swish
// op with alpha 1 (no attribute), run by the Sigmoid's kernel
// (kernelUnary: kernels.SiLU) and chained to the Conv by fuseSteps.
// kernels.SiLU computes x·logistic(x) per element: the Sigmoid kernel's
// value, then the Mul's float32 product (which commutes), so the results
// are bit-identical (TestFuseSiLU). Swish nodes of the graph itself keep
// their own (float64) implementation: only fused steps name the kernel.
func fuseSiLU(gi *graphInfo, steps []step, keep map[*canonical.Value]bool) []step {
	return fuseGateMul(gi, steps, keep, isSiLUSigmoid, "Swish")
}

// isSiLUSigmoid reports whether h is a float32 Sigmoid kernel step
// (kernelUnary's steps are float32 alone, okUnaryHost).
func isSiLUSigmoid(h *hostStep) bool {
	n := h.n
	return h.packs && n.OpType == "Sigmoid" && plainDomain(n) && len(n.Inputs) == 1 && n.Inputs[0] != nil &&
		len(n.Outputs) == 1 && n.Outputs[0] != nil && len(n.OuterValues()) == 0
}

// isSiLUStep reports whether h is a Swish kernel step that fuseSiLU made
// (alpha 1: no attribute).
func isSiLUStep(h *hostStep) bool {
	return h.packs && h.n.OpType == "Swish" && h.n.Attr("alpha") == nil
}
