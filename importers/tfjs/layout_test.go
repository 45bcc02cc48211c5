package tfjs_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/keraslayers"
	"github.com/onnxconv/onnxconv/importers/tfjs"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	tfjsrt "github.com/onnxconv/onnxconv/runtimes/tfjs"
)

// importLayout imports path with the tfjs importer and option layout.
func importLayout(t testing.TB, path, layout string) *canonical.Model {
	t.Helper()
	res, err := tfjs.New().Import(context.Background(), path, map[string]string{"layout": layout})
	if err != nil {
		t.Fatalf("import %s with layout=%s: %v", path, layout, err)
	}
	t.Cleanup(func() { res.Model.Close() })
	return res.Model
}

func countOp(m *canonical.Model, op string) int {
	n := 0
	for _, nd := range m.Graph.Nodes {
		if nd.OpType == op {
			n++
		}
	}
	return n
}

// toLast is the permutation of a channels-first tensor of rank r to
// channels-last (N, C, S... → N, S..., C); toFirst its inverse.
func toLast(r int) []int {
	p := []int{0}
	for i := 2; i < r; i++ {
		p = append(p, i)
	}
	return append(p, 1)
}

func toFirst(r int) []int {
	p := []int{0, r - 1}
	for i := 1; i < r-1; i++ {
		p = append(p, i)
	}
	return p
}

// transposeF32 permutes the axes of a float32 tensor (out dim i = in dim
// perm[i]).
func transposeF32(t testing.TB, in *canonical.Tensor, perm []int) *canonical.Tensor {
	t.Helper()
	v := floats(t, in)
	r := len(in.Dims)
	if len(perm) != r {
		t.Fatalf("perm %v for rank %d", perm, r)
	}
	dims := make([]int64, r)
	for i, p := range perm {
		dims[i] = in.Dims[p]
	}
	inStride := make([]int64, r)
	s := int64(1)
	for i := r - 1; i >= 0; i-- {
		inStride[i] = s
		s *= in.Dims[i]
	}
	out := make([]float32, len(v))
	idx := make([]int64, r)
	for o := range out {
		off := int64(0)
		for i := range r {
			off += idx[i] * inStride[perm[i]]
		}
		out[o] = v[off]
		for i := r - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < dims[i] {
				break
			}
			idx[i] = 0
		}
	}
	return canonical.Float32Tensor(in.Name, dims, out)
}

// channelsFirst returns the graph inputs and outputs m (imported with
// layout=nchw) says are channels-first.
func channelsFirst(t testing.TB, m *canonical.Model) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, p := range m.MetadataProps {
		if p.Key == keraslayers.MetaChannelsFirst && p.Value != "" {
			for _, n := range strings.Split(p.Value, ",") {
				out[n] = true
			}
		}
	}
	return out
}

// The TF.js models with convolutions, imported with layout=nchw: their
// image inputs and outputs are channels-first, the graph has fewer
// Transposes than with the default layout, and it computes what TF.js
// computes on the same inputs transposed to NHWC (its outputs compared
// after transposing them back to channels-first).
func TestLayoutNCHWMatchesTFJS(t *testing.T) {
	node, modules := testpaths.Node(t, "@tensorflow/tfjs")
	env := tfjsrt.Env{Node: node, Modules: modules}
	cases := []struct {
		path string
		// fewer: an image model: some input is channels-first and the
		// Transpose count drops (false: a sequence model, whose inputs the
		// layers read channels-last; the count must not grow).
		fewer bool
	}{
		{fixtureDir + "/cnn/model.json", true},
		{fixtureDir + "/cnn_uint8/model.json", true},
		{fixtureDir + "/cnn_uint16/model.json", true},
		{fixtureDir + "/cnn_float16/model.json", true},
		{fixtureDir + "/upconv/model.json", true},
		{fixtureDir + "/wrappers/model.json", false},
		{fixtureDir + "/rnn/model.json", false},
		{fixtureDir + "/graph_image/model.json", true},
		{shared + "/tfjs_graph/human_blazeface/blazeface.json", true},
		{shared + "/tfjs_graph/human_emotion/emotion.json", true},
		{shared + "/tfjs_graph/human_iris/iris.json", true},
	}
	var rows []string
	for _, tc := range cases {
		name := strings.TrimPrefix(strings.TrimPrefix(tc.path, shared+"/"), "../../")
		t.Run(name, func(t *testing.T) {
			nhwc := importLayout(t, tc.path, "nhwc")
			m := importLayout(t, tc.path, "nchw")
			before, after := countOp(nhwc, "Transpose"), countOp(m, "Transpose")
			if tc.fewer && after >= before {
				t.Errorf("layout=nchw: %d Transposes, nhwc %d: want fewer", after, before)
			}
			if after > before {
				t.Errorf("layout=nchw: %d Transposes, nhwc %d: want no more", after, before)
			}
			cfs := channelsFirst(t, m)
			cf := 0
			for i, v := range m.Graph.Inputs {
				d0, d1 := staticDims(t, nhwc.Graph.Inputs[i].Type), staticDims(t, v.Type)
				want := d0
				if cfs[v.Name] {
					cf++
					want = permDims(d0, toFirst(len(d0)))
				}
				if fmt.Sprint(want) != fmt.Sprint(d1) {
					t.Errorf("input %s: dims %v, want %v (channels-first: %v)", v.Name, d1, want, cfs[v.Name])
				}
			}
			if tc.fewer && cf == 0 {
				t.Errorf("no channels-first input")
			}
			ins := fixedInputs(t, m, -1, 1, false)
			got := runExecutor(t, m, ins)
			var feed []*canonical.Tensor
			for _, in := range ins {
				if cfs[in.Name] {
					in = transposeF32(t, in, toLast(len(in.Dims)))
				}
				feed = append(feed, in)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := tfjsrt.Run(ctx, env, tc.path, toProtos(t, feed))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Outputs) != len(got) {
				t.Fatalf("%d outputs, TF.js %d", len(got), len(res.Outputs))
			}
			worst := 0.0
			for i, o := range got {
				want, err := canonical.TensorFromProto(res.Outputs[i])
				if err != nil {
					t.Fatal(err)
				}
				if cfs[m.Graph.Outputs[i].Name] {
					want = transposeF32(t, want, toFirst(len(want.Dims)))
				}
				if fmt.Sprint(o.Dims) != fmt.Sprint(want.Dims) {
					t.Errorf("output %d: shape %v, TF.js %v (channels-first)", i, o.Dims, want.Dims)
					continue
				}
				worst = math.Max(worst, maxRelErr(t, fmt.Sprintf("output %d", i), floats(t, o), floats(t, want), 1e-4))
			}
			rows = append(rows, fmt.Sprintf("| %s | %d | %d | %d | %d | %.2g |", name, before, after, len(nhwc.Graph.Nodes), len(m.Graph.Nodes), worst))
		})
	}
	t.Logf("\n| model | Transposes nhwc | Transposes nchw | nodes nhwc | nodes nchw | max rel err |\n|---|---|---|---|---|---|\n%s", strings.Join(rows, "\n"))
}

func staticDims(t testing.TB, ty *onnxpb.TypeProto) []int64 {
	t.Helper()
	_, ds, hasShape, _ := canonical.TensorTypeOf(ty)
	if !hasShape {
		t.Fatalf("no shape")
	}
	out := make([]int64, len(ds))
	for i, d := range ds {
		out[i] = -1
		if d.Known {
			out[i] = d.Value
		}
	}
	return out
}

func permDims(d []int64, perm []int) []int64 {
	out := make([]int64, len(d))
	for i, p := range perm {
		out[i] = d[p]
	}
	return out
}

// The layout option is listed, defaults to nhwc, and refuses other values
// with an *importers.OptionError.
func TestLayoutOption(t *testing.T) {
	found := false
	for _, o := range tfjs.New().Describe().Options {
		found = found || o.Name == "layout"
	}
	if !found {
		t.Errorf("layout is not among the options %v", tfjs.New().Describe().Options)
	}
	for _, v := range []string{"nhwc", "nchw", "NCHW"} {
		if _, err := tfjs.ParseOptions(map[string]string{"layout": v}); err != nil {
			t.Errorf("layout=%s: %v", v, err)
		}
	}
	path := filepath.Join(fixtureDir, "cnn", "model.json")
	for _, v := range []string{"", "hwcn", "channels_first"} {
		_, err := tfjs.New().Import(context.Background(), path, map[string]string{"layout": v})
		var oe *importers.OptionError
		if !errors.As(err, &oe) || oe.Key != "layout" {
			t.Errorf("layout=%q: err = %v, want an *importers.OptionError for layout", v, err)
		}
		var le *keraslayers.LayoutError
		if !errors.As(err, &le) {
			t.Errorf("layout=%q: err = %v, want a *keraslayers.LayoutError inside", v, err)
		}
	}
	// The default is nhwc: the same graph as layout=nhwc.
	def, nhwc := importDetected(t, path), importLayout(t, path, "nhwc")
	if len(def.Graph.Nodes) != len(nhwc.Graph.Nodes) {
		t.Errorf("default %d nodes, layout=nhwc %d", len(def.Graph.Nodes), len(nhwc.Graph.Nodes))
	}
	m := importLayout(t, path, "nchw")
	props := map[string]string{}
	for _, p := range m.MetadataProps {
		props[p.Key] = p.Value
	}
	if props[keraslayers.MetaLayout] != "nchw" || props[keraslayers.MetaChannelsFirst] == "" {
		t.Errorf("metadata %v, want %s=nchw and the channels-first values", props, keraslayers.MetaLayout)
	}
}
