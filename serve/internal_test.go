package serve

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{
		"model.tflite":             "model.tflite",
		"../../etc/passwd":         "passwd",
		`..\..\windows\system.ini`: "system.ini",
		".hidden":                  "hidden",
		"a b;rm -rf.onnx":          "a_b_rm_-rf.onnx",
		"":                         "model",
		"..":                       "model",
		"/":                        "model",
		"x\x00y.onnx":              "x_y.onnx",
		strings.Repeat("a", 300):   strings.Repeat("a", 100),
	} {
		if got := safeName(in); got != want {
			t.Errorf("safeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheckAddr(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:8080": true, "[::1]:80": true, "localhost:1": true,
		"0.0.0.0:8080": false, ":8080": false, "10.0.0.1:80": false, "example.com:80": false} {
		if err := CheckAddr(addr, false); (err == nil) != ok {
			t.Errorf("CheckAddr(%q) = %v", addr, err)
		}
		if err := CheckAddr(addr, true); err != nil {
			t.Errorf("with tokens, CheckAddr(%q) = %v", addr, err)
		}
	}
}

func TestTokensFile(t *testing.T) {
	tok, line, err := NewToken("ci")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := parseTokens(strings.NewReader("# comment\n\n"+line+"\n"), "tokens")
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := ts.check(tok); !ok || c.id != "ci" || c.admin {
		t.Errorf("check(token) = %+v %v", c, ok)
	}
	tokA, lineA, err := NewToken("ops")
	if err != nil {
		t.Fatal(err)
	}
	ts, err = parseTokens(strings.NewReader(line+"\n"+lineA+" admin\n"), "tokens")
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := ts.check(tokA); !ok || c.id != "ops" || !c.admin {
		t.Errorf("check(admin token) = %+v %v", c, ok)
	}
	if c, ok := ts.check(tok); !ok || c.admin {
		t.Errorf("check(token) beside an admin = %+v %v", c, ok)
	}
	if _, ok := ts.check(tok + "x"); ok {
		t.Error("a wrong token was accepted")
	}
	for _, bad := range []string{"ci " + tok, "ci", "bad id deadbeef", "", line + " root", line + " admin x"} {
		if _, err := parseTokens(strings.NewReader(bad), "tokens"); err == nil {
			t.Errorf("tokens file %q accepted", bad)
		}
	}
	if _, _, err := NewToken("no spaces"); err == nil {
		t.Error("a token ID with a space was accepted")
	}
}

// FuzzUnpack: whatever an uploaded archive holds, unpacking either fails
// with an error or writes regular files inside the target folder only,
// within the limits.
func FuzzUnpack(f *testing.F) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create("m/model.json")
	_, _ = w.Write([]byte(`{"modelTopology": {}}`))
	w, _ = zw.Create("m/group1-shard1of1.bin")
	_, _ = w.Write(make([]byte, 64))
	_ = zw.Close()
	f.Add(b.Bytes(), "m.zip")
	f.Add([]byte("not an archive"), "m.tar")
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0}, "m.tgz")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		kind := archiveKind(name)
		if kind == "" {
			kind = "zip"
		}
		dir := t.TempDir()
		file := filepath.Join(dir, "upload")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(dir, "out")
		err := unpack(file, kind, target, unpackLimits{bytes: 1 << 20, files: 50})
		var re *RequestError
		if err != nil && !errors.As(err, &re) {
			return // an I/O error of the test's own folder
		}
		var total int64
		files := 0
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || p == dir || p == file {
				return nil
			}
			if !strings.HasPrefix(p, target+string(filepath.Separator)) && p != target {
				t.Errorf("%s written outside the target folder", p)
			}
			if d.Type()&os.ModeSymlink != 0 {
				t.Errorf("symlink %s", p)
			}
			if d.Type().IsRegular() {
				files++
				if info, err := d.Info(); err == nil {
					total += info.Size()
				}
			}
			return nil
		})
		if files > 51 || total > 1<<20+1 {
			t.Errorf("%d files, %d bytes unpacked past the limits", files, total)
		}
	})
}

// TestCutOffSubmissionsFreeTheirPlace: a submission left "receiving" by
// a crash holds its token's place until it is removed: on a bbolt store
// at the next start, and by the sweep once older than receivingTimeout
// (a younger one may be an upload in progress on another replica).
func TestCutOffSubmissionsFreeTheirPlace(t *testing.T) {
	data := t.TempDir()
	s, err := New(Config{Data: data})
	if err != nil {
		t.Fatal(err)
	}
	put := func(id string, age time.Duration) {
		t.Helper()
		if err := s.store.put(&Job{ID: id, State: StateReceiving, Token: "alice", Created: time.Now().UTC().Add(-age)}); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(s.jobDir(id), "upload"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	put("stale", receivingTimeout+time.Minute)
	put("fresh", time.Second)
	if _, active, _, err := s.store.usage("alice"); err != nil || active != 2 {
		t.Fatalf("usage: %d active, %v; want the 2 submissions counted", active, err)
	}
	s.sweep(time.Time{})
	if _, err := s.store.get("stale"); !errors.Is(err, errNoJob) {
		t.Errorf("the stale submission is still stored: %v", err)
	}
	if _, err := os.Stat(s.jobDir("stale")); !os.IsNotExist(err) {
		t.Errorf("the stale submission's folder is still there: %v", err)
	}
	if _, err := s.store.get("fresh"); err != nil {
		t.Errorf("the sweep removed a submission still in time: %v", err)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	// One server per bbolt file: at its start, nothing is being received.
	s, err = New(Config{Data: data})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	if _, active, _, err := s.store.usage("alice"); err != nil || active != 0 {
		t.Errorf("after a restart: %d active, %v; want 0", active, err)
	}
	if _, err := os.Stat(s.jobDir("fresh")); !os.IsNotExist(err) {
		t.Errorf("a cut-off submission's folder survived the restart: %v", err)
	}
}

// TestUnpackLyingMember: a zip member that declares 1 KiB but inflates
// to 64 MiB is refused as soon as it passes its declared size, with at
// most the declared size (plus the reader's buffer) written, far under
// the 1 MiB limit.
func TestUnpackLyingMember(t *testing.T) {
	var raw bytes.Buffer
	fw, err := flate.NewWriter(&raw, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fw.Write(make([]byte, 64<<20))
	_ = fw.Close()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "m/model.json", Method: zip.Deflate, CRC32: 0,
		CompressedSize64: uint64(raw.Len()), UncompressedSize64: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write(raw.Bytes())
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "upload.zip")
	if err := os.WriteFile(file, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "out")
	err = unpack(file, "zip", target, unpackLimits{bytes: 1 << 20, files: 10})
	var re *RequestError
	if !errors.As(err, &re) || re.Status != 400 {
		t.Fatalf("unpacking a member that lies about its size: %v; want a 400", err)
	}
	info, err := os.Stat(filepath.Join(target, "m", "model.json"))
	if err == nil && info.Size() > 64<<10 {
		t.Errorf("%d bytes written for a member that declared 1 KiB", info.Size())
	}
	t.Logf("refused: %v", re)
}
