package keras_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	kfile "github.com/onnxconv/onnxconv/formats/keras"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/keras"
	"github.com/onnxconv/onnxconv/importers/keraslayers"
)

// convModels are the Keras files of ../shared/models with convolutions.
var convModels = []string{
	"keras_h5/hls4ml_KERAS_conv1d_small/KERAS_conv1d_small.json",
	"keras_h5/hls4ml_KERAS_conv2d_model/KERAS_conv2d_model.json",
}

func importLayout(t testing.TB, path, layout string) *canonical.Model {
	t.Helper()
	res, err := keras.New().Import(context.Background(), path, map[string]string{"layout": layout})
	if err != nil {
		t.Fatalf("import %s with layout=%s: %v", path, layout, err)
	}
	t.Cleanup(func() { res.Model.Close() })
	return res.Model
}

func transposes(m *canonical.Model) int {
	n := 0
	for _, nd := range m.Graph.Nodes {
		if nd.OpType == "Transpose" {
			n++
		}
	}
	return n
}

// permute permutes the axes of a row-major tensor (out dim i = in dim
// perm[i]).
func permute(v []float32, dims []int64, perm []int) ([]float32, []int64) {
	r := len(dims)
	od := make([]int64, r)
	for i, p := range perm {
		od[i] = dims[p]
	}
	stride := make([]int64, r)
	s := int64(1)
	for i := r - 1; i >= 0; i-- {
		stride[i] = s
		s *= dims[i]
	}
	out := make([]float32, len(v))
	idx := make([]int64, r)
	for o := range out {
		off := int64(0)
		for i := range r {
			off += idx[i] * stride[perm[i]]
		}
		out[o] = v[off]
		for i := r - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < od[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out, od
}

// lastToFirst and firstToLast move the channel axis of a rank-r tensor.
func lastToFirst(r int) []int {
	p := []int{0, r - 1}
	for i := 1; i < r-1; i++ {
		p = append(p, i)
	}
	return p
}

func firstToLast(r int) []int {
	p := []int{0}
	for i := 2; i < r; i++ {
		p = append(p, i)
	}
	return append(p, 1)
}

// The Keras conv models imported with layout=nchw take channels-first
// inputs, have fewer Transposes, and compute what TF.js computes running
// the same architecture and weights on the inputs transposed to
// channels-last (its outputs transposed back where the model's are
// channels-first).
func TestLayoutNCHWMatchesTFJS(t *testing.T) {
	for _, p := range convModels {
		t.Run(p, func(t *testing.T) {
			path := filepath.Join(shared, p)
			nhwc, m := importLayout(t, path, "nhwc"), importLayout(t, path, "nchw")
			before, after := transposes(nhwc), transposes(m)
			if after >= before {
				t.Errorf("layout=nchw: %d Transposes, nhwc %d: want fewer", after, before)
			}
			cfs := map[string]bool{}
			for _, mp := range m.MetadataProps {
				if mp.Key == keraslayers.MetaChannelsFirst && mp.Value != "" {
					for _, n := range strings.Split(mp.Value, ",") {
						cfs[n] = true
					}
				}
			}
			ins, wire := fixedInputs(t, m)
			cf := 0
			for i, in := range ins {
				if cfs[in.Name] {
					cf++
					wire[i].Data, wire[i].Shape = permute(wire[i].Data, wire[i].Shape, firstToLast(len(wire[i].Shape)))
				}
			}
			if cf == 0 {
				t.Fatalf("no channels-first input (metadata %v)", m.MetadataProps)
			}
			got := runExecutor(t, m, ins)
			src, err := kfile.Load(context.Background(), path, "")
			if err != nil {
				t.Fatal(err)
			}
			want := runTFJS(t, src, wire)
			if len(want) != len(got) {
				t.Fatalf("%d outputs, TF.js %d", len(got), len(want))
			}
			worst := 0.0
			for i, o := range got {
				w := want[i]
				if cfs[m.Graph.Outputs[i].Name] {
					w.Data, w.Shape = permute(w.Data, w.Shape, lastToFirst(len(w.Shape)))
				}
				if fmt.Sprint(o.Dims) != fmt.Sprint(w.Shape) {
					t.Errorf("output %d: shape %v, TF.js %v", i, o.Dims, w.Shape)
					continue
				}
				g, err := o.Float32s()
				if err != nil {
					t.Fatal(err)
				}
				worst = math.Max(worst, maxRelErr(t, fmt.Sprintf("output %d", i), g, w.Data, 1e-4))
			}
			t.Logf("%s: Transposes %d (nhwc) → %d (nchw); nodes %d → %d; max rel err %.2g", p, before, after,
				len(nhwc.Graph.Nodes), len(m.Graph.Nodes), worst)
		})
	}
}

// A bad layout value is an *importers.OptionError naming the option.
func TestLayoutOption(t *testing.T) {
	found := false
	for _, o := range keras.New().Describe().Options {
		found = found || o.Name == "layout"
	}
	if !found {
		t.Error("layout is not among the options")
	}
	for _, v := range []string{"nhwc", "nchw"} {
		o, err := keras.ParseOptions(map[string]string{"layout": v})
		if err != nil || o.Layout != v {
			t.Errorf("layout=%s: %+v %v", v, o, err)
		}
	}
	_, err := keras.New().Import(context.Background(), filepath.Join(shared, convModels[0]), map[string]string{"layout": "chwn"})
	var oe *importers.OptionError
	if !errors.As(err, &oe) || oe.Key != "layout" {
		t.Errorf("err = %v, want an *importers.OptionError for layout", err)
	}
}
