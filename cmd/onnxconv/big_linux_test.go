package main

import (
	"bufio"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// bigRows x bigCols float32 is the weight of the > 2 GiB model: 2.15 GiB.
const bigRows, bigCols = 2200, 262144

// writeBigModel writes model.onnx (Y = MatMul(X [1, rows], W)) with W
// (rows x bigCols) in the external data file model.onnx.data, and returns
// the model's path and W's size in bytes.
func writeBigModel(t *testing.T, dir string, rows int64) (string, int64) {
	t.Helper()
	size := rows * bigCols * 4
	data := filepath.Join(dir, "model.onnx.data")
	f, err := os.Create(data)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	row := make([]byte, bigCols*4)
	for r := 0; r < int(rows); r++ {
		for c := 0; c < bigCols; c++ {
			binary.LittleEndian.PutUint32(row[4*c:], math.Float32bits(float32((r*31+c)%1009)/1009-0.5))
		}
		if _, err := w.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	ext := onnxpb.TensorProto_EXTERNAL
	flt := int32(onnxpb.TensorProto_FLOAT)
	vi := func(name string, dims ...int64) *onnxpb.ValueInfoProto {
		var sh onnxpb.TensorShapeProto
		for _, d := range dims {
			sh.Dim = append(sh.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
		}
		return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(flt), Shape: &sh}}}}
	}
	m := &onnxpb.ModelProto{
		IrVersion:   proto.Int64(8),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(13)}},
		Graph: &onnxpb.GraphProto{
			Name:   proto.String("big"),
			Node:   []*onnxpb.NodeProto{{OpType: proto.String("MatMul"), Input: []string{"X", "W"}, Output: []string{"Y"}}},
			Input:  []*onnxpb.ValueInfoProto{vi("X", 1, rows)},
			Output: []*onnxpb.ValueInfoProto{vi("Y", 1, bigCols)},
			Initializer: []*onnxpb.TensorProto{{
				Name: proto.String("W"), DataType: proto.Int32(flt), Dims: []int64{rows, bigCols}, DataLocation: &ext,
				ExternalData: []*onnxpb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String("model.onnx.data")}},
			}},
		},
	}
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "model.onnx")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, size
}

// peakRSS runs the built onnxconv and returns its exit code, output and
// peak resident set size in bytes (the child's rusage).
func peakRSS(t *testing.T, args ...string) (int, string, int64) {
	t.Helper()
	cmd := exec.Command(onnxconvBin(t), args...)
	out, _ := cmd.CombinedOutput()
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = int64(ru.Maxrss) * 1024 // kilobytes on Linux
	}
	return cmd.ProcessState.ExitCode(), string(out), rss
}

// TestOver2GiB makes a model whose float32 weight (2.15 GiB) lives in
// external data and checks that `opset --opset 17` writes external data
// without being asked (the input had it; inline it would pass protobuf's
// 2 GiB), at a peak RSS of at most 1 GiB with --no-verify and of the
// weight + 1 GiB verified (each process: the executor reads the mapped
// weight in place, which the source and the result share, and ONNX
// Runtime does not prepack it), that infer writes external data too (the
// same write path) under 1 GiB, and that inspect and check stay under
// 300 MB.
func TestOver2GiB(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 7 GB of files")
	}
	dir := t.TempDir()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	if free := int64(st.Bavail) * int64(st.Bsize); free < 10<<30 {
		t.Skipf("%d GiB free in %s, the test needs 10", free>>30, dir)
	}
	in, weights := writeBigModel(t, dir, bigRows)
	onnxconvBin(t) // built before the timed runs
	const gib = int64(1) << 30
	for _, c := range []struct {
		name  string
		args  []string
		limit int64
		out   string // the model written, "" for none
	}{
		{"inspect", []string{"inspect", in}, 300 << 20, ""},
		{"check", []string{"check", in}, 300 << 20, ""},
		{"infer", []string{"infer", in, "-o", filepath.Join(dir, "inf.onnx")}, gib, filepath.Join(dir, "inf.onnx")},
		{"opset --no-verify", []string{"opset", in, filepath.Join(dir, "nv.onnx"), "--opset", "17", "--no-verify"}, gib, filepath.Join(dir, "nv.onnx")},
		{"opset verified", []string{"opset", in, filepath.Join(dir, "v.onnx"), "--opset", "17"}, weights + gib, filepath.Join(dir, "v.onnx")},
	} {
		start := time.Now()
		code, out, rss := peakRSS(t, c.args...)
		t.Logf("%s: exit %d in %v, peak RSS %d MiB (limit %d MiB)", c.name, code, time.Since(start).Round(time.Millisecond), rss>>20, c.limit>>20)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", c.name, code, strings.TrimSpace(out))
			continue
		}
		if c.limit > 0 && rss > c.limit {
			t.Errorf("%s: peak RSS %d MiB, over %d MiB", c.name, rss>>20, c.limit>>20)
		}
		if out := c.out; out != "" {
			fi, err := os.Stat(out + ".data")
			if err != nil || fi.Size() < weights {
				t.Errorf("%s: no external data of %d bytes beside %s (%v)", c.name, weights, out, err)
			}
			os.Remove(out + ".data")
		}
	}
}

// TestTransformKeepsExternalData checks that optimize, fp16, quantize
// and convert --fp16 write their result with external data when the input had it, though
// the rewritten weight (float16, int8) is no longer the input's external
// tensor (written inline, a > 4 GiB float32 weight's fp16 result would
// pass protobuf's 2 GiB). The weight is 4 rows (4 MiB).
func TestTransformKeepsExternalData(t *testing.T) {
	dir := t.TempDir()
	in, _ := writeBigModel(t, dir, 4)
	for _, c := range []struct {
		args []string
		data int64 // bytes of external data the result must have at least
	}{
		{[]string{"optimize", in, "o.onnx"}, 4 * bigCols * 4},
		{[]string{"fp16", in, "h.onnx", "--samples", "1"}, 4 * bigCols * 2},
		{[]string{"quantize", in, "q.onnx", "--mode", "dynamic", "--calibration-samples", "2"}, 4 * bigCols},
		{[]string{"convert", in, "c.onnx", "--fp16", "--samples", "1"}, 4 * bigCols * 2},
	} {
		out := filepath.Join(dir, c.args[2])
		c.args[2] = out
		if code, stdout, stderr := runCmd(c.args...); code != 0 {
			t.Fatalf("%s: exit %d: %s%s", c.args[0], code, stdout, stderr)
		}
		fi, err := os.Stat(out + ".data")
		if err != nil || fi.Size() < c.data {
			t.Errorf("%s: no external data of at least %d bytes beside %s (%v)", c.args[0], c.data, out, err)
		}
		if fi, err := os.Stat(out); err != nil || fi.Size() > 4096 {
			t.Errorf("%s: %s is not a small model file referencing its data (%v)", c.args[0], out, err)
		}
	}
}
