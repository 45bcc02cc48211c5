package ortnode

import (
	"context"
	"errors"
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
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
			"at the graph's inputs and outputs (bfloat16, float8, int4 and int2 cross as float32 or int8 through Cast nodes), sequences and optionals of tensors through copies of the model, no maps; install: %s",
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
	var re *RunError
	if errors.As(err, &re) && re.Kind == "values" {
		vs, err := newValueSession(env, modelPath, o.Threads, o.Unoptimized)
		if err != nil {
			return nil, err
		}
		return valueRuntimeSession{vs}, nil
	}
	if err != nil {
		return nil, err
	}
	return runtimes.ProtoSession("onnxruntime (under Node): "+modelPath, s, o.InputNames), nil
}

// valueRuntimeSession is the runtimes.Session of a model with sequence or
// optional graph inputs or outputs (runtimes.ValueSession).
type valueRuntimeSession struct{ s *valueSession }

func (v valueRuntimeSession) Close() error        { return v.s.Close() }
func (v valueRuntimeSession) SessionNote() string { return v.s.Note() }

func (v valueRuntimeSession) RunValues(ctx context.Context, inputs []*executor.Value) ([]*executor.Value, error) {
	return v.s.RunValues(ctx, inputs)
}

// Run runs the model on tensors; an output that is not a tensor is an
// error (RunValues gives it).
func (v valueRuntimeSession) Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error) {
	vals := make([]*executor.Value, len(inputs))
	for i, t := range inputs {
		vals[i] = executor.TensorValue(t)
	}
	outs, err := v.s.RunValues(ctx, vals)
	if err != nil {
		return nil, err
	}
	res := make([]*canonical.Tensor, len(outs))
	for i, o := range outs {
		if o.Tensor == nil || o.IsSequence || o.None {
			return nil, v.s.errorf("output %d is a sequence or an optional: it is read with RunValues", i)
		}
		res[i] = o.Tensor
	}
	return res, nil
}
