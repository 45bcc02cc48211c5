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
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
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
	res, err := tfliteruntime.RunLiteRT(context.Background(), env, path, ins)
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
	res, err := tfliteruntime.Run(context.Background(), env, path, ins, 1)
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

// MediaPipe's TransformLandmarks, TransformTensorBilinear and
// Landmarks2TransformMatrix (version 2, what MediaPipe's CPU op resolver
// registers), one-op models of each on the inputs (and, for the last,
// the FlexBuffers custom_options the flatbuffers library wrote) of
// fixtures/mediapipe/data: the import computes the outputs MediaPipe's
// own CPU kernels computed there (fixtures/mediapipe/make.sh compiles
// their .cc files from MediaPipe's sources and runs them). No TFLite runtime here runs these
// operators (TestMediaPipeTransformOpsNotRunByLiteRT shows why), hence the stored
// outputs. TransformLandmarks also at version 1 (its v1 kernel: [1, H, W, C]
// landmarks, custom_options dimensions and scale); version 1 of the other
// two is refused, and so is the other version's layout.
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
			got := runExecutor(t, mp, ts[:last])
			t.Logf("MediaPipe's kernel: %s", compareOutput(t, "out", got[0], ts[last]))
		})
	}
}
