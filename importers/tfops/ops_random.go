package tfops

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
)

// randomOps are the random and complex/spectral ops, and FakeQuant;
// opTable merges them in.
//
// Random ops map to ONNX random ops of the same distribution; their
// values cannot match the source's (another generator), so verification
// compares distributions for them.
//
// Complex tensors (complex64) are held as float tensors with a last axis
// of 2 (real, imaginary), as ONNX DFT reads and writes them.
func randomOps() map[string]opFunc {
	return map[string]opFunc{
		"RandomUniform":           (*converter).randomUniform,
		"RandomStandardNormal":    (*converter).randomNormal,
		"TruncatedNormal":         (*converter).randomNormal,
		"RandomUniformInt":        (*converter).randomUniformInt,
		"Multinomial":             (*converter).multinomial,
		"Complex":                 (*converter).complexOp,
		"Real":                    (*converter).realImag,
		"Imag":                    (*converter).realImag,
		"ComplexAbs":              (*converter).complexAbs,
		"FFT":                     (*converter).fft,
		"IFFT":                    (*converter).fft,
		"RFFT":                    (*converter).rfft,
		"IRFFT":                   (*converter).irfft,
		"FakeQuantWithMinMaxVars": (*converter).fakeQuant,
		"FakeQuantWithMinMaxArgs": (*converter).fakeQuant,
	}
}

func (c *converter) attrF(n *Node, name string, def float32) float32 {
	if a, ok := n.Attrs[name]; ok {
		return a.F
	}
	return def
}

// shaped is a float tensor of zeros of the shape given by data input 0 (a
// template for the *Like random ops).
func (c *converter) shaped(n *Node) (string, int, error) {
	s, sv, err := c.int64In(n, 0, "shape")
	if err != nil {
		return "", 0, err
	}
	return c.b.Op("Expand", n.Name+"_template", []string{c.b.Scalar("zero", 0), s}), shapeRank(sv), nil
}

func (c *converter) randomUniform(n *Node) error {
	tmpl, rank, err := c.shaped(n)
	if err != nil {
		return err
	}
	dt, err := c.outType(n, "dtype", canonical.Float)
	if err != nil {
		return err
	}
	// TF's RandomUniform draws in [0, 1); TF.js's op list adds minval
	// and maxval attrs.
	lo, hi := c.attrF(n, "minval", 0), c.attrF(n, "maxval", 1)
	if _, ok := n.Attrs["maxval"]; !ok {
		hi = 1
	}
	y := c.b.Op("RandomUniformLike", n.Name, []string{tmpl}, canonical.IntAttr("dtype", int64(dt)), canonical.FloatAttr("low", lo), canonical.FloatAttr("high", hi))
	c.setNHWC(n, 0, y, rank, dt)
	return nil
}

// randomNormal maps RandomStandardNormal and TruncatedNormal; a truncated
// draw (within two standard deviations) takes the first of three normal
// draws inside the bounds (the chance that none is, 1e-4, is clipped).
func (c *converter) randomNormal(n *Node) error {
	tmpl, rank, err := c.shaped(n)
	if err != nil {
		return err
	}
	dt, err := c.outType(n, "dtype", canonical.Float)
	if err != nil {
		return err
	}
	mean, std := c.attrF(n, "mean", 0), float32(1)
	if n.Op == "TruncatedNormal" {
		mean = c.attrF(n, "means", 0)
		if _, ok := n.Attrs["stddev"]; ok {
			std = c.attrF(n, "stddev", 1)
		}
	}
	var y string
	if n.Op == "TruncatedNormal" {
		// Three independent draws from one op (separate ops with the
		// same seed would draw the same values).
		s, _, err := c.int64In(n, 0, "shape")
		if err != nil {
			return err
		}
		t3 := c.b.Op("Expand", n.Name+"_template3", []string{c.b.Scalar("zero", 0), c.b.Op("Concat", n.Name+"_shape3", []string{c.b.Ints("three", 3), s}, canonical.IntAttr("axis", 0))})
		draws := c.b.Op("RandomNormalLike", n.Name+"_draws", []string{t3}, canonical.IntAttr("dtype", int64(canonical.Float)))
		draw := func(k int64) string {
			return c.b.Op("Gather", fmt.Sprintf("%s_draw%d", n.Name, k), []string{draws, c.b.I64("k", nil, []int64{k})}, canonical.IntAttr("axis", 0))
		}
		two := c.b.Scalar("two", 2)
		pick := func(a, b, what string) string {
			in := c.b.Op("LessOrEqual", n.Name+"_"+what+"_in", []string{c.b.Op("Abs", n.Name+"_"+what+"_abs", []string{a}), two})
			return c.b.Op("Where", n.Name+"_"+what, []string{in, a, b})
		}
		last := c.b.Op("Clip", n.Name+"_clipped", []string{draw(2), c.b.Scalar("minus_two", -2), two})
		y = pick(draw(0), pick(draw(1), last, "second"), "first")
	} else {
		y = c.b.Op("RandomNormalLike", n.Name+"_draw", []string{tmpl}, canonical.IntAttr("dtype", int64(canonical.Float)))
	}
	if mean != 0 || std != 1 {
		y = c.b.Op("Add", n.Name+"_shifted", []string{c.b.Op("Mul", n.Name+"_scaled", []string{y, c.b.Scalar("std", std)}), c.b.Scalar("mean", mean)})
	}
	if dt != canonical.Float {
		y = c.castTo(n.Name, y, dt)
	} else {
		y = c.b.Op("Identity", n.Name, []string{y})
	}
	c.setNHWC(n, 0, y, rank, dt)
	return nil
}

// randomUniformInt is floor(u·(maxval − minval)) + minval for u uniform in
// [0, 1); minval and maxval are inputs 1 and 2 (TF) or attrs (TF.js).
func (c *converter) randomUniformInt(n *Node) error {
	tmpl, rank, err := c.shaped(n)
	if err != nil {
		return err
	}
	var lo, hi string
	dt := canonical.Int32
	if dataInputs(n) >= 3 {
		lv, ln, err := c.nhwcIn(n, 1)
		if err != nil {
			return err
		}
		_, hn, err := c.nhwcIn(n, 2)
		if err != nil {
			return err
		}
		dt = lv.dt
		lo, hi = c.castTo(n.Name+"_lo", ln, canonical.Float), c.castTo(n.Name+"_hi", hn, canonical.Float)
	} else {
		lo, hi = c.b.Scalar("minval", float32(c.attrInt(n, "minval", 0))), c.b.Scalar("maxval", float32(c.attrInt(n, "maxval", 0)))
	}
	u := c.b.Op("RandomUniformLike", n.Name+"_u", []string{tmpl}, canonical.IntAttr("dtype", int64(canonical.Float)))
	v := c.b.Op("Add", n.Name+"_v", []string{c.b.Op("Floor", n.Name+"_floor", []string{c.b.Op("Mul", n.Name+"_span", []string{u, c.b.Op("Sub", n.Name+"_range", []string{hi, lo})})}), lo})
	c.setNHWC(n, 0, c.castTo(n.Name, v, dt), rank, dt)
	return nil
}

func (c *converter) multinomial(n *Node) error {
	_, ln, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	sv, err := c.in(n, 1)
	if err != nil {
		return err
	}
	k, err := constInts(sv, "num_samples")
	if err != nil {
		return err
	}
	if len(k) != 1 || k[0] < 1 || k[0] > 1<<24 {
		return fmt.Errorf("num_samples %v", k)
	}
	dt, err := c.outType(n, "output_dtype", canonical.Int64)
	if err != nil {
		return err
	}
	if dt != canonical.Int32 && dt != canonical.Int64 {
		dt = canonical.Int64
	}
	c.setNHWC(n, 0, c.b.Op("Multinomial", n.Name, []string{ln}, canonical.IntAttr("sample_size", k[0]), canonical.IntAttr("dtype", int64(dt))), 2, dt)
	return nil
}

// complexIn returns data input i as a complex value ([..., 2]), a real
// one given a zero imaginary part.
func (c *converter) complexIn(n *Node, i int) (*value, string, error) {
	v, vn, err := c.nhwcIn(n, i)
	if err != nil {
		return nil, "", err
	}
	if v.cplx {
		return v, vn, nil
	}
	re := c.b.Op("Unsqueeze", n.Name+"_re", []string{vn, c.b.Ints("last", -1)})
	return v, c.b.Op("Concat", n.Name+"_complex", []string{re, c.b.Op("Mul", n.Name+"_im", []string{re, c.like(0, re)})}, canonical.IntAttr("axis", -1)), nil
}

func (c *converter) complexOp(n *Node) error {
	r, rn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	_, in, err := c.nhwcIn(n, 1)
	if err != nil {
		return err
	}
	// Broadcast the parts against each other first.
	zero := c.b.Op("Mul", n.Name+"_zero", []string{c.b.Op("Add", n.Name+"_b", []string{rn, in}), c.like(0, rn)})
	re := c.b.Op("Unsqueeze", n.Name+"_re", []string{c.b.Op("Add", n.Name+"_rb", []string{rn, zero}), c.b.Ints("last", -1)})
	im := c.b.Op("Unsqueeze", n.Name+"_im", []string{c.b.Op("Add", n.Name+"_ib", []string{in, zero}), c.b.Ints("last", -1)})
	c.set(n, 0, &value{nhwc: c.b.Op("Concat", n.Name, []string{re, im}, canonical.IntAttr("axis", -1)), rank: r.rank, dt: r.dt, cplx: true})
	return nil
}

func (c *converter) realImag(n *Node) error {
	v, vn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	if !v.cplx {
		if n.Op == "Real" {
			c.setNHWC(n, 0, c.b.Op("Identity", n.Name, []string{vn}), v.rank, v.dt)
		} else {
			c.setNHWC(n, 0, c.b.Op("Mul", n.Name, []string{vn, c.like(0, vn)}), v.rank, v.dt)
		}
		return nil
	}
	k := int64(0)
	if n.Op == "Imag" {
		k = 1
	}
	c.setNHWC(n, 0, c.b.Op("Gather", n.Name, []string{vn, c.b.I64("part", nil, []int64{k})}, canonical.IntAttr("axis", -1)), v.rank, v.dt)
	return nil
}

func (c *converter) complexAbs(n *Node) error {
	v, vn, err := c.complexIn(n, 0)
	if err != nil {
		return err
	}
	sq := c.b.Op("ReduceSum", n.Name+"_sq", []string{c.b.Op("Mul", n.Name+"_sq2", []string{vn, vn}), c.b.Ints("last", -1)}, canonical.IntAttr("keepdims", 0))
	c.setNHWC(n, 0, c.b.Op("Sqrt", n.Name, []string{sq}), v.rank, v.dt)
	return nil
}

// dftAxis is the ONNX DFT axis of the innermost TF axis of a complex
// value of rank r.
func dftAxis(r int) (int64, error) {
	if r < 1 {
		return 0, errors.New("an FFT needs an input of known rank ≥ 1")
	}
	return int64(r - 1), nil
}

func (c *converter) fft(n *Node) error {
	v, vn, err := c.complexIn(n, 0)
	if err != nil {
		return err
	}
	ax, err := dftAxis(v.rank)
	if err != nil {
		return err
	}
	inv := int64(0)
	if n.Op == "IFFT" {
		inv = 1
	}
	y := c.b.Op("DFT", n.Name, []string{vn}, canonical.IntAttr("axis", ax), canonical.IntAttr("inverse", inv))
	c.set(n, 0, &value{nhwc: y, rank: v.rank, dt: v.dt, cplx: true})
	return nil
}

func (c *converter) fftLength(n *Node) (int64, error) {
	lv, err := c.in(n, 1)
	if err != nil {
		return 0, err
	}
	l, err := constInts(lv, "fft_length")
	if err != nil {
		return 0, err
	}
	if len(l) != 1 || l[0] < 1 || l[0] > 1<<24 {
		return 0, fmt.Errorf("fft_length %v: one length (1-D FFTs only)", l)
	}
	return l[0], nil
}

func (c *converter) rfft(n *Node) error {
	v, vn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	ax, err := dftAxis(v.rank)
	if err != nil {
		return err
	}
	l, err := c.fftLength(n)
	if err != nil {
		return err
	}
	x := c.b.Op("Unsqueeze", n.Name+"_real", []string{vn, c.b.Ints("last", -1)})
	y := c.b.Op("DFT", n.Name, []string{x, c.b.I64("fft_length", nil, []int64{l})}, canonical.IntAttr("axis", ax), canonical.IntAttr("onesided", 1))
	c.set(n, 0, &value{nhwc: y, rank: v.rank, dt: v.dt, cplx: true})
	return nil
}

// irfft rebuilds the full Hermitian spectrum of length n from its first
// n/2+1 values (X[n−k] = conj X[k]), runs the inverse DFT and keeps the
// real part.
func (c *converter) irfft(n *Node) error {
	v, vn, err := c.complexIn(n, 0)
	if err != nil {
		return err
	}
	ax, err := dftAxis(v.rank)
	if err != nil {
		return err
	}
	l, err := c.fftLength(n)
	if err != nil {
		return err
	}
	half := l/2 + 1
	// Trim or zero-pad the input to half values along the axis.
	pads := make([]int64, 2*(v.rank+1))
	pads[v.rank+1+int(ax)] = half
	h := c.b.Op("Slice", n.Name+"_half", []string{c.b.Op("Pad", n.Name+"_padded", []string{vn, c.b.Ints("pads", pads...)}), c.b.Ints("zero", 0), c.b.Ints("half", half), c.b.Ints("axis", ax)})
	parts := []string{h}
	if rest := l - half; rest > 0 {
		mirror := c.b.Op("Slice", n.Name+"_mirror", []string{h, c.b.Ints("start", rest), c.b.Ints("end", 0), c.b.Ints("axis", ax), c.b.Ints("back", -1)})
		conj := c.b.Op("Mul", n.Name+"_conj", []string{mirror, c.b.F32("conj", []int64{2}, []float32{1, -1})})
		parts = append(parts, conj)
	}
	full := c.b.Op("Concat", n.Name+"_full", parts, canonical.IntAttr("axis", ax))
	inv := c.b.Op("DFT", n.Name+"_inverse", []string{full}, canonical.IntAttr("axis", ax), canonical.IntAttr("inverse", 1))
	c.setNHWC(n, 0, c.b.Op("Gather", n.Name, []string{inv, c.b.I64("part", nil, []int64{0})}, canonical.IntAttr("axis", -1)), v.rank, v.dt)
	return nil
}

// fakeQuant maps FakeQuantWithMinMaxVars (min, max constant inputs) and
// FakeQuantWithMinMaxArgs (attrs) with TF's nudged range:
// floor((clamp(x) − nmin)/scale + ½)·scale + nmin.
func (c *converter) fakeQuant(n *Node) error {
	x, xn, err := c.nhwcIn(n, 0)
	if err != nil {
		return err
	}
	lo, hi := float64(c.attrF(n, "min", -6)), float64(c.attrF(n, "max", 6))
	if dataInputs(n) >= 3 {
		for i, p := range []*float64{&lo, &hi} {
			v, err := c.in(n, 1+i)
			if err != nil {
				return err
			}
			if v.konst == nil {
				return errors.New("min and max must be constants")
			}
			f, err := v.konst.Float32s()
			if err != nil || len(f) != 1 {
				return errors.New("min and max must be scalars (per-channel ranges are not supported)")
			}
			*p = float64(f[0])
		}
	}
	bits := c.attrInt(n, "num_bits", 8)
	if bits < 2 || bits > 16 || !(lo <= 0 && hi >= 0 && hi > lo) {
		return fmt.Errorf("range [%g, %g] with %d bits", lo, hi, bits)
	}
	qmin, qmax := 0.0, float64(int64(1)<<bits-1)
	if c.attrBool(n, "narrow_range") {
		qmin = 1
	}
	scale := (hi - lo) / (qmax - qmin)
	zp := math.Round(qmin - lo/scale)
	zp = math.Min(math.Max(zp, qmin), qmax)
	nmin, nmax := float32((qmin-zp)*scale), float32((qmax-zp)*scale)
	s := float32(scale)
	cl := c.b.Op("Clip", n.Name+"_clamped", []string{xn, c.b.Scalar("nudged_min", nmin), c.b.Scalar("nudged_max", nmax)})
	q := c.b.Op("Floor", n.Name+"_q", []string{c.b.Op("Add", n.Name+"_half", []string{c.b.Op("Div", n.Name+"_steps", []string{c.b.Op("Sub", n.Name+"_off", []string{cl, c.b.Scalar("nudged_min", nmin)}), c.b.Scalar("scale", s)}), c.b.Scalar("half", 0.5)})})
	y := c.b.Op("Add", n.Name, []string{c.b.Op("Mul", n.Name+"_deq", []string{q, c.b.Scalar("scale", s)}), c.b.Scalar("nudged_min", nmin)})
	c.setNHWC(n, 0, y, x.rank, x.dt)
	return nil
}

// MetaRandomOutputs is the metadata_props key that names, comma
// separated, the graph outputs whose values depend on a random op (a
// RandomUniform, RandomNormal or Multinomial node, in the graph or in a
// subgraph of a node they flow through). Their values cannot match the
// source's, whose generator differs: verification compares their
// distributions, or skips them, for that stated reason.
const MetaRandomOutputs = "onnxconv.random_outputs"

var randomONNXOps = map[string]bool{"RandomUniform": true, "RandomUniformLike": true, "RandomNormal": true,
	"RandomNormalLike": true, "Multinomial": true, "Bernoulli": true}

// hasRandom reports whether g or a subgraph of one of its nodes holds a
// random op.
func hasRandom(g *canonical.Graph, depth int) bool {
	if g == nil || depth > maxFuncDepth+4 {
		return false
	}
	for _, n := range g.Nodes {
		if randomONNXOps[n.OpType] {
			return true
		}
		for _, a := range n.Attributes {
			if hasRandom(a.G, depth+1) {
				return true
			}
		}
	}
	return false
}

// markRandomOutputs records MetaRandomOutputs on m (nodes are in
// topological order, as the converter adds them).
func markRandomOutputs(m *canonical.Model) {
	g := m.Graph
	if !hasRandom(g, 0) {
		return
	}
	tainted := map[*canonical.Value]bool{}
	for _, n := range g.Nodes {
		t := randomONNXOps[n.OpType]
		for _, in := range n.Inputs {
			t = t || (in != nil && tainted[in])
		}
		for _, a := range n.Attributes {
			t = t || hasRandom(a.G, 1)
		}
		if t {
			for _, o := range n.Outputs {
				if o != nil {
					tainted[o] = true
				}
			}
		}
	}
	var names []string
	for _, o := range g.Outputs {
		if tainted[o] {
			names = append(names, o.Name)
		}
	}
	if len(names) > 0 {
		m.MetadataProps = append(m.MetadataProps, canonical.StringPair{Key: MetaRandomOutputs, Value: strings.Join(names, ",")})
	}
}
