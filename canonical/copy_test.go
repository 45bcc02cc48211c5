package canonical

import (
	"bytes"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"
)

// TestSaveCopiesMappedData saves tensors that alias a loaded file (the
// in-kernel copy path) inline and external, and checks every byte.
func TestSaveCopiesMappedData(t *testing.T) {
	dir := t.TempDir()
	m := &Model{IRVersion: 9, Graph: NewGraph("g")}
	m.SetOpset("", 18)
	var want [][]byte
	for i, size := range []int{3 << 20, 5, 2<<20 + 7} {
		raw := make([]byte, size)
		for j := range raw {
			raw[j] = byte(j*7 + i)
		}
		want = append(want, raw)
		if _, err := m.Graph.AddInitializer(NewTensor(string(rune('a'+i)), Uint8, []int64{int64(size)}, raw)); err != nil {
			t.Fatal(err)
		}
	}
	first := filepath.Join(dir, "first.onnx")
	var loadCalls int
	if err := Save(first, m, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	check := func(path string, wantExternal bool) *Model {
		t.Helper()
		got, err := Load(path, LoadOptions{Progress: func(done, total int64) { loadCalls++ }})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range got.Graph.Initializers {
			b, err := v.Const.Bytes()
			if err != nil || !bytes.Equal(b, want[i]) {
				t.Fatalf("%s: initializer %d differs (%v)", path, i, err)
			}
			if ext := v.Const.IsExternal(); ext != (wantExternal && len(want[i]) >= DefaultExternalThreshold) {
				t.Fatalf("%s: initializer %d external=%v", path, i, ext)
			}
		}
		return got
	}
	m1 := check(first, false)
	defer m1.Close()
	if loadCalls == 0 {
		t.Error("Load never reported progress")
	}
	// m1's tensors alias the mapping of first.onnx: saved by the kernel copy.
	second := filepath.Join(dir, "second.onnx")
	if err := Save(second, m1, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	m2 := check(second, false)
	defer m2.Close()
	p1, _ := m1.ToProto()
	p2, _ := m2.ToProto()
	if !proto.Equal(p1, p2) {
		t.Fatal("models differ after the second save")
	}
	ext := filepath.Join(dir, "ext.onnx")
	if err := Save(ext, m2, SaveOptions{ExternalData: true}); err != nil {
		t.Fatal(err)
	}
	m3 := check(ext, true)
	defer m3.Close()
	// External data aliasing its mapping, saved external again, and inline.
	ext2 := filepath.Join(dir, "sub.onnx")
	if err := Save(ext2, m3, SaveOptions{ExternalData: true, ExternalFile: "weights.bin"}); err != nil {
		t.Fatal(err)
	}
	m4 := check(ext2, true)
	defer m4.Close()
	if loc, _, _ := m4.Graph.Initializers[0].Const.ExternalLocation(); loc != "weights.bin" {
		t.Fatalf("external file %q, want weights.bin", loc)
	}
	inline := filepath.Join(dir, "inline.onnx")
	if err := Save(inline, m4, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	m5 := check(inline, false)
	defer m5.Close()
	// Saving over the file the model was loaded from works too.
	if err := Save(inline, m5, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	m6 := check(inline, false)
	m6.Close()
}
