//go:build cgo

package onnx

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes/ort"
)

// openORT opens ONNX Runtime once for the package, or skips the test
// (counted and reported by TestMain; see internal/testpaths).
func openORT(t testing.TB) *ort.Runtime {
	t.Helper()
	lib := testpaths.ORT(t)
	rt, err := openOnce(lib)
	if err != nil {
		t.Fatalf("opening ONNX Runtime %s: %v", lib, err)
	}
	return rt
}

var openOnce = func() func(string) (*ort.Runtime, error) {
	var once sync.Once
	var rt *ort.Runtime
	var err error
	return func(lib string) (*ort.Runtime, error) {
		once.Do(func() { rt, err = ort.Open(lib, 1) })
		return rt, err
	}
}()

func readPB(t testing.TB, path string) *onnxpb.TensorProto {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tp := &onnxpb.TensorProto{}
	if err := proto.Unmarshal(b, tp); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tp
}

func floats(t testing.TB, tp *onnxpb.TensorProto) []float64 {
	t.Helper()
	if onnxpb.TensorProto_DataType(tp.GetDataType()) != onnxpb.TensorProto_FLOAT {
		t.Fatalf("tensor %q: type %v, want float", tp.GetName(), tp.GetDataType())
	}
	var out []float64
	for i := 0; i+4 <= len(tp.GetRawData()); i += 4 {
		out = append(out, float64(math.Float32frombits(binary.LittleEndian.Uint32(tp.GetRawData()[i:]))))
	}
	for _, f := range tp.GetFloatData() {
		out = append(out, float64(f))
	}
	return out
}

// runAndCompare runs the exported file on ONNX Runtime with the fixture's
// input and compares with the stored output (rtol 1e-3, atol 1e-5).
func runAndCompare(t *testing.T, rt *ort.Runtime, path, fixture string) {
	t.Helper()
	d := filepath.Join("..", "..", "fixtures", "models", fixture, "test_data_set_0")
	outs, err := rt.Run(path, []*onnxpb.TensorProto{readPB(t, filepath.Join(d, "input_0.pb"))})
	if err != nil {
		t.Fatalf("%s: ONNX Runtime rejects the export: %v", path, err)
	}
	got, want := floats(t, outs[0]), floats(t, readPB(t, filepath.Join(d, "output_0.pb")))
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("%s: %d values, want %d", path, len(got), len(want))
	}
	for i := range want {
		if d := math.Abs(got[i] - want[i]); d > 1e-5+1e-3*math.Abs(want[i]) || math.IsNaN(got[i]) {
			t.Fatalf("%s: [%d] = %g, want %g", path, i, got[i], want[i])
		}
	}
}

// The files ExportFile writes, in one piece or with external data, load in
// ONNX Runtime and compute the stored outputs.
func TestExportFileRunsOnORT(t *testing.T) {
	rt := openORT(t)
	ctx := context.Background()
	dir := t.TempDir()
	in := fixturePath(t, "transformer_block_opset21")
	for _, c := range []struct {
		target string
		opts   map[string]string
	}{
		{"onnx-opset17", nil},
		{"onnxruntime-1.15", nil},
		{"onnxruntime-1.30", map[string]string{"external_data": "true"}},
		{"onnxruntime-web-webgpu", nil},
	} {
		out := filepath.Join(dir, c.target+".onnx")
		if _, err := ExportFile(ctx, in, out, c.target, c.opts); err != nil {
			t.Fatalf("%s: %v", c.target, err)
		}
		runAndCompare(t, rt, out, "transformer_block_opset21")
	}
	sq := filepath.Join(dir, "squeezenet.onnx")
	if _, err := ExportFile(ctx, fixturePath(t, "squeezenet"), sq, "onnx-opset7", nil); err != nil {
		t.Fatal(err)
	}
	runAndCompare(t, rt, sq, "squeezenet")
}
