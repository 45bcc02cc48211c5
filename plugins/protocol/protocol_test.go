package protocol

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/formats/formatinfo"
	"github.com/onnxconv/onnxconv/options"
	"github.com/onnxconv/onnxconv/plugins/pluginpb"
)

type fakeImporter struct{}

func (fakeImporter) Describe(context.Context) (*ImporterInfo, error) {
	return &ImporterInfo{Description: formatinfo.Description{Name: "f", Extensions: []string{".f"}, Magic: []Magic{{Offset: 8, Bytes: []byte{0, 1, 2}}}, Summary: "d",
		Options: testSpecs(), Runtime: "rt"}, Version: "2", Predictor: true}, nil
}

func (fakeImporter) OpenSource(_ context.Context, in string, opts map[string]string) (string, error) {
	return "source " + in + " " + opts["k"], nil
}

// Predict doubles the first input's name.
func (fakeImporter) Predict(_ context.Context, inputs []*onnxpb.TensorProto) ([]*onnxpb.TensorProto, error) {
	return []*onnxpb.TensorProto{{Name: proto.String(inputs[0].GetName() + inputs[0].GetName()), Dims: inputs[0].GetDims()}}, nil
}

func (fakeImporter) Detect(_ context.Context, path string, head []byte) (bool, float32, error) {
	return path == "x.f" && len(head) == 3, 0.75, nil
}

func (fakeImporter) Import(ctx context.Context, in, out string, opts map[string]string) ([]string, error) {
	switch opts["fail"] {
	case "deadline":
		return nil, fmt.Errorf("reading: %w", context.DeadlineExceeded)
	case "plain":
		return nil, errors.New("line 2: bad row")
	}
	return []string{in + ">" + out + ":" + opts["k"]}, nil
}

// dial serves imp and/or exp over an in-memory connection and returns the
// host-side clients.
func dial(t *testing.T, imp Importer, exp Exporter) (*ImporterGRPCClient, *ExporterGRPCClient) {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer()
	pluginpb.RegisterImporterServer(s, &ImporterGRPCServer{Impl: imp})
	pluginpb.RegisterExporterServer(s, &ExporterGRPCServer{Impl: exp})
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) { return lis.Dial() }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &ImporterGRPCClient{client: pluginpb.NewImporterClient(conn)}, &ExporterGRPCClient{client: pluginpb.NewExporterClient(conn)}
}

func TestRoundTrip(t *testing.T) {
	ic, ec := dial(t, fakeImporter{}, nil)
	ctx := context.Background()
	info, err := ic.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "f" || info.Format != "f" || info.Version != "2" || info.Summary != "d" ||
		len(info.Magic) != 1 || info.Magic[0].Offset != 8 || string(info.Magic[0].Bytes) != "\x00\x01\x02" ||
		!reflect.DeepEqual(info.Options, testSpecs()) || info.Runtime != "rt" || !info.Predictor {
		t.Errorf("Describe = %+v", info)
	}
	d, err := ic.OpenSource(ctx, "/a", map[string]string{"k": "v"})
	if err != nil || d != "source /a v" {
		t.Errorf("OpenSource = %q %v", d, err)
	}
	outs, err := ic.Predict(ctx, []*onnxpb.TensorProto{{Name: proto.String("x"), Dims: []int64{2, 3}}})
	if err != nil || len(outs) != 1 || outs[0].GetName() != "xx" || len(outs[0].GetDims()) != 2 {
		t.Errorf("Predict = %v %v", outs, err)
	}
	ok, conf, err := ic.Detect(ctx, "x.f", []byte("abc"))
	if !ok || conf != 0.75 || err != nil {
		t.Errorf("Detect = %v %v %v", ok, conf, err)
	}
	w, err := ic.Import(ctx, "/a", "/b", map[string]string{"k": "v"})
	if err != nil || len(w) != 1 || w[0] != "/a>/b:v" {
		t.Errorf("Import = %q %v", w, err)
	}
	_, err = ic.Import(ctx, "/a", "/b", map[string]string{"fail": "deadline"})
	if status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("deadline error: %v", err)
	}
	_, err = ic.Import(ctx, "/a", "/b", map[string]string{"fail": "plain"})
	if st, _ := status.FromError(err); st.Code() != codes.Unknown || st.Message() != "line 2: bad row" {
		t.Errorf("plain error: %v", err)
	}
	// No exporter served: Unimplemented, which the host reads as "not an
	// exporter".
	if _, err := ec.Describe(ctx); status.Code(err) != codes.Unimplemented {
		t.Errorf("exporter Describe: %v", err)
	}
}

// testSpecs are option specs of every kind, each field set: the protocol
// carries them whole.
func testSpecs() []options.Spec {
	lo, hi := -2, 9
	return []options.Spec{
		{Name: "k", Doc: "a key"},
		{Name: "n", Kind: options.KindInt, Default: "3", Min: &lo, Max: &hi, Doc: "a number"},
		{Name: "m", Kind: options.KindInt, Min: &lo},
		{Name: "e", Kind: options.KindEnum, Default: "b", Values: []string{"a", "b"}},
		{Name: "b", Kind: options.KindBool, Default: "false"},
		{Name: "l", Kind: options.KindList},
	}
}
