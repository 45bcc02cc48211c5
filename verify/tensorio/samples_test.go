package tensorio

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// fixture loads fixtures/models/NAME and returns its graph inputs (not
// initializers), its outputs and the folder.
func fixture(t *testing.T, name string) ([]*canonical.Value, []*canonical.Value, string) {
	t.Helper()
	dir := filepath.Join("..", "..", "fixtures", "models", name)
	m, err := canonical.Load(filepath.Join(dir, "model.onnx"), canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	var ins []*canonical.Value
	for _, v := range m.Graph.Inputs {
		if v.Const == nil {
			ins = append(ins, v)
		}
	}
	return ins, m.Graph.Outputs, dir
}

func mustBytes(t *testing.T, x *canonical.Tensor) []byte {
	t.Helper()
	b, err := x.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// npyOf writes x as an .npy (float32 only, which the fixtures use).
func npyOf(t *testing.T, x *canonical.Tensor) []byte {
	t.Helper()
	if x.DataType != canonical.Float {
		t.Fatalf("npyOf: %v", x.DataType)
	}
	var dims []string
	for _, d := range x.Dims {
		dims = append(dims, fmt.Sprint(d))
	}
	shape := strings.Join(dims, ", ")
	if len(dims) == 1 {
		shape += ","
	}
	return npyBytes(fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", shape), mustBytes(t, x))
}

func TestLoadSamplesFixtures(t *testing.T) {
	for _, name := range []string{"mlp_opset9", "mlp_opset17", "resnet_small", "squeezenet", "transformer_block_opset21", "transformer_encoder"} {
		ins, outs, dir := fixture(t, name)
		for _, side := range []struct {
			prefix string
			vals   []*canonical.Value
		}{{"input", ins}, {"output", outs}} {
			got, err := LoadSamples(dir, side.prefix, side.vals, false)
			if err != nil {
				t.Fatalf("%s %s: %v", name, side.prefix, err)
			}
			if len(got) != 1 || len(got[0]) != len(side.vals) {
				t.Fatalf("%s %s: %d samples", name, side.prefix, len(got))
			}
			for i, v := range side.vals {
				want, err := canonical.ReadTensorFile(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("%s_%d.pb", side.prefix, i)))
				if err != nil {
					t.Fatal(err)
				}
				g := got[0][i]
				if g.Name != v.Name || g.DataType != want.DataType || !slices.Equal(g.Dims, want.Dims) || !bytes.Equal(mustBytes(t, g), mustBytes(t, want)) {
					t.Errorf("%s %s %d: got %s %v %v, want %q %v %v", name, side.prefix, i, g.Name, g.DataType, g.Dims, v.Name, want.DataType, want.Dims)
				}
			}
		}
	}
}

// TestLoadSamplesLookupOrder checks the documented order on files of a
// fixture: by name (.pb, .npy, .npz member) before by position.
func TestLoadSamplesLookupOrder(t *testing.T) {
	ins, _, fdir := fixture(t, "mlp_opset9")
	if len(ins) != 1 {
		t.Fatalf("mlp_opset9 has %d inputs", len(ins))
	}
	set := filepath.Join(fdir, "test_data_set_0")
	in, err := canonical.ReadTensorFile(filepath.Join(set, "input_0.pb"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := canonical.ReadTensorFile(filepath.Join(set, "output_0.pb"))
	if err != nil {
		t.Fatal(err)
	}
	name := ins[0].Name
	safe := SafeName(name)
	load := func(dir string) *canonical.Tensor {
		t.Helper()
		got, err := LoadSamples(dir, "input", ins, false)
		if err != nil {
			t.Fatal(err)
		}
		return got[0][0]
	}
	is := func(got, want *canonical.Tensor, what string) {
		t.Helper()
		if !slices.Equal(got.Dims, want.Dims) || !bytes.Equal(mustBytes(t, got), mustBytes(t, want)) {
			t.Errorf("%s: got dims %v, want %v", what, got.Dims, want.Dims)
		}
		if got.Name != name {
			t.Errorf("%s: tensor named %q, want %q", what, got.Name, name)
		}
	}

	// NAME.pb wins over input_0.pb.
	dir := t.TempDir()
	copyFile(t, filepath.Join(set, "input_0.pb"), filepath.Join(dir, "input_0.pb"))
	copyFile(t, filepath.Join(set, "output_0.pb"), filepath.Join(dir, safe+".pb"))
	is(load(dir), out, "NAME.pb beside input_0.pb")

	// NAME.npy wins over input_0.pb; input_0.npy is found by position.
	dir = t.TempDir()
	copyFile(t, filepath.Join(set, "input_0.pb"), filepath.Join(dir, "input_0.pb"))
	if err := os.WriteFile(filepath.Join(dir, safe+".npy"), npyOf(t, out), 0o644); err != nil {
		t.Fatal(err)
	}
	is(load(dir), out, "NAME.npy beside input_0.pb")
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "input_0.npy"), npyOf(t, in), 0o644); err != nil {
		t.Fatal(err)
	}
	is(load(dir), in, "input_0.npy")

	// An .npz member NAME wins over input_0.pb; an .npz as path.
	dir = t.TempDir()
	copyFile(t, filepath.Join(set, "input_0.pb"), filepath.Join(dir, "input_0.pb"))
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, _ := zw.Create(name + ".npy")
	w.Write(npyOf(t, out))
	w, _ = zw.Create("input_0.npy")
	w.Write(npyOf(t, in))
	zw.Close()
	npz := filepath.Join(dir, "samples.npz")
	if err := os.WriteFile(npz, zb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	is(load(dir), out, "npz member NAME beside input_0.pb")
	is(load(npz), out, "npz path, member NAME")

	// Missing: the error names everything looked for, in order.
	empty := t.TempDir()
	_, err = LoadSamples(empty, "input", ins, false)
	var miss *MissingTensorError
	if !errors.As(err, &miss) {
		t.Fatalf("empty folder: %v, want a *MissingTensorError", err)
	}
	wantTried := []string{safe + ".pb", safe + ".npy", "input_0.pb", "input_0.npy"}
	if !slices.Equal(miss.Tried, wantTried) || miss.Name != name || miss.Index != 0 {
		t.Errorf("missing: %+v, want tried %v", miss, wantTried)
	}
	if !strings.Contains(err.Error(), "input_0.npy") {
		t.Errorf("message %q does not name input_0.npy", err)
	}
	// Optional: nil entry.
	got, err := LoadSamples(empty, "input", ins, true)
	if err != nil || len(got) != 1 || got[0][0] != nil {
		t.Errorf("optional missing: %v %v", got, err)
	}
	// Files of another model.
	dir = t.TempDir()
	copyFile(t, filepath.Join(set, "input_0.pb"), filepath.Join(dir, "input_0.pb"))
	copyFile(t, filepath.Join(set, "input_0.pb"), filepath.Join(dir, "input_1.pb"))
	_, err = LoadSamples(dir, "input", ins, false)
	var extra *ExtraTensorError
	if !errors.As(err, &extra) || extra.File != "input_1.pb" {
		t.Errorf("extra input_1.pb: %v", err)
	}
}

// TestLoadSamplesSets reads test_data_set_N folders in numeric order.
func TestLoadSamplesSets(t *testing.T) {
	ins, outs, fdir := fixture(t, "mlp_opset9")
	set := filepath.Join(fdir, "test_data_set_0")
	root := t.TempDir()
	// Sample 2 (test_data_set_10) holds the output as input, so the order
	// is visible; 10 must come after 2, not before.
	for _, s := range []struct {
		dir, src string
	}{{"test_data_set_0", "input_0.pb"}, {"test_data_set_2", "input_0.pb"}, {"test_data_set_10", "output_0.pb"}} {
		d := filepath.Join(root, s.dir)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		copyFile(t, filepath.Join(set, s.src), filepath.Join(d, "input_0.pb"))
		copyFile(t, filepath.Join(set, "output_0.pb"), filepath.Join(d, "output_0.pb"))
	}
	got, err := LoadSamples(root, "input", ins, false)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := canonical.ReadTensorFile(filepath.Join(set, "output_0.pb"))
	in, _ := canonical.ReadTensorFile(filepath.Join(set, "input_0.pb"))
	if len(got) != 3 {
		t.Fatalf("%d samples, want 3", len(got))
	}
	for i, want := range []*canonical.Tensor{in, in, out} {
		if !slices.Equal(got[i][0].Dims, want.Dims) {
			t.Errorf("sample %d: dims %v, want %v", i, got[i][0].Dims, want.Dims)
		}
	}
	if _, err := LoadSamples(root, "output", outs, false); err != nil {
		t.Errorf("outputs: %v", err)
	}
}

// TestLoadSamplesInputNamedLikePosition: a model whose one input is named
// input_1 (every Keras model exported by tf2onnx) reads input_1.npy as
// that input, not as another model's second positional tensor.
func TestLoadSamplesInputNamedLikePosition(t *testing.T) {
	ins, _, fdir := fixture(t, "mlp_opset9")
	in, err := canonical.ReadTensorFile(filepath.Join(fdir, "test_data_set_0", "input_0.pb"))
	if err != nil {
		t.Fatal(err)
	}
	v := *ins[0]
	v.Name = "input_1"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "input_1.npy"), npyOf(t, in), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := LoadSamples(dir, "input", []*canonical.Value{&v}, false)
	if err != nil {
		t.Fatalf("input_1.npy for the input named input_1: %v", err)
	}
	if !bytes.Equal(mustBytes(t, got[0][0]), mustBytes(t, in)) {
		t.Error("input_1.npy was not read as input_1")
	}
	// With the input named otherwise, input_1.npy still marks another
	// model's files.
	v.Name = "x"
	if _, err := LoadSamples(dir, "input", []*canonical.Value{&v}, false); err == nil {
		t.Error("input_1.npy beside a one-input model named x was accepted")
	}
}
