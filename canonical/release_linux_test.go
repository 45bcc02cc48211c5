package canonical

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// rssFile is the process's resident file-backed memory (/proc/self/status
// RssFile), in bytes.
func rssFile(t *testing.T) int64 {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	_, rest, ok := strings.Cut(string(status), "RssFile:")
	if !ok {
		t.Skip("no RssFile in /proc/self/status")
	}
	kb, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return kb << 10
}

// TestReleasePages reads a 64 MiB weight of a loaded model through its
// mapping (resident), then releases its pages: the file-backed resident
// memory drops by most of it, and the data reads the same afterwards.
func TestReleasePages(t *testing.T) {
	const n = 16 << 20 // float32 elements: 64 MiB
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32(i%977) * 0.5
	}
	m := &Model{IRVersion: 8, Graph: NewGraph("g")}
	m.SetOpset("", 13)
	w := Float32Tensor("w", []int64{n}, vals)
	if _, err := m.Graph.AddInitializer(w); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "m.onnx")
		if err := Save(path, m, SaveOptions{ExternalData: ext}); err != nil {
			t.Fatal(err)
		}
		lm, err := Load(path, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		lt := lm.Graph.Initializers[0].Const
		b, err := lt.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		sum := 0
		for i := 0; i < len(b); i += 512 {
			sum += int(b[i])
		}
		before := rssFile(t)
		lm.ReleasePages(lt)
		after := rssFile(t)
		t.Logf("external data %v: RssFile %d MiB -> %d MiB", ext, before>>20, after>>20)
		if before-after < 48<<20 {
			t.Errorf("external data %v: releasing the 64 MiB weight freed %d MiB of resident file memory", ext, (before-after)>>20)
		}
		again := 0
		for i := 0; i < len(b); i += 512 {
			again += int(b[i])
		}
		if again != sum {
			t.Errorf("external data %v: the data changed after the release", ext)
		}
		lm.Close()
	}
}
