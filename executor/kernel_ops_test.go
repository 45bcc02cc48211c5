package executor

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

func readTensorFile(t testing.TB, p string) *canonical.Tensor {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	tp := &onnxpb.TensorProto{}
	if err := proto.Unmarshal(b, tp); err != nil {
		t.Fatal(err)
	}
	x, err := canonical.TensorFromProto(tp)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// loadModelDir loads dir/model.onnx (closed when the test ends) and the
// inputs stored in dir/test_data_set_0 (input_0.pb, input_1.pb, …).
func loadModelDir(t testing.TB, dir string) (*canonical.Model, []*canonical.Tensor) {
	t.Helper()
	m, err := canonical.Load(filepath.Join(dir, "model.onnx"), canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	var ins []*canonical.Tensor
	for i := 0; ; i++ {
		p := filepath.Join(dir, "test_data_set_0", "input_"+strconv.Itoa(i)+".pb")
		if _, err := os.Stat(p); err != nil {
			break
		}
		ins = append(ins, readTensorFile(t, p))
	}
	return m, ins
}

// TestKernelsOnFixtures runs the fixture models with executor/kernels on
// 1 and 2 threads and without them: every run matches the outputs torch
// computed (stored with the fixture), and the two thread counts give
// bit-identical outputs.
func TestKernelsOnFixtures(t *testing.T) {
	root := filepath.Join("..", "fixtures", "models")
	for _, name := range []string{"resnet_small", "squeezenet", "transformer_encoder", "transformer_block_opset21", "mlp_opset9", "detector_head", "unet", "mobilenet_small", "shufflenet_small", "mobilenet_v3_se", "regnet_small"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(root, name)
			m, ins := loadModelDir(t, dir)
			var want []*canonical.Tensor
			want = append(want, readTensorFile(t, filepath.Join(dir, "test_data_set_0", "output_0.pb")))
			var byThreads [][]float32
			for _, opts := range []Options{{Threads: 1}, {Threads: 2}, {DisableKernels: true}} {
				ex, err := New(m, opts)
				if err != nil {
					t.Fatal(err)
				}
				if (ex.kern != nil) == opts.DisableKernels {
					t.Fatalf("%+v: kernels in use = %v", opts, ex.kern != nil)
				}
				var got []float32
				for rep := 0; rep < 2; rep++ { // build, then replay the plan
					outs, err := ex.Run(context.Background(), ins)
					if err != nil {
						t.Fatal(err)
					}
					got = floats(t, outs[0])
				}
				ex.Close()
				w := floats(t, want[0])
				if len(got) != len(w) {
					t.Fatalf("%+v: %d outputs, want %d", opts, len(got), len(w))
				}
				for i := range w {
					if d := math.Abs(float64(got[i] - w[i])); d > 1e-4+1e-3*math.Abs(float64(w[i])) {
						t.Fatalf("%+v: output[%d] = %g, torch computed %g", opts, i, got[i], w[i])
					}
				}
				if !opts.DisableKernels {
					byThreads = append(byThreads, got)
				}
			}
			for i := range byThreads[0] {
				if math.Float32bits(byThreads[0][i]) != math.Float32bits(byThreads[1][i]) {
					t.Fatalf("output[%d]: 1 thread %g, 2 threads %g", i, byThreads[0][i], byThreads[1][i])
				}
			}
		})
	}
}

// TestBcastKind: the broadcasts the host Add/Mul take, and those they
// leave to GoMLX.
func TestBcastKind(t *testing.T) {
	for _, c := range []struct {
		a, b     []int
		big      int
		suffix   bool
		inner    int
		accepted bool
	}{
		{[]int{2, 3, 4}, []int{2, 3, 4}, 0, true, 0, true},
		{[]int{2, 3, 4}, []int{4}, 0, true, 0, true},
		{[]int{4}, []int{2, 3, 4}, 1, true, 0, true},
		{[]int{2, 3, 4}, []int{1, 1, 4}, 0, true, 0, true},
		{[]int{2, 3, 4}, nil, 0, true, 0, true},
		{[]int{1, 8, 5, 5}, []int{1, 8, 1, 1}, 0, false, 25, true},
		{[]int{8, 1, 1}, []int{2, 8, 5, 5}, 0, false, 0, false}, // [1,8,1,1] against N = 2
		{[]int{1, 8, 1, 1}, []int{1, 8, 5, 5}, 1, false, 25, true},
		{[]int{2, 3, 4}, []int{3, 1}, 0, false, 0, false},
		{[]int{2, 3, 4}, []int{2, 3, 1}, 0, false, 4, true},
	} {
		big, suffix, inner, ok := bcastKind(c.a, c.b)
		if ok != c.accepted || ok && (big != c.big || suffix != c.suffix || inner != c.inner) {
			t.Errorf("bcastKind(%v, %v) = %d, %v, %d, %v; want %d, %v, %d, %v", c.a, c.b, big, suffix, inner, ok, c.big, c.suffix, c.inner, c.accepted)
		}
	}
}
