package runtimetest

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes/node"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// ONNXCases are the cases of every runtime that loads ONNX files: backend
// tests of float32, float16, int16, int64, uint32 and bool tensors,
// strings (unless noStrings), several outputs, a tensor with no element
// (in and out), and free dims (one session on inputs of two ranks).
func ONNXCases(t *testing.T, noStrings bool) []Case {
	t.Helper()
	cases := []Case{
		BackendCase(t, "test_add"),
		BackendCase(t, "test_cast_FLOAT_to_FLOAT16"),
		BackendCase(t, "test_bitwise_and_i16_3d"),
		BackendCase(t, "test_argmax_default_axis_example"),
		BackendCase(t, "test_mod_uint32"),
		BackendCase(t, "test_and_bcast4v4d"),
		BackendCase(t, "test_split_equal_parts_1d_opset18"),
		BackendCase(t, "test_slice_start_out_of_bounds"),
		BackendCase(t, "test_reduce_sum_empty_set"),
		BackendCase(t, "test_sigmoid", "test_sigmoid_example"),
	}
	if !noStrings {
		cases = append(cases, BackendCase(t, "test_equal_string"))
	}
	return cases
}

// BackendCase is a case of the ONNX 1.22 node backend tests in ../shared:
// the model of the first test named, with the inputs and outputs ONNX's
// reference implementation stored in each test_data_set_N of every test
// named. With more than one test (the same graph on inputs of other
// shapes: test_sigmoid and test_sigmoid_example), the model is written
// to a temporary folder with the shapes of its inputs and outputs
// removed, so that one session runs all the samples (dynamic dims).
func BackendCase(t *testing.T, names ...string) Case {
	t.Helper()
	dir := func(name string) string {
		return testpaths.Shared(t, "onnx-v1.22", "backend-tests", "node", name)
	}
	c := Case{Name: names[0], Path: filepath.Join(dir(names[0]), "model.onnx")}
	for _, name := range names {
		for k := 0; ; k++ {
			set := filepath.Join(dir(name), "test_data_set_"+strconv.Itoa(k))
			if _, err := os.Stat(set); err != nil {
				break
			}
			c.Samples = append(c.Samples, Sample{Inputs: readSet(t, set, "input"), Want: readSet(t, set, "output")})
		}
	}
	if len(c.Samples) == 0 {
		t.Fatalf("%s: no test_data_set", dir(names[0]))
	}
	if len(names) > 1 {
		c.Name += "_free_dims"
		c.Path = freeShapes(t, c.Path)
	}
	return c
}

// readSet reads kind_0.pb, kind_1.pb, … of a test data set.
func readSet(t *testing.T, set, kind string) []*canonical.Tensor {
	t.Helper()
	var out []*canonical.Tensor
	for i := 0; ; i++ {
		p := filepath.Join(set, kind+"_"+strconv.Itoa(i)+".pb")
		if _, err := os.Stat(p); err != nil {
			return out
		}
		x, err := canonical.ReadTensorFile(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, x)
	}
}

// freeShapes writes a copy of the ONNX model at path whose graph inputs
// and outputs keep their element types and lose their shapes.
func freeShapes(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m onnxpb.ModelProto
	if err := proto.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	g := m.GetGraph()
	for _, vi := range append(append([]*onnxpb.ValueInfoProto{}, g.GetInput()...), g.GetOutput()...) {
		if tt := vi.GetType().GetTensorType(); tt != nil {
			tt.Shape = nil
		}
	}
	g.ValueInfo = nil
	if b, err = proto.Marshal(&m); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "model.onnx")
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// NpySample reads a sample from .npy files: inputs, then outputs, each
// in the model's order.
func NpySample(t *testing.T, inputs, outputs []string) Sample {
	t.Helper()
	read := func(paths []string) []*canonical.Tensor {
		var out []*canonical.Tensor
		for _, p := range paths {
			x, err := tensorio.ReadNpyFile(p)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			out = append(out, x)
		}
		return out
	}
	return Sample{Inputs: read(inputs), Want: read(outputs)}
}

// Batched is s with every input and output repeated n times along its
// first axis: the sample the framework computed, n times over, for a
// model whose first axis is a free batch dim (the rows do not mix), run
// after s on the same session to exercise dynamic dims.
func Batched(t *testing.T, s Sample, n int) Sample {
	t.Helper()
	stack := func(ts []*canonical.Tensor) []*canonical.Tensor {
		out := make([]*canonical.Tensor, len(ts))
		for i, x := range ts {
			raw, err := x.Bytes()
			if err != nil || len(x.Dims) == 0 || x.DataType == canonical.String {
				t.Fatalf("Batched: tensor %q (%v, err %v) has no first axis to repeat", x.Name, x.Dims, err)
			}
			dims := slices.Clone(x.Dims)
			dims[0] *= int64(n)
			out[i] = canonical.NewTensor(x.Name, x.DataType, dims, bytes.Repeat(raw, n))
		}
		return out
	}
	return Sample{Inputs: stack(s.Inputs), Want: stack(s.Want)}
}

// NodeModules returns the node.FindOptions of a runtime under Node that
// finds its npm packages in modules (the checkout's node_modules, as
// testpaths.Node returns it) and reads the rest of the environment as it is.
func NodeModules(modules string) node.FindOptions {
	return node.FindOptions{Getenv: func(k string) string {
		if k == node.EnvNodeModules {
			return modules
		}
		return os.Getenv(k)
	}}
}
