package sdk

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/plugins/protocol"
)

func TestRuntimeServe(t *testing.T) {
	if err := (Plugin{Runtime: &Runtime{Name: "r"}}).Validate(); err == nil || !strings.Contains(err.Error(), `runtime "r" has no Run`) {
		t.Errorf("Validate without Run: %v", err)
	}
	if err := (Plugin{Runtime: &Runtime{}}).Validate(); err == nil || !strings.Contains(err.Error(), "runtime has no Name") {
		t.Errorf("Validate without Name: %v", err)
	}
	rt := &Runtime{Name: "r", Version: "2", Run: func(ctx context.Context, path string, in []*onnxpb.TensorProto) ([]*onnxpb.TensorProto, error) {
		o := RunOptionsFrom(ctx)
		if o.Options["panic"] != "" {
			panic(o.Options["panic"])
		}
		// One output per input, named after the options seen.
		out := make([]*onnxpb.TensorProto, len(in))
		for i := range in {
			out[i] = &onnxpb.TensorProto{Name: proto.String(filepath.Base(path) + "/" + string(rune('0'+o.Threads)))}
		}
		return out, nil
	}}
	p := Plugin{Runtime: rt}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if info := p.RuntimeInfo(); info == nil || info.Name != "r" || info.Version != "2" {
		t.Errorf("RuntimeInfo = %+v", info)
	}
	model := filepath.Join(t.TempDir(), "m.onnx")
	if err := os.WriteFile(model, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	s := &runtimeServer{rt: rt, stderr: &stderr}
	ctx := context.Background()
	outs, err := s.Run(ctx, model, []*onnxpb.TensorProto{{}, {}}, protocol.RunOptions{Threads: 3})
	if err != nil || len(outs) != 2 || outs[1].GetName() != "m.onnx/3" {
		t.Errorf("Run = %v, %v", outs, err)
	}
	_, err = s.Run(ctx, model, nil, protocol.RunOptions{Options: map[string]string{"panic": "boom"}})
	if err == nil || err.Error() != "panic in Run: boom" || !strings.Contains(stderr.String(), "panic in Run: boom") {
		t.Errorf("panic: %v; stderr %q", err, stderr.String())
	}
	if _, err := s.Run(ctx, filepath.Join(t.TempDir(), "absent.onnx"), nil, protocol.RunOptions{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing model: %v", err)
	}
}
