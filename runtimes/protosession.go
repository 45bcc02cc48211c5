package runtimes

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/verify"
)

// ProtoRunner is a loaded model that computes on TensorProtos, the wire
// form of the runtimes under Node (runtimes/tflite, runtimes/tfjs).
type ProtoRunner interface {
	RunProtos(ctx context.Context, inputs []*onnxpb.TensorProto) ([]*onnxpb.TensorProto, error)
	Close() error
}

// ProtoSession is the Session of a ProtoRunner: canonical tensors in and
// out, the inputs renamed to names (the source model's input names, when
// set; their count is checked). what names the runtime and the model in
// errors ("tflite runtime: model.tflite").
func ProtoSession(what string, r ProtoRunner, names []string) Session {
	return protoSession{what: what, r: r, names: names}
}

type protoSession struct {
	what  string
	r     ProtoRunner
	names []string
}

func (s protoSession) Close() error { return s.r.Close() }

// SessionNote is the runner's note when it has one (SessionNoter).
func (s protoSession) SessionNote() string {
	if n, ok := s.r.(interface{ Note() string }); ok {
		return n.Note()
	}
	return ""
}

// NamedRunner is a ProtoRunner that also computes tensors of its model
// named in the source's terms (TF.js node names) instead of its outputs.
type NamedRunner interface {
	ProtoRunner
	RunNamed(ctx context.Context, inputs []*onnxpb.TensorProto, names []string) ([]*onnxpb.TensorProto, error)
}

// RunNamed computes the tensors named in the model's own terms, in that
// order (NamedSession); a runner without RunNamed gives an error wrapping
// verify.ErrNoCapture.
func (s protoSession) RunNamed(ctx context.Context, inputs []*canonical.Tensor, names []string) ([]*canonical.Tensor, error) {
	nr, ok := s.r.(NamedRunner)
	if !ok {
		return nil, fmt.Errorf("%s: %w", s.what, verify.ErrNoCapture)
	}
	in, err := s.protos(inputs)
	if err != nil {
		return nil, err
	}
	res, err := nr.RunNamed(ctx, in, names)
	if err != nil {
		return nil, err
	}
	return s.tensors(res)
}

func (s protoSession) Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error) {
	in, err := s.protos(inputs)
	if err != nil {
		return nil, err
	}
	res, err := s.r.RunProtos(ctx, in)
	if err != nil {
		return nil, err
	}
	return s.tensors(res)
}

// protos are the inputs as TensorProtos named as the model's inputs.
func (s protoSession) protos(inputs []*canonical.Tensor) ([]*onnxpb.TensorProto, error) {
	if s.names != nil && len(inputs) != len(s.names) {
		return nil, fmt.Errorf("%s: %d inputs given, the model takes %d (%s)", s.what, len(inputs), len(s.names), strings.Join(s.names, ", "))
	}
	in := make([]*onnxpb.TensorProto, len(inputs))
	for i, t := range inputs {
		if t == nil {
			return nil, fmt.Errorf("%s: input %d is nil", s.what, i)
		}
		tp, err := canonical.TensorToProto(t)
		if err != nil {
			return nil, fmt.Errorf("%s: input %d (%q): %w", s.what, i, t.Name, err)
		}
		if s.names != nil {
			tp.Name = proto.String(s.names[i])
		}
		in[i] = tp
	}
	return in, nil
}

func (s protoSession) tensors(res []*onnxpb.TensorProto) ([]*canonical.Tensor, error) {
	out := make([]*canonical.Tensor, len(res))
	for i, tp := range res {
		t, err := canonical.TensorFromProto(tp)
		if err != nil {
			return nil, fmt.Errorf("%s: output %d: %w", s.what, i, err)
		}
		out[i] = t
	}
	return out, nil
}
