package xgboost

import (
	"encoding/binary"
	"math"
	"testing"

	"google.golang.org/protobuf/proto"
)

// ubjWriter re-encodes a decoded document as UBJSON in one of two styles,
// to check the decoder against the JSON reader on the same model.
// Style 0: typed arrays ('$' and '#'), counted objects, int64 lengths.
// Style 1: untyped unsized containers, uint8 lengths, no-ops, mixed ints.
type ubjWriter struct {
	style int
	buf   []byte
}

func (w *ubjWriter) length(n int) {
	if w.style == 0 {
		w.buf = append(w.buf, 'L')
		w.buf = binary.BigEndian.AppendUint64(w.buf, uint64(n))
		return
	}
	w.buf = append(w.buf, 'U', byte(n))
}

func (w *ubjWriter) str(s string) { w.length(len(s)); w.buf = append(w.buf, s...) }

func isInt(f float64) bool { return f == math.Trunc(f) && math.Abs(f) < 1<<31 }

func (w *ubjWriter) number(f float64, f32 float32) {
	switch {
	case isInt(f) && f >= -128 && f < 128 && w.style == 1:
		w.buf = append(w.buf, 'N', 'i', byte(int8(f)))
	case isInt(f) && math.Abs(f) < 1<<15:
		w.buf = append(w.buf, 'I')
		w.buf = binary.BigEndian.AppendUint16(w.buf, uint16(int16(f)))
	case isInt(f):
		w.buf = append(w.buf, 'l')
		w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(int32(f)))
	default:
		w.buf = append(w.buf, 'd')
		w.buf = binary.BigEndian.AppendUint32(w.buf, math.Float32bits(f32))
	}
}

func (w *ubjWriter) value(v *value) {
	switch v.kind {
	case kNull:
		w.buf = append(w.buf, 'Z')
	case kBool:
		if v.num != 0 {
			w.buf = append(w.buf, 'T')
		} else {
			w.buf = append(w.buf, 'F')
		}
	case kNumber:
		w.number(v.num, v.f32)
	case kString:
		w.buf = append(w.buf, 'S')
		w.str(v.str)
	case kArray:
		if w.style == 0 {
			w.buf = append(w.buf, '[', '#')
			w.length(len(v.elems))
			for i := range v.elems {
				w.value(&v.elems[i])
			}
			return
		}
		w.buf = append(w.buf, '[')
		for i := range v.elems {
			w.value(&v.elems[i])
		}
		w.buf = append(w.buf, ']')
	case kNumArray:
		if w.style == 1 {
			w.buf = append(w.buf, '[')
			for i := range v.nums {
				w.number(v.nums[i], v.nums2[i])
			}
			w.buf = append(w.buf, 'N', ']')
			return
		}
		ints := true
		for _, f := range v.nums {
			ints = ints && isInt(f)
		}
		if ints {
			w.buf = append(w.buf, '[', '$', 'l', '#')
			w.length(len(v.nums))
			for _, f := range v.nums {
				w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(int32(f)))
			}
			return
		}
		w.buf = append(w.buf, '[', '$', 'd', '#')
		w.length(len(v.nums))
		for _, f := range v.nums2 {
			w.buf = binary.BigEndian.AppendUint32(w.buf, math.Float32bits(f))
		}
	case kObject:
		if w.style == 0 {
			w.buf = append(w.buf, '{', '#')
			w.length(len(v.keys))
		} else {
			w.buf = append(w.buf, '{')
		}
		for i, k := range v.keys {
			w.str(k)
			w.value(&v.elems[i])
		}
		if w.style == 1 {
			w.buf = append(w.buf, '}')
		}
	}
}

// TestUBJSONStyles encodes JSON models as UBJSON in two styles: both must
// import to exactly the model the JSON gives.
func TestUBJSONStyles(t *testing.T) {
	models := map[string][]byte{
		"hand":        []byte(handModel("binary:logistic", "2.5E-1", 1)),
		"categorical": []byte(handCategorical),
		"dart":        readFixture(t, "dart_binary.json"),
		"gblinear":    readFixture(t, "gblinear_softprob.json"),
		"catfixture":  readFixture(t, "categorical_reg.json"),
	}
	for name, js := range models {
		want, err := importProto(js, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		doc, err := parseJSON(js)
		if err != nil {
			t.Fatal(err)
		}
		for style := 0; style < 2; style++ {
			w := &ubjWriter{style: style}
			w.value(&doc)
			got, err := importProto(w.buf, Options{})
			if err != nil {
				t.Errorf("%s style %d: %v", name, style, err)
				continue
			}
			if !proto.Equal(got, want) {
				t.Errorf("%s style %d: UBJSON import differs from JSON import", name, style)
			}
		}
	}
}

func TestUBJSONScalars(t *testing.T) {
	// A counted object of 10 entries: every scalar type, and a typed array
	// of two 'T' (no payload).
	b := []byte("{#U\x0a")
	add := func(k string, v ...byte) { b = append(append(append(b, 'U', byte(len(k))), k...), v...) }
	// (A no-payload typed array may not claim more elements than there are
	// bytes left, an amplification guard, so it comes first.)
	add("j", '[', '$', 'T', '#', 'U', 2)
	add("a", 'i', 0xfb)
	add("b", 'U', 200)
	add("c", 'I', 0xfe, 0xd4)
	add("d", 'l', 0, 1, 0x11, 0x70)
	add("e", 'L', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe)
	add("f", 'd', 0x3f, 0xc0, 0, 0)
	add("g", 'D', 0x3f, 0xd0, 0, 0, 0, 0, 0, 0)
	add("h", 'H', 'U', 4, '1', '2', '.', '5')
	add("i", 'C', 'x')
	v, err := parseUBJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"a": -5, "b": 200, "c": -300, "d": 70000, "e": -2, "f": 1.5, "g": 0.25, "h": 12.5}
	for k, f := range want {
		if e := v.get(k); e == nil || e.kind != kNumber || e.num != f {
			t.Errorf("%s = %+v, want %g", k, e, f)
		}
	}
	if e := v.get("i"); e == nil || e.str != "x" {
		t.Errorf("i = %+v", e)
	}
	j := v.get("j")
	if j == nil || j.kind != kNumArray || len(j.nums) != 2 {
		t.Fatalf("j = %+v, want two booleans", j)
	}
	if j.nums[0] != 1 || j.nums[1] != 1 {
		t.Errorf("j = %v, want [1 1]", j.nums)
	}
	if _, err := parseUBJSON(append(b, 'Z')); err == nil {
		t.Error("data after the counted object accepted")
	}
}
