package executor

import "github.com/onnxconv/onnxconv/canonical"

type opKey struct{ domain, op string }

// opImpl is how one operator runs: lowered to GoMLX, as a host kernel, or
// both (the host kernel then folds constants).
type opImpl struct {
	lower func(*lctx) error
	host  func(*lctx) error
	// preferHost: run the host kernel whenever all inputs are on the host.
	preferHost bool
	// shapeOnly: the host kernel reads only input types and shapes.
	shapeOnly bool
	// control: runs subgraphs; inputs and outer values are materialized
	// first.
	control bool
	// random: outputs differ between runs; never folded.
	random bool
	// ortDefault: an ai.onnx-domain operator that ONNX Runtime defines
	// beyond the ONNX standard (SimplifiedLayerNormalization), run at any
	// opset version.
	ortDefault bool
	// kernel runs the op with executor/kernels as a host step, in place
	// of the lowering, for the cases kernelOK accepts (kernel_ops.go).
	kernel   func(*lctx) error
	kernelOK func(*lctx) bool
}

// registry maps (domain, op) to implementations. One is built per
// Executor by newRegistry; nothing is shared between executors.
type registry map[opKey]*opImpl

func (r registry) impl(domain, op string) *opImpl {
	k := opKey{domain, op}
	if r[k] == nil {
		r[k] = &opImpl{}
	}
	return r[k]
}

// lower registers a GoMLX lowering for ai.onnx ops.
func (r registry) lower(f func(*lctx) error, ops ...string) {
	for _, op := range ops {
		r.impl("", op).lower = f
	}
}

// host registers a host kernel for ai.onnx ops.
func (r registry) host(f func(*lctx) error, ops ...string) {
	for _, op := range ops {
		r.impl("", op).host = f
	}
}

func newRegistry() registry {
	r := registry{}
	registerElementwise(r)
	registerMath(r)
	registerReduce(r)
	registerShape(r)
	registerIndex(r)
	registerNN(r)
	registerRNN(r)
	registerControl(r)
	registerSequence(r)
	registerQuant(r)
	registerML(r)
	registerString(r)
	registerLoss(r)
	registerAttention(r)
	registerLinalg(r)
	registerResize(r)
	registerGrid(r)
	registerSignal(r)
	registerStateful(r)
	registerTraining(r)
	registerImage(r)
	registerGradient(r)
	registerRandom(r)
	registerContrib(r)
	registerKernels(r)
	return r
}

// functionImpl runs a model-local function by running its body.
func functionImpl(f *canonical.Function) *opImpl {
	return &opImpl{control: true, host: func(c *lctx) error { return runFunction(c, f) }}
}
