package canonical

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/x448/float16"
)

// TestHalfCodecAgainstX448 checks the one fp16 codec against an
// independent implementation (github.com/x448/float16): every half code
// decodes to the same float32, and a million random float32s (plus the
// edges) encode to the same half, ties to even.
func TestHalfCodecAgainstX448(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		got, want := Float16ToFloat32(uint16(h)), float16.Frombits(uint16(h)).Float32()
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("decode %#04x: %v, x448 %v", h, got, want)
		}
		if bf := BFloat16ToFloat32(uint16(h)); Float32ToBFloat16(bf) != uint16(h) && bf == bf {
			t.Fatalf("bfloat16 %#04x does not round-trip", h)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	edges := []float32{0, -0, 65504, 65505, 65520, -65520, 6.1035156e-05, 5.9604645e-08, 2.9802322e-08, 1e-10,
		float32(math.Inf(1)), float32(math.Inf(-1))}
	for i := 0; i < 1_000_000+len(edges); i++ {
		var f float32
		if i < len(edges) {
			f = edges[i]
		} else {
			f = math.Float32frombits(r.Uint32())
			if f != f {
				continue
			}
		}
		if got, want := Float32ToFloat16(f), float16.Fromfloat32(f).Bits(); got != want {
			t.Fatalf("encode %v (%#08x): %#04x, x448 %#04x", f, math.Float32bits(f), got, want)
		}
	}
	if v := Float32ToFloat16(float32(math.NaN())); Float16ToFloat32(v) == Float16ToFloat32(v) {
		t.Error("NaN does not stay NaN")
	}
}
