package tflite

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
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

// TestPoolAfterRefusal: a LiteRT.js process that refuses a model
// (int64_io: INT64 inputs), fresh or lent, gives the refusal a process of
// its own gives and is not lent again (an interpreter that refused a model
// may be left in any state: CI once saw a pooled process never answer its
// next load), and the next model (cnn) gets the bytes a process of its own
// computes.
func TestPoolAfterRefusal(t *testing.T) {
	testpaths.Node(t, Package, LiteRTPackage)
	env := realEnv(t)
	fixtures := filepath.Join(testpaths.RepoRoot(t), "fixtures", "tflite")
	cnn, i64 := filepath.Join(fixtures, "cnn.tflite"), filepath.Join(fixtures, "int64_io.tflite")
	xs := make([]byte, 4*8*8*3)
	for i := 0; i < 8*8*3; i++ {
		binary.LittleEndian.PutUint32(xs[4*i:], math.Float32bits(float32(math.Sin(float64(i)*0.7))))
	}
	in := []*onnxpb.TensorProto{{Name: proto.String("input"), DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), Dims: []int64{1, 8, 8, 3}, RawData: xs}}
	lrt := Options{Interpreters: []Interpreter{LiteRT}}
	ctx := context.Background()
	pool := NewPool(ctx, env)
	defer pool.Close()

	// A fresh process refusing its first model is not kept.
	_, alone := OpenWith(ctx, env, i64, lrt)
	var re *RunError
	if !errors.As(alone, &re) || re.Kind != "load" {
		t.Fatalf("int64_io in LiteRT.js: %v, want a load refusal", alone)
	}
	if _, err := pool.OpenWith(ctx, i64, lrt); err == nil || err.Error() != alone.Error() {
		t.Fatalf("int64_io from an empty pool: %v, want %v", err, alone)
	}
	if c := pool.take(LiteRT); c != nil {
		c.Close()
		t.Fatal("the pool kept a process that refused its first model")
	}

	s, err := pool.OpenWith(ctx, cnn, lrt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx, in); err != nil {
		t.Fatal(err)
	}
	first := s.conn
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.OpenWith(ctx, i64, lrt); err == nil || err.Error() != alone.Error() {
		t.Fatalf("int64_io in a lent process: %v, want %v", err, alone)
	}
	s, err = pool.OpenWith(ctx, cnn, lrt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.conn == first {
		t.Errorf("cnn after the refusal got the process that refused int64_io, want a new one")
	}
	got, err := s.Run(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	want, err := RunLiteRT(ctx, env, cnn, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Outputs) != 1 || len(want.Outputs) != 1 || len(got.Outputs[0].GetRawData()) == 0 ||
		!bytes.Equal(got.Outputs[0].GetRawData(), want.Outputs[0].GetRawData()) {
		t.Errorf("cnn after a refusal in the same process differs from a process of its own")
	}
}
