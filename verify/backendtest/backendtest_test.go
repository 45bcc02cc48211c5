package backendtest

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
)

func f32(dims []int64, v ...float32) *canonical.Tensor {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return canonical.NewTensor("t", canonical.Float, dims, b)
}

func TestCompareTensors(t *testing.T) {
	nan := float32(math.NaN())
	cases := []struct {
		name      string
		got, want *canonical.Tensor
		ok        bool
	}{
		{"equal", f32([]int64{2}, 1, 2), f32([]int64{2}, 1, 2), true},
		{"within rtol", f32([]int64{1}, 1000.9), f32([]int64{1}, 1000), true},
		{"beyond rtol", f32([]int64{1}, 1001.5), f32([]int64{1}, 1000), false},
		{"nan equals nan", f32([]int64{1}, nan), f32([]int64{1}, nan), true},
		{"nan vs number", f32([]int64{1}, nan), f32([]int64{1}, 0), false},
		{"number vs nan", f32([]int64{1}, 0), f32([]int64{1}, nan), false},
		{"shape", f32([]int64{2, 1}, 1, 2), f32([]int64{2}, 1, 2), false},
		{"ints exact", canonical.NewTensor("i", canonical.Int32, []int64{1}, []byte{1, 0, 0, 0}), canonical.NewTensor("i", canonical.Int32, []int64{1}, []byte{2, 0, 0, 0}), false},
		{"type", canonical.NewTensor("i", canonical.Int32, []int64{1}, []byte{0, 0, 0, 0}), f32([]int64{1}, 0), false},
	}
	for _, c := range cases {
		err := CompareTensors(c.got, c.want, DefaultRTol, DefaultATol)
		if (err == nil) != c.ok {
			t.Errorf("%s: err = %v, want ok=%v", c.name, err, c.ok)
		}
	}
}

func caseDir(t *testing.T, name string) string {
	t.Helper()
	d, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			break
		}
		p := filepath.Dir(d)
		if p == d {
			t.Fatal("go.mod not found")
		}
		d = p
	}
	dir := filepath.Join(d, "..", "shared", "onnx-v1.22", "backend-tests", "node", name)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("backend test %s not found (../shared must sit beside the repository): %v", name, err)
	}
	return dir
}

type zeroRunner struct{}

func (zeroRunner) RunValues(_ context.Context, in []*executor.Value) ([]*executor.Value, error) {
	t := in[0].Tensor
	return []*executor.Value{executor.TensorValue(canonical.NewTensor("z", t.DataType, t.Dims, make([]byte, len(mustBytes(t)))))}, nil
}

func mustBytes(t *canonical.Tensor) []byte {
	b, err := t.Bytes()
	if err != nil {
		panic(err)
	}
	return b
}

func TestRunCase(t *testing.T) {
	c, err := Load(caseDir(t, "test_add"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.DataSets) == 0 || len(c.DataSets[0].Inputs) != 2 {
		t.Fatalf("loaded %d data sets", len(c.DataSets))
	}
	err = Run(context.Background(), c, func(m *canonical.Model) (Runner, error) { return executor.New(m, executor.Options{}) })
	if err != nil {
		t.Fatalf("executor fails test_add: %v", err)
	}
	err = Run(context.Background(), c, func(*canonical.Model) (Runner, error) { return zeroRunner{}, nil })
	if _, ok := err.(*MismatchError); !ok || !strings.Contains(err.Error(), "elements differ") {
		t.Fatalf("a runner returning zeros was not caught: %v", err)
	}
}

func TestSequenceCase(t *testing.T) {
	c, err := Load(caseDir(t, "test_sequence_insert_at_back"))
	if err != nil {
		t.Fatal(err)
	}
	if !c.DataSets[0].Inputs[0].IsSequence {
		t.Fatal("sequence input not read as a sequence")
	}
	if err := Run(context.Background(), c, func(m *canonical.Model) (Runner, error) { return executor.New(m, executor.Options{}) }); err != nil {
		t.Fatal(err)
	}
}
