package canonical

import (
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// repoRoot walks up from the package folder to the folder holding go.mod.
func repoRoot(t testing.TB) string { return testpaths.RepoRoot(t) }

// backendModels lists every backend-test model.onnx of ONNX 1.22.
func backendModels(t testing.TB) []string {
	t.Helper()
	root := filepath.Join(repoRoot(t), "..", "shared", "onnx-v1.22", "backend-tests")
	paths, err := filepath.Glob(filepath.Join(root, "*", "*", "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no backend-test models under %s", root)
	}
	return paths
}

func readProto(t testing.TB, path string) (*onnxpb.ModelProto, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mp := &onnxpb.ModelProto{}
	if err := proto.Unmarshal(data, mp); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return mp, data
}

func TestRoundTripProto(t *testing.T) {
	paths := backendModels(t)
	n := 0
	for _, p := range paths {
		mp, _ := readProto(t, p)
		want := proto.Clone(mp)
		m, err := FromProto(mp, filepath.Dir(p))
		if err != nil {
			t.Errorf("%s: FromProto: %v", p, err)
			continue
		}
		got, err := m.ToProto()
		if err != nil {
			t.Errorf("%s: ToProto: %v", p, err)
			continue
		}
		if !proto.Equal(got, want) {
			t.Errorf("%s: ToProto(FromProto(x)) differs from x", p)
			continue
		}
		n++
	}
	t.Logf("%d of %d backend-test models round-trip through FromProto/ToProto", n, len(paths))
	if n != len(paths) {
		t.Fatalf("only %d of %d models round-trip", n, len(paths))
	}
}

func TestRoundTripDecode(t *testing.T) {
	paths := backendModels(t)
	n := 0
	for _, p := range paths {
		mp, data := readProto(t, p)
		m, err := Decode(data, filepath.Dir(p), LoadOptions{})
		if err != nil {
			t.Errorf("%s: Decode: %v", p, err)
			continue
		}
		got, err := m.ToProto()
		if err != nil {
			t.Errorf("%s: ToProto: %v", p, err)
			continue
		}
		if !proto.Equal(got, mp) {
			t.Errorf("%s: Decode then ToProto differs from proto.Unmarshal", p)
			continue
		}
		n++
	}
	t.Logf("%d of %d backend-test models decode like proto.Unmarshal", n, len(paths))
	if n != len(paths) {
		t.Fatalf("only %d of %d models decode", n, len(paths))
	}
}

func TestRoundTripSaveLoad(t *testing.T) {
	paths := backendModels(t)
	dir := fastTempDir(t)
	out := filepath.Join(dir, "model.onnx")
	n := 0
	for _, p := range paths {
		mp, data := readProto(t, p)
		m, err := Decode(data, filepath.Dir(p), LoadOptions{})
		if err != nil {
			t.Errorf("%s: Decode: %v", p, err)
			continue
		}
		if err := Save(out, m, SaveOptions{noSync: true}); err != nil {
			t.Errorf("%s: Save: %v", p, err)
			continue
		}
		m2, err := Load(out, LoadOptions{})
		if err != nil {
			t.Errorf("%s: Load of the saved copy: %v", p, err)
			continue
		}
		got, err := m2.ToProto()
		if err != nil {
			t.Errorf("%s: ToProto: %v", p, err)
		} else if !proto.Equal(got, mp) {
			t.Errorf("%s: Save then Load differs from the original", p)
		} else {
			n++
		}
		if err := m2.Close(); err != nil {
			t.Errorf("%s: Close: %v", p, err)
		}
	}
	t.Logf("%d of %d backend-test models round-trip through Save/Load", n, len(paths))
	if n != len(paths) {
		t.Fatalf("only %d of %d models round-trip", n, len(paths))
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	if len(left) != 0 {
		t.Fatalf("temporary files left behind: %v", left)
	}
}

// fastTempDir returns a temporary folder in memory (/dev/shm) when there is
// one, so that saving thousands of files does not wait for the disk.
func fastTempDir(t *testing.T) string {
	t.Helper()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "canonical-test-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}
