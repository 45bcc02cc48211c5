package executor

import (
	"fmt"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor/kernels"
)

// LSTM on the kernels: per direction one SGEMM for the input products of
// every step (X·Wᵀ, [seq·batch, 4H]) plus both biases, then per step one
// SGEMM of the state against the recurrent weights (packed once, added
// into that step's gates) and a fused cell (kernels.LSTMCell) updating c
// and h in place: no allocation per step. The common case only: float32,
// default activations, no clip, no peepholes, no input_forget, full
// sequences; everything else runs the reference kernel (rnnRun) or the
// lowering.

func okLSTM(c *lctx) bool {
	if c.NIn() < 3 || !okAllHost(c) || !allF32(c, 4) {

		return false
	}
	for _, i := range []int{5, 6} {
		if c.Has(i) && c.DT(i) != canonical.Float {
			return false
		}
	}
	if c.HasAttr("clip") || c.AInt("input_forget", 0) != 0 {
		return false
	}
	if c.Has(7) && numel(c.Shape(7)) != 0 {
		return false // peepholes
	}
	sp, err := rnnParse(c, "LSTM")
	if err != nil || sp.batch < 1 || sp.seq < 1 {
		return false
	}
	for k, a := range sp.acts {
		if a.name != []string{"sigmoid", "tanh", "tanh"}[k%3] {
			return false
		}
	}
	if c.Has(4) && numel(c.Shape(4)) != 0 {
		lens := c.in(4).h.i64()
		for _, l := range lens {
			if l != int64(sp.seq) {
				return false
			}
		}
	}
	return true
}

func kernelLSTM(c *lctx) error {
	sp, err := rnnParse(c, "LSTM")
	if err != nil {
		return err
	}
	hx, err := c.H(0)
	if err != nil {
		return err
	}
	hw, err := c.H(1)
	if err != nil {
		return err
	}
	hr, err := c.H(2)
	if err != nil {
		return err
	}
	H, seq, batch, in, dirs := sp.H, sp.seq, sp.batch, sp.in, sp.dirs
	G := 4 * H
	x, _ := f32(hx)
	if sp.layout == 1 { // [batch, seq, in] → [seq, batch, in]
		t := make([]float32, len(x))
		kernels.Transpose(x, hx.shape, []int{1, 0, 2}, t)
		x = t
	}
	w, _ := f32(hw)
	r, _ := f32(hr)
	opt := func(i int) ([]float32, error) {
		if !c.Has(i) || numel(c.Shape(i)) == 0 {
			return nil, nil
		}
		h, err := c.H(i)
		if err != nil {
			return nil, err
		}
		return f32(h)
	}
	bias, err := opt(3)
	if err != nil {
		return err
	}
	h0, err := opt(5)
	if err != nil {
		return err
	}
	c0, err := opt(6)
	if err != nil {
		return err
	}
	pw, err := c.packed(1, packTag{kind: 'W', trans: true, k: in, n: G, m: dirs}, func(h *htensor) (packEntry, error) {
		d, _ := f32(h)
		return packLSTMW(d, dirs, in, G)
	})
	if err != nil {
		return fmt.Errorf("LSTM: %w", err)
	}
	if pw.convs == nil {
		if pw, err = packLSTMW(w, dirs, in, G); err != nil {
			return fmt.Errorf("LSTM: %w", err)
		}
	}
	pr, err := c.packed(2, packTag{kind: 'R', trans: true, k: H, n: G, m: dirs}, func(h *htensor) (packEntry, error) {
		d, _ := f32(h)
		return transposeLSTMR(d, dirs, H), nil
	})
	if err != nil {
		return fmt.Errorf("LSTM: %w", err)
	}
	if pr.rows == nil {
		pr = transposeLSTMR(r, dirs, H)
	}
	// Outputs in layout 0: Y [seq, dirs, batch, H], Y_h and Y_c [dirs, batch, H].
	y := make([]float32, seq*dirs*batch*H)
	yh := make([]float32, dirs*batch*H)
	yc := make([]float32, dirs*batch*H)
	gx := make([]float32, seq*batch*G)
	bsum := make([]float32, G)
	for d := 0; d < dirs; d++ {
		if err := c.e.kern.SgemmPacked(false, true, seq*batch, G, in, 1, x, in, nil, nil, in, pw.convs[d], 0, gx, G); err != nil {
			return fmt.Errorf("LSTM: %w", err)
		}
		if bias != nil {
			for j := range bsum {
				bsum[j] = bias[d*2*G+j] + bias[d*2*G+G+j]
			}
			kernels.AddSuffix(gx, bsum, gx)
		}
		hs, cs := yh[d*batch*H:(d+1)*batch*H], yc[d*batch*H:(d+1)*batch*H]
		if h0 != nil {
			copyState(hs, h0, sp.layout, d, dirs, batch, H)
		}
		if c0 != nil {
			copyState(cs, c0, sp.layout, d, dirs, batch, H)
		}
		for k := 0; k < seq; k++ {
			t := k
			if sp.dir == "reverse" || d == 1 {
				t = seq - 1 - k
			}
			g := gx[t*batch*G : (t+1)*batch*G]
			kernels.AddVecMat(hs, pr.rows[d], g, H, G)
			kernels.LSTMCell(g, cs, hs, H)
			copy(y[(t*dirs+d)*batch*H:(t*dirs+d+1)*batch*H], hs)
		}
	}
	ys, ss := []int{seq, dirs, batch, H}, []int{dirs, batch, H}
	if sp.layout == 1 {
		ty, th, tc := make([]float32, len(y)), make([]float32, len(yh)), make([]float32, len(yc))
		kernels.Transpose(y, ys, []int{2, 0, 1, 3}, ty)
		kernels.Transpose(yh, ss, []int{1, 0, 2}, th)
		kernels.Transpose(yc, ss, []int{1, 0, 2}, tc)
		y, yh, yc = ty, th, tc
	}
	c.OutH(0, &htensor{dt: canonical.Float, shape: sp.yShape, data: y})
	c.OutH(1, &htensor{dt: canonical.Float, shape: sp.stateShape, data: yh})
	c.OutH(2, &htensor{dt: canonical.Float, shape: sp.stateShape, data: yc})
	return nil
}

// packLSTMW packs each direction's input weights W[d] ([4H, in]) as the
// transposed B operand of X·W[d]ᵀ.
func packLSTMW(w []float32, dirs, in, G int) (packEntry, error) {
	var res []*kernels.Packed
	for d := 0; d < dirs; d++ {
		p, err := kernels.PackB(true, in, G, w[d*G*in:(d+1)*G*in], in)
		if err != nil {
			return packEntry{}, err
		}
		res = append(res, p)
	}
	return packEntry{convs: res}, nil
}

// transposeLSTMR returns each direction's recurrent weights R[d] ([4H, H])
// transposed ([H, 4H]) for kernels.AddVecMat.
func transposeLSTMR(r []float32, dirs, hidden int) packEntry {
	G := 4 * hidden
	res := make([][]float32, dirs)
	for d := range res {
		res[d] = make([]float32, G*hidden)
		kernels.Transpose(r[d*G*hidden:(d+1)*G*hidden], []int{G, hidden}, []int{1, 0}, res[d])
	}
	return packEntry{rows: res}
}

// copyState copies direction d of an initial state (layout 0:
// [dirs, batch, H]; layout 1: [batch, dirs, H]) into dst ([batch, H]).
func copyState(dst, src []float32, layout, d, dirs, batch, hidden int) {
	for b := 0; b < batch; b++ {
		o := (d*batch + b) * hidden
		if layout == 1 {
			o = (b*dirs + d) * hidden
		}
		copy(dst[b*hidden:(b+1)*hidden], src[o:o+hidden])
	}
}
