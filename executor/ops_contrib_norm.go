package executor

import (
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
)

// The normalizations ONNX Runtime adds for transformer graphs:
// SimplifiedLayerNormalization (RMS norm; ONNX Runtime registers it in the
// ai.onnx domain at version 1) and com.microsoft SkipLayerNormalization /
// SkipSimplifiedLayerNormalization (input + skip [+ bias], then layer or
// RMS norm over the last axis).

func registerContribNorm(r registry) {
	sln := r.impl("", "SimplifiedLayerNormalization")
	sln.host, sln.ortDefault = hostSimplifiedLayerNorm, true
	r.impl("com.microsoft", "SkipLayerNormalization").host = func(c *lctx) error { return hostSkipLayerNorm(c, false) }
	r.impl("com.microsoft", "SkipSimplifiedLayerNormalization").host = func(c *lctx) error { return hostSkipLayerNorm(c, true) }
}

// normRows normalizes each run of hid values of v in place: (v - mean) ·
// inv · gamma + beta, or v · inv · gamma without centring when simplified,
// inv = 1/sqrt(var + eps) (mean square for simplified). gamma and beta
// (nil: none) repeat every len(gamma) values of a row. It returns each
// row's mean (0 when simplified) and inv.
func normRows(v []float64, hid int, eps float64, simplified bool, gamma, beta []float64) (mean, inv []float64) {
	rows := len(v) / hid
	mean, inv = make([]float64, rows), make([]float64, rows)
	for r := 0; r < rows; r++ {
		row := v[r*hid : (r+1)*hid]
		m := 0.0
		if !simplified {
			for _, x := range row {
				m += x
			}
			m /= float64(hid)
		}
		ss := 0.0
		for _, x := range row {
			ss += (x - m) * (x - m)
		}
		iv := 1 / math.Sqrt(ss/float64(hid)+eps)
		mean[r], inv[r] = m, iv
		for i, x := range row {
			y := (x - m) * iv * gamma[i%len(gamma)]
			if beta != nil {
				y += beta[i%len(beta)]
			}
			row[i] = y
		}
	}
	return mean, inv
}

// normParam reads input i (a scale, bias or shift) as float64 values that
// must tile a row of hid values; nil when the input is absent.
func normParam(c *lctx, op, name string, i, hid int) ([]float64, error) {
	if !c.Has(i) {
		return nil, nil
	}
	h, err := c.H(i)
	if err != nil {
		return nil, err
	}
	v := h.f64()
	if len(v) == 0 || hid%len(v) != 0 {
		return nil, fmt.Errorf("%s: %s has shape %v; it must cover the normalized %d values", op, name, h.shape, hid)
	}
	return v, nil
}

// hostSimplifiedLayerNorm is Y = X / sqrt(mean(X², axes ≥ axis) + epsilon)
// · scale, with the optional inv_std_var output (float32 for float inputs,
// the reduced axes kept as 1).
func hostSimplifiedLayerNorm(c *lctx) error {
	xh, err := c.H(0)
	if err != nil {
		return err
	}
	ax, err := normAxis(c.AInt("axis", -1), len(xh.shape))
	if err != nil {
		return fmt.Errorf("SimplifiedLayerNormalization: %w", err)
	}
	hid := numel(xh.shape[ax:])
	if hid == 0 {
		return fmt.Errorf("SimplifiedLayerNormalization: input %v normalizes no values from axis %d", xh.shape, ax)
	}
	scale, err := normParam(c, "SimplifiedLayerNormalization", "scale", 1, hid)
	if err != nil {
		return err
	}
	if scale == nil {
		return fmt.Errorf("SimplifiedLayerNormalization: the scale input (1) is required")
	}
	y := xh.f64()
	_, inv := normRows(y, hid, float64(c.AFloat("epsilon", 1e-5)), true, scale, nil)
	c.OutH(0, fromF64(xh.dt, xh.shape, y))
	if c.HasOut(1) {
		c.OutH(1, fromF64(statType(xh.dt), statShape(xh.shape, ax), inv))
	}
	return nil
}

// statType is the type ONNX Runtime's normalizations give their mean and
// inv_std_var outputs: double for double inputs, else float.
func statType(dt canonical.DataType) canonical.DataType {
	if dt == canonical.Double {
		return dt
	}
	return canonical.Float
}

// statShape is shape with the axes from ax on set to 1.
func statShape(shape []int, ax int) []int {
	s := append([]int{}, shape...)
	for i := ax; i < len(s); i++ {
		s[i] = 1
	}
	return s
}

// hostSkipLayerNorm is com.microsoft SkipLayerNormalization (input, skip,
// gamma, beta?, bias?) or, simplified, SkipSimplifiedLayerNormalization
// (input, skip, gamma, bias?): s = input + skip (+ bias), normalized over
// the last axis; outputs output, mean?, inv_std_var? and s itself
// (input_skip_bias_sum?).
func hostSkipLayerNorm(c *lctx, simplified bool) error {
	op := "SkipLayerNormalization"
	if simplified {
		op = "SkipSimplifiedLayerNormalization"
	}
	hs, err := c.Hs(0, 1)
	if err != nil {
		return err
	}
	xh, sh := hs[0], hs[1]
	r := len(xh.shape)
	if r != 2 && r != 3 {
		return fmt.Errorf("%s: input has shape %v; it must be 2D or 3D", op, xh.shape)
	}
	hid := xh.shape[r-1]
	skip := sh.f64()
	if hid == 0 || len(skip) == 0 || len(skip)%hid != 0 || xh.size()%len(skip) != 0 || sh.shape[len(sh.shape)-1] != hid {
		return fmt.Errorf("%s: skip has shape %v; it must broadcast to the input's %v", op, sh.shape, xh.shape)
	}
	gamma, err := normParam(c, op, "gamma", 2, hid)
	if err != nil {
		return err
	}
	if gamma == nil {
		return fmt.Errorf("%s: the gamma input (2) is required", op)
	}
	var beta []float64
	biasAt := 3
	if !simplified {
		if beta, err = normParam(c, op, "beta", 3, hid); err != nil {
			return err
		}
		biasAt = 4
	}
	bias, err := normParam(c, op, "bias", biasAt, hid)
	if err != nil {
		return err
	}
	sum := xh.f64()
	for i := range sum {
		sum[i] += skip[i%len(skip)]
		if bias != nil {
			sum[i] += bias[i%len(bias)]
		}
	}
	y := append([]float64{}, sum...)
	mean, inv := normRows(y, hid, float64(c.AFloat("epsilon", 1e-12)), simplified, gamma, beta)
	c.OutH(0, fromF64(xh.dt, xh.shape, y))
	stat := statShape(xh.shape, r-1)
	if c.HasOut(1) {
		c.OutH(1, fromF64(canonical.Float, stat, mean))
	}
	if c.HasOut(2) {
		c.OutH(2, fromF64(canonical.Float, stat, inv))
	}
	if c.HasOut(3) {
		c.OutH(3, fromF64(xh.dt, xh.shape, sum))
	}
	return nil
}
