package tflite

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestPool runs two models in turn through one pool, each twice, one in
// LiteRT.js (cnn), one in tfjs-tflite (int64 inputs): every answer is the
// one a process of its own gives, byte for byte, and the second run of a
// model is served by the process the first left in the pool.
func TestPool(t *testing.T) {
	testpaths.Node(t, Package, LiteRTPackage)
	env := realEnv(t)
	fixtures := filepath.Join(testpaths.RepoRoot(t), "fixtures", "tflite")
	xs := make([]byte, 4*8*8*3)
	for i := 0; i < 8*8*3; i++ {
		binary.LittleEndian.PutUint32(xs[4*i:], math.Float32bits(float32(math.Sin(float64(i)))))
	}
	xb, ib := make([]byte, 4*10), make([]byte, 8*10)
	for i := 0; i < 10; i++ {
		binary.LittleEndian.PutUint32(xb[4*i:], math.Float32bits(float32(i)/7-0.5))
		binary.LittleEndian.PutUint64(ib[8*i:], uint64(int64(i*i-30)))
	}
	models := []struct {
		file string
		in   []*onnxpb.TensorProto
		want Interpreter
	}{
		{"cnn.tflite", []*onnxpb.TensorProto{{Name: proto.String("input"), DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), Dims: []int64{1, 8, 8, 3}, RawData: xs}}, LiteRT},
		{"int64_io.tflite", []*onnxpb.TensorProto{
			{Name: proto.String("x"), DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), Dims: []int64{2, 5}, RawData: xb},
			{Name: proto.String("ids"), DataType: proto.Int32(int32(onnxpb.TensorProto_INT64)), Dims: []int64{2, 5}, RawData: ib}}, TFJSTFLite},
	}
	ctx := context.Background()
	pool := NewPool(ctx, env)
	defer pool.Close()
	served := map[Interpreter]any{}
	for round := 0; round < 2; round++ {
		for _, m := range models {
			path := filepath.Join(fixtures, m.file)
			alone, err := Run(ctx, env, path, m.in, 1)
			if err != nil {
				t.Fatal(err)
			}
			s, err := pool.OpenWith(ctx, path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if s.cur != m.want {
				t.Errorf("%s: served by %s, want %s", m.file, s.cur, m.want)
			}
			if round == 1 && served[s.cur] != s.conn {
				t.Errorf("%s: round 2 started a process, want the pool's", m.file)
			}
			served[s.cur] = s.conn
			got, err := s.Run(ctx, m.in)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if len(got.Outputs) != len(alone.Outputs) {
				t.Fatalf("%s: %d outputs, alone %d", m.file, len(got.Outputs), len(alone.Outputs))
			}
			for i := range got.Outputs {
				if !bytes.Equal(got.Outputs[i].GetRawData(), alone.Outputs[i].GetRawData()) || len(got.Outputs[i].GetRawData()) == 0 {
					t.Errorf("%s output %d: pooled %d bytes differ from a process of its own", m.file, i, len(got.Outputs[i].GetRawData()))
				}
			}
		}
	}
}
