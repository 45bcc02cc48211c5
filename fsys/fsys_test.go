package fsys

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestRootConfines(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("root:x:0:0"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "w.bin"), []byte{1, 2, 3, 4}, 0o644))
	must(os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "sub", "in.bin"), []byte{5}, 0o644))
	must(os.Symlink(secret, filepath.Join(dir, "link.bin")))
	must(os.Symlink(outside, filepath.Join(dir, "linkdir")))
	must(os.Symlink("w.bin", filepath.Join(dir, "inside.bin")))
	r, err := OpenRoot(dir, nil)
	must(err)
	defer r.Close()

	if b, err := r.ReadFile("w.bin", 0); err != nil || !bytes.Equal(b, []byte{1, 2, 3, 4}) {
		t.Errorf("w.bin: %v %v", b, err)
	}
	if b, err := r.ReadFile("sub/in.bin", 0); err != nil || len(b) != 1 {
		t.Errorf("sub/in.bin: %v %v", b, err)
	}
	// A link that stays inside is confined, not refused.
	if b, err := r.ReadFile("inside.bin", 0); err != nil || len(b) != 4 {
		t.Errorf("inside.bin: %v %v", b, err)
	}
	for _, name := range []string{"link.bin", "linkdir/secret", "../" + filepath.Base(outside) + "/secret", secret, "", "http://x/y", "sub", "sub/../../x"} {
		_, err := r.ReadFile(name, 0)
		var oe *OutsideError
		if !errors.As(err, &oe) {
			t.Errorf("ReadFile(%q) = %v, want an *OutsideError", name, err)
		}
	}
	if _, err := r.ReadAt("link.bin", 0, 2); err == nil {
		t.Error("ReadAt through a link that leaves the folder succeeded")
	}
}

func TestBudgetChargesRepeatedReads(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "w.bin"), make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRoot(dir, NewBudget(Limits{Floor: 4 << 20, Ratio: 2}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var be *BudgetError
	reads := 0
	for ; reads < 100; reads++ {
		if _, err = r.ReadFile("w.bin", 0); err != nil {
			break
		}
	}
	// One free read, then four charged MiB of the 4 MiB floor.
	if !errors.As(err, &be) || reads != 5 {
		t.Errorf("after %d reads: %v, want a *BudgetError after 5", reads, err)
	}
}

func TestInflateRatio(t *testing.T) {
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	_, _ = w.Write(make([]byte, 64<<20))
	_ = w.Close()
	zr, err := gzip.NewReader(bytes.NewReader(z.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Inflate(zr, int64(z.Len()), 0, 0, NewBudget(Limits{}), "bomb.gz")
	var ie *InflateError
	if !errors.As(err, &ie) {
		t.Fatalf("64 MiB of zeros from %d bytes: %v, want an *InflateError", z.Len(), err)
	}
	// An ordinary ratio passes, and the bytes are the stream's.
	src := bytes.Repeat([]byte("weights 0.125 -3.5 "), 1000)
	z.Reset()
	w = gzip.NewWriter(&z)
	_, _ = w.Write(src)
	_ = w.Close()
	zr, _ = gzip.NewReader(bytes.NewReader(z.Bytes()))
	got, err := Inflate(zr, int64(z.Len()), 0, 0, NewBudget(Limits{}), "ok.gz")
	if err != nil || !bytes.Equal(got, src) {
		t.Errorf("ordinary stream: %d bytes, %v", len(got), err)
	}
	// The absolute cap holds whatever the ratio.
	zr, _ = gzip.NewReader(bytes.NewReader(z.Bytes()))
	if _, err := Inflate(zr, int64(z.Len()), 0, 1000, nil, "capped.gz"); !errors.As(err, &ie) {
		t.Errorf("cap 1000: %v, want an *InflateError", err)
	}
}
