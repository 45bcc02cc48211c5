package tflite

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	fb "github.com/onnxconv/onnxconv/formats/tflite/tflitefb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/runtimes/runtimetest"
)

// fixtureTypes are the TFLite schema's names of the element types of the
// fixtures' graph inputs and outputs.
var fixtureTypes = map[string]canonical.DataType{
	"FLOAT32": canonical.Float, "INT32": canonical.Int32, "INT64": canonical.Int64,
	"INT16": canonical.Int16, "INT8": canonical.Int8, "UINT8": canonical.Uint8, "BOOL": canonical.Bool,
}

// fixtureCase is fixtures/tflite/NAME.tflite with its stored sample: the
// inputs bound by the names of the model's input tensors (NAME.json, its
// flatc source), the outputs as the TFLite runtime computed them
// (gen_runtime.py) in the element types the model declares (integer
// outputs are stored as float32).
func fixtureCase(t *testing.T, name string) runtimetest.Case {
	t.Helper()
	dir := filepath.Join(testpaths.RepoRoot(t), "fixtures", "tflite")
	b, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var src struct {
		Subgraphs []struct {
			Tensors []struct {
				Name string `json:"name"`
				Type string `json:"type"`
			} `json:"tensors"`
			Inputs  []int `json:"inputs"`
			Outputs []int `json:"outputs"`
		} `json:"subgraphs"`
	}
	if err := json.Unmarshal(b, &src); err != nil {
		t.Fatalf("%s.json: %v", name, err)
	}
	main := src.Subgraphs[0]
	c := runtimetest.Case{Name: name, Path: filepath.Join(dir, name+".tflite")}
	var ins, outs []string
	for i, k := range main.Inputs {
		c.Options.InputNames = append(c.Options.InputNames, main.Tensors[k].Name)
		ins = append(ins, filepath.Join(dir, name+".input_"+strconv.Itoa(i)+".npy"))
	}
	for i := range main.Outputs {
		outs = append(outs, filepath.Join(dir, name+".output_"+strconv.Itoa(i)+".npy"))
	}
	s := runtimetest.NpySample(t, ins, outs)
	for i, k := range main.Outputs {
		dt, ok := fixtureTypes[main.Tensors[k].Type]
		if !ok {
			t.Fatalf("%s: output %d of type %s", name, i, main.Tensors[k].Type)
		}
		if w := s.Want[i]; w.DataType != dt {
			v, err := w.Float64s()
			if err != nil {
				t.Fatal(err)
			}
			s.Want[i] = canonical.NumberTensor(w.Name, dt, w.Dims, v)
		}
	}
	c.Samples = []runtimetest.Sample{s}
	return c
}

// TestConformance runs the runtime conformance suite on the tflite
// runtime, in both its engines: LiteRT.js (control flow, a dynamic time
// axis at its placeholder, unnamed tensors, SIGN at operator version 2,
// which tfjs-tflite refuses) and tfjs-tflite (what LiteRT.js does not run:
// SVDF's variable state tensors, a resource variable, int16 SeaNet),
// against outputs the TFLite interpreter (or TFLite Micro's reference
// kernels, for SeaNet) computed. A file that is not TFLite is a
// *NotTFLiteError.
func TestConformance(t *testing.T) {
	testpaths.Node(t, Package, LiteRTPackage)
	env := realEnv(t)
	var cases []runtimetest.Case
	for _, name := range []string{"control_flow", "call_once", "logmel", "logmel_t5", "unnamed_io", "op_versions", "svdf"} {
		c := fixtureCase(t, name)
		c.ComputedBy = LiteRTPackage
		if name == "svdf" || name == "call_once" {
			c.ComputedBy = Package
		}
		cases = append(cases, c)
	}
	cases = append(cases, seaNetCase(t, "conv1"))
	runtimetest.Run(t, runtimetest.Suite{
		Runtime: New(runtimetest.NodeModules(env.Modules)),
		Cases:   cases,
		BadModel: func(err error) bool {
			var nt *NotTFLiteError
			return errors.As(err, &nt)
		},
	})
}

// seaNetCase is a SeaNet int16 convolution of ../shared/tflite-micro with
// its stored input and the output TFLite Micro's reference kernels
// computed (CSV values), in the shapes the model declares.
func seaNetCase(t *testing.T, name string) runtimetest.Case {
	t.Helper()
	dir := testpaths.Shared(t, "tflite-micro", "seanet")
	path := filepath.Join(dir, name+".tflite")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sub fb.SubGraph
	if !fb.GetRootAsModel(data, 0).Subgraphs(&sub, 0) || sub.InputsLength() != 1 || sub.OutputsLength() != 1 {
		t.Fatalf("%s: want one subgraph of one input and one output", path)
	}
	tensor := func(csv string, k int32) (*canonical.Tensor, string) {
		var tn fb.Tensor
		if !sub.Tensors(&tn, int(k)) {
			t.Fatalf("%s: no tensor %d", path, k)
		}
		dims := make([]int64, tn.ShapeLength())
		for j := range dims {
			dims[j] = int64(tn.Shape(j))
		}
		v := readCSV(t, filepath.Join(dir, csv))
		f := make([]float64, len(v))
		for i, x := range v {
			f[i] = float64(x)
		}
		return canonical.NumberTensor(string(tn.Name()), canonical.Int16, dims, f), string(tn.Name())
	}
	in, inName := tensor(name+"_input0_int16.csv", sub.Inputs(0))
	want, _ := tensor(name+"_golden_int16.csv", sub.Outputs(0))
	return runtimetest.Case{
		Name:       "seanet_" + name,
		Path:       path,
		Options:    runtimes.OpenOptions{InputNames: []string{inName}},
		Samples:    []runtimetest.Sample{{Inputs: []*canonical.Tensor{in}, Want: []*canonical.Tensor{want}}},
		ComputedBy: Package,
	}
}
