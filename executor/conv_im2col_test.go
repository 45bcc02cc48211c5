package executor

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// convCase is one Conv (or MaxPool) configuration, 1 to 3 spatial dims.
type convCase struct {
	n, c, m int
	in      []int // spatial input dims
	kernel  []int
	strides []int
	dil     []int
	pads    []int // begin..., end...
	group   int
	bias    bool
	autoPad string
	wInput  bool // weights as a graph input, not an initializer
}

func (cc convCase) String() string {
	return fmt.Sprintf("n%d_c%d_m%d_in%v_k%v_s%v_d%v_p%v_g%d_b%v_%s_w%v", cc.n, cc.c, cc.m, cc.in, cc.kernel, cc.strides, cc.dil, cc.pads, cc.group, cc.bias, cc.autoPad, cc.wInput)
}

func ints64(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

func randFloats(r *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64())
	}
	return out
}

func prod(v []int) int {
	p := 1
	for _, x := range v {
		p *= x
	}
	return p
}

// refConv is a direct ONNX Conv in float64 (explicit pads).
func refConv(cc convCase, x, w, b []float32) ([]int, []float64) {
	ns := len(cc.in)
	out := make([]int, ns)
	for i := 0; i < ns; i++ {
		ek := (cc.kernel[i]-1)*cc.dil[i] + 1
		out[i] = (cc.in[i]+cc.pads[i]+cc.pads[i+ns]-ek)/cc.strides[i] + 1
	}
	cg, mg := cc.c/cc.group, cc.m/cc.group
	p, k, s := prod(out), prod(cc.kernel), prod(cc.in)
	y := make([]float64, cc.n*cc.m*p)
	opos := make([]int, ns)
	kpos := make([]int, ns)
	for n := 0; n < cc.n; n++ {
		for m := 0; m < cc.m; m++ {
			grp := m / mg
			for pi := 0; pi < p; pi++ {
				rem := pi
				for i := ns - 1; i >= 0; i-- {
					opos[i] = rem % out[i]
					rem /= out[i]
				}
				sum := 0.0
				if b != nil {
					sum = float64(b[m])
				}
				for ci := 0; ci < cg; ci++ {
					cin := grp*cg + ci
					for ki := 0; ki < k; ki++ {
						rem := ki
						for i := ns - 1; i >= 0; i-- {
							kpos[i] = rem % cc.kernel[i]
							rem /= cc.kernel[i]
						}
						flat, ok := 0, true
						for i := 0; i < ns; i++ {
							q := opos[i]*cc.strides[i] - cc.pads[i] + kpos[i]*cc.dil[i]
							if q < 0 || q >= cc.in[i] {
								ok = false
								break
							}
							flat = flat*cc.in[i] + q
						}
						if ok {
							sum += float64(x[(n*cc.c+cin)*s+flat]) * float64(w[(m*cg+ci)*k+ki])
						}
					}
				}
				y[(n*cc.m+m)*p+pi] = sum
			}
		}
	}
	return append([]int{cc.n, cc.m}, out...), y
}

func runConvCase(t *testing.T, cc convCase, r *rand.Rand) {
	t.Helper()
	ns := len(cc.in)
	x := randFloats(r, cc.n*cc.c*prod(cc.in))
	w := randFloats(r, cc.m*(cc.c/cc.group)*prod(cc.kernel))
	var b []float32
	m, g := newModel(17)
	xv := must(g.AddInput("x", nil))
	wt := f32Tensor("w", ints64(append([]int{cc.m, cc.c / cc.group}, cc.kernel...)), w...)
	var wv *canonical.Value
	if cc.wInput {
		wv = must(g.AddInput("w", nil))
	} else {
		wv = must(g.AddInitializer(wt))
	}
	ins := []*canonical.Value{xv, wv}
	if cc.bias {
		b = randFloats(r, cc.m)
		ins = append(ins, must(g.AddInitializer(f32Tensor("b", []int64{int64(cc.m)}, b...))))
	}
	attrs := []*canonical.Attribute{
		canonical.IntsAttr("kernel_shape", ints64(cc.kernel)...),
		canonical.IntsAttr("strides", ints64(cc.strides)...),
		canonical.IntsAttr("dilations", ints64(cc.dil)...),
		canonical.IntAttr("group", int64(cc.group)),
	}
	if cc.autoPad != "" {
		attrs = append(attrs, canonical.StringAttr("auto_pad", cc.autoPad))
	} else {
		attrs = append(attrs, canonical.IntsAttr("pads", ints64(cc.pads)...))
	}
	n := must(g.AddNode("conv", "", "Conv", ins, []string{"y"}, attrs...))
	g.Outputs = []*canonical.Value{n.Outputs[0]}
	e := must(New(m, Options{}))
	defer e.Close()
	xdims := ints64(append([]int{cc.n, cc.c}, cc.in...))
	feeds := []*canonical.Tensor{f32Tensor("x", xdims, x...)}
	if cc.wInput {
		feeds = append(feeds, wt)
	}
	out, err := e.Run(context.Background(), feeds)
	if err != nil {
		t.Fatal(err)
	}
	if cc.autoPad == "SAME_UPPER" {
		// resolve the pads as ONNX does, for the reference
		cc.pads = make([]int, 2*ns)
		for i := 0; i < ns; i++ {
			o := (cc.in[i] + cc.strides[i] - 1) / cc.strides[i]
			total := max((o-1)*cc.strides[i]+(cc.kernel[i]-1)*cc.dil[i]+1-cc.in[i], 0)
			cc.pads[i], cc.pads[i+ns] = total/2, total-total/2
		}
	}
	dims, want := refConv(cc, x, w, b)
	if fmt.Sprint(out[0].Dims) != fmt.Sprint(ints64(dims)) {
		t.Fatalf("dims %v, want %v", out[0].Dims, dims)
	}
	got := floats(t, out[0])
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); d > 1e-4+1e-4*math.Abs(want[i]) {
			t.Fatalf("y[%d] = %g, want %g (diff %g)", i, got[i], want[i], d)
		}
	}
}

// TestConvIm2col checks Conv on the pure-Go backend (im2col, 1×1, grouped,
// depthwise and Winograd paths) against a direct float64 convolution.
func TestConvIm2col(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	one := func(v int, ns int) []int {
		out := make([]int, ns)
		for i := range out {
			out[i] = v
		}
		return out
	}
	cases := []convCase{
		// 3×3 stride 1 pad 1 (Winograd when enabled), odd and even sizes
		{n: 1, c: 16, m: 32, in: []int{15, 15}, kernel: []int{3, 3}, strides: one(1, 2), dil: one(1, 2), pads: one(1, 4), group: 1, bias: true},
		{n: 2, c: 5, m: 7, in: []int{8, 6}, kernel: []int{3, 3}, strides: one(1, 2), dil: one(1, 2), pads: one(1, 4), group: 1},
		{n: 1, c: 3, m: 4, in: []int{3, 3}, kernel: []int{3, 3}, strides: one(1, 2), dil: one(1, 2), pads: one(1, 4), group: 1, bias: true},
		{n: 1, c: 4, m: 6, in: []int{7, 9}, kernel: []int{3, 3}, strides: one(1, 2), dil: one(1, 2), pads: one(0, 4), group: 1},
		// strided, asymmetric pads, 7×7
		{n: 1, c: 3, m: 8, in: []int{20, 20}, kernel: []int{7, 7}, strides: one(2, 2), dil: one(1, 2), pads: one(3, 4), group: 1, bias: true},
		{n: 1, c: 4, m: 5, in: []int{9, 11}, kernel: []int{3, 2}, strides: []int{2, 3}, dil: one(1, 2), pads: []int{1, 0, 2, 1}, group: 1},
		// 1×1, plain and strided, batch 2
		{n: 2, c: 6, m: 4, in: []int{5, 5}, kernel: []int{1, 1}, strides: one(1, 2), dil: one(1, 2), pads: one(0, 4), group: 1, bias: true},
		{n: 1, c: 6, m: 4, in: []int{7, 7}, kernel: []int{1, 1}, strides: one(2, 2), dil: one(1, 2), pads: one(0, 4), group: 1},
		// dilation
		{n: 1, c: 2, m: 3, in: []int{10, 10}, kernel: []int{3, 3}, strides: one(1, 2), dil: one(2, 2), pads: one(2, 4), group: 1},
		// grouped and depthwise
		{n: 2, c: 8, m: 12, in: []int{6, 6}, kernel: []int{3, 3}, strides: one(1, 2), dil: one(1, 2), pads: one(1, 4), group: 4, bias: true},
		{n: 1, c: 6, m: 6, in: []int{7, 7}, kernel: []int{3, 3}, strides: one(2, 2), dil: one(1, 2), pads: one(1, 4), group: 6, bias: true},
		{n: 1, c: 3, m: 6, in: []int{5, 5}, kernel: []int{3, 3}, strides: one(1, 2), dil: one(1, 2), pads: one(1, 4), group: 3},
		// 1-D and 3-D
		{n: 2, c: 3, m: 4, in: []int{17}, kernel: []int{5}, strides: []int{2}, dil: []int{1}, pads: []int{2, 1}, group: 1, bias: true},
		{n: 1, c: 2, m: 3, in: []int{5, 6, 4}, kernel: []int{3, 3, 2}, strides: one(1, 3), dil: one(1, 3), pads: []int{1, 1, 0, 1, 1, 1}, group: 1},
		// weights given at run time (no host-side weight transforms)
		{n: 1, c: 4, m: 6, in: []int{8, 8}, kernel: []int{3, 3}, strides: one(1, 2), dil: one(1, 2), pads: one(1, 4), group: 1, bias: true, wInput: true},
		{n: 2, c: 4, m: 6, in: []int{5, 7}, kernel: []int{2, 3}, strides: one(2, 2), dil: one(1, 2), pads: one(1, 4), group: 2, wInput: true},
		// auto_pad SAME_UPPER
		{n: 1, c: 3, m: 4, in: []int{6, 7}, kernel: []int{3, 3}, strides: one(2, 2), dil: one(1, 2), pads: one(0, 4), group: 1, autoPad: "SAME_UPPER"},
	}
	for _, cc := range cases {
		t.Run(cc.String(), func(t *testing.T) { runConvCase(t, cc, r) })
	}
}

// TestMaxPoolSlices checks MaxPool (strided slices and maximum) against
// expected values, with pads and ceil mode.
func TestMaxPoolSlices(t *testing.T) {
	m, g := newModel(17)
	x := must(g.AddInput("x", nil))
	n := must(g.AddNode("pool", "", "MaxPool", []*canonical.Value{x}, []string{"y"},
		canonical.IntsAttr("kernel_shape", 3, 3), canonical.IntsAttr("strides", 2, 2),
		canonical.IntsAttr("pads", 1, 1, 0, 0), canonical.IntAttr("ceil_mode", 1)))
	g.Outputs = []*canonical.Value{n.Outputs[0]}
	e := must(New(m, Options{}))
	defer e.Close()
	// 1×1×4×4 input 0..15 (negated: padding must not win)
	v := make([]float32, 16)
	for i := range v {
		v[i] = -float32(i)
	}
	out := must(e.Run(context.Background(), []*canonical.Tensor{f32Tensor("x", []int64{1, 1, 4, 4}, v...)}))
	// out dims: ceil((4+1-3)/2)+1 = 2 per axis; windows rows {-1..1},{1..3}
	// (clipped), cols likewise: maxima are the top-left elements -0, -2,
	// -8, -10... i.e. rows 0/1 and cols 0/1 at stride 2 starting at -1.
	want := []float32{0, -1, -4, -5}
	got := floats(t, out[0])
	if fmt.Sprint(out[0].Dims) != "[1 1 2 2]" {
		t.Fatalf("dims %v, want [1 1 2 2]", out[0].Dims)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}
