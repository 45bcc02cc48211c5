// Package testmodels builds small float models for tests in Go (no
// Python): weights from fixed seeds, so every build is the same model.
package testmodels

import (
	"math"
	"math/rand/v2"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// SEResNet builds a small CNN (opset 13, input [1, 3, 16, 16], output
// [1, 10] probabilities) with the ops static quantization wraps beyond
// Conv and Gemm: a 3x3 convolution with ReLU, a 2x2 MaxPool, a residual
// block (two 3x3 convolutions, Add of the block input, ReLU), a
// squeeze-and-excitation block (GlobalAveragePool, 1x1 convolutions with
// ReLU, Sigmoid, Mul), Concat of that with the residual block's input,
// a 1x1 convolution with LeakyRelu, a 2x2 AveragePool, GlobalAveragePool,
// Flatten, a Gemm classifier and, with softmax, Softmax (else the output
// is the Gemm's logits). Weights are He-normal and biases N(0, 0.1²) from
// a fixed seed.
func SEResNet(softmax bool) (*canonical.Model, error) {
	r := rand.New(rand.NewPCG(40, 42))
	b := build.New(13)
	b.Reserve("input", "output")
	weights := func(dims ...int64) string { return HeNormal(b, r, dims...) }
	bias := func(n int64) string { return Bias(b, r, n) }
	conv := func(x string, cin, cout, k int64, relu bool) string {
		y := b.Op("Conv", "conv", []string{x, weights(cout, cin, k, k), bias(cout)},
			canonical.IntsAttr("kernel_shape", k, k), canonical.IntsAttr("pads", k/2, k/2, k/2, k/2))
		if relu {
			y = b.Op("Relu", "relu", []string{y})
		}
		return y
	}
	pool := []*canonical.Attribute{canonical.IntsAttr("kernel_shape", 2, 2), canonical.IntsAttr("strides", 2, 2)}
	x := conv("input", 3, 16, 3, true)
	x = b.Op("MaxPool", "maxpool", []string{x}, pool...)
	// residual block
	h := conv(conv(x, 16, 16, 3, true), 16, 16, 3, false)
	res := b.Op("Relu", "relu", []string{b.Op("Add", "residual", []string{h, x})})
	// squeeze and excitation
	s := b.Op("GlobalAveragePool", "squeeze", []string{res})
	s = b.Op("Sigmoid", "excite", []string{conv(conv(s, 16, 4, 1, true), 4, 16, 1, false)})
	se := b.Op("Mul", "scale", []string{res, s})
	y := b.Op("Concat", "concat", []string{se, x}, canonical.IntAttr("axis", 1))
	y = b.Op("LeakyRelu", "leaky", []string{conv(y, 32, 16, 1, false)}, canonical.FloatAttr("alpha", 0.1))
	y = b.Op("AveragePool", "avgpool", []string{y}, pool...)
	y = b.Op("Flatten", "flat", []string{b.Op("GlobalAveragePool", "gap", []string{y})})
	if softmax {
		y = b.Op("Gemm", "fc", []string{y, weights(10, 16), bias(10)}, canonical.IntAttr("transB", 1))
		b.OpTo("Softmax", "output", []string{y}, canonical.IntAttr("axis", 1))
	} else {
		b.OpTo("Gemm", "output", []string{y, weights(10, 16), bias(10)}, canonical.IntAttr("transB", 1))
	}
	return b.Model("se_resnet", []build.Info{build.TensorInfo("input", canonical.Float, []int64{1, 3, 16, 16}, false)},
		[]build.Info{build.TensorInfo("output", canonical.Float, []int64{1, 10}, false)})
}

// HeNormal adds a float32 weight initializer of dims to b, He-normal
// (N(0, 2/fan_in), fan_in the product of dims after the first) from r.
func HeNormal(b *build.Builder, r *rand.Rand, dims ...int64) string {
	n, fan := int64(1), int64(1)
	for i, d := range dims {
		n *= d
		if i > 0 {
			fan *= d
		}
	}
	w := make([]float32, n)
	for i := range w {
		w[i] = float32(r.NormFloat64() * math.Sqrt(2/float64(fan)))
	}
	return b.F32("w", dims, w)
}

// Bias adds a float32 bias initializer of n values N(0, 0.1²) from r to b.
func Bias(b *build.Builder, r *rand.Rand, n int64) string {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(0.1 * r.NormFloat64())
	}
	return b.F32("b", []int64{n}, v)
}
