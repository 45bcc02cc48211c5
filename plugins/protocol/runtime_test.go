package protocol

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/plugins/pluginpb"
)

// scaleRuntime doubles each float of each input, plus the thread count,
// and returns it as output "y<i>".
type scaleRuntime struct{}

func (scaleRuntime) Describe(context.Context) (*RuntimeInfo, error) {
	return &RuntimeInfo{Name: "scale", Version: "3", Description: "doubles"}, nil
}

func (scaleRuntime) Run(_ context.Context, model string, in []*onnxpb.TensorProto, opts RunOptions) ([]*onnxpb.TensorProto, error) {
	if opts.Options["fail"] != "" {
		return nil, errors.New("model " + model + ": " + opts.Options["fail"])
	}
	out := make([]*onnxpb.TensorProto, len(in))
	for i, t := range in {
		raw := append([]byte(nil), t.GetRawData()...)
		for j := 0; j+4 <= len(raw); j += 4 {
			f := math.Float32frombits(binary.LittleEndian.Uint32(raw[j:]))
			binary.LittleEndian.PutUint32(raw[j:], math.Float32bits(2*f+float32(opts.Threads)))
		}
		out[i] = &onnxpb.TensorProto{Name: proto.String("y" + t.GetName()), Dims: t.GetDims(), DataType: t.DataType, RawData: raw}
	}
	return out, nil
}

func dialRuntime(t *testing.T, rt Runtime) *RuntimeGRPCClient {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer()
	pluginpb.RegisterRuntimeServer(s, &RuntimeGRPCServer{Impl: rt})
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) { return lis.Dial() }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &RuntimeGRPCClient{client: pluginpb.NewRuntimeClient(conn)}
}

func f32(vs ...float32) []byte {
	b := make([]byte, 0, 4*len(vs))
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

func TestRuntimeRoundTrip(t *testing.T) {
	c := dialRuntime(t, scaleRuntime{})
	ctx := context.Background()
	info, err := c.Describe(ctx)
	if err != nil || *info != (RuntimeInfo{Name: "scale", Version: "3", Description: "doubles"}) {
		t.Fatalf("Describe = %+v, %v", info, err)
	}
	x := &onnxpb.TensorProto{Name: proto.String("x"), Dims: []int64{3}, DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)),
		RawData: f32(1.5, -2, 0.25)}
	outs, err := c.Run(ctx, "/m.onnx", []*onnxpb.TensorProto{x}, RunOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].GetName() != "yx" || string(outs[0].GetRawData()) != string(f32(4, -3, 1.5)) {
		t.Errorf("Run = %v", outs)
	}
	_, err = c.Run(ctx, "/m.onnx", []*onnxpb.TensorProto{x}, RunOptions{Options: map[string]string{"fail": "bad op"}})
	if st, _ := status.FromError(err); st.Code() != codes.Unknown || st.Message() != "model /m.onnx: bad op" {
		t.Errorf("failing Run: %v", err)
	}
	if _, err := c.Run(ctx, "", nil, RunOptions{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("Run without a model: %v", err)
	}
	if _, err := c.Run(ctx, "/m.onnx", []*onnxpb.TensorProto{nil}, RunOptions{}); err == nil || !strings.Contains(err.Error(), "input 0 is nil") {
		t.Errorf("nil input: %v", err)
	}
	// Garbage instead of a TensorProto.
	_, err = c.client.Run(ctx, &pluginpb.RunRequest{ModelPath: "/m.onnx", Inputs: [][]byte{{0xff, 0xff, 0xff}}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "input 0 is not a TensorProto") {
		t.Errorf("garbage input: %v", err)
	}
	// A plugin without a runtime answers Unimplemented.
	none := dialRuntime(t, nil)
	if _, err := none.Describe(ctx); status.Code(err) != codes.Unimplemented {
		t.Errorf("no runtime: Describe error %v", err)
	}
	if set := PluginSet(nil, nil); set[RuntimePluginName] == nil {
		t.Error("PluginSet lacks the runtime service")
	}
}
