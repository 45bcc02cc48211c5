package libtorch_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/runtimes/libtorch"
	"github.com/onnxconv/onnxconv/runtimes/runtimetest"
	"github.com/onnxconv/onnxconv/verify/tensorio"
)

// TestConformance runs the runtime conformance suite on libtorch, served
// by its plugin (built here with the libtorch tag) through a plugin host,
// against the outputs torch 1.13 stored for the TorchScript fixtures
// (scripted control flow, an LSTM, float and int64 inputs; the scripted
// models again at another batch size). An archive that is not one fails
// with the plugin's *plugins.PluginError.
func TestConformance(t *testing.T) {
	host, err := plugins.NewHost(context.Background(), plugins.Options{PluginPath: testpaths.LibtorchPlugin(t), UserDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtimes.NewSet(host).Lookup(libtorch.RuntimeName)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(testpaths.RepoRoot(t), "fixtures", "torchscript")
	fixture := func(name string, ins int, batched bool) runtimetest.Case {
		set := filepath.Join(root, name, "test_data_set_0")
		var in []string
		for i := range ins {
			in = append(in, filepath.Join(set, "input_"+strconv.Itoa(i)+".npy"))
		}
		c := runtimetest.Case{Name: name, Path: filepath.Join(root, name, "model.pt"),
			Samples: []runtimetest.Sample{runtimetest.NpySample(t, in, []string{filepath.Join(set, "output_0.npy")})}}
		if batched {
			c.Samples = append(c.Samples, runtimetest.Batched(t, c.Samples[0], 2))
		}
		return c
	}
	runtimetest.Run(t, runtimetest.Suite{
		Runtime: rt,
		Cases: []runtimetest.Case{
			fixture("branchy_scripted", 1, true),
			fixture("recurrent_scripted", 1, true),
			fixture("more_ops_scripted", 2, false),
			fixture("conv_transpose_traced", 1, false),
		},
		BadModel: func(err error) bool {
			var pe *plugins.PluginError
			return errors.As(err, &pe)
		},
	})
}

// The plugin hands out the results of top-level submodule calls
// (protocol.OptionCapture, plugins.RuntimeSession.RunNamed): on the traced
// ShuffleNet, "fc:0", the last call, is the output torch stored, and
// "conv1:0" has the stem's shape; a call that does not exist is an error.
func TestRunNamed(t *testing.T) {
	host, err := plugins.NewHost(context.Background(), plugins.Options{PluginPath: testpaths.LibtorchPlugin(t), UserDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(testpaths.RepoRoot(t), "fixtures", "torchscript", "shufflenet_v2_x0_5_traced")
	s, err := host.OpenRuntime(context.Background(), libtorch.RuntimeName, filepath.Join(dir, "model.pt"), nil, plugins.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in, err := tensorio.ReadNpyFile(filepath.Join(dir, "test_data_set_0", "input_0.npy"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := tensorio.ReadNpyFile(filepath.Join(dir, "test_data_set_0", "output_0.npy"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.RunNamed(context.Background(), []*canonical.Tensor{in}, []string{"conv1:0", "fc:0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !slices.Equal(got[0].Dims, []int64{1, 24, 32, 32}) {
		t.Fatalf("%d tensors; conv1:0 of shape %v, want [1 24 32 32]", len(got), got[0].Dims)
	}
	a, _ := want.Float64s()
	b, _ := got[1].Float64s()
	if len(a) != len(b) {
		t.Fatalf("fc:0 has %d elements, torch's output %d", len(b), len(a))
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-5*math.Max(1, math.Abs(a[i])) {
			t.Fatalf("fc:0[%d] = %g, torch stored %g", i, b[i], a[i])
		}
	}
	if _, err := s.RunNamed(context.Background(), []*canonical.Tensor{in}, []string{"conv1:1"}); err == nil {
		t.Error("a second call of conv1, which forward does not make, gave no error")
	}
}
