package executor_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxtext"
	"github.com/onnxconv/onnxconv/executor"
)

// nbitsModel is a one-op com.microsoft MatMulNBits model: A [m, K], int4
// B in blocks of block (the last one padded when K is not a multiple),
// packed uint8 zero points, a bias; random values from seed.
func nbitsModel(t testing.TB, m, K, N, block int, seed uint64) *canonical.Model {
	r := rand.New(rand.NewPCG(seed, 1))
	blocks := (K + block - 1) / block
	list := func(n int, f func() string) string {
		s := make([]string, n)
		for i := range s {
			s[i] = f()
		}
		return strings.Join(s, ", ")
	}
	bytes := func() string { return fmt.Sprint(r.IntN(256)) }
	floats := func() string { return fmt.Sprintf("%.4f", 0.01+0.2*r.Float64()) }
	src := fmt.Sprintf(`<ir_version: 9, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[%d,%d] a) => (float[%d,%d] y)
  <uint8[%d,%d,%d] b = {%s}, float[%d] s = {%s}, uint8[%d] zp = {%s}, float[%d] bias = {%s}>
{
  y = com.microsoft.MatMulNBits <K: int = %d, N: int = %d, bits: int = 4, block_size: int = %d> (a, b, s, zp, , bias)
}`, m, K, m, N, N, blocks, block/2, list(N*blocks*block/2, bytes), N*blocks, list(N*blocks, floats),
		N*((blocks+1)/2), list(N*((blocks+1)/2), bytes), N, list(N, floats), K, N, block)
	mp, err := onnxtext.Parse("nbits", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	md, err := canonical.FromProto(mp, "")
	if err != nil {
		t.Fatal(err)
	}
	return md
}

func nbitsInput(m, K int) *canonical.Tensor {
	raw := make([]byte, 4*m*K)
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < m*K; i++ {
		bits := math.Float32bits(float32(r.NormFloat64()))
		raw[4*i], raw[4*i+1], raw[4*i+2], raw[4*i+3] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
	}
	return canonical.NewTensor("a", canonical.Float, []int64{int64(m), int64(K)}, raw)
}

func runNBits(t testing.TB, md *canonical.Model, opts executor.Options, a *canonical.Tensor) []float32 {
	e, err := executor.New(md, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.Run(context.Background(), []*canonical.Tensor{a})
	if err != nil {
		t.Fatal(err)
	}
	y, err := res[0].Float32s()
	if err != nil {
		t.Fatal(err)
	}
	return y
}

// TestMatMulNBitsKernel: the float32 kernel path (kernels.MatMulNBits) and
// the float64 reference path (DisableKernels) of MatMulNBits agree, for a
// decode row and a prefill block, N over one chunk of 128 columns, K with a
// padded last block. (ONNX Runtime's numbers: runtimes/ortnode
// TestMatMulNBitsLikeORT.)
func TestMatMulNBitsKernel(t *testing.T) {
	for _, c := range []struct{ m, K, N, block int }{{1, 72, 200, 16}, {5, 64, 130, 32}} {
		md := nbitsModel(t, c.m, c.K, c.N, c.block, uint64(c.K))
		a := nbitsInput(c.m, c.K)
		ref := runNBits(t, md, executor.Options{DisableKernels: true}, a)
		for _, threads := range []int{1, 2} {
			got := runNBits(t, md, executor.Options{Threads: threads}, a)
			if len(got) != len(ref) {
				t.Fatalf("%d values, reference %d", len(got), len(ref))
			}
			for i := range ref {
				if d := math.Abs(float64(got[i] - ref[i])); d > 1e-4*(1+math.Abs(float64(ref[i]))) {
					t.Fatalf("%+v threads %d: y[%d] = %v, reference %v", c, threads, i, got[i], ref[i])
				}
			}
		}
	}
}

// BenchmarkMatMulNBitsDecode: one decode row through a 1024×1024 int4
// MatMulNBits, the kernel path against the float64 path.
func BenchmarkMatMulNBitsDecode(b *testing.B) {
	md := nbitsModel(b, 1, 1024, 1024, 32, 3)
	a := nbitsInput(1, 1024)
	for _, bc := range []struct {
		name string
		opts executor.Options
	}{{"kernel", executor.Options{Threads: 1}}, {"float64", executor.Options{Threads: 1, DisableKernels: true}}} {
		b.Run(bc.name, func(b *testing.B) {
			e, err := executor.New(md, bc.opts)
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			for i := 0; i < b.N; i++ {
				if _, err := e.Run(context.Background(), []*canonical.Tensor{a}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
