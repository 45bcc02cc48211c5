package serve_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/plugins/protocol"
	"github.com/onnxconv/onnxconv/serve"
)

// built is the onnxconv command built once for this package's tests, on
// first use (the fuzz targets of this package need no build).
var built struct {
	once      sync.Once
	dir, path string
	err       error
}

// onnxconvBin returns the path of the onnxconv command, built with
// CGO_ENABLED=0 from this checkout.
func onnxconvBin(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "ocserve")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "onnxconv")
		cmd := exec.Command("go", "build", "-o", built.path, "../cmd/onnxconv")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build ./cmd/onnxconv: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

func TestMain(m *testing.M) {
	if os.Getenv(protocol.EnvMagicCookie) == protocol.MagicCookie {
		serveEchoRuntime()
		return
	}
	code := testpaths.Main(m, "serve")
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// server is an `onnxconv serve` process on a loopback port.
type server struct {
	url, data string
	cmd       *exec.Cmd
	log       *bytes.Buffer
	token     string
}

// startServer runs `onnxconv serve` with args on a free loopback port and
// the data folder data, and waits for /readyz.
func startServer(t testing.TB, data string, args ...string) *server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	s := &server{url: "http://" + addr, data: data, log: new(bytes.Buffer)}
	s.cmd = exec.Command(onnxconvBin(t), append([]string{"serve", "--addr", addr, "--data", data, "--audit", filepath.Join(data, "..", "audit.log")}, args...)...)
	s.cmd.Dir = testpaths.RepoRoot(t) // the Node runtimes are found from the checkout
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.kill() })
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(s.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server is not ready after 60 s:\n%s", s.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *server) kill() {
	if s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

// request sends a request with the server's token.
func (s *server) request(method, path string, body io.Reader, contentType string) (*http.Response, error) {
	req, err := http.NewRequest(method, s.url+path, body)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	return http.DefaultClient.Do(req)
}

// multipartBody is a POST /v1/jobs body: the model part (named name) and
// the spec.
func multipartBody(t testing.TB, name string, model []byte, spec string) (*bytes.Buffer, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	if spec != "" {
		if err := w.WriteField("spec", spec); err != nil {
			t.Fatal(err)
		}
	}
	fw, err := w.CreateFormFile("model", name)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fw.Write(model)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return &b, w.FormDataContentType()
}

// submit posts a job and returns its ID, or the status and error of a
// refusal.
func (s *server) submit(t testing.TB, name string, model []byte, spec string) (string, int, string) {
	t.Helper()
	body, ct := multipartBody(t, name, model, spec)
	resp, err := s.request("POST", "/v1/jobs", body, ct)
	if err != nil {
		t.Fatalf("POST /v1/jobs: %v", err)
	}
	defer resp.Body.Close()
	var out struct{ ID, Error string }
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return out.ID, resp.StatusCode, out.Error
}

// job is GET /v1/jobs/ID.
func (s *server) job(t testing.TB, id string) *serve.Job {
	t.Helper()
	resp, err := s.request("GET", "/v1/jobs/"+id, nil, "")
	if err != nil {
		t.Fatalf("GET job: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /v1/jobs/%s: %d %s", id, resp.StatusCode, b)
	}
	var j serve.Job
	if err := json.NewDecoder(resp.Body).Decode(&j); err != nil {
		t.Fatal(err)
	}
	return &j
}

// wait polls job id until it is in an end state.
func (s *server) wait(t testing.TB, id string, limit time.Duration) *serve.Job {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		j := s.job(t, id)
		if j.State.Final() {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s after %v:\n%s", id, j.State, limit, s.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// artifact downloads one artifact.
func (s *server) artifact(t testing.TB, id, name string) []byte {
	t.Helper()
	resp, err := s.request("GET", "/v1/jobs/"+id+"/artifacts/"+name, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("artifact %s of %s: %d %s", name, id, resp.StatusCode, b)
	}
	return b
}

// zipFolder packs dir into a zip with dir's base name as its top folder.
func zipFolder(t testing.TB, dir string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	base := filepath.Base(dir)
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		w, err := zw.Create(base + "/" + filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestConvertEveryFormat converts a model of every fixture format through
// the API and checks that the model it returns is byte for byte the one
// `onnxconv convert IN OUT.onnx` writes, with the same verdict.
func TestConvertEveryFormat(t *testing.T) {
	testpaths.Node(t, "@tensorflow/tfjs", "@tensorflow/tfjs-tflite")
	root := testpaths.RepoRoot(t)
	cases := []struct {
		format, path string
		folder       bool // uploaded as a zip of the folder; path is the file inside
	}{
		{"onnx", "fixtures/models/mlp_opset17/model.onnx", false},
		{"tflite", "fixtures/tflite/cnn.tflite", false},
		{"xgboost", "fixtures/xgboost/binary_hinge.json", false},
		{"sklearn", "fixtures/sklearn/decision_tree_classifier.joblib", false},
		{"lightgbm", "../shared/models/lightgbm/leaves_rf_iris/lg_rf_iris.model", false},
		{"catboost", "../shared/models/catboost/catboost_cgo/classifier/classifier.cbm", false},
		{"keras", "../shared/models/keras_v3/flownet_25-06_model/model.keras", false},
		{"tfjs layers", "fixtures/tfjs/cnn/model.json", true},
		{"tfjs graph", "fixtures/tfjs/graph_image/model.json", true},
	}
	tmp := t.TempDir()
	s := startServer(t, filepath.Join(tmp, "data"), "--workers", "2")
	ids := map[string]string{}
	for _, c := range cases {
		path := filepath.Join(root, c.path)
		var name string
		var data []byte
		var err error
		if c.folder {
			name, data = filepath.Base(filepath.Dir(path))+".zip", zipFolder(t, filepath.Dir(path))
		} else {
			name = filepath.Base(path)
			data, err = os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
		}
		id, code, msg := s.submit(t, name, data, `{"convert": true, "reports": ["html", "json"]}`)
		if code != http.StatusAccepted {
			t.Fatalf("%s: %d %s", c.format, code, msg)
		}
		ids[c.format] = id
	}
	for _, c := range cases {
		t.Run(c.format, func(t *testing.T) {
			j := s.wait(t, ids[c.format], 5*time.Minute)
			if j.State != serve.StateDone || len(j.Records) != 1 {
				t.Fatalf("job %s: %+v", j.State, j)
			}
			got := s.artifact(t, j.ID, "model.onnx")
			for _, r := range []string{"report.html", "report.json"} {
				if len(s.artifact(t, j.ID, r)) == 0 {
					t.Errorf("%s is empty", r)
				}
			}
			out := filepath.Join(t.TempDir(), "out.onnx")
			cmd := exec.Command(onnxconvBin(t), "convert", filepath.Join(root, c.path), out)
			cmd.Dir = root
			cliOut, err := cmd.CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			want, rerr := os.ReadFile(out)
			if rerr != nil {
				t.Fatalf("onnxconv convert wrote nothing (exit %d): %s", code, cliOut)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the API's model (%d bytes) differs from onnxconv convert's (%d bytes)", len(got), len(want))
			}
			rec := j.Records[0]
			wantStatus := "pass"
			if code == 1 {
				wantStatus = "fail"
			}
			if string(rec.Status) != wantStatus {
				t.Errorf("API verdict %s (%s), onnxconv convert exit %d:\n%s", rec.Status, rec.Message, code, cliOut)
			}
			t.Logf("%s: %d bytes, %s, identical to onnxconv convert (exit %d)", c.format, len(got), rec.Status, code)
		})
	}
}

// TestConcurrentJobsAndStatus runs 50 jobs submitted at once and 1,000
// status requests, and checks the server's peak RSS.
func TestConcurrentJobsAndStatus(t *testing.T) {
	root := testpaths.RepoRoot(t)
	models := []string{"fixtures/models/mlp_opset9/model.onnx", "fixtures/xgboost/binary_hinge.json", "fixtures/sklearn/elastic_net.joblib"}
	var data [][]byte
	for _, m := range models {
		b, err := os.ReadFile(filepath.Join(root, m))
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, b)
	}
	s := startServer(t, filepath.Join(t.TempDir(), "data"), "--workers", "2", "--queue", "64")
	const jobs = 50
	ids := make([]string, jobs)
	var wg sync.WaitGroup
	errs := make(chan string, jobs+1000)
	for i := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := i % len(models)
			// Distinct specs (seeds), so the cache does not answer all.
			spec := fmt.Sprintf(`{"convert": true, "seed": %d}`, i)
			id, code, msg := s.submit(t, filepath.Base(models[k]), data[k], spec)
			if code != http.StatusAccepted {
				errs <- fmt.Sprintf("job %d: %d %s", i, code, msg)
				return
			}
			ids[i] = id
		}()
	}
	wg.Wait()
	for i := range 1000 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := ids[i%jobs]
			if id == "" {
				return
			}
			resp, err := s.request("GET", "/v1/jobs/"+id, nil, "")
			if err != nil {
				errs <- err.Error()
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				errs <- fmt.Sprintf("status of %s: %d", id, resp.StatusCode)
			}
		}()
		if i%100 == 99 {
			wg.Wait()
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	pass := 0
	for _, id := range ids {
		if id == "" {
			continue
		}
		if j := s.wait(t, id, 10*time.Minute); j.State == serve.StateDone && j.Verdict == "pass" {
			pass++
		} else {
			t.Errorf("job %s: %s %s %s", id, j.State, j.Verdict, j.Error)
		}
	}
	rss := peakRSS(t, s.cmd.Process.Pid)
	t.Logf("%d of %d concurrent jobs passed, 1,000 status requests answered; server peak RSS %.0f MiB", pass, jobs, rss/(1<<20))
	if rss > 1<<30 {
		t.Errorf("server peak RSS %.0f MiB, want under 1 GiB", rss/(1<<20))
	}
}

// peakRSS is a process's peak resident set (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb * 1024
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// TestRestartLosesNothing kills the server (SIGKILL) while jobs are queued
// and running, starts it again on the same data folder, and checks that
// every job finishes and the ones finished before stay readable.
func TestRestartLosesNothing(t *testing.T) {
	root := testpaths.RepoRoot(t)
	data := filepath.Join(t.TempDir(), "data")
	model, err := os.ReadFile(filepath.Join(root, "fixtures/models/resnet_small/model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, data, "--workers", "1")
	first, code, msg := s.submit(t, "model.onnx", model, `{"check": true}`)
	if code != http.StatusAccepted {
		t.Fatalf("%d %s", code, msg)
	}
	s.wait(t, first, 2*time.Minute)
	var ids []string
	for i := range 6 {
		id, code, msg := s.submit(t, "model.onnx", model, fmt.Sprintf(`{"opset": [11, 13, 17], "seed": %d}`, i))
		if code != http.StatusAccepted {
			t.Fatalf("%d %s", code, msg)
		}
		ids = append(ids, id)
	}
	// Kill it once a job runs.
	for deadline := time.Now().Add(time.Minute); s.job(t, ids[0]).State == serve.StateQueued; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no job started")
		}
	}
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = s.cmd.Wait()
	s2 := startServer(t, data, "--workers", "2")
	if j := s2.job(t, first); j.State != serve.StateDone {
		t.Errorf("the job finished before the restart is %s", j.State)
	}
	resumed := 0
	for _, id := range ids {
		j := s2.wait(t, id, 5*time.Minute)
		if j.State != serve.StateDone || len(j.Records) != 3 {
			t.Errorf("job %s after the restart: %s, %d records (%s)", id, j.State, len(j.Records), j.Error)
		}
		if j.Attempts > 1 {
			resumed++
		}
	}
	if resumed == 0 {
		t.Error("no job was interrupted by the kill and resumed")
	}
	t.Logf("killed with %d jobs queued or running; after the restart all %d done (%d resumed)", len(ids), len(ids), resumed)
}
