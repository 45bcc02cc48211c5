package tflitetest

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/runtimes/runtimetest"
	"github.com/onnxconv/onnxconv/runtimes/tflite"
)

func TestMain(m *testing.M) {
	os.Exit(testpaths.Main(m, "runtimes/tflite/tflitetest"))
}

// recorder is a testing.TB that keeps what Errorf and Fatalf say.
type recorder struct {
	testing.TB
	failures, logs []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Logf(f string, a ...any)   { r.logs = append(r.logs, fmt.Sprintf(f, a...)) }
func (r *recorder) Errorf(f string, a ...any) { r.failures = append(r.failures, fmt.Sprintf(f, a...)) }
func (r *recorder) Fatalf(f string, a ...any) { r.failures = append(r.failures, fmt.Sprintf(f, a...)) }

// TestRunnerChecksOnce runs the cnn fixture three times through a Runner
// (LiteRT.js): the second result is compared with a process of its own
// and passes; the third is not compared again. A Runner given a second
// result with one bit changed reports the difference.
func TestRunnerChecksOnce(t *testing.T) {
	_, modules := testpaths.Node(t, tflite.Package, tflite.LiteRTPackage)
	env, err := tflite.Find(runtimetest.NodeModules(modules))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(testpaths.RepoRoot(t), "fixtures", "tflite", "cnn.tflite")
	xs := make([]byte, 4*8*8*3)
	for i := 0; i < 8*8*3; i++ {
		binary.LittleEndian.PutUint32(xs[4*i:], math.Float32bits(float32(math.Cos(float64(i)*0.3))))
	}
	in := []*onnxpb.TensorProto{{Name: proto.String("input"), DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), Dims: []int64{1, 8, 8, 3}, RawData: xs}}
	o := tflite.Options{Threads: 1}

	r := New(context.Background(), env)
	defer r.Close()
	rec := &recorder{TB: t}
	var first *tflite.Result
	for i := 0; i < 3; i++ {
		got, err := r.Run(rec, path, in, o)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = got
		}
	}
	if len(rec.failures) != 0 {
		t.Errorf("three pooled runs: %q, want no failure", rec.failures)
	}
	if r.runs[first.Build] != 3 || !r.checked[first.Build] {
		t.Errorf("%d results of %s counted, checked %v; want 3, true", r.runs[first.Build], first.Build, r.checked[first.Build])
	}

	// A result that is not what the interpreter computes is caught.
	bad := proto.Clone(first.Outputs[0]).(*onnxpb.TensorProto)
	bad.RawData[0] ^= 1
	r2 := New(context.Background(), env)
	defer r2.Close()
	rec2 := &recorder{TB: t}
	r2.Check(rec2, path, in, o, first)
	if len(rec2.failures) != 0 {
		t.Fatalf("a first result was checked: %q", rec2.failures)
	}
	r2.Check(rec2, path, in, o, &tflite.Result{Outputs: []*onnxpb.TensorProto{bad}, Build: first.Build})
	if len(rec2.failures) != 1 || !strings.Contains(rec2.failures[0], "differs from a process of its own") {
		t.Errorf("a changed bit: failures %q, want one saying it differs", rec2.failures)
	}

	// A pooled process that does not answer in time is killed, the test
	// is told, and the model runs in a process of its own: the same bytes.
	r3 := New(context.Background(), env)
	defer r3.Close()
	r3.pooledLimit = time.Nanosecond
	rec3 := &recorder{TB: t}
	got, err := r3.Run(rec3, path, in, o)
	if err != nil {
		t.Fatalf("a pooled process out of time: %v, want the result of a process of its own", err)
	}
	if len(rec3.logs) != 1 || !strings.Contains(rec3.logs[0], "did not load and run it in 1ns") {
		t.Errorf("a pooled process out of time: logs %q, want one saying so", rec3.logs)
	}
	if len(got.Outputs) != len(first.Outputs) || !bytes.Equal(got.Outputs[0].GetRawData(), first.Outputs[0].GetRawData()) {
		t.Errorf("a pooled process out of time: the result of a process of its own differs from the pooled one")
	}
}
