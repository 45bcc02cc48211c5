package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/serve"
)

// team is an in-process server with three tokens: alice, bob and the
// admin ops.
type team struct {
	srv    *serve.Server
	http   *httptest.Server
	tokens map[string]string // ID → token
	data   string
}

// newTeam opens a server on a new data folder with cfg's limits; its
// workers run only after start.
func newTeam(t *testing.T, cfg serve.Config) *team {
	t.Helper()
	tmp := t.TempDir()
	tm := &team{tokens: map[string]string{}, data: filepath.Join(tmp, "data")}
	var lines []string
	for _, id := range []string{"alice", "bob", "ops"} {
		tok, line, err := serve.NewToken(id)
		if err != nil {
			t.Fatal(err)
		}
		if id == "ops" {
			line += " admin"
		}
		tm.tokens[id] = tok
		lines = append(lines, line)
	}
	file := filepath.Join(tmp, "tokens")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts, err := serve.LoadTokens(file)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Data, cfg.Tokens = tm.data, ts
	tm.srv, err = serve.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tm.http = httptest.NewServer(tm.srv.Handler())
	t.Cleanup(func() {
		tm.http.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = tm.srv.Shutdown(ctx)
	})
	return tm
}

func (tm *team) start(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	tm.srv.Start(ctx)
}

// do sends a request as token ID who and returns the status and body.
func (tm *team) do(t *testing.T, who, method, path string, body io.Reader, ct string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, tm.http.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	req.Header.Set("Authorization", "Bearer "+tm.tokens[who])
	resp, err := tm.http.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// submit posts model as who and returns the job ID (or "" and the
// status).
func (tm *team) submit(t *testing.T, who, name string, model []byte, spec string) (string, int, string) {
	t.Helper()
	body, ct := multipartBody(t, name, model, spec)
	code, b := tm.do(t, who, "POST", "/v1/jobs", body, ct)
	var out struct{ ID, Error string }
	_ = json.Unmarshal(b, &out)
	return out.ID, code, out.Error
}

func (tm *team) wait(t *testing.T, who, id string) *serve.Job {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		code, b := tm.do(t, who, "GET", "/v1/jobs/"+id, nil, "")
		if code != 200 {
			t.Fatalf("GET job %s: %d %s", id, code, b)
		}
		var j serve.Job
		if err := json.Unmarshal(b, &j); err != nil {
			t.Fatal(err)
		}
		if j.State.Final() {
			return &j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s", id, j.State)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func xgbModel(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testpaths.RepoRoot(t), "fixtures/xgboost/binary_hinge.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestJobsBelongToTheirToken: bob cannot read, download, cancel or delete
// alice's job (404, as for a job that does not exist); the admin token
// sees and manages every job; GET /v1/jobs lists the caller's own jobs in
// pages; DELETE of a finished job removes it and its folder, of a queued
// one is 409.
func TestJobsBelongToTheirToken(t *testing.T) {
	tm := newTeam(t, serve.Config{Workers: 1})
	model := xgbModel(t)
	var mine []string
	for i := range 3 {
		id, code, msg := tm.submit(t, "alice", "m.json", model, `{"convert": true, "seed": `+string(rune('1'+i))+`}`)
		if code != http.StatusAccepted {
			t.Fatalf("alice's job %d: %d %s", i, code, msg)
		}
		mine = append(mine, id)
	}
	bobs, code, msg := tm.submit(t, "bob", "m.json", model, "")
	if code != http.StatusAccepted {
		t.Fatalf("bob's job: %d %s", code, msg)
	}
	// Queued (the workers have not started): bob can neither see nor
	// cancel alice's job, and DELETE of a queued job is refused.
	for _, req := range [][2]string{{"GET", ""}, {"POST", "/cancel"}, {"DELETE", ""}, {"GET", "/artifacts/model.onnx"}} {
		code, b := tm.do(t, "bob", req[0], "/v1/jobs/"+mine[0]+req[1], nil, "")
		if code != http.StatusNotFound || bytes.Contains(b, []byte("alice")) {
			t.Errorf("bob %s alice's job%s: %d %s, want 404", req[0], req[1], code, b)
		}
	}
	if code, b := tm.do(t, "alice", "DELETE", "/v1/jobs/"+mine[2], nil, ""); code != http.StatusConflict || !bytes.Contains(b, []byte("cancel it first")) {
		t.Errorf("DELETE of a queued job: %d %s, want 409 naming cancel", code, b)
	}
	if code, b := tm.do(t, "alice", "POST", "/v1/jobs/"+mine[2]+"/cancel", nil, ""); code != http.StatusOK {
		t.Errorf("alice cancels her queued job: %d %s", code, b)
	}
	// Pages of alice's own jobs: 2 + 1, never bob's.
	var got []string
	after := ""
	for range 3 {
		code, b := tm.do(t, "alice", "GET", "/v1/jobs?limit=2&after="+after, nil, "")
		if code != 200 {
			t.Fatalf("GET /v1/jobs: %d %s", code, b)
		}
		var page struct {
			Jobs []serve.Job
			Next string
		}
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Jobs) > 2 {
			t.Errorf("a page of limit 2 holds %d jobs", len(page.Jobs))
		}
		for _, j := range page.Jobs {
			got = append(got, j.ID)
		}
		if after = page.Next; after == "" {
			break
		}
	}
	if strings.Join(got, ",") != strings.Join(mine, ",") {
		t.Errorf("alice's pages list %v, want her jobs %v", got, mine)
	}
	// The admin sees all four.
	code, b := tm.do(t, "ops", "GET", "/v1/jobs", nil, "")
	var all struct{ Jobs []serve.Job }
	if err := json.Unmarshal(b, &all); code != 200 || err != nil || len(all.Jobs) != 4 {
		t.Errorf("admin's list: %d %d jobs %v, want 4", code, len(all.Jobs), err)
	}
	tm.start(t)
	j := tm.wait(t, "alice", mine[0])
	if j.State != serve.StateDone || j.Artifacts["model.onnx"] == "" {
		t.Fatalf("alice's job: %s %s %v", j.State, j.Error, j.Artifacts)
	}
	if code, b := tm.do(t, "bob", "GET", "/v1/jobs/"+mine[0]+"/artifacts/model.onnx", nil, ""); code != http.StatusNotFound {
		t.Errorf("bob downloads alice's model: %d (%d bytes), want 404", code, len(b))
	}
	if code, _ := tm.do(t, "alice", "GET", "/v1/jobs/"+mine[0]+"/artifacts/model.onnx", nil, ""); code != 200 {
		t.Errorf("alice downloads her model: %d", code)
	}
	// The admin reads bob's job and deletes it when it is finished.
	tm.wait(t, "ops", bobs)
	if code, b := tm.do(t, "ops", "DELETE", "/v1/jobs/"+bobs, nil, ""); code != http.StatusNoContent {
		t.Errorf("admin deletes bob's finished job: %d %s", code, b)
	}
	if code, _ := tm.do(t, "bob", "GET", "/v1/jobs/"+bobs, nil, ""); code != http.StatusNotFound {
		t.Errorf("a deleted job still answers %d", code)
	}
	if _, err := os.Stat(filepath.Join(tm.data, "jobs", bobs)); !os.IsNotExist(err) {
		t.Errorf("a deleted job's folder is still there: %v", err)
	}
}
