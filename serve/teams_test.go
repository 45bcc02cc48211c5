package serve_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/builtinenv"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/pipeline"
	"github.com/onnxconv/onnxconv/serve"
	"github.com/onnxconv/onnxconv/verify"
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
	// The admin reads bob's job and deletes it when it is finished. The
	// replica it names is opaque: no host name reaches a client.
	host, _ := os.Hostname()
	if j := tm.wait(t, "ops", bobs); !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(j.Replica) ||
		(host != "" && strings.Contains(j.Replica, host)) || j.Replica != tm.srv.Replica() {
		t.Errorf("bob's job ran on replica %q (server %q, host %q); want the server's opaque ID", j.Replica, tm.srv.Replica(), host)
	}
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

// TestQueueNeverOverfills: twelve uploads at once to a two-place queue
// (workers not started) leave at most two jobs queued; the rest get 429.
func TestQueueNeverOverfills(t *testing.T) {
	tm := newTeam(t, serve.Config{QueueSize: 2, Workers: 1})
	model := xgbModel(t)
	codes := make(chan int, 12)
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, code, _ := tm.submit(t, []string{"alice", "bob"}[i%2], "m.json", model, "")
			codes <- code
		}()
	}
	wg.Wait()
	close(codes)
	n := map[int]int{}
	for c := range codes {
		n[c]++
	}
	if n[http.StatusAccepted] != 2 || n[http.StatusTooManyRequests] != 10 {
		t.Errorf("twelve submissions to a two-place queue: %v, want 2 accepted and 10 × 429", n)
	}
}

// TestQuotas: a token past --quota-jobs gets 429 while another token is
// still served; a token's upload is cut at its --quota-bytes (413) and,
// once its jobs keep the quota, the next upload is refused.
func TestQuotas(t *testing.T) {
	model := xgbModel(t)
	tm := newTeam(t, serve.Config{QuotaJobs: 2, QuotaBytes: int64(len(model)) * 5 / 2, Workers: 1})
	for i := range 2 {
		if _, code, msg := tm.submit(t, "alice", "m.json", model, ""); code != http.StatusAccepted {
			t.Fatalf("alice's job %d: %d %s", i, code, msg)
		}
	}
	if _, code, msg := tm.submit(t, "alice", "m.json", model, ""); code != http.StatusTooManyRequests || !strings.Contains(msg, "quota") {
		t.Errorf("alice's third job with a quota of 2: %d %s, want 429", code, msg)
	}
	big := append(bytes.Repeat([]byte(" "), len(model)*3), model...)
	if _, code, msg := tm.submit(t, "bob", "m.json", big, ""); code != http.StatusRequestEntityTooLarge {
		t.Errorf("bob's upload past his byte quota: %d %s, want 413", code, msg)
	}
	if _, code, msg := tm.submit(t, "bob", "m.json", model, ""); code != http.StatusAccepted {
		t.Errorf("bob's job beside alice's full quota: %d %s", code, msg)
	}
	tm.start(t)
	// Alice's two jobs keep more than the quota once their results are
	// written: the next upload is refused until she deletes one.
	code, b := tm.do(t, "alice", "GET", "/v1/jobs", nil, "")
	var page struct{ Jobs []serve.Job }
	if err := json.Unmarshal(b, &page); code != 200 || err != nil {
		t.Fatalf("list: %d %v", code, err)
	}
	for _, j := range page.Jobs {
		tm.wait(t, "alice", j.ID)
	}
	if _, code, msg := tm.submit(t, "alice", "m.json", model, ""); code != http.StatusRequestEntityTooLarge {
		t.Errorf("alice's upload with her jobs past her byte quota: %d %s, want 413", code, msg)
	}
	for _, j := range page.Jobs {
		if code, b := tm.do(t, "alice", "DELETE", "/v1/jobs/"+j.ID, nil, ""); code != http.StatusNoContent {
			t.Fatalf("delete: %d %s", code, b)
		}
	}
	if _, code, msg := tm.submit(t, "alice", "m.json", model, ""); code != http.StatusAccepted {
		t.Errorf("alice's upload after deleting her jobs: %d %s", code, msg)
	}
}

// zipBomb is a 4.28 MB zip whose one member, m/model.json, inflates to
// 4 GiB of zeros: a deflate block of 1 MiB of zeros repeated, with the
// member's true size and CRC in its header.
func zipBomb(t *testing.T) []byte {
	t.Helper()
	var raw bytes.Buffer
	fw, err := flate.NewWriter(&raw, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	_, _ = fw.Write(zeros)
	_ = fw.Flush()
	head := raw.Len()
	_, _ = fw.Write(zeros)
	_ = fw.Flush()
	block := bytes.Clone(raw.Bytes()[head:])
	raw.Truncate(head)
	const mib = 4096
	crc := crc32.Update(0, crc32.IEEETable, zeros)
	for range mib - 1 {
		raw.Write(block)
		crc = crc32.Update(crc, crc32.IEEETable, zeros)
	}
	// The final, empty block.
	var tail bytes.Buffer
	fw.Reset(&tail)
	_ = fw.Close()
	raw.Write(tail.Bytes())
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "m/model.json", Method: zip.Deflate, CRC32: crc,
		CompressedSize64: uint64(raw.Len()), UncompressedSize64: mib << 20})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write(raw.Bytes())
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestZipBombStopsAtTheQuota: a 4.28 MB zip that inflates to 4 GiB,
// uploaded by a token with 16 MiB of quota, is refused (413) within 2 s
// and the data folder never holds more than the quota meanwhile.
func TestZipBombStopsAtTheQuota(t *testing.T) {
	bomb := zipBomb(t)
	// The bomb is what it claims: its member inflates to 4 GiB.
	zr, err := zip.NewReader(bytes.NewReader(bomb), int64(len(bomb)))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := zr.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, rc)
	if err != nil || n != 4<<30 {
		t.Fatalf("the bomb inflates to %d bytes (%v), want 4 GiB", n, err)
	}
	const quota = 16 << 20
	tm := newTeam(t, serve.Config{QuotaBytes: quota})
	var peak atomic.Int64
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			if n := dirBytes(tm.data); n > peak.Load() {
				peak.Store(n)
			}
		}
	}()
	start := time.Now()
	_, code, msg := tm.submit(t, "alice", "m.zip", bomb, "")
	took := time.Since(start)
	close(stop)
	<-watched
	t.Logf("zip bomb of %.2f MB (4 GiB unpacked): %d after %v, peak %.2f MB in the data folder (quota %d MiB)",
		float64(len(bomb))/1e6, code, took.Round(time.Millisecond), float64(peak.Load())/1e6, quota>>20)
	if code != http.StatusRequestEntityTooLarge {
		t.Errorf("the bomb: %d %s, want 413", code, msg)
	}
	if took > 2*time.Second {
		t.Errorf("the 413 took %v, want at most 2 s", took)
	}
	if peak.Load() > quota {
		t.Errorf("the data folder held %d bytes, past the quota of %d", peak.Load(), quota)
	}
	if n := dirBytes(filepath.Join(tm.data, "jobs")); n != 0 {
		t.Errorf("%d bytes left in the jobs folder after the 413", n)
	}
}

// dirBytes is the bytes of the regular files under dir, except the job
// store.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && d.Name() != "jobs.db" {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// TestOrphansAndRetention: a job folder no stored job owns (an upload cut
// off by a crash) is removed when the server opens; a finished job is
// deleted with its folder once older than --keep.
func TestOrphansAndRetention(t *testing.T) {
	tmp := t.TempDir()
	orphan := filepath.Join(tmp, "data", "jobs", "0123456789abcdef01234567", "upload")
	if err := os.MkdirAll(orphan, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(orphan, "big.onnx"), make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := serve.New(serve.Config{Data: filepath.Join(tmp, "data"), Keep: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(orphan)); !os.IsNotExist(err) {
		t.Errorf("the orphaned upload folder is still there: %v", err)
	}
	hs := httptest.NewServer(srv.Handler())
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		hs.Close()
		cancel()
		sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer scancel()
		_ = srv.Shutdown(sctx)
	})
	srv.Start(ctx)
	tm := &team{srv: srv, http: hs, tokens: map[string]string{}, data: filepath.Join(tmp, "data")}
	id, code, msg := tm.submit(t, "", "m.json", xgbModel(t), "")
	if code != http.StatusAccepted {
		t.Fatalf("submit: %d %s", code, msg)
	}
	j := tm.wait(t, "", id)
	if j.Stored == 0 {
		t.Error("a finished job keeps 0 bytes")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, _ := tm.do(t, "", "GET", "/v1/jobs/"+id, nil, "")
		_, serr := os.Stat(filepath.Join(tm.data, "jobs", id))
		if code == http.StatusNotFound && os.IsNotExist(serr) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a job finished at %v is still there (%d, %v) 10 s later with --keep 500ms", j.Finished, code, serr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestArchiveMemberRefusedWithoutPaths: a member whose name is too long
// or too deep for the file system is the client's fault (400, naming the
// member), and no answer shows the server's data folder.
func TestArchiveMemberRefusedWithoutPaths(t *testing.T) {
	tm := newTeam(t, serve.Config{})
	for what, name := range map[string]string{
		"too long": "m/" + strings.Repeat("x", 300) + ".json",
		"too deep": strings.Repeat("d/", 2100) + "model.json",
	} {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte("{}"))
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		_, code, msg := tm.submit(t, "alice", "m.zip", b.Bytes(), "")
		if code != http.StatusBadRequest || strings.Contains(msg, tm.data) || !strings.Contains(msg, "archive member") {
			t.Errorf("a member %s: %d %s, want 400 naming the member, not the server's folder", what, code, msg)
		}
	}
}

// TestNoServerPathsInAnswers: the job, its records and every report
// (html, json, md, xml) name files relative to the job's folder, never by
// the server's absolute path.
func TestNoServerPathsInAnswers(t *testing.T) {
	tm := newTeam(t, serve.Config{})
	tm.start(t)
	id, code, msg := tm.submit(t, "alice", "m.json", xgbModel(t), `{"convert": true, "reports": ["html", "json", "md", "xml"]}`)
	if code != http.StatusAccepted {
		t.Fatalf("submit: %d %s", code, msg)
	}
	j := tm.wait(t, "alice", id)
	// The model and the four reports of the comparison with the source
	// (and those of the result run in ONNX Runtime, when it is installed).
	if j.Verdict != "pass" {
		t.Fatalf("job: %s %s, artifacts %v", j.State, j.Verdict, j.Artifacts)
	}
	for _, a := range []string{"model.onnx", "report.html", "report.json", "report.md", "report.xml"} {
		if _, ok := j.Artifacts[a]; !ok {
			t.Fatalf("job: no artifact %s: %v", a, j.Artifacts)
		}
	}
	answers := map[string][]byte{}
	_, answers["job"] = tm.do(t, "alice", "GET", "/v1/jobs/"+id, nil, "")
	_, answers["list"] = tm.do(t, "alice", "GET", "/v1/jobs", nil, "")
	for name := range j.Artifacts {
		_, answers[name] = tm.do(t, "alice", "GET", "/v1/jobs/"+id+"/artifacts/"+name, nil, "")
	}
	for what, b := range answers {
		if bytes.Contains(b, []byte(tm.data)) || bytes.Contains(b, []byte(filepath.Dir(tm.data))) {
			t.Errorf("%s shows the server's folder %s", what, tm.data)
		}
	}
	if !bytes.Contains(answers["report.md"], []byte("input/m.json")) {
		t.Errorf("report.md does not name the model relative to the job's folder:\n%.600s", answers["report.md"])
	}
}

// TestLoopbackGuards: a server without tokens answers only requests that
// name a loopback Host (not a DNS name rebound to 127.0.0.1) and whose
// Origin, when a browser sends one, is the server itself; artifacts are
// served sandboxed and nosniff, the page's report frame sandboxed.
func TestLoopbackGuards(t *testing.T) {
	srv, err := serve.New(serve.Config{Data: filepath.Join(t.TempDir(), "data")})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		hs.Close()
		cancel()
		_ = srv.Shutdown(context.Background())
	})
	srv.Start(ctx)
	model := xgbModel(t)
	post := func(host, origin string) (int, string) {
		body, ct := multipartBody(t, "m.json", model, "")
		req, err := http.NewRequest("POST", hs.URL+"/v1/jobs", body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", ct)
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct{ ID, Error string }
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out.ID + out.Error
	}
	port := hs.URL[strings.LastIndex(hs.URL, ":"):]
	for _, c := range []struct {
		host, origin string
		want         int
	}{
		{"rebound.attacker.example" + port, "", http.StatusForbidden},
		{"", "http://attacker.example", http.StatusForbidden},
		{"", "null", http.StatusForbidden},
		{"localhost" + port, "http://localhost" + port, http.StatusAccepted},
		{"", "", http.StatusAccepted},
	} {
		if code, msg := post(c.host, c.origin); code != c.want {
			t.Errorf("Host %q Origin %q: %d %s, want %d", c.host, c.origin, code, msg, c.want)
		}
	}
	_, id := post("", hs.URL)
	tm := &team{srv: srv, http: hs, tokens: map[string]string{}}
	tm.wait(t, "", id)
	resp, err := hs.Client().Get(hs.URL + "/v1/jobs/" + id + "/artifacts/report.html")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); resp.StatusCode != 200 || !strings.Contains(csp, "sandbox") || !strings.Contains(csp, "default-src 'none'") ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("report.html: %d, CSP %q, X-Content-Type-Options %q", resp.StatusCode, csp, resp.Header.Get("X-Content-Type-Options"))
	}
	resp, err = hs.Client().Get(hs.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(page, []byte(`<iframe id="report" title="report" sandbox=""`)) {
		t.Error("the page's report frame is not sandboxed")
	}
}

// TestSIGTERMDrainsAndExitsZero: `onnxconv serve` stopped by SIGTERM
// while idle drains and exits 0 (a platform reads any other code as a
// crash).
func TestSIGTERMDrainsAndExitsZero(t *testing.T) {
	s := startServer(t, filepath.Join(t.TempDir(), "data"))
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil || s.cmd.ProcessState.ExitCode() != 0 {
			t.Errorf("SIGTERM of an idle server: %v, exit code %d, want 0:\n%s", err, s.cmd.ProcessState.ExitCode(), s.log)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the server has not exited 30 s after SIGTERM:\n%s", s.log)
	}
}

// TestProgressAndConvertDefaults: a running job of five actions shows
// total 5 from its start and done counting up to 5; verification uses
// as many generated samples as `onnxconv convert` (verify.DefaultSamples).
func TestProgressAndConvertDefaults(t *testing.T) {
	model, err := os.ReadFile(filepath.Join(testpaths.RepoRoot(t), "fixtures/models/resnet_small/model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	tm := newTeam(t, serve.Config{Workers: 1})
	tm.start(t)
	id, code, msg := tm.submit(t, "alice", "model.onnx", model, `{"opset": [9, 11, 13, 15, 17]}`)
	if code != http.StatusAccepted {
		t.Fatalf("submit: %d %s", code, msg)
	}
	var seen []string
	lastDone := 0
	deadline := time.Now().Add(3 * time.Minute)
	for {
		_, b := tm.do(t, "alice", "GET", "/v1/jobs/"+id, nil, "")
		var j serve.Job
		if err := json.Unmarshal(b, &j); err != nil {
			t.Fatal(err)
		}
		if j.State == serve.StateRunning {
			if j.Total != 5 || j.Done < lastDone {
				t.Errorf("running: done %d of %d (before: %d), want of 5, never fewer", j.Done, j.Total, lastDone)
			}
			lastDone = j.Done
			if s := fmt.Sprintf("%d/%d", j.Done, j.Total); len(seen) == 0 || seen[len(seen)-1] != s {
				seen = append(seen, s)
			}
		}
		if j.State.Final() {
			if j.Done != 5 || j.Total != 5 || len(j.Records) != 5 {
				t.Errorf("finished: %d/%d, %d records, want 5", j.Done, j.Total, len(j.Records))
			}
			for _, r := range j.Records {
				if r.Figures.Samples != verify.DefaultSamples {
					t.Errorf("%s verified with %d samples, want %d as convert", r.ID, r.Figures.Samples, verify.DefaultSamples)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job still %s", j.State)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("progress seen while running: %v", seen)
	if len(seen) == 0 {
		t.Error("the job was never seen running")
	}
}

// TestTLS: with a certificate and key the server speaks HTTPS only (a
// client trusting the certificate gets its answers, a plain HTTP request
// none), and half a pair is refused.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := serve.Listen("127.0.0.1:0", certFile, ""); err == nil {
		t.Error("a certificate without its key was accepted")
	}
	ln, err := serve.Listen("127.0.0.1:0", certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	tm := newTeam(t, serve.Config{})
	hs := serve.HTTPServer(tm.srv.Handler())
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Get("https://" + ln.Addr().String() + "/healthz")
	if err != nil {
		t.Fatalf("HTTPS: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil {
		t.Errorf("HTTPS /healthz: %d, TLS %v", resp.StatusCode, resp.TLS != nil)
	}
	plain := &http.Client{Timeout: 10 * time.Second}
	if resp, err := plain.Get("http://" + ln.Addr().String() + "/healthz"); err == nil {
		if resp.StatusCode == 200 {
			t.Error("plain HTTP got an answer from the TLS server")
		}
		resp.Body.Close()
	}
}

// TestSavedModelArchive: a SavedModel folder uploaded as a zip converts
// (it failed "matches no file": batch names files, and the folder was
// given), to the bytes pipeline.Convert writes for its saved_model.pb.
func TestSavedModelArchive(t *testing.T) {
	dir := testpaths.Shared(t, "models", "tf_savedmodel", "tfjs_node_times_three_float")
	want := filepath.Join(t.TempDir(), "want.onnx")
	if _, err := pipeline.Convert(context.Background(), filepath.Join(dir, "saved_model.pb"), want, pipeline.Options{Env: builtinenv.New()}); err != nil {
		t.Fatal(err)
	}
	wantBytes, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	tm := newTeam(t, serve.Config{})
	tm.start(t)
	id, code, msg := tm.submit(t, "alice", "times_three.zip", zipFolder(t, dir), `{"convert": true, "verify": false}`)
	if code != http.StatusAccepted {
		t.Fatalf("submit: %d %s", code, msg)
	}
	j := tm.wait(t, "alice", id)
	if j.State != serve.StateDone || j.Verdict != "pass" {
		t.Fatalf("SavedModel zip: %s %s %q model %q", j.State, j.Verdict, j.Error, j.Model)
	}
	code, got := tm.do(t, "alice", "GET", "/v1/jobs/"+id+"/artifacts/model.onnx", nil, "")
	if code != 200 || !bytes.Equal(got, wantBytes) {
		t.Errorf("model.onnx: %d, %d bytes, want the %d bytes pipeline.Convert writes", code, len(got), len(wantBytes))
	}
}

// TestCacheAnswersIdenticalJobs: the same model with the same spec,
// submitted again, is answered from the cache (its record says cached)
// with the same model.onnx bytes as the first run's.
func TestCacheAnswersIdenticalJobs(t *testing.T) {
	tm := newTeam(t, serve.Config{Workers: 1})
	tm.start(t)
	model := xgbModel(t)
	var got [2][]byte
	for i := range 2 {
		id, code, msg := tm.submit(t, "alice", "m.json", model, `{"convert": true, "reports": ["json"]}`)
		if code != http.StatusAccepted {
			t.Fatalf("submit %d: %d %s", i, code, msg)
		}
		j := tm.wait(t, "alice", id)
		if j.Verdict != "pass" || len(j.Records) != 1 || j.Records[0].Cached != (i == 1) {
			t.Fatalf("job %d: %s %s, records %d, cached %v", i, j.State, j.Verdict, len(j.Records), len(j.Records) == 1 && j.Records[0].Cached)
		}
		code, got[i] = tm.do(t, "alice", "GET", "/v1/jobs/"+id+"/artifacts/model.onnx", nil, "")
		if code != 200 || len(got[i]) == 0 {
			t.Fatalf("model.onnx of job %d: %d", i, code)
		}
	}
	if !bytes.Equal(got[0], got[1]) {
		t.Errorf("the cached model.onnx (%d bytes) differs from the first run's (%d bytes)", len(got[1]), len(got[0]))
	}
}

// TestUnpacksBoundedByWorkers: three archive uploads at once to a server
// with two workers: two unpack at once and the third waits for a place
// (it starts once one is released), never three together; all three are
// accepted.
func TestUnpacksBoundedByWorkers(t *testing.T) {
	const workers = 2
	release := make(chan struct{})
	var mu sync.Mutex
	var holding, waited, most int
	entered := make(chan struct{}, workers+1)
	tm := newTeam(t, serve.Config{Workers: workers, UnpackHook: func(st serve.UnpackState) {
		mu.Lock()
		most = max(most, st.Unpacking)
		if st.Holding {
			holding++
		} else {
			waited++
		}
		mu.Unlock()
		if st.Holding {
			entered <- struct{}{}
			<-release
		}
	}})
	// Released before the server shuts down (cleanups run last first),
	// also when the test fails.
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free)
	dir := filepath.Join(t.TempDir(), "m")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model.json"), xgbModel(t), 0o644); err != nil {
		t.Fatal(err)
	}
	archive := zipFolder(t, dir)
	codes := make(chan int, workers+1)
	for i := range workers + 1 {
		go func() {
			_, code, msg := tm.submit(t, []string{"alice", "bob", "ops"}[i], "m.zip", archive, "")
			if code != http.StatusAccepted {
				t.Errorf("upload %d: %d %s", i, code, msg)
			}
			codes <- code
		}()
	}
	for range workers {
		<-entered
	}
	// All three asked for a place; two hold one, the third waits.
	deadline := time.Now().Add(time.Minute)
	for {
		mu.Lock()
		w := waited
		mu.Unlock()
		if w == workers+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d uploads asked to unpack after a minute", w, workers+1)
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case <-entered:
		t.Fatalf("a third archive unpacks beside %d while they hold their places", workers)
	case <-time.After(300 * time.Millisecond):
	}
	free()
	<-entered
	for range workers + 1 {
		<-codes
	}
	mu.Lock()
	defer mu.Unlock()
	if most != workers || holding != workers+1 {
		t.Errorf("at most %d unpacked at once, %d in all; want %d and %d", most, holding, workers, workers+1)
	}
}
