package tensorio

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// npyBytes builds an .npy file the way numpy.save writes it (version 1.0,
// header padded with spaces to a multiple of 64 bytes, ending in '\n').
func npyBytes(header string, data []byte) []byte {
	pad := 64 - (10+len(header)+1)%64
	h := header + strings.Repeat(" ", pad%64) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	_ = binary.Write(&b, binary.LittleEndian, uint16(len(h)))
	b.WriteString(h)
	b.Write(data)
	return b.Bytes()
}

func f32le(v ...float32) []byte {
	var out []byte
	for _, x := range v {
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
	}
	return out
}

func readBytes(t *testing.T, b []byte) (*canonical.Tensor, error) {
	t.Helper()
	return ReadNpy(bytes.NewReader(b), "x", int64(len(b)))
}

func TestReadNpyFloat32(t *testing.T) {
	b := npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f32le(1, 2, 3, 4, 5, -6.5))
	if (len(b)-24)%64 != 0 {
		t.Fatalf("test header is %d bytes, numpy aligns it to 64", len(b)-24)
	}
	x, err := readBytes(t, b)
	if err != nil {
		t.Fatal(err)
	}
	if x.DataType != canonical.Float || !slices.Equal(x.Dims, []int64{2, 3}) {
		t.Fatalf("got %v %v", x.DataType, x.Dims)
	}
	raw, _ := x.Bytes()
	if math.Float32frombits(binary.LittleEndian.Uint32(raw[20:])) != -6.5 {
		t.Errorf("last element wrong")
	}
}

func TestReadNpyVariants(t *testing.T) {
	be := make([]byte, 16)
	binary.BigEndian.PutUint64(be, uint64(7))
	binary.BigEndian.PutUint64(be[8:], uint64(1<<40))
	cases := []struct {
		header string
		data   []byte
		dt     canonical.DataType
		dims   []int64
		check  func(*canonical.Tensor) bool
	}{
		{"{'descr': '>i8', 'fortran_order': False, 'shape': (2,), }", be, canonical.Int64, []int64{2}, func(x *canonical.Tensor) bool {
			raw, _ := x.Bytes()
			return binary.LittleEndian.Uint64(raw) == 7 && binary.LittleEndian.Uint64(raw[8:]) == 1<<40
		}},
		{"{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", []byte{1, 0, 1}, canonical.Bool, []int64{3}, nil},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (), }", binary.LittleEndian.AppendUint64(nil, math.Float64bits(2.5)), canonical.Double, []int64{}, nil},
		{"{'shape': (0, 4), 'fortran_order': False, 'descr': '<u2'}", nil, canonical.Uint16, []int64{0, 4}, nil},
		{"{'descr': '<U2', 'fortran_order': False, 'shape': (2,), }", []byte{'h', 0, 0, 0, 'i', 0, 0, 0, 0xe9, 0, 0, 0, 0, 0, 0, 0}, canonical.String, []int64{2}, func(x *canonical.Tensor) bool {
			s, _ := x.Strings()
			return string(s[0]) == "hi" && string(s[1]) == "é"
		}},
	}
	for _, c := range cases {
		x, err := readBytes(t, npyBytes(c.header, c.data))
		if err != nil {
			t.Errorf("%s: %v", c.header, err)
			continue
		}
		if x.DataType != c.dt || !slices.Equal(x.Dims, c.dims) {
			t.Errorf("%s: got %v %v, want %v %v", c.header, x.DataType, x.Dims, c.dt, c.dims)
		}
		if c.check != nil && !c.check(x) {
			t.Errorf("%s: wrong data", c.header)
		}
	}
}

func TestReadNpyRejects(t *testing.T) {
	good := "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
	cases := map[string][]byte{
		"fortran_order":                          npyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", f32le(1, 2, 3, 4, 5, 6)),
		"needs 24 data bytes, the file holds 20": npyBytes(good, f32le(1, 2, 3, 4, 5)),
		"the file holds 28":                      npyBytes(good, f32le(1, 2, 3, 4, 5, 6, 7)),
		"unsupported dtype \"|O\"":               npyBytes("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", make([]byte, 16)),
		"structured dtypes":                      npyBytes("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", make([]byte, 8)),
		"missing key \"shape\"":                  npyBytes("{'descr': '<f4', 'fortran_order': False}", nil),
		"overflows":                              npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387903, 4611686018427387903), }", nil),
		"bad magic":                              append([]byte("\x93NUMPZ\x01\x00"), make([]byte, 64)...),
		"bool element 1 holds 2":                 npyBytes("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", []byte{0, 2}),
	}
	for want, b := range cases {
		_, err := readBytes(t, b)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want error containing %q, got %v", want, err)
		}
	}
	// A header length that runs past the end of the file.
	b := npyBytes(good, f32le(1, 2, 3, 4, 5, 6))
	binary.LittleEndian.PutUint16(b[8:], 60000)
	if _, err := readBytes(t, b); err == nil || !strings.Contains(err.Error(), "runs past the end") {
		t.Errorf("oversized header length: %v", err)
	}
}

func TestNpzAndLoadSet(t *testing.T) {
	dir := t.TempDir()
	// An .npz with two arrays (np.savez layout: NAME.npy members).
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for name, data := range map[string][]byte{
		"tokens": npyBytes("{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2), }", binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 3), 9)),
		"mask":   npyBytes("{'descr': '|b1', 'fortran_order': False, 'shape': (1, 2), }", []byte{1, 0}),
	} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name + ".npy", Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	zw.Close()
	if err := os.WriteFile(filepath.Join(dir, "inputs.npz"), zb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// A .pb for the first input by index and an .npy named after the third.
	if err := canonical.WriteTensorFile(filepath.Join(dir, "input_0.pb"), canonical.NewTensor("whatever", canonical.Float, []int64{2}, f32le(1, 2))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scale_x.npy"), npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", f32le(0.5)), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := LoadSet(dir, "input", []string{"x", "tokens", "scale:x", "mask"})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		dt   canonical.DataType
		dims []int64
	}{{canonical.Float, []int64{2}}, {canonical.Int64, []int64{1, 2}}, {canonical.Float, []int64{1}}, {canonical.Bool, []int64{1, 2}}}
	for i, w := range want {
		if got[i].DataType != w.dt || !slices.Equal(got[i].Dims, w.dims) {
			t.Errorf("input %d: %v %v, want %v %v", i, got[i].DataType, got[i].Dims, w.dt, w.dims)
		}
	}
	if got[0].Name != "x" {
		t.Errorf("tensor named %q, want the graph input's name", got[0].Name)
	}
	raw, _ := got[1].Bytes()
	if binary.LittleEndian.Uint64(raw[8:]) != 9 {
		t.Errorf("npz data wrong")
	}
	// A missing input names what was looked for.
	if _, err := LoadSet(dir, "input", []string{"x", "tokens", "scale:x", "mask", "absent"}); err == nil || !strings.Contains(err.Error(), "absent.npy") {
		t.Errorf("missing input: %v", err)
	}
	// The same folder as an .npz path.
	if _, err := LoadSet(filepath.Join(dir, "inputs.npz"), "input", []string{"tokens", "mask"}); err != nil {
		t.Errorf("npz as set: %v", err)
	}
}

func TestSetDirsFixture(t *testing.T) {
	dirs, err := SetDirs(filepath.Join("..", "..", "fixtures", "models", "mlp_opset9"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != 1 || filepath.Base(dirs[0]) != "test_data_set_0" {
		t.Fatalf("set dirs %v", dirs)
	}
	ts, err := LoadSet(dirs[0], "output", []string{"output"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ts[0].Dims, []int64{4, 10}) || ts[0].DataType != canonical.Float {
		t.Errorf("fixture output %v %v", ts[0].DataType, ts[0].Dims)
	}
}

// FuzzReadNpy: arbitrary bytes never panic, and whatever is accepted has
// exactly the data its shape calls for.
func FuzzReadNpy(f *testing.F) {
	// Files numpy wrote: float32, int64 and bool arrays.
	testpaths.AddFiles(f, "../../fixtures/xgboost/binary_logistic.input.npy", "../../fixtures/xgboost/binary_logistic.label.npy",
		"../../fixtures/tflite/cnn.input_0.npy")
	f.Add(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f32le(1, 2, 3, 4, 5, 6)))
	f.Add(npyBytes("{'descr': '<U2', 'fortran_order': False, 'shape': (1,), }", []byte{'a', 0, 0, 0, 0, 0, 0, 0}))
	f.Add(npyBytes("{'descr': '>i2', 'fortran_order': False, 'shape': (), }", []byte{0, 1}))
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := ReadNpy(bytes.NewReader(b), "x", int64(len(b)))
		if err != nil {
			return
		}
		n, err := x.NumElements()
		if err != nil {
			t.Fatalf("accepted dims %v: %v", x.Dims, err)
		}
		if x.DataType == canonical.String {
			s, err := x.Strings()
			if err != nil || int64(len(s)) != n {
				t.Fatalf("%d strings for dims %v", len(s), x.Dims)
			}
			return
		}
		raw, err := x.Bytes()
		if err != nil || int64(len(raw)) != n*int64(canonical.ElemBits(x.DataType)/8) {
			t.Fatalf("%d bytes for %v %v", len(raw), x.DataType, x.Dims)
		}
	})
}
