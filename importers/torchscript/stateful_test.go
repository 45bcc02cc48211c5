package torchscript_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	expbuiltin "github.com/onnxconv/onnxconv/exporters/builtin"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/importers/torchscript"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/pipeline"
	"github.com/onnxconv/onnxconv/plugins"
	rtbuiltin "github.com/onnxconv/onnxconv/runtimes/builtin"
)

// statefulDir is the fixture of stateful_scripted/make.py: a module that
// keeps its state as attributes (_h, _calls) and takes a float gain.
func statefulDir(t *testing.T) string {
	return filepath.Join(testpaths.RepoRoot(t), "fixtures", "torchscript", "stateful_scripted")
}

// TestMissingInputsMessage: an archive converted without shapes (or
// without a value for a scalar input) is refused with one message that
// asks for everything missing, with an example shape that fits the first
// layer.
func TestMissingInputsMessage(t *testing.T) {
	root := filepath.Join(testpaths.RepoRoot(t), "fixtures", "torchscript")
	cases := []struct {
		path string
		opts map[string]string
		key  string
		want []string
	}{
		{filepath.Join(statefulDir(t), "model.pt"), nil, "shapes",
			[]string{"tensor input x and the value of float input gain", "-O shapes=1x8 -O bind=gain=VALUE", "Linear of 8 input features", "--inputs DIR"}},
		{filepath.Join(statefulDir(t), "model.pt"), map[string]string{"shapes": "2x8"}, "bind",
			[]string{"the value of float input gain", "-O bind=gain=VALUE"}},
		{filepath.Join(root, "shufflenet_v2_x0_5_traced", "model.pt"), nil, "shapes",
			[]string{"-O shapes=1x3x224x224", "2-D convolution"}},
		{filepath.Join(root, "recurrent_scripted", "model.pt"), nil, "shapes",
			[]string{"-O shapes=1x10x10", "recurrent layer"}},
	}
	for _, c := range cases {
		_, err := torchscript.New().Import(context.Background(), c.path, c.opts)
		var oe *importers.OptionError
		if !errors.As(err, &oe) || oe.Key != c.key {
			t.Fatalf("%s %v: %v, want an *OptionError for %s", c.path, c.opts, err, c.key)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: message %q lacks %q", filepath.Base(filepath.Dir(c.path)), err, w)
			}
		}
	}
	// Silero VAD's first layer is a 1-D reflection pad over audio.
	silero := filepath.Join(testpaths.Shared(t, "models", "torchscript", "silero_vad"), "silero_vad.jit")
	_, err := torchscript.New().Import(context.Background(), silero, nil)
	if err == nil || !strings.Contains(err.Error(), "-O shapes=1x16000 -O bind=sr=VALUE") {
		t.Errorf("silero without options: %v, want the audio example and sr asked for", err)
	}
}

// TestShapesFromInputs: with the inputs option (which --inputs sets) the
// tensor inputs' shapes are read from the samples.
func TestShapesFromInputs(t *testing.T) {
	m := importDetected(t, filepath.Join(statefulDir(t), "model.pt"),
		map[string]string{importers.OptionInputs: filepath.Join(statefulDir(t), "test_data_set_0"), "bind": "gain=0.5"})
	_, dims, _, _ := canonical.TensorTypeOf(m.Graph.Inputs[0].Type)
	if m.Graph.Inputs[0].Name != "x" || len(dims) != 2 || dims[0].Value != 2 || dims[1].Value != 8 {
		t.Errorf("input 0: %s %v, want x [2 8] (input_0.npy's shape)", m.Graph.Inputs[0].Name, dims)
	}
}

// TestStatefulAgainstLibtorch converts the stateful fixture (shapes from
// --inputs, gain bound) and Silero VAD (its 16 kHz branch) with
// verification against libtorch: the archive's own forward is called with
// its state kept inside the module (loaded afresh for each sample), and
// the converted model's state inputs are zeros. Both are EQUIVALENT,
// state outputs included (compared with the module's attributes after the
// call), and the written fixture reproduces torch's stored outputs.
func TestStatefulAgainstLibtorch(t *testing.T) {
	host := libtorchHost(t)
	env := pipeline.Env{Importers: builtin.Registry(), Exporters: expbuiltin.Registry(), Runtimes: rtbuiltin.Set(host)}
	convert := func(t *testing.T, in string, opts map[string]string, inputs string) (*pipeline.Result, string) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "out.onnx")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		res, err := pipeline.Convert(ctx, in, out, pipeline.Options{Env: env, ImportOptions: opts, Verify: &pipeline.VerifyOptions{Inputs: inputs, Samples: 2}})
		if err != nil {
			t.Fatalf("convert: %v", err)
		}
		if !res.Verified || !res.Equivalent || len(res.Comparisons) == 0 || !strings.Contains(res.Comparisons[0].What, "libtorch") {
			t.Fatalf("not verified against libtorch: %+v %+v", res.Conversion.NotVerified, res.Comparisons)
		}
		rep := res.Comparisons[0].Report
		for _, o := range rep.Outputs {
			if o.Float == nil || !o.Pass {
				t.Errorf("%s: %+v", o.Name, o)
				continue
			}
			t.Logf("%s %s: max_abs %.3g against libtorch", filepath.Base(in), o.Name, o.Float.MaxAbs)
		}
		return res, out
	}
	t.Run("fixture", func(t *testing.T) {
		dir := statefulDir(t)
		set := filepath.Join(dir, "test_data_set_0")
		res, out := convert(t, filepath.Join(dir, "model.pt"), map[string]string{"bind": "gain=0.5"}, set)
		names := []string{}
		for _, o := range res.Comparisons[0].Report.Outputs {
			names = append(names, o.Name)
		}
		if !slices.Equal(names, []string{"output_0", "state._h.out"}) {
			t.Errorf("compared outputs %v, want output_0 and state._h.out", names)
		}
		m, err := canonical.Load(out, canonical.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		f := loadFixture(t, dir)
		x := f.ins[0]
		x.Name = "x"
		got := run(t, m, []*canonical.Tensor{x, zeros([]int64{2, 6})})
		want := []*canonical.Tensor{f.out[0], npy(t, filepath.Join(set, "output_1.npy"))}
		for i := range want {
			e := relErr(t, got[i], want[i])
			t.Logf("output %d vs torch's stored output: max relative error %.3g", i, e)
			if e > 1e-5 {
				t.Errorf("output %d: %.3g > 1e-5", i, e)
			}
		}
	})
	t.Run("silero_vad", func(t *testing.T) {
		dir := testpaths.Shared(t, "models", "torchscript", "silero_vad")
		convert(t, filepath.Join(dir, "silero_vad.jit"), map[string]string{"shapes": "1x512", "bind": "sr=16000"}, "")
	})
}

// TestLibtorchErrorLine: an archive that libtorch refuses to run (the
// float input gain not given) fails with libtorch's own message on the
// error's first line, the C++ backtrace only after it.
func TestLibtorchErrorLine(t *testing.T) {
	host := libtorchHost(t)
	r, err := host.Runner("libtorch", filepath.Join(statefulDir(t), "model.pt"), nil, plugins.RunOptions{Options: map[string]string{"call": "x=@0"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, err = r.Run(ctx, []*canonical.Tensor{zeros([]int64{2, 8})})
	if err == nil {
		t.Fatal("libtorch ran forward without gain")
	}
	first, rest, _ := strings.Cut(err.Error(), "\n")
	t.Logf("first line: %s", first)
	if !strings.Contains(first, "gain") || strings.Contains(first, "frame #") {
		t.Errorf("first line %q: want libtorch's message about gain, no backtrace", first)
	}
	if !strings.Contains(rest, "frame #") {
		t.Errorf("the backtrace is not kept after the first line: %q", rest)
	}
}
