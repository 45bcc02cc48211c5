package libtorch_test

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/runtimes"
	"github.com/onnxconv/onnxconv/runtimes/libtorch"
	"github.com/onnxconv/onnxconv/runtimes/runtimetest"
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
