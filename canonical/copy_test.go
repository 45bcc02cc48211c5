package canonical

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// TestSaveReleasesMappedPages saves a model of many tensors, some below
// copyMin (written through user memory), some above (copied in the kernel),
// and checks that the data is intact and that the pages of the mapping that
// were read do not stay resident (they would count in the process's RSS).
func TestSaveReleasesMappedPages(t *testing.T) {
	dir := t.TempDir()
	m := &Model{IRVersion: 9, Graph: NewGraph("g")}
	m.SetOpset("", 18)
	var want [][]byte
	for i := 0; i < 700; i++ {
		size := 20<<10 + i
		if i%50 == 0 {
			size = copyMin + 3*i
		}
		raw := make([]byte, size)
		for j := range raw {
			raw[j] = byte(j*5 + i)
		}
		want = append(want, raw)
		if _, err := m.Graph.AddInitializer(NewTensor("t"+strconv.Itoa(i), Uint8, []int64{int64(size)}, raw)); err != nil {
			t.Fatal(err)
		}
	}
	first := filepath.Join(dir, "first.onnx")
	if err := Save(first, m, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	m1, err := Load(first, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m1.Close()
	rss := func() int64 {
		t.Helper()
		b, err := os.ReadFile("/proc/self/smaps")
		if err != nil {
			t.Skipf("no smaps: %v", err)
		}
		var n int64
		in := false
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
				in = strings.HasSuffix(l, first)
			} else if in && len(f) == 3 && f[0] == "Rss:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				n += kb << 10
			}
		}
		return n
	}
	st, err := os.Stat(first)
	if err != nil {
		t.Fatal(err)
	}
	if r := rss(); r > st.Size()/4 {
		t.Errorf("after Load, %d of the %d bytes of the mapping are resident", r, st.Size())
	}
	for _, ext := range []bool{false, true} {
		out := filepath.Join(dir, "out"+strconv.FormatBool(ext)+".onnx")
		if err := Save(out, m1, SaveOptions{ExternalData: ext}); err != nil {
			t.Fatal(err)
		}
		if r := rss(); r > st.Size()/4 {
			t.Errorf("after Save (external %v), %d of the %d bytes of the mapping are resident", ext, r, st.Size())
		}
		m2, err := Load(out, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range m2.Graph.Initializers {
			b, err := v.Const.Bytes()
			if err != nil || !bytes.Equal(b, want[i]) {
				t.Fatalf("%s: initializer %d differs (%v)", out, i, err)
			}
		}
		m2.Close()
	}
	// The released pages read back the same bytes.
	for i, v := range m1.Graph.Initializers {
		if b, err := v.Const.Bytes(); err != nil || !bytes.Equal(b, want[i]) {
			t.Fatalf("initializer %d differs after its pages were released (%v)", i, err)
		}
	}
	// Releasing an unmapped source does nothing.
	src := m1.src
	if err := src.unmap(); err != nil {
		t.Fatal(err)
	}
	src.release(0, int64(len(src.data)))
	if err := src.unmap(); err != nil {
		t.Fatal(err)
	}
}
