package tflite

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/canonical/unsupported"
	"github.com/onnxconv/onnxconv/executor"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
	"github.com/onnxconv/onnxconv/internal/recovered"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	tfliteruntime "github.com/onnxconv/onnxconv/runtimes/tflite"
	"github.com/onnxconv/onnxconv/verify/tensorio"
	"google.golang.org/protobuf/proto"
)

// MediaPipe's Convolution2DTransposeBias (custom code, a
// TfLiteTransposeConvParams in custom_options), SAME and VALID, stride
// 2, as the selfie-segmentation models use it: LiteRT.js runs it (its
// XNNPACK delegate implements the op), and the import computes what it
// computes.
func TestMediaPipeTransposeConvBiasAgainstLiteRT(t *testing.T) {
	testpaths.Node(t, tfliteruntime.Package, tfliteruntime.LiteRTPackage)
	env := tfliteEnv(t)
	params := func(pad, sw, sh int32) []byte {
		b := make([]byte, 12)
		binary.LittleEndian.PutUint32(b[0:], uint32(pad))
		binary.LittleEndian.PutUint32(b[4:], uint32(sw))
		binary.LittleEndian.PutUint32(b[8:], uint32(sh))
		return b
	}
	w := make([]float32, 2*3*3*3)
	for i := range w {
		w[i] = float32(math.Sin(float64(i)*0.77)) * 0.5
	}
	for _, tc := range []struct {
		name string
		pad  int32
		out  []int32
	}{
		{"same", 1, []int32{1, 8, 10, 2}},
		{"valid", 2, []int32{1, 9, 11, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := single(fb.BuiltinOperatorCUSTOM, fb.BuiltinOptionsNONE, nil,
				[]tspec{fshape(1, 4, 5, 3), constF([]int32{2, 3, 3, 3}, w...), constF([]int32{2}, 0.25, -0.5)}, fshape(tc.out...))
			m.ops[0].custom, m.ops[0].customOpts = "Convolution2DTransposeBias", params(tc.pad, 2, 2)
			got, res := liteRTAndImport(t, env, m, "mediapipe/"+tc.name)
			t.Logf("%s: %s", res.Build, compareOutput(t, "out0", got[0], res.Outputs[0]))
		})
	}
}

// liteRTAndImport writes model m, runs it in LiteRT.js and its import on
// the executor on the same generated inputs (seeded by name, in
// [-2, 2]), and returns the executor's outputs and LiteRT.js's result.
func liteRTAndImport(t *testing.T, env tfliteruntime.Env, m mspec, name string) ([]*onnxpb.TensorProto, *tfliteruntime.Result) {
	t.Helper()
	data := m.bytes()
	path := filepath.Join(t.TempDir(), "model.tflite")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	mod, err := readModel(data)
	if err != nil {
		t.Fatal(err)
	}
	mp, err := importProto(data, Options{})
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	ins := oneOpInputs(t, oneOp{name: name, lo: -2, hi: 2}, mod, mp)
	res, err := runTFLiteWith(t, env, path, ins, tfliteruntime.Options{Interpreters: []tfliteruntime.Interpreter{tfliteruntime.LiteRT}})
	if err != nil {
		t.Fatal(err)
	}
	return runExecutor(t, mp, ins), res
}

// A custom operator the user defines with -O custom: a model whose
// "ScaledTanh" custom op (fixtures/custom/scaled_tanh.onnx, alpha at its
// default 1: tanh) is refused naming the op and how to supply it, and
// with the definition (written for opset 17, the opset asked) computes
// what the interpreter computes for the same model with the builtin TANH
// in its place.
func TestUserCustomOpAgainstBuiltin(t *testing.T) {
	env := tfliteEnv(t)
	model := func(code fb.BuiltinOperator, custom string) mspec {
		m := single(code, fb.BuiltinOptionsNONE, nil, []tspec{fshape(2, 3, 4)}, fshape(2, 3, 4))
		m.ops[0].custom = custom
		return m
	}
	cm, bm := model(fb.BuiltinOperatorCUSTOM, "ScaledTanh"), model(fb.BuiltinOperatorTANH, "")
	if _, err := importProto(cm.bytes(), Options{}); err == nil || !strings.Contains(err.Error(), "ScaledTanh") || !strings.Contains(err.Error(), "-O custom=FILE.onnx") {
		t.Fatalf("without a definition: %v", err)
	}
	mp, err := importProto(cm.bytes(), Options{Custom: "../../fixtures/custom/scaled_tanh.onnx", Opset: 17})
	if err != nil {
		t.Fatal(err)
	}
	data := bm.bytes()
	path := filepath.Join(t.TempDir(), "tanh.tflite")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	mod, err := readModel(data)
	if err != nil {
		t.Fatal(err)
	}
	ins := oneOpInputs(t, oneOp{name: "custom/scaled_tanh", lo: -3, hi: 3}, mod, mp)
	res, err := runTFLite(t, env, path, ins)
	if err != nil {
		t.Fatal(err)
	}
	got := runExecutor(t, mp, ins)
	t.Logf("%s: %s", res.Build, compareOutput(t, "out0", got[0], res.Outputs[0]))
}

// No TFLite runtime here computes MediaPipe's Landmarks2TransformMatrix,
// TransformLandmarks, TransformTensorBilinear or TransformTensor (its
// version 1): LiteRT.js loads a one-op
// model of each, runs it without an error and never writes its output
// (it holds zeros or leftover subnormals) on inputs for which MediaPipe's
// kernels give normal numbers (even Landmarks2TransformMatrix without its
// custom_options, which MediaPipe's kernel refuses). Their mappings are
// checked against MediaPipe's own kernels instead
// (TestMediaPipeTransformOpsAgainstKernels), and the tflite runtime
// refuses a model holding one (an *unsupported.OpsError naming it: verify
// against stored outputs instead).
func TestMediaPipeTransformOpsNotRunByLiteRT(t *testing.T) {
	for _, tc := range []struct {
		code    string
		ins     []tspec
		outs    []tspec
		version int32
	}{
		{"TransformLandmarks", []tspec{fshape(1, 2, 3), fshape(1, 4, 4)}, []tspec{fshape(1, 2, 3)}, 2},
		{"TransformTensorBilinear", []tspec{fshape(1, 4, 4, 2), fshape(1, 4, 4)}, []tspec{fshape(1, 3, 3, 2)}, 2},
		{"TransformTensor", []tspec{fshape(1, 4, 4, 2), fshape(1, 4, 4)}, []tspec{fshape(1, 3, 3, 2)}, 1},
		{"Landmarks2TransformMatrix", []tspec{fshape(1, 5, 3)}, []tspec{fshape(1, 4, 4)}, 2},
	} {
		t.Run(tc.code, func(t *testing.T) {
			m := single(fb.BuiltinOperatorCUSTOM, fb.BuiltinOptionsNONE, nil, tc.ins, tc.outs...)
			m.ops[0].custom, m.ops[0].version = tc.code, tc.version
			data := m.bytes()
			testpaths.Node(t, tfliteruntime.Package, tfliteruntime.LiteRTPackage)
			env := tfliteEnv(t)
			path := filepath.Join(t.TempDir(), tc.code+".tflite")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			var ins []*onnxpb.TensorProto
			for k, in := range tc.ins {
				dims := make([]int64, len(in.shape))
				n := 1
				for i, d := range in.shape {
					dims[i], n = int64(d), n*int(d)
				}
				v := make([]float32, n)
				for i := range v {
					v[i] = float32(0.5 + 0.25*math.Abs(math.Sin(float64(3*i+k))))
				}
				ins = append(ins, floatTensor(fmt.Sprintf("in%d", k), dims, v))
			}
			var ue *unsupported.OpsError
			if _, err := tfliteruntime.RunLiteRT(context.Background(), env, path, ins); !errors.As(err, &ue) || len(ue.Ops) != 1 || ue.Ops[0].Op != tc.code {
				t.Fatalf("the tflite runtime runs %s: %v; want an *unsupported.OpsError naming it", tc.code, err)
			}
			s, err := tfliteruntime.OpenWith(context.Background(), env, path, tfliteruntime.Options{Interpreters: []tfliteruntime.Interpreter{tfliteruntime.LiteRT}, RunUncomputed: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			res, err := s.Run(context.Background(), ins)
			if err != nil {
				t.Fatal(err)
			}
			out, err := canonical.TensorFromProto(res.Outputs[0])
			if err != nil {
				t.Fatal(err)
			}
			v, err := out.Float64s()
			if err != nil {
				t.Fatal(err)
			}
			// Zero or subnormal: memory the interpreter never wrote. A
			// kernel would give normal numbers on these inputs (and
			// Landmarks2TransformMatrix's would refuse the empty options).
			for i, x := range v {
				if math.Abs(x) >= 0x1p-126 {
					t.Fatalf("LiteRT.js computes %s (out[%d] = %g): map it and check the mapping against LiteRT.js", tc.code, i, x)
				}
			}
			t.Logf("%s: all %d outputs zero or subnormal (never written)", res.Build, len(v))
		})
	}
}

// mediapipePoolOpts is MediaPipe's TfLitePoolParams custom_options: padding (1
// SAME, 2 VALID), stride_width, stride_height, filter_width,
// filter_height, activation, and the computed padding (zeros).
func mediapipePoolOpts(pad, sw, sh, fw, fh int32) []byte {
	b := make([]byte, 40)
	for i, v := range []int32{pad, sw, sh, fw, fh} {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	return b
}

// poolUnpool is a model x -> MaxPoolingWithArgmax2D -> (pooled, indices)
// -> MaxUnpooling2D -> y, with pooled and y its outputs (and indices too
// when indicesOut).
func poolUnpool(in []int32, pooled []int32, opts []byte, indicesOut bool) mspec {
	var m mspec
	x := m.add(tspec{name: "x", typ: fb.TensorTypeFLOAT32, shape: in})
	p := m.add(tspec{name: "pooled", typ: fb.TensorTypeFLOAT32, shape: pooled})
	i := m.add(tspec{name: "indices", typ: fb.TensorTypeFLOAT32, shape: pooled})
	y := m.add(tspec{name: "y", typ: fb.TensorTypeFLOAT32, shape: in})
	m.ops = []opspec{
		{code: fb.BuiltinOperatorCUSTOM, custom: "MaxPoolingWithArgmax2D", customOpts: opts, inputs: []int32{x}, outputs: []int32{p, i}},
		{code: fb.BuiltinOperatorCUSTOM, custom: "MaxUnpooling2D", customOpts: opts, inputs: []int32{p, i}, outputs: []int32{y}},
	}
	m.inputs, m.outputs = []int32{x}, []int32{p, y}
	if indicesOut {
		m.outputs = append(m.outputs, i)
	}
	return m
}

// MediaPipe's MaxPoolingWithArgmax2D and MaxUnpooling2D as the
// segmentation models use them (2x2, stride 2), in one model: LiteRT.js
// runs both in XNNPACK, and the import (ONNX MaxPool with Indices, then
// MaxUnpool) computes the pooled values and the unpooled tensor it
// computes. A model whose argmax indices are an output is refused (their
// two forms, MediaPipe's and XNNPACK's, have no ONNX equivalent).
func TestMediaPipeMaxPoolUnpoolAgainstLiteRT(t *testing.T) {
	testpaths.Node(t, tfliteruntime.Package, tfliteruntime.LiteRTPackage)
	env := tfliteEnv(t)
	for _, tc := range []struct {
		name       string
		pad        int32
		in, pooled []int32
	}{
		{"valid", 2, []int32{1, 6, 8, 3}, []int32{1, 3, 4, 3}},
		{"same", 1, []int32{2, 4, 6, 5}, []int32{2, 2, 3, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := mediapipePoolOpts(tc.pad, 2, 2, 2, 2)
			bad := poolUnpool(tc.in, tc.pooled, opts, true)
			if _, err := importProto(bad.bytes(), Options{}); err == nil || !strings.Contains(err.Error(), "only MaxUnpooling2D may read them") {
				t.Errorf("indices as an output: %v", err)
			}
			m := poolUnpool(tc.in, tc.pooled, opts, false)
			got, res := liteRTAndImport(t, env, m, "mediapipe/pool_"+tc.name)
			for k, name := range []string{"pooled", "y"} {
				t.Logf("%s %s: %s", res.Build, name, compareOutput(t, name, got[k], res.Outputs[k]))
			}
		})
	}
}

// MediaPipe's TransformLandmarks, TransformTensorBilinear (TransformTensor
// at version 1) and Landmarks2TransformMatrix, versions 1 and 2 (the CPU
// kernels in MediaPipe's sources), one-op models of each on the inputs
// (and the FlexBuffers custom_options the flatbuffers library wrote) of
// fixtures/mediapipe/data: the import, run by the executor and by ONNX
// Runtime, computes every value MediaPipe's own CPU kernels computed
// there, bit for bit (fixtures/mediapipe/make.sh compiles their .cc files
// from MediaPipe's sources and runs them). No TFLite runtime here runs
// these operators (TestMediaPipeTransformOpsNotRunByLiteRT shows why),
// hence the stored outputs. Each case at the other version is refused
// (its layout or options are the other kernel's).
func TestMediaPipeTransformOpsAgainstKernels(t *testing.T) {
	const dir = "../../fixtures/mediapipe/data/"
	for _, tc := range []struct {
		name, code string
		version    int32
	}{
		{"landmarks_3d", "TransformLandmarks", 2}, {"landmarks_2d", "TransformLandmarks", 2},
		{"landmarks_v1_3d", "TransformLandmarks", 1}, {"landmarks_v1_2d", "TransformLandmarks", 1},
		{"bilinear_crop", "TransformTensorBilinear", 2}, {"bilinear_zoom", "TransformTensorBilinear", 2},
		{"bilinear_v1_crop", "TransformTensor", 1}, {"bilinear_v1_zoom", "TransformTensor", 1},
		{"matrix_face", "Landmarks2TransformMatrix", 2}, {"matrix_odd", "Landmarks2TransformMatrix", 2},
		{"matrix_v1_face", "Landmarks2TransformMatrix", 1}, {"matrix_v1_odd", "Landmarks2TransformMatrix", 1},
		{"matrix_v1_vertical", "Landmarks2TransformMatrix", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ts []*onnxpb.TensorProto
			var specs []tspec
			files := []string{"in0", "in1", "out"}
			var opts []byte
			if tc.code == "Landmarks2TransformMatrix" {
				files = []string{"in0", "out"}
			}
			if tc.code == "Landmarks2TransformMatrix" || tc.version == 1 {
				var err error
				if opts, err = os.ReadFile(dir + tc.name + "/options.bin"); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range files {
				x, err := tensorio.ReadNpyFile(dir + tc.name + "/" + f + ".npy")
				if err != nil {
					t.Fatal(err)
				}
				x.Name = f
				p, err := canonical.TensorToProto(x)
				if err != nil {
					t.Fatal(err)
				}
				ts = append(ts, p)
				sh := make([]int32, len(x.Dims))
				for i, d := range x.Dims {
					sh[i] = int32(d)
				}
				specs = append(specs, fshape(sh...))
			}
			last := len(specs) - 1
			m := single(fb.BuiltinOperatorCUSTOM, fb.BuiltinOptionsNONE, nil, specs[:last], specs[last])
			other := 3 - tc.version
			m.ops[0].custom, m.ops[0].version, m.ops[0].customOpts = tc.code, other, opts
			if _, err := importProto(m.bytes(), Options{}); err == nil || !strings.Contains(err.Error(), "version") && !strings.Contains(err.Error(), "want [1, N, 2 or 3]") {
				t.Errorf("version %d: %v", other, err)
			}
			m.ops[0].version = tc.version
			mp, err := importProto(m.bytes(), Options{})
			if err != nil {
				t.Fatalf("Import: %v", err)
			}
			for i, in := range mp.GetGraph().GetInput() {
				ts[i].Name = proto.String(in.GetName())
			}
			exact := func(t *testing.T, out []*onnxpb.TensorProto) {
				want, got := tensorFloats(t, ts[last]), tensorFloats(t, out[0])
				t.Logf("against MediaPipe's kernel: %s", compareOutput(t, "out", out[0], ts[last]))
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("out[%d] = %v (%#08x), MediaPipe's kernel %v (%#08x): want every value exact", i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
					}
				}
			}
			t.Run("executor", func(t *testing.T) { exact(t, runExecutor(t, mp, ts[:last])) })
			t.Run("onnxruntime", func(t *testing.T) { exact(t, runModel(t, openORT(t), mp, ts[:last])) })
		})
	}
}

// landmarksMatrixModel is a one-op Landmarks2TransformMatrix model of the
// given version and custom_options on landmarks of shape in.
func landmarksMatrixModel(version int32, opts []byte, in ...int32) []byte {
	m := single(fb.BuiltinOperatorCUSTOM, fb.BuiltinOptionsNONE, nil, []tspec{fshape(in...)}, fshape(1, 4, 4))
	m.ops[0].custom, m.ops[0].version, m.ops[0].customOpts = "Landmarks2TransformMatrix", version, opts
	return m.bytes()
}

// Landmarks2TransformMatrix version 1's custom_options that MediaPipe's
// v1 kernel refuses (fixtures/mediapipe/make.sh checks that it does and
// stores them under matrix_v1_refused/), malformed ones (every
// truncation of options the flatbuffers library wrote, version 2's
// options) and landmarks of another layout or too few for the indices:
// the import refuses each with an error naming the operator and what is
// wrong, never a panic.
func TestMediaPipeLandmarksMatrixV1Refused(t *testing.T) {
	const dir = "../../fixtures/mediapipe/data/"
	want := map[string]string{
		"dimensions": "dimensions 2", "multiplier": "bbox_size_multiplier 0", "range": "landmarks_range 0",
		"input_hw": "input_hw 0x128", "output_hw": "output size -3x32", "left": "landmark index -1",
		"subset_empty": "subset is empty", "subset_negative": "landmark index -2",
	}
	check := func(name string, data []byte, wants ...string) {
		t.Helper()
		_, err := importProto(data, Options{})
		if err == nil {
			t.Errorf("%s: imported", name)
			return
		}
		wants = append(wants, "Landmarks2TransformMatrix")
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) || recovered.In(err) {
				t.Errorf("%s: %v; want an error naming %q", name, err, w)
			}
		}
	}
	for name, w := range want {
		opts, err := os.ReadFile(dir + "matrix_v1_refused/" + name + ".bin")
		if err != nil {
			t.Fatal(err)
		}
		check(name, landmarksMatrixModel(1, opts, 1, 1, 1, 15), "version 1", w)
	}
	opts, err := os.ReadFile(dir + "matrix_v1_odd/options.bin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := importProto(landmarksMatrixModel(1, opts, 1, 1, 1, 27), Options{}); err != nil {
		t.Fatalf("matrix_v1_odd's options: %v", err)
	}
	check("8 landmarks", landmarksMatrixModel(1, opts, 1, 1, 1, 24), "landmark index 8 outside the 8 landmarks")
	check("[1, 9, 3]", landmarksMatrixModel(1, opts, 1, 9, 3), "want [1, 1, 1, 3N]")
	check("not triples", landmarksMatrixModel(1, opts, 1, 1, 1, 28), "want [1, 1, 1, 3N]")
	check("no options", landmarksMatrixModel(1, nil, 1, 1, 1, 27), "no custom_options")
	check("version 3", landmarksMatrixModel(3, opts, 1, 1, 1, 27), "version 3")
	v2, err := os.ReadFile(dir + "matrix_odd/options.bin")
	if err != nil {
		t.Fatal(err)
	}
	check("version 2's options", landmarksMatrixModel(1, v2, 1, 1, 1, 27), "custom_options: no dimensions")
	for n := range len(opts) {
		check(fmt.Sprintf("options cut to %d bytes", n), landmarksMatrixModel(1, opts[:n], 1, 1, 1, 27), "custom_options")
	}
}

// ulps is how many float32 steps apart a and b are (both finite).
func ulps(a, b float32) int64 {
	key := func(v float32) int64 {
		i := int64(int32(math.Float32bits(v)))
		if i < 0 {
			i = math.MinInt32 - i
		}
		return i
	}
	d := key(a) - key(b)
	if d < 0 {
		d = -d
	}
	return d
}

// Landmarks2TransformMatrix of both versions on 200 random sets of 10
// landmarks each (fixtures/mediapipe/data/matrix_random,
// matrix_v1_random: MediaPipe's kernels' outputs): ONNX Runtime, whose
// Atan, Cos and Sin on one value call the C library's atanf, cosf and
// sinf (or cos and sin on doubles) as the kernels do, computes every
// value bit for bit (with the importer's former atan2, Atan(y/x) plus
// or minus float pi, 196 of version 2's 3,200 values were off, by up to
// 98 ulps). The executor's are Go's math functions rounded to float32,
// which differ from glibc's float functions (not correctly rounded) in a
// few percent of arguments: its matrices are within 1e-6 of their
// largest value (measured: 2.8e-7 and 3.9e-7).
func TestMediaPipeLandmarksMatrixRandom(t *testing.T) {
	const dir = "../../fixtures/mediapipe/data/"
	for _, tc := range []struct {
		name    string
		version int32
		in      []int32
	}{{"matrix_random", 2, []int32{1, 10, 3}}, {"matrix_v1_random", 1, []int32{1, 1, 1, 30}}} {
		t.Run(tc.name, func(t *testing.T) {
			opts := readFile(t, dir+tc.name+"/options.bin")
			mp, err := importProto(landmarksMatrixModel(tc.version, opts, tc.in...), Options{})
			if err != nil {
				t.Fatal(err)
			}
			ins, err := tensorio.ReadNpyFile(dir + tc.name + "/in0.npy")
			if err != nil {
				t.Fatal(err)
			}
			outs, err := tensorio.ReadNpyFile(dir + tc.name + "/out.npy")
			if err != nil {
				t.Fatal(err)
			}
			x, err := ins.Float32s()
			if err != nil {
				t.Fatal(err)
			}
			want, err := outs.Float32s()
			if err != nil {
				t.Fatal(err)
			}
			count, size := int(ins.Dims[0]), int(ins.Dims[1])
			dims := make([]int64, len(tc.in))
			for i, d := range tc.in {
				dims[i] = int64(d)
			}
			name := mp.GetGraph().GetInput()[0].GetName()
			// check runs every input set and compares each matrix with the
			// kernel's: values that differ, by how many ulps at most, and
			// the largest difference relative to the matrix's largest
			// magnitude, which must be at most limit.
			check := func(t *testing.T, run func(in *onnxpb.TensorProto) *onnxpb.TensorProto, limit float64) {
				differ, worst, rel := 0, int64(0), 0.0
				for k := range count {
					got := tensorFloats(t, run(floatTensor(name, dims, x[k*size:(k+1)*size])))
					w := want[16*k : 16*k+16]
					scale := 0.0
					for _, v := range w {
						scale = math.Max(scale, math.Abs(float64(v)))
					}
					for i, g := range got {
						if g != w[i] {
							differ++
							worst = max(worst, ulps(g, w[i]))
							rel = math.Max(rel, math.Abs(float64(g)-float64(w[i]))/scale)
						}
					}
				}
				if rel > limit {
					t.Errorf("%d of %d values differ from MediaPipe's kernel's, by up to %d ulps, %.2g relative to the matrix's largest: want at most %g", differ, 16*count, worst, rel, limit)
				}
				t.Logf("%d of %d values differ from MediaPipe's kernel's, by up to %d ulps, %.2g relative to the matrix's largest", differ, 16*count, worst, rel)
			}
			t.Run("executor", func(t *testing.T) {
				m, err := canonical.FromProto(mp, "")
				if err != nil {
					t.Fatal(err)
				}
				ex, err := executor.New(m, executor.Options{})
				if err != nil {
					t.Fatal(err)
				}
				check(t, func(in *onnxpb.TensorProto) *onnxpb.TensorProto {
					x, err := canonical.TensorFromProto(in)
					if err != nil {
						t.Fatal(err)
					}
					y, err := ex.Run(context.Background(), []*canonical.Tensor{x})
					if err != nil {
						t.Fatal(err)
					}
					p, err := canonical.TensorToProto(y[0])
					if err != nil {
						t.Fatal(err)
					}
					return p
				}, 1e-6)
			})
			t.Run("onnxruntime", func(t *testing.T) {
				b, err := proto.Marshal(mp)
				if err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(t.TempDir(), "model.onnx")
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
				// One session runs every input set.
				run := openORTSession(t, path)
				check(t, func(in *onnxpb.TensorProto) *onnxpb.TensorProto {
					y, err := run([]*onnxpb.TensorProto{in})
					if err != nil {
						t.Fatal(err)
					}
					return y[0]
				}, 0)
			})
		})
	}
}
