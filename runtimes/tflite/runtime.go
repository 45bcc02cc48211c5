package tflite

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/runtimes"
)

// RuntimeName is the name users pick the runtime by (`--runtime tflite`).
const RuntimeName = "tflite"

// New returns the runtime for runtimes/builtin: each Open starts one node
// process that loads the model once and serves every run. Node and the
// npm package are looked for (Find with o) when the runtime is described
// and on every Open, so that installing them needs no restart. Its Version
// is the installed tfjs-tflite version ("unknown" when it is missing:
// Open then fails with the *MissingError).
func New(o FindOptions) runtimes.Runtime { return runtime{o: o} }

type runtime struct{ o FindOptions }

func (r runtime) Info() runtimes.Info {
	ver := "unknown"
	if env, err := Find(r.o); err == nil {
		ver = env.Version
	}
	return runtimes.Info{
		Name:    RuntimeName,
		Version: ver,
		Description: fmt.Sprintf("Google's TFLite interpreter compiled to WebAssembly, from npm %s %s, run under Node "+
			"(float, int8, int16, int64, bool, LSTM, SVDF; inputs and outputs by TFLite tensor name, NHWC; "+
			"%s %s, LiteRT.js, is the second build, a cross-check on float models); install: %s",
			Package, PackageVersion, LiteRTPackage, LiteRTPackageVersion, InstallCommand),
		Where: "in a node process",
	}
}

// Check tells whether Node and the npm package are installed.
func (r runtime) Check() error {
	_, err := Find(r.o)
	return err
}

func (r runtime) Open(ctx context.Context, modelPath string, o runtimes.OpenOptions) (runtimes.Session, error) {
	env, err := Find(r.o)
	if err != nil {
		return nil, err
	}
	s, err := Open(ctx, env, modelPath, o.Threads)
	if err != nil {
		return nil, err
	}
	return session{s: s, names: o.InputNames}, nil
}

// session binds canonical tensors to a Session.
type session struct {
	s     *Session
	names []string
}

func (s session) Close() error { return s.s.Close() }

func (s session) Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error) {
	if s.names != nil && len(inputs) != len(s.names) {
		return nil, fmt.Errorf("tflite runtime: %s: %d inputs given, the model takes %d (%s)", s.s.model, len(inputs), len(s.names), strings.Join(s.names, ", "))
	}
	in := make([]*onnxpb.TensorProto, len(inputs))
	for i, t := range inputs {
		if t == nil {
			return nil, fmt.Errorf("tflite runtime: %s: input %d is nil", s.s.model, i)
		}
		tp, err := canonical.TensorToProto(t)
		if err != nil {
			return nil, fmt.Errorf("tflite runtime: %s: input %d (%q): %w", s.s.model, i, t.Name, err)
		}
		if s.names != nil {
			tp.Name = proto.String(s.names[i])
		}
		in[i] = tp
	}
	res, err := s.s.Run(ctx, in)
	if err != nil {
		return nil, err
	}
	out := make([]*canonical.Tensor, len(res.Outputs))
	for i, tp := range res.Outputs {
		t, err := canonical.TensorFromProto(tp)
		if err != nil {
			return nil, fmt.Errorf("tflite runtime: %s: output %d: %w", s.s.model, i, err)
		}
		out[i] = t
	}
	return out, nil
}
