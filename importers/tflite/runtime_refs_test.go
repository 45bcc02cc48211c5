package tflite

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
	tfliteruntime "github.com/onnxconv/onnxconv/runtimes/tflite"
)

// writeRefsEnv, when 1, makes TestRuntimeReferences compute the expected
// outputs of runtimeFixtures with the TFLite runtime and write them as
// fixtures/tflite/NAME.output_N.npy.
const writeRefsEnv = "ONNXCONV_WRITE_TFLITE_REFS"

// runtimeFixtures are the fixtures made by fixtures/tflite/gen_runtime.py:
// their expected outputs were computed by the TFLite interpreter
// (runtimes/tflite), not by this project.
var runtimeFixtures = []string{"logmel", "logmel_t5", "control_flow", "svdf", "call_once", "unnamed_io", "unnamed_sig", "op_versions", "op_versions_v1"}

// fixtureInputs reads NAME.input_N.npy as the graph's inputs (float32
// fixtures only).
func fixtureInputs(t *testing.T, name string, mp *onnxpb.ModelProto) []*onnxpb.TensorProto {
	t.Helper()
	var ins []*onnxpb.TensorProto
	for i, in := range mp.GetGraph().GetInput() {
		dims, data := readNpy(t, fixture(fmt.Sprintf("%s.input_%d.npy", name, i)))
		ins = append(ins, floatTensor(in.GetName(), dims, data))
	}
	return ins
}

// TestRuntimeReferences converts the runtime-referenced fixtures, runs them
// on the executor on the stored inputs and compares with the stored outputs
// of the TFLite interpreter (within 1e-5 of each output's largest
// magnitude). With ONNXCONV_WRITE_TFLITE_REFS=1 it first writes those
// outputs by running the interpreter.
func TestRuntimeReferences(t *testing.T) {
	var env tfliteruntime.Env
	write := os.Getenv(writeRefsEnv) == "1"
	if write {
		env = tfliteEnv(t)
	}
	for _, name := range runtimeFixtures {
		t.Run(name, func(t *testing.T) {
			if write {
				// Inputs bind by position (no names): the model is run before
				// it is converted.
				var ins []*onnxpb.TensorProto
				for i := 0; ; i++ {
					path := fixture(fmt.Sprintf("%s.input_%d.npy", name, i))
					if _, err := os.Stat(path); err != nil {
						break
					}
					dims, data := readNpy(t, path)
					ins = append(ins, floatTensor("", dims, data))
				}
				res, err := tfliteruntime.Run(context.Background(), env, fixture(name+".tflite"), ins, 1)
				if err != nil {
					t.Fatal(err)
				}
				for i, o := range res.Outputs {
					writeNpy(t, fixture(fmt.Sprintf("%s.output_%d.npy", name, i)), o)
				}
			}
			mp := convert(t, fixture(name+".tflite"), Options{})
			inputs := fixtureInputs(t, name, mp)
			check := func(t *testing.T, got []*onnxpb.TensorProto) {
				if len(got) != len(mp.GetGraph().GetOutput()) {
					t.Fatalf("%d outputs, want %d", len(got), len(mp.GetGraph().GetOutput()))
				}
				for i, g := range got {
					checkAgainstNpy(t, g, fixture(fmt.Sprintf("%s.output_%d.npy", name, i)))
				}
			}
			t.Run("executor", func(t *testing.T) { check(t, runExecutor(t, mp, inputs)) })
			t.Run("onnxruntime", func(t *testing.T) { check(t, runModel(t, openORT(t), mp, inputs)) })
		})
	}
}

// checkAgainstNpy compares an output with a stored reference within 1e-5 of
// the reference's largest magnitude (integers stored as float32 exactly).
func checkAgainstNpy(t *testing.T, got *onnxpb.TensorProto, path string) {
	t.Helper()
	dims, want := readNpy(t, path)
	if fmt.Sprint(dims) != fmt.Sprint(got.GetDims()) {
		t.Errorf("%s: shape %v, the TFLite runtime's is %v", got.GetName(), got.GetDims(), dims)
		return
	}
	var g []float32
	switch onnxpb.TensorProto_DataType(got.GetDataType()) {
	case onnxpb.TensorProto_INT32, onnxpb.TensorProto_INT64, onnxpb.TensorProto_INT8, onnxpb.TensorProto_INT16, onnxpb.TensorProto_UINT8:
		for _, v := range intValues(onnxpb.TensorProto_DataType(got.GetDataType()), got.GetRawData()) {
			g = append(g, float32(v))
		}
	default:
		g = tensorFloats(t, got)
	}
	scale := 1e-30
	for _, v := range want {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	compareFloats(t, got.GetName(), g, want, 0, 1e-5*scale)
}

// writeNpy writes a runtime output as a float32 .npy (integer outputs are
// stored as float32, exactly for |v| < 2^24).
func writeNpy(t *testing.T, path string, tp *onnxpb.TensorProto) {
	t.Helper()
	var vals []float32
	dt := onnxpb.TensorProto_DataType(tp.GetDataType())
	switch dt {
	case onnxpb.TensorProto_FLOAT:
		vals = tensorFloats(t, tp)
	case onnxpb.TensorProto_INT32, onnxpb.TensorProto_INT8, onnxpb.TensorProto_INT16, onnxpb.TensorProto_UINT8, onnxpb.TensorProto_INT64:
		for _, v := range intValues(dt, tp.GetRawData()) {
			vals = append(vals, float32(v))
		}
	default:
		t.Fatalf("%s: element type %v not written", tp.GetName(), dt)
	}
	dims := make([]string, len(tp.GetDims()))
	for i, d := range tp.GetDims() {
		dims[i] = fmt.Sprint(d)
	}
	shape := strings.Join(dims, ", ")
	if len(dims) == 1 {
		shape += ","
	}
	header := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", shape)
	pad := 64 - (10+len(header)+1)%64
	header += strings.Repeat(" ", pad%64) + "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(header)), byte(len(header)>>8))
	b = append(b, header...)
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	if err := os.WriteFile(filepath.Clean(path), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDynamicTimeAxis: logmel.tflite has a time axis that is -1 in
// shape_signature and the placeholder 1 in shape. Its ONNX graph keeps the
// axis symbolic and computes, at T = 5, what the TFLite interpreter computes
// for the same graph at T = 5 (logmel_t5.tflite, the placeholder 5), on the
// executor and on ONNX Runtime; at T = 1 it matches the runtime on
// logmel.tflite itself (TestRuntimeReferences).
func TestDynamicTimeAxis(t *testing.T) {
	mp := convert(t, fixture("logmel.tflite"), Options{})
	g := mp.GetGraph()
	for _, vi := range append(append([]*onnxpb.ValueInfoProto{}, g.GetInput()...), g.GetOutput()...) {
		var dims []string
		for _, d := range vi.GetType().GetTensorType().GetShape().GetDim() {
			if d.GetDimParam() != "" {
				dims = append(dims, d.GetDimParam())
			} else {
				dims = append(dims, fmt.Sprint(d.GetDimValue()))
			}
		}
		t.Logf("%s %v", vi.GetName(), dims)
		symbolic := 0
		for _, d := range vi.GetType().GetTensorType().GetShape().GetDim() {
			if d.GetDimParam() != "" {
				symbolic++
			}
		}
		if symbolic != 1 {
			t.Errorf("%s: dims %v, want the time axis (only) symbolic", vi.GetName(), dims)
		}
	}
	for _, n := range g.GetNode() {
		if n.GetOpType() == "Reshape" || n.GetOpType() == "Squeeze" || n.GetOpType() == "Unsqueeze" {
			t.Logf("%s %v", n.GetOpType(), n.GetInput())
		}
	}
	inputs := fixtureInputs(t, "logmel_t5", mp)
	check := func(t *testing.T, got []*onnxpb.TensorProto) {
		if len(got) != 2 {
			t.Fatalf("%d outputs, want 2", len(got))
		}
		for i, o := range got {
			checkAgainstNpy(t, o, fixture(fmt.Sprintf("logmel_t5.output_%d.npy", i)))
		}
	}
	t.Run("executor", func(t *testing.T) { check(t, runExecutor(t, mp, inputs)) })
	t.Run("onnxruntime", func(t *testing.T) { check(t, runModel(t, openORT(t), mp, inputs)) })
}

// A hostile file whose IF or WHILE calls the main subgraph (a cycle) is an
// error, not a recursion without end.
func TestControlFlowCycle(t *testing.T) {
	for _, code := range []fb.BuiltinOperator{fb.BuiltinOperatorIF, fb.BuiltinOperatorWHILE} {
		data := append([]byte(nil), readFile(t, fixture("control_flow.tflite"))...)
		m, err := readModel(data)
		if err != nil {
			t.Fatal(err)
		}
		mutated := false
		for _, o := range m.subgraphs[0].ops {
			if o.code != code {
				continue
			}
			if code == fb.BuiltinOperatorIF {
				opt, err := options[fb.IfOptions](o, fb.BuiltinOptionsIfOptions)
				if err != nil {
					t.Fatal(err)
				}
				mutated = opt.MutateElseSubgraphIndex(0)
			} else {
				opt, err := options[fb.WhileOptions](o, fb.BuiltinOptionsWhileOptions)
				if err != nil {
					t.Fatal(err)
				}
				mutated = opt.MutateBodySubgraphIndex(0)
			}
			break
		}
		if !mutated {
			t.Fatalf("%s: could not patch the subgraph index", code)
		}
		_, err = importProto(data, Options{})
		if err == nil || !strings.Contains(err.Error(), "calls itself") {
			t.Errorf("%s calling the main subgraph: %v, want a 'calls itself' error", code, err)
		}
	}
}

// TestSVDFVariants runs the integer and hybrid SVDF fixtures on several
// input samples, among them all-zero rows (a hybrid SVDF's run-time input
// scale is then undefined and TFLite skips the product), on the TFLite
// runtime, the executor and ONNX Runtime: int8 outputs exact, float
// outputs within 1e-5 of the largest magnitude.
func TestSVDFVariants(t *testing.T) {
	env := tfliteEnv(t)
	for _, name := range []string{"svdf_int8", "svdf_hybrid"} {
		t.Run(name, func(t *testing.T) {
			path := fixture(name + ".tflite")
			mp := convert(t, path, Options{})
			ort := openORT(t)
			for sample := 0; sample < 4; sample++ {
				rng := rand.New(rand.NewPCG(uint64(sample), 99))
				var inputs []*onnxpb.TensorProto
				for k, in := range mp.GetGraph().GetInput() {
					tt := in.GetType().GetTensorType()
					var dims []int64
					for _, d := range tt.GetShape().GetDim() {
						dims = append(dims, d.GetDimValue())
					}
					n := int(numel(dims))
					// Sample 1 zeroes the first input's first row, sample 2 both inputs.
					zeroRow := func(i int) bool {
						return (sample == 1 && k == 0 || sample == 2) && i < n/int(dims[0])
					}
					switch onnxpb.TensorProto_DataType(tt.GetElemType()) {
					case onnxpb.TensorProto_FLOAT:
						v := make([]float32, n)
						for i := range v {
							if !zeroRow(i) {
								v[i] = float32(rng.Float64()*4 - 2)
							}
						}
						inputs = append(inputs, floatTensor(in.GetName(), dims, v))
					case onnxpb.TensorProto_INT8:
						raw := make([]byte, n)
						for i := range raw {
							raw[i] = byte(rng.IntN(256))
						}
						inputs = append(inputs, tensorProto(in.GetName(), onnxpb.TensorProto_INT8, dims, raw))
					default:
						t.Fatalf("input %q: type %v", in.GetName(), tt.GetElemType())
					}
				}
				res, err := runTFLite(t, env, path, inputs)
				if err != nil {
					t.Fatal(err)
				}
				for _, via := range []struct {
					name string
					got  []*onnxpb.TensorProto
				}{{"executor", runExecutor(t, mp, inputs)}, {"onnxruntime", runModel(t, ort, mp, inputs)}} {
					for i, want := range res.Outputs {
						r := compareOutput(t, via.name+" "+want.GetName(), via.got[i], want)
						if strings.HasPrefix(r, "int8") && !strings.Contains(r, "max 0 step(s)") {
							t.Errorf("sample %d, %s, %s: %s; want every value exact", sample, via.name, want.GetName(), r)
						}
						t.Logf("sample %d, %s, %s: %s", sample, via.name, want.GetName(), r)
					}
				}
			}
		})
	}
}
