package ortnode

import (
	"context"
	"fmt"

	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/runtimes/node"
)

// RuntimeName is the name users pick the runtime by (`--runtime
// onnxruntime`); importers/onnx names it as ONNX's reference runtime.
const RuntimeName = runtimes.ONNXRuntime

// New returns the runtime for runtimes/builtin: each Open starts one node
// process that loads the model once and serves every run. Node and the npm
// package are looked for (Find with o) when the runtime is described and on
// every Open, so that installing them needs no restart. Its Version is the
// installed onnxruntime-node version ("unknown" when it is missing: Check
// and Open then fail).
func New(o FindOptions) runtimes.Runtime { return rt{o: o} }

type rt struct{ o FindOptions }

func (r rt) Info() runtimes.Info {
	ver := "unknown"
	if env, err := Find(r.o); err == nil {
		ver = env.Version
	}
	return runtimes.Info{
		Name:    RuntimeName,
		Version: ver,
		Description: fmt.Sprintf("ONNX Runtime (CPU) from npm %s %s, run under Node: every tensor type but float4 and complex "+
			"at the graph's inputs and outputs (bfloat16, float8, int4 and int2 cross as float32 or int8 through Cast nodes), no sequences, maps or optionals there; install: %s",
			Package, PackageVersion, runtimes.InstallCommand),
		Where: "under Node",
	}
}

// LoadsONNX marks the runtime as one that loads ONNX files as they are
// (runtimes.ONNXLoader): its sides capture intermediate values for
// bisection by running a copy of the model with more graph outputs.
func (r rt) LoadsONNX() {}

// Check tells whether Node and the npm package are installed.
func (r rt) Check() error {
	_, err := Find(r.o)
	return node.NotInstalled(RuntimeName, err)
}

func (r rt) Open(ctx context.Context, modelPath string, o runtimes.OpenOptions) (runtimes.Session, error) {
	env, err := Find(r.o)
	if err != nil {
		return nil, node.NotInstalled(RuntimeName, err)
	}
	s, err := Open(ctx, env, modelPath, o.Threads, o.Unoptimized)
	if err != nil {
		return nil, err
	}
	return runtimes.ProtoSession("onnxruntime (under Node): "+modelPath, s, o.InputNames), nil
}
