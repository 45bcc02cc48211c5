package executor

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor/kernels"
)

// matMulNBitsF32 runs com.microsoft MatMulNBits on kernels.MatMulNBits
// (float32, or with A quantized to int8 for accuracy_level 4) when A, the
// scales and the bias are float32 and B is uint8; it
// reports false, nil otherwise (hostMatMulNBits' float64 path runs). zp
// is hostMatMulNBits' zero point per row and block.
func matMulNBitsF32(c *lctx, ah, bh, sh *htensor, K, N, bits, block int, zp func(n, kb int) float64) (bool, error) {
	if c.e.kern == nil || ah.dt != canonical.Float || sh.dt != canonical.Float || bh.dt != canonical.Uint8 {
		return false, nil
	}
	var bias []float32
	if c.Has(5) {
		hb, err := c.H(5)
		if err != nil {
			return false, err
		}
		if hb.dt != canonical.Float {
			return false, nil
		}
		if bias, _ = f32(hb); len(bias) != N {
			return false, fmt.Errorf("MatMulNBits: bias has %d values, N is %d", len(bias), N)
		}
	}
	a, _ := f32(ah)
	scales, _ := f32(sh)
	b, ok := bh.data.([]uint8)
	if !ok {
		return false, nil
	}
	// accuracy_level 4 lets a runtime quantize A to int8 by B's blocks:
	// ONNX Runtime does, and the kernel then computes its numbers
	// (kernels.NBits.Int8A, where the shape allows).
	p := kernels.NBits{K: K, N: N, Bits: bits, Block: block, B: b, Scales: scales, Int8A: c.AInt("accuracy_level", 0) == 4}
	if c.Has(3) {
		zh, err := c.H(3)
		if err != nil {
			return false, err
		}
		if z, ok := zh.data.([]uint8); ok && zh.dt == canonical.Uint8 {
			p.ZeroPoints = z // checked by hostMatMulNBits: N rows of packed values
			if p.Int8A {
				// Unpacked once for the model's runs: the int8 path
				// reads them in place (kind 'Z').
				ent, err := c.packed(3, packTag{kind: 'Z', k: K, n: N, m: bits, ld: block}, func(*htensor) (packEntry, error) {
					return packEntry{zeros: p.ZeroFloats()}, nil
				})
				if err != nil {
					return false, err
				}
				p.ZeroF = ent.zeros
			}
		} else {
			p.Zero = func(n, kb int) float32 { return float32(zp(n, kb)) }
		}
	}
	out := append(append([]int{}, ah.shape[:len(ah.shape)-1]...), N)
	y := c.newH(canonical.Float, out)
	yd, _ := f32(y)
	m := len(a) / K
	if err := c.e.kern.MatMulNBits(p, a, m, yd); err != nil {
		return false, err
	}
	if bias != nil {
		for r := 0; r < m; r++ {
			kernels.AddSuffix(yd[r*N:(r+1)*N], bias, yd[r*N:(r+1)*N])
		}
	}
	c.OutH(0, y)
	return true, nil
}
