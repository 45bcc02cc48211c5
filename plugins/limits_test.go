package plugins

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A TMPDIR of 150 characters does not make socket paths longer than the
// platform takes: the socket folder goes to /tmp instead.
func TestSocketDirWithLongTMPDIR(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 150-len(t.TempDir())-1))
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", long)
	if len(os.TempDir()) < 150 {
		t.Fatalf("TMPDIR %q is %d bytes, want 150", os.TempDir(), len(os.TempDir()))
	}
	d, err := socketTempDir()
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(d)
	if n := len(d) + socketName; n > maxSocketPath {
		t.Errorf("socket folder %s: socket paths of %d bytes, more than %d", d, n, maxSocketPath)
	}
	// A short TMPDIR is used as it is (made under /tmp: the test's own
	// temporary folders sit in the long hermetic TMPDIR of testpaths).
	short, err := os.MkdirTemp("/tmp", "s")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(short)
	t.Setenv("TMPDIR", short)
	d2, err := socketTempDir()
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(d2)
	if filepath.Dir(d2) != short {
		t.Errorf("socket folder %s, want one in TMPDIR %s", d2, short)
	}
}

func TestLimitsFromEnv(t *testing.T) {
	t.Setenv(EnvMemoryLimit, "2GiB")
	t.Setenv(EnvTimeLimit, "60s")
	var o Options
	if err := limitsFromEnv(&o); err != nil {
		t.Fatal(err)
	}
	if o.MemoryLimit != 2<<30 || o.CallTimeout != time.Minute {
		t.Errorf("limits %d, %v; want 2 GiB, 60 s", o.MemoryLimit, o.CallTimeout)
	}
	for _, bad := range [][2]string{{EnvMemoryLimit, "lots"}, {EnvTimeLimit, "-3s"}} {
		t.Setenv(EnvMemoryLimit, "")
		t.Setenv(EnvTimeLimit, "")
		t.Setenv(bad[0], bad[1])
		if err := limitsFromEnv(&Options{}); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%s=%s: %v, want an error naming the variable", bad[0], bad[1], err)
		}
	}
	// The messages name the limit, what was being done and the file.
	if s := memoryLimitDetail("import", "m.pb", 2<<30, "exited", "fatal error: out of memory"); !strings.HasPrefix(s, "memory limit 2 GiB exceeded while importing m.pb") {
		t.Errorf("memory message %q", s)
	}
	if s := timeLimitDetail("import", "m.pb", time.Minute); !strings.HasPrefix(s, "time limit 60 s exceeded while importing m.pb") {
		t.Errorf("time message %q", s)
	}
	if s := timeLimitDetail("run", "m.onnx", 90*time.Second); !strings.HasPrefix(s, "time limit 90 s exceeded while running m.onnx") {
		t.Errorf("time message %q", s)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupt"))
	if s := canceledDetail(ctx, "import", "m.pb"); !strings.Contains(s, "(interrupt) while importing m.pb") {
		t.Errorf("canceled message %q", s)
	}
}
