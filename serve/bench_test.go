package serve_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/batch"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/serve"
)

// benchJob submits a bench job of the model data to s and waits for it.
func benchJob(t *testing.T, s *server, data []byte) *serve.Job {
	t.Helper()
	id, code, msg := s.submit(t, "model.onnx", data, `{"bench": {"reps": 2, "warmup": 1, "threads": 1}}`)
	if code != http.StatusAccepted {
		t.Fatalf("POST bench job: %d %s", code, msg)
	}
	j := s.wait(t, id, 3*time.Minute)
	if len(j.Records) != 1 {
		t.Fatalf("bench job %s: %d records; want 1:\n%s", j.State, len(j.Records), s.log)
	}
	return j
}

// TestBenchJobInItsOwnProcess: a serve bench job is measured by a
// process other than the server's, and reports what it measured as an
// in-process job did (opset, figures, bench.json).
func TestBenchJobInItsOwnProcess(t *testing.T) {
	s := startServer(t, filepath.Join(t.TempDir(), "data"))
	data, err := os.ReadFile(filepath.Join(testpaths.RepoRoot(t), "fixtures/models/resnet_small/model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	j := benchJob(t, s, data)
	r := j.Records[0]
	if r.Status != batch.StatusPass || r.Bench == nil || r.Bench.Executor.Runs != 2 {
		t.Fatalf("bench record: %s %s %q, bench %+v", r.Status, r.Kind, r.Message, r.Bench)
	}
	if r.Figures.OpsetBefore == 0 || r.Bench.PeakRSSBytes <= 0 {
		t.Errorf("opset %d, peak RSS %d: want both set", r.Figures.OpsetBefore, r.Bench.PeakRSSBytes)
	}
	var res struct {
		PID int `json:"pid"`
	}
	if err := json.Unmarshal(s.artifact(t, j.ID, "bench.json"), &res); err != nil {
		t.Fatal(err)
	}
	if res.PID == 0 || res.PID == s.cmd.Process.Pid {
		t.Errorf("bench.json: measured by pid %d; the server is %d: want another process", res.PID, s.cmd.Process.Pid)
	}
}

// bigModel is y = ConstantOfShape([64, 1024, 1024]) + x: a 256 MiB float
// tensor from a model of a few bytes.
func bigModel(t *testing.T) []byte {
	t.Helper()
	f := onnxpb.TensorProto_FLOAT
	vi := func(name string) *onnxpb.ValueInfoProto {
		return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
			TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(f)), Shape: &onnxpb.TensorShapeProto{
				Dim: []*onnxpb.TensorShapeProto_Dimension{{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 1}}}}}}}}
	}
	m := &onnxpb.ModelProto{
		IrVersion:   proto.Int64(8),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(17)}},
		Graph: &onnxpb.GraphProto{
			Name: proto.String("big"),
			Node: []*onnxpb.NodeProto{
				{OpType: proto.String("ConstantOfShape"), Input: []string{"shape"}, Output: []string{"zeros"}},
				{OpType: proto.String("Add"), Input: []string{"zeros", "x"}, Output: []string{"y"}},
			},
			Initializer: []*onnxpb.TensorProto{{Name: proto.String("shape"), Dims: []int64{3},
				DataType: proto.Int32(int32(onnxpb.TensorProto_INT64)), Int64Data: []int64{64, 1024, 1024}}},
			Input:  []*onnxpb.ValueInfoProto{vi("x")},
			Output: []*onnxpb.ValueInfoProto{{Name: proto.String("y")}},
		},
	}
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBenchJobMemoryLimit: under a 4 MiB plugin memory limit the bench
// process of a model that makes a 256 MiB tensor runs out of memory and
// the record says so; the server lives on.
func TestBenchJobMemoryLimit(t *testing.T) {
	t.Setenv("ONNXCONV_IMPORT_MEMORY_LIMIT", "4MiB")
	s := startServer(t, filepath.Join(t.TempDir(), "data"))
	j := benchJob(t, s, bigModel(t))
	r := j.Records[0]
	if r.Status == batch.StatusPass || !strings.Contains(r.Message, "memory limit 4 MiB exceeded") {
		t.Fatalf("bench record under 4 MiB: %s %s %q; want the memory-limit message (bench %+v)\n%s", r.Status, r.Kind, r.Message, r.Bench, s.log)
	}
	t.Logf("record: %s %s %q", r.Status, r.Kind, r.Message)
	if strings.Contains(r.Message, s.data) {
		t.Errorf("the message names the server's folder %s: %q", s.data, r.Message)
	}
	if resp, err := http.Get(s.url + "/readyz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the server is not ready after the bench job: %v", err)
	}
}
