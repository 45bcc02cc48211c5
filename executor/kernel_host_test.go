package executor

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// hkIn is one input of a host-kernel test node: a float32 graph input or
// initializer of the given shape (random values, positive ones when pos),
// or an int64 initializer (ints).
type hkIn struct {
	shape []int
	init  bool
	pos   bool
	ints  []int64
	none  bool
	two   bool // the scalar 2
}

// TestHostKernelsAgainstReference runs each host kernel of kernel_host.go
// and kernel_rnn.go on odd shapes, on 1, 2 and 3 threads, against the
// executor's reference path for the same node (the GoMLX lowering or the
// float64 host kernel, which the ONNX backend tests check:
// DisableKernels), and checks that the kernel ran.
func TestHostKernelsAgainstReference(t *testing.T) {
	f := func(shape ...int) hkIn { return hkIn{shape: shape} }
	w := func(shape ...int) hkIn { return hkIn{shape: shape, init: true} }
	ints := func(v ...int64) hkIn { return hkIn{ints: v, init: true} }
	a := canonical.IntAttr
	as := canonical.IntsAttr
	cases := []struct {
		name, op string
		opset    int64
		ins      []hkIn
		attrs    []*canonical.Attribute
		outs     int
	}{
		{"lstm_bidirectional", "LSTM", 14, []hkIn{f(5, 3, 6), w(2, 28, 6), w(2, 28, 7), w(2, 56), {none: true}, f(2, 3, 7), f(2, 3, 7)},
			[]*canonical.Attribute{a("hidden_size", 7), canonical.StringAttr("direction", "bidirectional")}, 3},
		{"lstm_layout1", "LSTM", 14, []hkIn{f(3, 5, 6), w(1, 28, 6), w(1, 28, 7), w(1, 56)},
			[]*canonical.Attribute{a("hidden_size", 7), a("layout", 1)}, 3},
		{"lstm_reverse_nobias", "LSTM", 14, []hkIn{f(4, 1, 3), w(1, 20, 3), w(1, 20, 5)},
			[]*canonical.Attribute{a("hidden_size", 5), canonical.StringAttr("direction", "reverse")}, 1},
		{"convtranspose_groups", "ConvTranspose", 17, []hkIn{f(1, 4, 3, 6), w(4, 3, 3, 2), w(6)},
			[]*canonical.Attribute{a("group", 2), as("strides", 2, 3), as("dilations", 1, 2), as("pads", 1, 2, 0, 1), as("output_padding", 1, 0)}, 1},
		{"convtranspose_unet", "ConvTranspose", 17, []hkIn{f(2, 5, 4, 3), w(5, 3, 2, 2), w(3)},
			[]*canonical.Attribute{as("strides", 2, 2)}, 1},
		{"convtranspose_1d", "ConvTranspose", 17, []hkIn{f(1, 3, 9), w(3, 2, 4)}, []*canonical.Attribute{as("strides", 2), as("pads", 1, 2)}, 1},
		{"instancenorm", "InstanceNormalization", 17, []hkIn{f(2, 3, 5, 7), w(3), w(3)}, nil, 1},
		{"batchnorm", "BatchNormalization", 15, []hkIn{f(2, 3, 5, 7), w(3), w(3), w(3), {shape: []int{3}, init: true, pos: true}},
			[]*canonical.Attribute{canonical.FloatAttr("epsilon", 1e-3)}, 1},
		{"avgpool_ceil", "AveragePool", 17, []hkIn{f(1, 2, 7, 9)},
			[]*canonical.Attribute{as("kernel_shape", 3, 3), as("strides", 2, 2), as("pads", 1, 1, 1, 1), a("ceil_mode", 1)}, 1},
		{"avgpool_include_pad", "AveragePool", 17, []hkIn{f(2, 3, 6, 5)},
			[]*canonical.Attribute{as("kernel_shape", 2, 3), as("strides", 1, 2), as("pads", 0, 1, 1, 1), a("count_include_pad", 1)}, 1},
		{"softmax", "Softmax", 13, []hkIn{f(3, 5, 17)}, nil, 1},
		{"layernorm", "LayerNormalization", 17, []hkIn{f(3, 5, 17), w(17), w(17)}, nil, 1},
		{"layernorm_2axes", "LayerNormalization", 17, []hkIn{f(3, 5, 7), w(5, 7)}, []*canonical.Attribute{a("axis", 1)}, 1},
		{"sub_prefix_left", "Sub", 17, []hkIn{f(2, 3, 1), f(2, 3, 5)}, nil, 1},
		{"div_suffix", "Div", 17, []hkIn{f(2, 3, 5), w(5)}, nil, 1},
		{"div_scalar", "Div", 17, []hkIn{f(2, 3, 13), w()}, nil, 1},
		{"div_scalar_left", "Div", 17, []hkIn{w(1), f(4, 19)}, nil, 1},
		{"sub_scalar", "Sub", 17, []hkIn{f(3, 11), w(1)}, nil, 1},
		{"div_prefix_left", "Div", 17, []hkIn{w(2, 1, 1), f(2, 3, 5)}, nil, 1},
		{"sigmoid", "Sigmoid", 17, []hkIn{f(3, 17)}, nil, 1},
		{"tanh", "Tanh", 17, []hkIn{f(3, 17)}, nil, 1},
		{"concat", "Concat", 17, []hkIn{f(2, 3, 4), f(2, 5, 4), f(2, 1, 4)}, []*canonical.Attribute{a("axis", 1)}, 1},
		{"transpose", "Transpose", 17, []hkIn{f(3, 4, 5)}, []*canonical.Attribute{as("perm", 2, 0, 1)}, 1},
		{"transpose_unit_axes", "Transpose", 17, []hkIn{f(1, 6, 1, 5)}, []*canonical.Attribute{as("perm", 1, 2, 3, 0)}, 1},
		{"transpose_unit_axes_swapped", "Transpose", 17, []hkIn{f(1, 6, 1, 5)}, []*canonical.Attribute{as("perm", 3, 2, 0, 1)}, 1},
		{"split", "Split", 13, []hkIn{f(2, 6, 3), ints(1, 2, 3)}, []*canonical.Attribute{a("axis", 1)}, 3},
		{"slice", "Slice", 13, []hkIn{f(4, 10, 6), ints(1, -1), ints(3, -10), ints(0, 1), ints(1, -2)}, nil, 1},
		{"expand", "Expand", 13, []hkIn{f(3, 1), ints(2, 3, 4)}, nil, 1},
		// Large enough to be split over the threads.
		{"batchnorm_large", "BatchNormalization", 15, []hkIn{f(1, 8, 96, 97), w(8), w(8), w(8), {shape: []int{8}, init: true, pos: true}}, nil, 1},
		{"instancenorm_large", "InstanceNormalization", 17, []hkIn{f(1, 5, 128, 130), w(5), w(5)}, nil, 1},
		{"concat_large", "Concat", 17, []hkIn{f(1, 3, 150, 151), f(1, 2, 150, 151)}, []*canonical.Attribute{a("axis", 1)}, 1},
		{"concat_rows_large", "Concat", 17, []hkIn{f(3, 70, 301), f(3, 1, 301), f(3, 45, 301)}, []*canonical.Attribute{a("axis", 1)}, 1},
		{"avgpool_large", "AveragePool", 17, []hkIn{f(1, 37, 56, 57)},
			[]*canonical.Attribute{as("kernel_shape", 2, 2), as("strides", 2, 2)}, 1},
		{"relu_large", "Relu", 17, []hkIn{f(301, 300)}, nil, 1},
		{"add_blocks_large", "Add", 17, []hkIn{f(1, 7, 100, 100), w(1, 7, 1, 1)}, nil, 1},
		{"mul_suffix_large", "Mul", 17, []hkIn{f(7, 100, 100), w(100)}, nil, 1},
		{"add_residual_large", "Add", 17, []hkIn{f(1, 9, 120, 100), f(1, 9, 120, 100)}, nil, 1},
		{"mul_rows_large", "Mul", 17, []hkIn{f(3, 40000), w(40000)}, nil, 1},
		{"softmax_large", "Softmax", 13, []hkIn{f(300, 301)}, nil, 1},
		{"channel_shuffle_large", "Transpose", 17, []hkIn{f(1, 2, 58, 28, 29)}, []*canonical.Attribute{as("perm", 0, 2, 1, 3, 4)}, 1},
		{"transpose_strided_large", "Transpose", 17, []hkIn{f(41, 30, 53)}, []*canonical.Attribute{as("perm", 2, 0, 1)}, 1},
		{"globalavgpool_large", "GlobalAveragePool", 17, []hkIn{f(2, 41, 30, 31)}, nil, 1},
		// MobileNet-v3-small's squeeze-excitation pools (the smallest of them
		// split too), and an odd one just above the split threshold.
		{"globalavgpool_se_56", "GlobalAveragePool", 13, []hkIn{f(1, 16, 56, 56)}, nil, 1},
		{"globalavgpool_se_14", "GlobalAveragePool", 13, []hkIn{f(1, 96, 14, 14)}, nil, 1},
		{"globalavgpool_se_7", "GlobalAveragePool", 13, []hkIn{f(1, 288, 7, 7)}, nil, 1},
		{"globalavgpool_odd", "GlobalAveragePool", 13, []hkIn{f(1, 13, 29, 23)}, nil, 1},
		{"reducemean_last_large", "ReduceMean", 13, []hkIn{f(4, 51, 701)}, []*canonical.Attribute{as("axes", -1)}, 1},
		{"hardswish_small_split", "HardSwish", 17, []hkIn{f(1, 24, 28, 29)}, nil, 1},
		// Two images: each half is two runs (copied, split over the
		// threads); of one image, each half is a view.
		{"split_large", "Split", 13, []hkIn{f(2, 116, 28, 29), ints(58, 58)}, []*canonical.Attribute{a("axis", 1)}, 2},
		{"split_view", "Split", 13, []hkIn{f(1, 116, 28, 29), ints(58, 58)}, []*canonical.Attribute{a("axis", 1)}, 2},
		{"slice_view", "Slice", 13, []hkIn{f(1, 6, 5, 7), ints(2), ints(5), ints(1)}, nil, 1},
		{"slice_large", "Slice", 13, []hkIn{f(3, 200, 101), ints(1, -1), ints(3, -200), ints(0, 1), ints(1, -2)}, nil, 1},
		{"reducemean_last", "ReduceMean", 13, []hkIn{f(3, 5, 17)}, []*canonical.Attribute{as("axes", -1)}, 1},
		{"reducemean_2axes_nokeep", "ReduceMean", 13, []hkIn{f(3, 5, 7)}, []*canonical.Attribute{as("axes", 2, 1), a("keepdims", 0)}, 1},
		{"reducemean_unit_nokeep", "ReduceMean", 13, []hkIn{f(3, 5, 1)}, []*canonical.Attribute{as("axes", -1), a("keepdims", 0)}, 1},
		{"reducemean_opset18", "ReduceMean", 18, []hkIn{f(4, 9), ints(-1)}, nil, 1},
		{"pow2", "Pow", 15, []hkIn{f(3, 17), {shape: []int{}, init: true, pos: true, two: true}}, nil, 1},
		{"sqrt", "Sqrt", 13, []hkIn{{shape: []int{4, 9}, pos: true}}, nil, 1},
		{"erf", "Erf", 13, []hkIn{f(4, 9)}, nil, 1},
		{"gelu", "Gelu", 20, []hkIn{f(4, 9)}, nil, 1},
		{"gelu_tanh", "Gelu", 20, []hkIn{f(4, 9)}, []*canonical.Attribute{canonical.StringAttr("approximate", "tanh")}, 1},
		{"pad_const", "Pad", 13, []hkIn{f(2, 3, 4), ints(0, 1, 2, 1, 0, 3), w()}, nil, 1},
		{"pad_zero", "Pad", 13, []hkIn{f(2, 3, 4), ints(0, 0, 0, 0, 0, 0)}, nil, 1},
		{"reshape", "Reshape", 14, []hkIn{f(2, 3, 4), ints(4, -1)}, nil, 1},
		{"gather_axis1", "Gather", 13, []hkIn{f(2, 5, 3), ints(4, -1, 0, 4, -5)}, []*canonical.Attribute{a("axis", 1)}, 1},
		{"gather_axis0", "Gather", 13, []hkIn{f(7, 3), ints(-2, 3)}, nil, 1},
		{"gather_last", "Gather", 13, []hkIn{f(3, 2, 6), ints(5, 0)}, []*canonical.Attribute{a("axis", -1)}, 1},
	}
	// Cases whose kernel must split its work on 2–4 threads (so that the
	// bit-identity check above covers the split).
	mustSplit := map[string]bool{
		"channel_shuffle_large": true, "transpose_strided_large": true, "globalavgpool_large": true,
		"globalavgpool_se_56": true, "globalavgpool_se_14": true, "globalavgpool_se_7": true, "globalavgpool_odd": true,
		"reducemean_last_large": true, "hardswish_small_split": true, "relu_large": true,
		"split_large": true, "slice_large": true,
	}
	for _, cs := range cases {
		t.Run(cs.name, func(t *testing.T) {
			r := rand.New(rand.NewSource(28))
			m, g := newModel(cs.opset)
			var ins []*canonical.Value
			var feeds []*canonical.Tensor
			for i, in := range cs.ins {
				name := "in" + strconv.Itoa(i)
				switch {
				case in.none:
					ins = append(ins, nil)
				case in.ints != nil:
					raw := make([]byte, 8*len(in.ints))
					for k, v := range in.ints {
						binary.LittleEndian.PutUint64(raw[8*k:], uint64(v))
					}
					ins = append(ins, must(g.AddInitializer(canonical.NewTensor(name, canonical.Int64, []int64{int64(len(in.ints))}, raw))))
				default:
					ct, _ := f16Tensor(t, name, canonical.Float, in.shape, r)
					if in.pos {
						h := must(fromCanonical(ct))
						for k, v := range h.data.([]float32) {
							h.data.([]float32)[k] = float32(math.Abs(float64(v))) + 0.1
							if in.two {
								h.data.([]float32)[k] = 2
							}
						}
						ct = must(h.toCanonical(name))
					}
					if in.init {
						ins = append(ins, must(g.AddInitializer(ct)))
					} else {
						ins = append(ins, must(g.AddInput(name, nil)))
						feeds = append(feeds, ct)
					}
				}
			}
			var outs []string
			for k := 0; k < cs.outs; k++ {
				outs = append(outs, "y"+strconv.Itoa(k))
			}
			n, err := g.AddNode("n", "", cs.op, ins, outs, cs.attrs...)
			if err != nil {
				t.Fatal(err)
			}
			g.Outputs = n.Outputs
			var got [5][][]float32
			var dims [5][]string
			for k, opts := range []Options{{DisableKernels: true}, {Threads: 1}, {Threads: 2}, {Threads: 3}, {Threads: 4}} {
				ex, err := New(m, opts)
				if err != nil {
					t.Fatal(err)
				}
				for run := 0; run < 2; run++ { // build, then replay
					res, err := ex.Run(context.Background(), feeds)
					if err != nil {
						t.Fatal(err)
					}
					got[k], dims[k] = nil, nil
					for _, o := range res {
						got[k] = append(got[k], append([]float32{}, hostValues(t, o)...))
						dims[k] = append(dims[k], fmt.Sprint(o.Dims))
					}
				}
				if k > 0 && !hasHostStep(ex, cs.op) {
					t.Fatalf("%s did not run on the host kernel", cs.op)
				}
				if k > 1 && mustSplit[cs.name] && ex.kern.Calls() == 0 {
					t.Fatalf("%s on %d threads was not split over the threads", cs.op, opts.Threads)
				}
				ex.Close()
			}
			for o := range got[0] {
				if dims[1][o] != dims[0][o] || dims[2][o] != dims[0][o] || dims[3][o] != dims[0][o] || dims[4][o] != dims[0][o] {
					t.Fatalf("output %d has shape %s (2, 3, 4 threads: %s, %s, %s), reference %s", o, dims[1][o], dims[2][o], dims[3][o], dims[4][o], dims[0][o])
				}
				ref := got[0][o]
				if len(got[1][o]) != len(ref) {
					t.Fatalf("output %d: %d values, reference %d", o, len(got[1][o]), len(ref))
				}
				for i, v := range ref {
					if d := math.Abs(float64(got[1][o][i]) - float64(v)); d > 1e-5*(1+math.Abs(float64(v))) || d != d {
						t.Fatalf("output %d value %d = %v, reference %v", o, i, got[1][o][i], v)
					}
					for th := 2; th <= 4; th++ {
						if math.Float32bits(got[1][o][i]) != math.Float32bits(got[th][o][i]) {
							t.Fatalf("output %d value %d: 1 thread %v, %d threads %v", o, i, got[1][o][i], th, got[th][o][i])
						}
					}
				}
			}
		})
	}
}
