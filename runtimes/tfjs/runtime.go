package tfjs

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/runtimes"
)

// RuntimeName is the name users pick the runtime by (`--runtime tfjs`);
// importers/tfjs names it as its formats' reference runtime.
const RuntimeName = "tfjs"

// New returns the runtime for runtimes/builtin. Node and TF.js are looked
// for (Find with o) when the runtime is described and on every Open. Its
// Version is the installed TF.js version ("unknown" when missing: Open
// then fails with the *MissingError).
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
		Description: fmt.Sprintf("TensorFlow.js (npm %s %s, pure JavaScript CPU backend) under Node: runs TF.js model.json files "+
			"(layers models by predict, graph models by execute or executeAsync) and Keras .keras/.h5/JSON+weights files "+
			"(exported in memory to a TF.js layers model); install: %s",
			Package, PackageVersion, InstallCommand),
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
	s, err := Open(ctx, env, modelPath)
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
		return nil, fmt.Errorf("tfjs runtime: %s: %d inputs given, the model takes %d (%s)", s.s.model, len(inputs), len(s.names), strings.Join(s.names, ", "))
	}
	in := make([]*onnxpb.TensorProto, len(inputs))
	for i, t := range inputs {
		if t == nil {
			return nil, fmt.Errorf("tfjs runtime: %s: input %d is nil", s.s.model, i)
		}
		tp, err := canonical.TensorToProto(t)
		if err != nil {
			return nil, fmt.Errorf("tfjs runtime: %s: input %d (%q): %w", s.s.model, i, t.Name, err)
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
			return nil, fmt.Errorf("tfjs runtime: %s: output %d: %w", s.s.model, i, err)
		}
		out[i] = t
	}
	return out, nil
}
