package serve_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/serve"
)

// TestRefusals sends what a stranger might: oversized uploads, malformed
// multipart bodies, bad specs, `../` names, hostile archives, hostile
// model files, a stalled client, a full queue. Each gets a 4xx or a failed
// job; the server stays healthy and writes nothing outside its data
// folder.
func TestRefusals(t *testing.T) {
	root := testpaths.RepoRoot(t)
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	s := startServer(t, data, "--max-upload", "1048576", "--max-unpacked", "2097152", "--workers", "1")
	model, err := os.ReadFile(filepath.Join(root, "fixtures/xgboost/binary_hinge.json"))
	if err != nil {
		t.Fatal(err)
	}
	status := func(method, path, ct string, body io.Reader) (int, string) {
		t.Helper()
		resp, err := s.request(method, path, body, ct)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	zipOf := func(files map[string]string, symlink string) []byte {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		for name, content := range files {
			w, err := zw.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.WriteString(w, content)
		}
		if symlink != "" {
			h := &zip.FileHeader{Name: symlink}
			h.SetMode(os.ModeSymlink | 0o777)
			w, err := zw.CreateHeader(h)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.WriteString(w, "/etc/passwd")
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	big := bytes.Repeat([]byte("x"), 2<<20)
	cases := []struct {
		name string
		ct   string
		body func() io.Reader
		want int
	}{
		{"oversized", "", func() io.Reader { b, ct := multipartBody(t, "m.json", big, ""); _ = ct; return b }, 413},
		{"oversized chunked", "", func() io.Reader {
			b, _ := multipartBody(t, "m.json", big, "")
			return io.MultiReader(b) // no Content-Length: the limit is met while streaming
		}, 413},
		{"not multipart", "application/json", func() io.Reader { return strings.NewReader(`{"model": "x"}`) }, 400},
		{"malformed multipart", "multipart/form-data; boundary=zzz", func() io.Reader { return strings.NewReader("--zzz\r\ngarbage\r\n\r\n") }, 400},
		{"no model part", "", func() io.Reader {
			var b bytes.Buffer
			_, _ = b.WriteString("--b\r\nContent-Disposition: form-data; name=\"spec\"\r\n\r\n{}\r\n--b--\r\n")
			return &b
		}, 400},
		{"spec not JSON", "", func() io.Reader { b, _ := multipartBody(t, "m.json", model, "{opset: 13"); return b }, 400},
		{"spec unknown field", "", func() io.Reader {
			b, _ := multipartBody(t, "m.json", model, `{"convert": true, "rm -rf": 1}`)
			return b
		}, 400},
		{"spec names models", "", func() io.Reader {
			b, _ := multipartBody(t, "m.json", model, `{"convert": true, "models": ["/etc/passwd"]}`)
			return b
		}, 400},
		{"webhook to another host", "", func() io.Reader {
			b, _ := multipartBody(t, "m.json", model, `{"convert": true, "webhook": "http://169.254.169.254/latest"}`)
			return b
		}, 400},
		{"zip with ../ member", "", func() io.Reader {
			b, _ := multipartBody(t, "m.zip", zipOf(map[string]string{"../../evil.json": "{}"}, ""), "")
			return b
		}, 400},
		{"zip with a symlink", "", func() io.Reader {
			b, _ := multipartBody(t, "m.zip", zipOf(map[string]string{"model.json": "{}"}, "weights.bin"), "")
			return b
		}, 400},
		{"zip bomb", "", func() io.Reader {
			b, _ := multipartBody(t, "m.zip", zipOf(map[string]string{"a.bin": strings.Repeat("0", 3<<20)}, ""), "")
			return b
		}, 413},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := c.body()
			ct := c.ct
			if ct == "" {
				// multipartBody's boundary is random; find it in the body.
				raw, _ := io.ReadAll(body)
				boundary := strings.TrimPrefix(strings.SplitN(string(raw), "\r\n", 2)[0], "--")
				ct = "multipart/form-data; boundary=" + boundary
				body = bytes.NewReader(raw)
				if c.name == "oversized chunked" {
					body = io.MultiReader(bytes.NewReader(raw))
				}
			}
			code, msg := status("POST", "/v1/jobs", ct, body)
			if code != c.want {
				t.Errorf("status %d (%s), want %d", code, msg, c.want)
			}
		})
	}

	// A client's path is never a path: the upload is stored under a
	// sanitized name inside the job's folder.
	id, code, msg := s.submit(t, "../../../../tmp/evil/../model.json", model, "")
	if code != http.StatusAccepted {
		t.Fatalf("../ name: %d %s", code, msg)
	}
	if j := s.wait(t, id, time.Minute); j.Model != "model.json" || j.State != serve.StateDone {
		t.Errorf("../ name stored as %q, job %s", j.Model, j.State)
	}

	// Hostile model files: each is a failed job (error or fail verdict),
	// never a crash of the server.
	// The regression set: every case of cases.json (a case folder is sent
	// as a zip of the folder, its links as link entries; a one-file case as
	// the file) and every file of the readers' own sets.
	uploads := hostileUploads(t, filepath.Join(root, "fixtures", "hostile"))
	n := 0
	for _, u := range uploads {
		id, code, _ := s.submit(t, u.name, u.data, "")
		if code/100 == 4 {
			n++
			continue
		}
		if code != http.StatusAccepted {
			t.Errorf("%s: status %d", u.what, code)
			continue
		}
		if j := s.wait(t, id, 2*time.Minute); j.Verdict == "pass" {
			t.Errorf("%s: hostile file passed", u.what)
		}
		n++
	}
	if n < 60 {
		t.Errorf("only %d hostile uploads; the regression set has more", n)
	}
	t.Logf("%d hostile uploads refused (4xx) or failed as jobs", n)

	// A client that stalls in its headers is cut off; others are served
	// meanwhile.
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "POST /v1/jobs HTTP/1.1\r\nHost: x\r\n")
	if code, _ := status("GET", "/healthz", "", nil); code != 200 {
		t.Errorf("healthz during a stalled client: %d", code)
	}
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	start := time.Now()
	_, rerr := io.ReadAll(conn)
	if waited := time.Since(start); rerr != nil || waited > 15*time.Second {
		t.Errorf("the stalled client was not cut off within 15 s (waited %v, %v)", waited, rerr)
	}

	if code, body := status("GET", "/healthz", "", nil); code != 200 {
		t.Errorf("after all that, healthz: %d %s", code, body)
	}
	// Nothing was written outside the data folder (the temp folder holds
	// only it and the audit log).
	entries, _ := os.ReadDir(tmp)
	for _, e := range entries {
		if e.Name() != "data" && e.Name() != "audit.log" {
			t.Errorf("%s written beside the data folder", e.Name())
		}
	}
	_ = filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeSymlink != 0 {
			t.Errorf("a symlink in the data folder: %s", p)
		}
		return nil
	})
}

// TestQueueFull fills a one-place queue behind one worker: the next
// submission is 429 with Retry-After.
func TestQueueFull(t *testing.T) {
	root := testpaths.RepoRoot(t)
	model, err := os.ReadFile(filepath.Join(root, "fixtures/models/resnet_small/model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, filepath.Join(t.TempDir(), "data"), "--workers", "1", "--queue", "1")
	got429 := false
	for i := range 8 {
		body, ct := multipartBody(t, "model.onnx", model, `{"opset": [9, 11, 13, 15, 17], "seed": `+string(rune('0'+i))+`}`)
		resp, err := s.request("POST", "/v1/jobs", body, ct)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			got429 = true
			if resp.Header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
			break
		}
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("submission %d: %d", i, resp.StatusCode)
		}
	}
	if !got429 {
		t.Error("eight quick submissions to a one-place queue were all accepted")
	}
}

// TestTokens: with a tokens file every /v1 request needs a valid bearer
// token, the audit line names the token's ID, the file holds no token;
// without tokens the server refuses a non-loopback address.
func TestTokens(t *testing.T) {
	root := testpaths.RepoRoot(t)
	tmp := t.TempDir()
	out, err := exec.Command(onnxconvBin(t), "serve", "token", "ci").Output()
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(out))
	var stderr bytes.Buffer
	cmd := exec.Command(onnxconvBin(t), "serve", "token", "ci")
	cmd.Stderr = &stderr
	line2, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(stderr.String()[strings.LastIndex(stderr.String(), " ")+1:])
	tokens := filepath.Join(tmp, "tokens")
	if err := os.WriteFile(tokens, []byte("# hashed tokens\n"+line+"\n"+string(line2)), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(tokens); bytes.Contains(b, []byte(token)) {
		t.Fatal("the tokens file holds the token itself")
	}
	s := startServer(t, filepath.Join(tmp, "data"), "--tokens", tokens)
	model, _ := os.ReadFile(filepath.Join(root, "fixtures/xgboost/binary_hinge.json"))
	for _, tok := range []string{"", "oct_wrong", token + "x"} {
		s.token = tok
		if _, code, _ := s.submit(t, "m.json", model, ""); code != http.StatusUnauthorized {
			t.Errorf("token %q: %d, want 401", tok, code)
		}
	}
	s.token = token
	id, code, msg := s.submit(t, "m.json", model, "")
	if code != http.StatusAccepted {
		t.Fatalf("valid token: %d %s", code, msg)
	}
	if j := s.wait(t, id, time.Minute); j.Token != "ci" {
		t.Errorf("job's token ID %q, want ci", j.Token)
	}
	audit, _ := os.ReadFile(filepath.Join(tmp, "audit.log"))
	if !bytes.Contains(audit, []byte(`"token":"ci"`)) || !bytes.Contains(audit, []byte(`"status":401`)) {
		t.Errorf("audit log lacks the token ID or the refusals:\n%s", audit)
	}
	// Health and metrics need no token.
	s.token = ""
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		if resp, err := s.request("GET", p, nil, ""); err != nil || resp.StatusCode != 200 {
			t.Errorf("%s without a token: %v %v", p, resp, err)
		}
	}
	// No tokens: loopback only.
	o, err := exec.Command(onnxconvBin(t), "serve", "--addr", "0.0.0.0:0", "--data", filepath.Join(tmp, "d2")).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(o), "not a loopback address") {
		t.Errorf("non-loopback without tokens: %v %s", err, o)
	}
}

// TestWebhook: a finished job is POSTed to its webhook, retried after a
// failed delivery.
func TestWebhook(t *testing.T) {
	root := testpaths.RepoRoot(t)
	var calls atomic.Int32
	got := make(chan serve.Job, 1)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		var j serve.Job
		_ = json.NewDecoder(r.Body).Decode(&j)
		got <- j
	}))
	defer hook.Close()
	host := strings.TrimPrefix(hook.URL, "http://")
	s := startServer(t, filepath.Join(t.TempDir(), "data"), "--webhook-host", host)
	model, _ := os.ReadFile(filepath.Join(root, "fixtures/xgboost/binary_hinge.json"))
	id, code, msg := s.submit(t, "m.json", model, `{"convert": true, "webhook": "`+hook.URL+`/done"}`)
	if code != http.StatusAccepted {
		t.Fatalf("%d %s", code, msg)
	}
	select {
	case j := <-got:
		if j.ID != id || j.State != serve.StateDone || j.Verdict != "pass" {
			t.Errorf("webhook got %s %s %s", j.ID, j.State, j.Verdict)
		}
	case <-time.After(time.Minute):
		t.Fatal("no webhook delivery within a minute")
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d webhook calls, want 2 (one refused, one retried)", n)
	}
}

// hostileUpload is one file of the hostile regression set as a client
// would upload it.
type hostileUpload struct {
	what, name string
	data       []byte
}

// hostileUploads reads fixtures/hostile: the cases of cases.json and the
// flat folders of the readers' own sets (skops, legacy XGBoost,
// TorchScript).
func hostileUploads(t *testing.T, root string) []hostileUpload {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Dir, Model string
		Args       []string
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	var out []hostileUpload
	for _, c := range cases {
		if len(c.Args) > 0 && (c.Args[0] == "inspect" || c.Args[0] == "check") {
			// Hostile to that command only: a plain GraphDef that
			// inspect and check must not take for an empty ONNX model
			// converts as the TensorFlow model it is.
			continue
		}
		dir := filepath.Join(root, filepath.FromSlash(c.Dir))
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		model := filepath.Join(dir, filepath.FromSlash(c.Model))
		if st, err := os.Lstat(model); len(ents) == 1 && err == nil && st.Mode().IsRegular() {
			data, err := os.ReadFile(model)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, hostileUpload{c.Dir, filepath.Base(model), data})
			continue
		}
		out = append(out, hostileUpload{c.Dir, filepath.Base(dir) + ".zip", zipWithLinks(t, dir)})
	}
	for _, d := range []string{"skops", "xgboost-legacy", "torchscript"} {
		files, _ := filepath.Glob(filepath.Join(root, d, "*"))
		for _, f := range files {
			if strings.HasSuffix(f, ".py") {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, hostileUpload{d + "/" + filepath.Base(f), filepath.Base(f), data})
		}
	}
	return out
}

// zipWithLinks packs dir as a zip with dir's name as its top folder;
// symbolic links become link entries (never followed).
func zipWithLinks(t *testing.T, dir string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	base := filepath.Base(dir)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		name := base + "/" + filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			h := &zip.FileHeader{Name: name}
			h.SetMode(fs.ModeSymlink | 0o777)
			w, err := zw.CreateHeader(h)
			if err != nil {
				return err
			}
			_, err = io.WriteString(w, target)
			return err
		case d.IsDir():
			_, err := zw.Create(name + "/")
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		w, err := zw.Create(name)
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
