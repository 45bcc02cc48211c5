package adapt

import (
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxtext"
	"github.com/onnxconv/onnxconv/exporters/profiles"
)

// FuzzContribWeights fits models holding com.microsoft MatMulNBits (K, N,
// bits and block_size as given, B, scales and zero points of the lengths
// given) and GatherBlockQuantized (a table of the shape given) to opset 23
// (blockwise DequantizeLinear) and 17 (float weights) and, from 23, back
// to onnxruntime-1.30: whatever the sizes, Adapt returns (a refusal names
// the node), never panics or allocates beyond the weights given.
func FuzzContribWeights(f *testing.F) {
	f.Add(int64(40), int64(5), int64(4), int64(16), []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef01234567"), uint8(14), uint8(0), false)
	f.Add(int64(40), int64(5), int64(4), int64(16), []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef01234567"), uint8(14), uint8(10), false)
	f.Add(int64(32), int64(2), int64(8), int64(16), make([]byte, 64), uint8(4), uint8(4), true)
	f.Add(int64(-1), int64(1<<40), int64(3), int64(1<<20), []byte{1}, uint8(0), uint8(0), true)
	profs := map[string]*profiles.Profile{}
	for _, n := range []string{"onnx-opset23", "onnx-opset17", "onnxruntime-1.30"} {
		p, err := profiles.Get(n)
		if err != nil {
			f.Fatal(err)
		}
		profs[n] = p
	}
	f.Fuzz(func(t *testing.T, K, N, bits, block int64, b []byte, scales, zps uint8, gbq bool) {
		if len(b) == 0 || len(b) > 4096 {
			return
		}
		sc := make([]string, int(scales)+1)
		for i := range sc {
			sc[i] = "0.5"
		}
		floats := fmt.Sprint(sc)
		floats = floats[1 : len(floats)-1]
		var src string
		if gbq {
			rows := max(1, int(zps%8))
			cols := len(b) / rows
			if cols == 0 {
				return
			}
			src = fmt.Sprintf(`<ir_version: 9, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[1] x) => (float[2,%d] y)
  <uint8[%d,%d] data = raw "%s", int64[2] idx = {0, 0}, float[%d] s = {%s}>
{
  g = com.microsoft.GatherBlockQuantized <block_size: int = %d, bits: int = %d> (data, idx, s)
  y = Add (g, x)
}`, cols*2, rows, cols, hex.EncodeToString(b[:rows*cols]), len(sc), commaList(floats), block, bits)
		} else {
			zp := ""
			if zps > 0 {
				zp = fmt.Sprintf(", uint8[%d] zp = raw \"%s\"", zps, hex.EncodeToString(make([]byte, zps)))
			}
			in := "a, b, s"
			if zps > 0 {
				in += ", zp"
			}
			src = fmt.Sprintf(`<ir_version: 9, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[1,%d] a) => (float[1,%d] y)
  <uint8[%d] b = raw "%s", float[%d] s = {%s}%s>
{
  y = com.microsoft.MatMulNBits <K: int = %d, N: int = %d, bits: int = %d, block_size: int = %d> (%s)
}`, K, N, len(b), hex.EncodeToString(b), len(sc), commaList(floats), zp, K, N, bits, block, in)
		}
		mp, err := onnxtext.Parse("f", []byte(src))
		if err != nil {
			return
		}
		for _, target := range []string{"onnx-opset23", "onnx-opset17"} {
			m, err := canonical.FromProto(mp, "")
			if err != nil {
				return
			}
			if _, err := Adapt(m, profs[target], Options{}); err == nil && target == "onnx-opset23" {
				_, _ = Adapt(m, profs["onnxruntime-1.30"], Options{})
			}
			_ = m.Close()
		}
	})
}

// commaList turns fmt's space-separated list into a comma-separated one.
func commaList(s string) string {
	out := []byte(s)
	for i, c := range out {
		if c == ' ' {
			out[i] = ','
		}
	}
	return string(out)
}
