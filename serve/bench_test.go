package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/batch"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/plugins/sdk"
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

// envEchoLog names the file the echo runtime appends "PID PPID" to on
// each run.
const envEchoLog = "ONNXCONV_SERVE_TEST_ECHO_LOG"

// serveEchoRuntime makes the test binary, started by a plugin host as
// onnxconv-plugin-echo, serve the runtime "echo": its outputs are its
// inputs, which is what an Identity model computes.
func serveEchoRuntime() {
	sdk.ServeRuntime(sdk.Runtime{
		Name: "echo", Version: "1.0.0", Description: "returns its inputs (serve's tests)",
		Run: func(_ context.Context, _ string, in []*onnxpb.TensorProto) ([]*onnxpb.TensorProto, error) {
			if f, err := os.OpenFile(os.Getenv(envEchoLog), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
				fmt.Fprintf(f, "%d %d\n", os.Getpid(), os.Getppid())
				_ = f.Close()
			}
			return in, nil
		},
	})
}

// oneNodeModel is y = OP(x) on a float [2, 3] x.
func oneNodeModel(t *testing.T, op string) []byte {
	t.Helper()
	vi := func(name string) *onnxpb.ValueInfoProto {
		dims := []*onnxpb.TensorShapeProto_Dimension{{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 2}},
			{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 3}}}
		return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
			TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), Shape: &onnxpb.TensorShapeProto{Dim: dims}}}}}
	}
	b, err := proto.Marshal(&onnxpb.ModelProto{
		IrVersion:   proto.Int64(8),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(17)}},
		Graph: &onnxpb.GraphProto{
			Name:   proto.String(op),
			Node:   []*onnxpb.NodeProto{{OpType: proto.String(op), Input: []string{"x"}, Output: []string{"y"}}},
			Input:  []*onnxpb.ValueInfoProto{vi("x")},
			Output: []*onnxpb.ValueInfoProto{vi("y")},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBenchJobsWithRuntimeInTheirOwnProcess: bench jobs that name a
// runtime run wholly in the onnxconv bench process: the executor is timed
// there (bench.json's pid, not the server's) and the runtime plugin is
// that process's child, found through the server's own plugin folders
// (Config.Plugins, not the environment). A failure the bench process
// classifies keeps its class across the process boundary: a runtime
// that is missing is a usage error naming it, a file that is not a model
// an input error, a model the executor cannot run does_not_run.
func TestBenchJobsWithRuntimeInTheirOwnProcess(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	plugDir, empty := t.TempDir(), t.TempDir()
	if err := os.Symlink(exe, filepath.Join(plugDir, plugins.ExecutablePrefix+"echo")); err != nil {
		t.Fatal(err)
	}
	echoLog := filepath.Join(t.TempDir(), "echo.log")
	t.Setenv(envEchoLog, echoLog)
	tm := newTeam(t, serve.Config{Workers: 2, BenchCommand: []string{onnxconvBin(t)},
		Plugins: plugins.Options{PluginPath: plugDir, UserDir: empty}})
	tm.start(t)
	spec := func(runtime string) string {
		return fmt.Sprintf(`{"bench": {"reps": 3, "warmup": 1, "threads": 1, "runtime": %q}}`, runtime)
	}
	jobs := map[string]string{}
	for name, sub := range map[string]struct {
		file  string
		model []byte
		spec  string
	}{
		"echo":      {"model.onnx", oneNodeModel(t, "Identity"), spec("echo")},
		"missing":   {"model.onnx", oneNodeModel(t, "Identity"), spec("no-such-runtime")},
		"not model": {"model.onnx", []byte("not a model at all"), `{"bench": {"reps": 1}}`},
		"no kernel": {"model.onnx", oneNodeModel(t, "NoSuchOp"), `{"bench": {"reps": 1}}`},
	} {
		id, code, msg := tm.submit(t, "alice", sub.file, sub.model, sub.spec)
		if code != http.StatusAccepted {
			t.Fatalf("%s: POST: %d %s", name, code, msg)
		}
		jobs[name] = id
	}
	rec := func(name string) *batch.Record {
		j := tm.wait(t, "alice", jobs[name])
		if len(j.Records) != 1 {
			t.Fatalf("%s: job %s with %d records (%s)", name, j.State, len(j.Records), j.Error)
		}
		return j.Records[0]
	}
	r := rec("echo")
	if r.Status != batch.StatusPass || r.Bench == nil || r.Bench.Runtime == nil || r.Bench.Runtime.Runs != 3 || r.Bench.MaxAbsDiff == nil || *r.Bench.MaxAbsDiff != 0 {
		t.Fatalf("bench against echo: %s %s %q, bench %+v", r.Status, r.Kind, r.Message, r.Bench)
	}
	code, b := tm.do(t, "alice", "GET", "/v1/jobs/"+jobs["echo"]+"/artifacts/bench.json", nil, "")
	var res struct {
		PID     int `json:"pid"`
		Runtime struct {
			Name string `json:"name"`
		} `json:"runtime"`
	}
	if err := json.Unmarshal(b, &res); code != 200 || err != nil {
		t.Fatalf("bench.json: %d %v %s", code, err, b)
	}
	if res.PID == 0 || res.PID == os.Getpid() {
		t.Errorf("the executor was timed by pid %d; the server is %d: want the bench process", res.PID, os.Getpid())
	}
	lines, err := os.ReadFile(echoLog)
	if err != nil {
		t.Fatalf("the echo runtime never ran: %v", err)
	}
	runs := strings.Fields(strings.TrimSpace(string(lines)))
	if len(runs) != 2*(1+3) {
		t.Errorf("echo ran %d times (%q); want 4 (a first run, no more warm-up, 3 timed)", len(runs)/2, lines)
	}
	for i := 1; i < len(runs); i += 2 {
		if runs[i] != strconv.Itoa(res.PID) {
			t.Errorf("an echo run's parent is %s; want the bench process %d (the server is %d)", runs[i], res.PID, os.Getpid())
		}
	}
	t.Logf("executor timed in pid %d, runtime %q in pid %s started by %s; server pid %d", res.PID, res.Runtime.Name, runs[0], runs[1], os.Getpid())

	for name, want := range map[string]struct {
		status batch.Status
		kind   string
		says   string
	}{
		"missing":   {batch.StatusError, "usage", "no-such-runtime"},
		"not model": {batch.StatusError, "input", "model.onnx"},
		"no kernel": {batch.StatusFail, "does_not_run", "NoSuchOp"},
	} {
		r := rec(name)
		if r.Status != want.status || r.Kind != want.kind || !strings.Contains(r.Message, want.says) || r.Bench != nil {
			t.Errorf("%s: %s %s %q; want %s %s naming %s", name, r.Status, r.Kind, r.Message, want.status, want.kind, want.says)
		}
		if strings.Contains(r.Message, tm.data) {
			t.Errorf("%s: the record names the server's folder: %q", name, r.Message)
		}
		t.Logf("%s: %s %s %q", name, r.Status, r.Kind, r.Message)
	}
}
