package flexbuf

import (
	"errors"
	"os"
	"slices"
	"testing"
)

// options is Landmarks2TransformMatrix's custom_options as the flatbuffers
// library's flexbuffers::Builder wrote them (fixtures/mediapipe/harness.cc,
// case matrix_face).
func options(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../../../fixtures/mediapipe/data/matrix_face/options.bin")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLibraryMap reads a map the flatbuffers library wrote: its ints,
// floats and typed int vector, as the harness gave them.
func TestLibraryMap(t *testing.T) {
	root, err := Root(options(t))
	if err != nil {
		t.Fatal(err)
	}
	m, err := root.Map()
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]int64{"left_rotation_idx": 3, "right_rotation_idx": 7, "output_height": 192, "output_width": 192} {
		if v, err := m[k].Int(); err != nil || v != want {
			t.Errorf("%s = %d, %v; want %d", k, v, err, want)
		}
	}
	for k, want := range map[string]float64{"scale_x": 1.5, "scale_y": 1.5, "target_rotation_radians": 0} {
		if v, err := m[k].Float(); err != nil || v != want {
			t.Errorf("%s = %g, %v; want %g", k, v, err, want)
		}
	}
	v, err := m["subset_idxs"].Ints()
	if err != nil || !slices.Equal(v, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}) {
		t.Errorf("subset_idxs %v, %v", v, err)
	}
	if _, err := m["scale_x"].Ints(); err == nil {
		t.Error("a float read as a vector")
	}
	if _, err := m["subset_idxs"].Map(); err == nil {
		t.Error("a vector read as a map")
	}
}

// TestHostile: every truncation of the library's map, and an offset that
// points before the buffer, are *Error values, never a panic.
func TestHostile(t *testing.T) {
	b := options(t)
	truncated(t, b, func(m map[string]Ref) error {
		_, err := m["subset_idxs"].Ints()
		return err
	})
	bad := slices.Clone(b)
	w := int(bad[len(bad)-1])
	for i := len(bad) - 2 - w; i < len(bad)-2; i++ {
		bad[i] = 0xff // the root offset points before the start
	}
	if root, err := Root(bad); err == nil {
		if _, err := root.Map(); err == nil {
			t.Error("an offset before the buffer read as a map")
		}
	}
}

// TestLibraryString reads the string the flatbuffers library wrote in
// TransformTensor's custom_options (fixtures/mediapipe/harness.cc, case
// bilinear_v1_crop), and refuses a number read as a string and every
// truncation with an *Error.
func TestLibraryString(t *testing.T) {
	b, err := os.ReadFile("../../../fixtures/mediapipe/data/bilinear_v1_crop/options.bin")
	if err != nil {
		t.Fatal(err)
	}
	root, err := Root(b)
	if err != nil {
		t.Fatal(err)
	}
	m, err := root.Map()
	if err != nil {
		t.Fatal(err)
	}
	if s, err := m["mode"].String(); err != nil || s != "bilinear" {
		t.Errorf("mode = %q, %v; want bilinear", s, err)
	}
	if v, err := m["output_size"].Ints(); err != nil || !slices.Equal(v, []int64{5, 4}) {
		t.Errorf("output_size %v, %v", v, err)
	}
	if _, err := m["output_size"].String(); err == nil {
		t.Error("a vector read as a string")
	}
	truncated(t, b, func(m map[string]Ref) error {
		_, err := m["mode"].String()
		return err
	})
}

// truncated reads every truncation of b as a map and then with read: an
// error is an *Error, never a panic.
func truncated(t *testing.T, b []byte, read func(map[string]Ref) error) {
	t.Helper()
	for n := 0; n < len(b); n++ {
		root, err := Root(b[:n])
		if err == nil {
			var m map[string]Ref
			if m, err = root.Map(); err == nil {
				err = read(m)
			}
		}
		var fe *Error
		if err != nil && !errors.As(err, &fe) {
			t.Errorf("%d bytes: %T %v", n, err, err)
		}
	}
}

// TestLibraryEmptyVector: the flatbuffers library's Builder writes an
// empty typed vector (Landmarks2TransformMatrix version 1's subset in
// fixtures/mediapipe/data/matrix_v1_refused/subset_empty.bin, which
// MediaPipe's kernel refuses as empty) as a vector of keys; Ints reads it
// as no numbers, and the typed vectors beside it as written.
func TestLibraryEmptyVector(t *testing.T) {
	b, err := os.ReadFile("../../../fixtures/mediapipe/data/matrix_v1_refused/subset_empty.bin")
	if err != nil {
		t.Fatal(err)
	}
	root, err := Root(b)
	if err != nil {
		t.Fatal(err)
	}
	m, err := root.Map()
	if err != nil {
		t.Fatal(err)
	}
	if v, err := m["subset"].Ints(); err != nil || v == nil || len(v) != 0 {
		t.Errorf("subset %v, %v; want an empty vector", v, err)
	}
	if v, err := m["input_hw"].Ints(); err != nil || !slices.Equal(v, []int64{128, 128}) {
		t.Errorf("input_hw %v, %v; want [128 128]", v, err)
	}
	if v, err := m["bbox_size_multiplier"].Float(); err != nil || v != 1.5 {
		t.Errorf("bbox_size_multiplier %g, %v; want 1.5", v, err)
	}
	truncated(t, b, func(m map[string]Ref) error {
		_, err := m["subset"].Ints()
		return err
	})
}

// FuzzRead reads arbitrary bytes as a FlexBuffers map and every value
// of it in each form (custom_options of TFLite custom operators): an
// error is an *Error, never a panic. Seeds: the custom_options the
// flatbuffers library wrote for fixtures/mediapipe.
func FuzzRead(f *testing.F) {
	for _, p := range []string{"matrix_face/options.bin", "matrix_v1_odd/options.bin", "bilinear_v1_crop/options.bin",
		"landmarks_v1_3d/options.bin", "matrix_v1_refused/subset_empty.bin"} {
		b, err := os.ReadFile("../../../fixtures/mediapipe/data/" + p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fe *Error
		check := func(err error) {
			if err != nil && !errors.As(err, &fe) {
				t.Fatalf("%T %v: want an *Error", err, err)
			}
		}
		root, err := Root(b)
		check(err)
		if err != nil {
			return
		}
		m, err := root.Map()
		check(err)
		for _, r := range m {
			_, err := r.Int()
			check(err)
			_, err = r.Float()
			check(err)
			_, err = r.String()
			check(err)
			_, err = r.Ints()
			check(err)
			_, err = r.Map()
			check(err)
		}
	})
}
