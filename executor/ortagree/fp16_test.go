//go:build cgo

package ortagree

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes/ort"
)

// fp16CNN is a float16 CNN with a float32 input and output, as a float16
// conversion leaves one: Cast to float16, two 3×3 Convs with float16
// weights, Relu, Sigmoid gating, Add, a Cast back.
func fp16CNN() *onnxpb.ModelProto {
	rng := rand.New(rand.NewPCG(45, 16))
	f16 := func(n int, scale float64) []byte {
		var b []byte
		for range n {
			b = binary.LittleEndian.AppendUint16(b, canonical.Float32ToFloat16(float32(rng.NormFloat64()*scale)))
		}
		return b
	}
	init := func(name string, dims []int64, scale float64) *onnxpb.TensorProto {
		n := int64(1)
		for _, d := range dims {
			n *= d
		}
		return &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT16)), Dims: dims, RawData: f16(int(n), scale)}
	}
	node := func(op string, ins, outs []string, attrs ...*onnxpb.AttributeProto) *onnxpb.NodeProto {
		return &onnxpb.NodeProto{OpType: proto.String(op), Name: proto.String(outs[0]), Input: ins, Output: outs, Attribute: attrs}
	}
	ints := func(name string, v ...int64) *onnxpb.AttributeProto {
		return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: v}
	}
	to := func(dt onnxpb.TensorProto_DataType) *onnxpb.AttributeProto {
		return &onnxpb.AttributeProto{Name: proto.String("to"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(int64(dt))}
	}
	vi := func(name string) *onnxpb.ValueInfoProto {
		return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: canonical.TensorType(canonical.Float, []int64{1, 8, 24, 24})}
	}
	return &onnxpb.ModelProto{
		IrVersion:   proto.Int64(8),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(17)}},
		Graph: &onnxpb.GraphProto{
			Name: proto.String("fp16_cnn"),
			Node: []*onnxpb.NodeProto{
				node("Conv", []string{"x16", "w1", "b1"}, []string{"c1"}, ints("pads", 1, 1, 1, 1)),
				node("Relu", []string{"c1"}, []string{"r1"}),
				node("Conv", []string{"r1", "w2", "b2"}, []string{"c2"}, ints("pads", 1, 1, 1, 1)),
				node("Sigmoid", []string{"c2"}, []string{"g"}),
				node("Mul", []string{"r1", "g"}, []string{"m"}),
				node("Add", []string{"m", "c1"}, []string{"y16"}),
				node("Cast", []string{"y16"}, []string{"y"}, to(onnxpb.TensorProto_FLOAT)),
				node("Cast", []string{"x"}, []string{"x16"}, to(onnxpb.TensorProto_FLOAT16)),
			},
			Initializer: []*onnxpb.TensorProto{
				init("w1", []int64{8, 8, 3, 3}, 0.25), init("b1", []int64{8}, 0.5),
				init("w2", []int64{8, 8, 3, 3}, 0.25), init("b2", []int64{8}, 0.5),
			},
			Input:  []*onnxpb.ValueInfoProto{vi("x")},
			Output: []*onnxpb.ValueInfoProto{vi("y")},
		},
	}
}

// TestFloat16AsORT: on a float16 CNN (float32 in and out), the executor
// with Float16AsORT (float32 inside, as ONNX Runtime's CPU provider runs
// float16 nodes) differs from ONNX Runtime by no more than ONNX Runtime
// with all graph optimizations differs from itself without them (plus
// one float32 rounding of the largest value), and by less than the
// executor rounding every float16 step does.
func TestFloat16AsORT(t *testing.T) {
	rt, err := ort.Open(testpaths.ORT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "model.onnx")
	b, err := proto.Marshal(fp16CNN())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	xs := make([]float32, 8*24*24)
	for i := range xs {
		xs[i] = float32(rng.NormFloat64())
	}
	x := canonical.Float32Tensor("x", []int64{1, 8, 24, 24}, xs)
	xp, err := canonical.TensorToProto(x)
	if err != nil {
		t.Fatal(err)
	}
	runORT := func(opts ...ort.SessionOption) []float32 {
		s, err := rt.NewSession(path, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		outs, err := s.Run([]*onnxpb.TensorProto{xp})
		if err != nil {
			t.Fatal(err)
		}
		y, err := canonical.TensorFromProto(outs[0])
		if err != nil {
			t.Fatal(err)
		}
		v, err := y.Float32s()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ortAll, ortNone := runORT(), runORT(ort.WithoutOptimization())
	m, err := canonical.Load(path, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	runExec := func(asORT bool) []float32 {
		ex, err := executor.New(m, executor.Options{Threads: 1, Float16AsORT: asORT})
		if err != nil {
			t.Fatal(err)
		}
		defer ex.Close()
		outs, err := ex.Run(context.Background(), []*canonical.Tensor{x})
		if err != nil {
			t.Fatal(err)
		}
		v, err := outs[0].Float32s()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	asORT, rounding := runExec(true), runExec(false)
	maxDiff := func(a, b []float32) (d, big float64) {
		for i := range a {
			d = max(d, math.Abs(float64(a[i]-b[i])))
			big = max(big, math.Abs(float64(b[i])))
		}
		return d, big
	}
	noise, big := maxDiff(ortNone, ortAll)
	dORT, _ := maxDiff(asORT, ortAll)
	dRound, _ := maxDiff(rounding, ortAll)
	t.Logf("max |difference| from ONNX Runtime (all optimizations), values up to %.3g: ONNX Runtime without optimizations %.3g, executor as ONNX Runtime %.3g, executor rounding every step %.3g", big, noise, dORT, dRound)
	if limit := noise + big*math.Pow(2, -20); dORT > limit {
		t.Errorf("executor as ONNX Runtime differs by %.3g, more than ONNX Runtime's own %.3g", dORT, noise)
	}
	if dORT >= dRound {
		t.Errorf("executor as ONNX Runtime differs by %.3g, not less than rounding every step (%.3g)", dORT, dRound)
	}
}
