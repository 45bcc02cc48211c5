package runtimes

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
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

func (s protoSession) Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error) {
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
	res, err := s.r.RunProtos(ctx, in)
	if err != nil {
		return nil, err
	}
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
