package torchscript

import (
	"math"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
	fts "github.com/onnxconv/onnxconv/formats/torchscript"
)

// complexT is a complex tensor as two real ones (aten::stft with
// return_complex): only abs, real, imag and view_as_real read it.
type complexT struct {
	re, im *tensor
}

// stft maps aten::stft(input, n_fft, hop_length, win_length, window,
// normalized, onesided, return_complex) (torch.functional.stft has
// already padded a centered input) to two Conv1d of the windowed DFT
// basis: re[k,n] = w[n]·cos(2πkn/N), im[k,n] = −w[n]·sin(2πkn/N), stride
// hop. The window is multiplied into the basis in the graph.
func (c *conv) stft(p fts.Pos, args []value, kw map[string]value) (value, error) {
	arg := func(i int, k string) value {
		if i < len(args) {
			return args[i]
		}
		return kw[k]
	}
	x, ok := arg(0, "self").(*tensor)
	nfft, ok2 := arg(1, "n_fft").(int64)
	if !ok || !ok2 || nfft <= 0 || nfft > 1<<14 || (x.rank() != 1 && x.rank() != 2) {
		return nil, c.errAt(p, "stft of %s with n_fft %s", describe(arg(0, "self")), describe(arg(1, "n_fft")))
	}
	hop := nfft / 4
	if h, ok := arg(2, "hop_length").(int64); ok {
		hop = h
	}
	win := nfft
	if w, ok := arg(3, "win_length").(int64); ok {
		win = w
	}
	if hop <= 0 || win <= 0 || win > nfft {
		return nil, c.errAt(p, "stft hop %d, win_length %d", hop, win)
	}
	normalized, _ := arg(5, "normalized").(bool)
	onesided := true
	if b, ok := arg(6, "onesided").(bool); ok {
		onesided = b
	}
	complexOut, _ := arg(7, "return_complex").(bool)
	L := x.dims[x.rank()-1]
	if L < nfft {
		return nil, c.errAt(p, "stft of %d samples with n_fft %d", L, nfft)
	}
	F := nfft
	if onesided {
		F = nfft/2 + 1
	}
	frames := (L-nfft)/hop + 1
	re := make([]float32, F*nfft)
	im := make([]float32, F*nfft)
	scale := 1.0
	if normalized {
		scale = 1 / math.Sqrt(float64(nfft))
	}
	for k := int64(0); k < F; k++ {
		for n := int64(0); n < nfft; n++ {
			a := 2 * math.Pi * float64(k*n%nfft) / float64(nfft)
			re[k*nfft+n] = float32(math.Cos(a) * scale)
			im[k*nfft+n] = float32(-math.Sin(a) * scale)
		}
	}
	basisRe := &tensor{name: c.b.F32("dft_re", []int64{F, 1, nfft}, re), dt: canonical.Float, dims: []int64{F, 1, nfft}}
	basisIm := &tensor{name: c.b.F32("dft_im", []int64{F, 1, nfft}, im), dt: canonical.Float, dims: []int64{F, 1, nfft}}
	var window *tensor
	if w, ok := arg(4, "window").(*tensor); ok {
		window = c.cast(w, canonical.Float)
	}
	if window == nil && win < nfft {
		ones := make([]float32, win)
		for i := range ones {
			ones[i] = 1
		}
		window = &tensor{name: c.b.F32("window", []int64{win}, ones), dt: canonical.Float, dims: []int64{win}}
	}
	if window != nil {
		if window.rank() != 1 || window.dims[0] != win {
			return nil, c.errAt(p, "stft window of shape %v, win_length %d", window.dims, win)
		}
		if win < nfft { // centered in n_fft, as torch pads it
			left := (nfft - win) / 2
			window = c.out("Pad", "window", []string{window.name, c.b.Ints("pads", left, nfft-win-left)}, window.dt, []int64{nfft})
		}
		basisRe = c.out("Mul", "dft_re_w", []string{basisRe.name, window.name}, canonical.Float, basisRe.dims)
		basisIm = c.out("Mul", "dft_im_w", []string{basisIm.name, window.name}, canonical.Float, basisIm.dims)
	}
	in := x
	if x.rank() == 1 {
		in = c.reshape(x, []int64{1, 1, L})
	} else {
		in = c.reshape(x, []int64{x.dims[0], 1, L})
	}
	in = c.cast(in, canonical.Float)
	conv := func(b *tensor, base string) *tensor {
		dims := []int64{in.dims[0], F, frames}
		y := c.out("Conv", base, []string{in.name, b.name}, canonical.Float, dims,
			canonical.IntsAttr("kernel_shape", []int64{nfft}...), canonical.IntsAttr("strides", []int64{hop}...))
		if x.rank() == 1 {
			y = c.reshape(y, []int64{F, frames})
		}
		return y
	}
	z := &complexT{re: conv(basisRe, "stft_re"), im: conv(basisIm, "stft_im")}
	if complexOut {
		return z, nil
	}
	v, _, err := c.complexAsReal(p, z)
	return v, err
}

func (c *conv) complexAbs(z *complexT) *tensor {
	r2 := c.out("Mul", "re2", []string{z.re.name, z.re.name}, z.re.dt, z.re.dims)
	i2 := c.out("Mul", "im2", []string{z.im.name, z.im.name}, z.re.dt, z.re.dims)
	s := c.out("Add", "abs2", []string{r2.name, i2.name}, z.re.dt, z.re.dims)
	return c.out("Sqrt", "abs", []string{s.name}, z.re.dt, z.re.dims)
}

// complexAsReal is view_as_real: [..., 2] with the real part first.
func (c *conv) complexAsReal(p fts.Pos, z *complexT) (value, bool, error) {
	dims := append(slices.Clone(z.re.dims), 1)
	re := c.reshape(z.re, dims)
	im := c.reshape(z.im, dims)
	out := slices.Clone(dims)
	out[len(out)-1] = 2
	return c.out("Concat", "view_as_real", []string{re.name, im.name}, z.re.dt, out, canonical.IntAttr("axis", int64(len(dims)-1))), true, nil
}
