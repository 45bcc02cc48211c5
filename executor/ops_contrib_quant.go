package executor

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
)

func registerContribQuant(r registry) {
	r.impl("com.microsoft", "GatherBlockQuantized").host = hostGatherBlockQuantized
}

// unpackNibbles returns a uint8 tensor's values as 4-bit values, low
// nibble first, its last axis doubled; other tensors as they are.
func unpackNibbles(h *htensor, bits int) ([]float64, []int) {
	v := h.f64()
	if h.dt != canonical.Uint8 || bits != 4 {
		return v, h.shape
	}
	out := make([]float64, 0, 2*len(v))
	for _, b := range v {
		out = append(out, float64(int(b)&15), float64(int(b)>>4))
	}
	shape := append([]int{}, h.shape...)
	if len(shape) > 0 {
		shape[len(shape)-1] *= 2
	}
	return out, shape
}

// hostGatherBlockQuantized is com.microsoft GatherBlockQuantized: Gather
// along gather_axis of data dequantized blockwise, (q - zero_point) ·
// scale, one scale (and zero point) per block_size values along
// quantize_axis. data is int4, uint4, or uint8 holding two 4-bit values
// a byte (bits 4, low nibble first) or one (bits 8); zero points are
// stored like data, by default 0 for int4 and the middle of the range
// otherwise. The output has the scales' type.
func hostGatherBlockQuantized(c *lctx) error {
	const op = "GatherBlockQuantized"
	hs, err := c.Hs(0, 1, 2)
	if err != nil {
		return err
	}
	dh, ih, sh := hs[0], hs[1], hs[2]
	bits, block := int(c.AInt("bits", 4)), int(c.AInt("block_size", 128))
	switch {
	case dh.dt != canonical.Int4 && dh.dt != canonical.Uint4 && dh.dt != canonical.Uint8:
		return fmt.Errorf("%s: data is %v; it must be int4, uint4 or uint8", op, dh.dt)
	case dh.dt == canonical.Uint8 && bits != 4 && bits != 8, dh.dt != canonical.Uint8 && bits != 4:
		return fmt.Errorf("%s: bits %d does not fit %v data", op, bits, dh.dt)
	case block < 16 || block&(block-1) != 0:
		return fmt.Errorf("%s: block_size %d: want a power of 2, at least 16", op, block)
	}
	data, shape := unpackNibbles(dh, bits)
	r := len(shape)
	gAx, err := normAxis(c.AInt("gather_axis", 0), r)
	if err != nil {
		return fmt.Errorf("%s: gather_axis: %w", op, err)
	}
	qAx, err := normAxis(c.AInt("quantize_axis", 1), r)
	if err != nil {
		return fmt.Errorf("%s: quantize_axis: %w", op, err)
	}
	blocks := append([]int{}, shape...)
	blocks[qAx] = (shape[qAx] + block - 1) / block
	if !shapeEq(sh.shape, blocks) {
		return fmt.Errorf("%s: scales have shape %v; data %v in blocks of %d along axis %d needs %v", op, sh.shape, shape, block, qAx, blocks)
	}
	scales := sh.f64()
	zp := float64(int(1) << (bits - 1))
	if dh.dt == canonical.Int4 {
		zp = 0
	}
	var zps []float64
	if c.Has(3) {
		zh, err := c.H(3)
		if err != nil {
			return err
		}
		if zh.dt != dh.dt {
			return fmt.Errorf("%s: zero_points are %v, data %v: want the same type", op, zh.dt, dh.dt)
		}
		var zs []int
		if zps, zs = unpackNibbles(zh, bits); !shapeEq(zs, blocks) {
			return fmt.Errorf("%s: zero_points hold %v values, the scales %v", op, zs, blocks)
		}
	}
	inner := numel(shape[qAx+1:])
	w := make([]float64, len(data))
	for i, q := range data {
		o, rest := i/(shape[qAx]*inner), i%(shape[qAx]*inner)
		bi := (o*blocks[qAx]+rest/inner/block)*inner + rest%inner
		z := zp
		if zps != nil {
			z = zps[bi]
		}
		w[i] = (q - z) * scales[bi]
	}
	y, err := gatherAxis(fromF64(sh.dt, shape, w), ih, gAx)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	c.OutH(0, y)
	return nil
}
