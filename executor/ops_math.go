package executor

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gomlx/gomlx/pkg/core/graph"

	"github.com/onnxconv/onnxconv/canonical"
)

// Unary math, activations (with Shrink, Swish), Cast, Clip, BitCast.

type unaryDef struct {
	g func(c *lctx, x *graph.Node) *graph.Node // nil: host only
	f func(c *lctx) func(float64) float64
	// intOK: also defined on integers (computed exactly).
	intOK bool
	i     func(int64) int64
}

func fixed(f func(float64) float64) func(*lctx) func(float64) float64 {
	return func(*lctx) func(float64) float64 { return f }
}

func g1(f func(*graph.Node) *graph.Node) func(*lctx, *graph.Node) *graph.Node {
	return func(_ *lctx, x *graph.Node) *graph.Node { return f(x) }
}

func registerMath(r registry) {
	sigmoid := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	defs := map[string]unaryDef{
		"Abs": {g: g1(graph.Abs), f: fixed(math.Abs), intOK: true, i: func(v int64) int64 {
			if v < 0 {
				return -v
			}
			return v
		}},
		"Neg":   {g: g1(graph.Neg), f: fixed(func(v float64) float64 { return -v }), intOK: true, i: func(v int64) int64 { return -v }},
		"Sign":  {g: g1(signNaN), f: fixed(func(v float64) float64 { return sgn(v) }), intOK: true, i: func(v int64) int64 { return int64(sgn(float64(v))) }},
		"Exp":   {g: g1(graph.Exp), f: fixed(math.Exp)},
		"Log":   {g: g1(graph.Log), f: fixed(math.Log)},
		"Sqrt":  {g: g1(graph.Sqrt), f: fixed(math.Sqrt)},
		"Floor": {g: g1(graph.Floor), f: fixed(math.Floor)},
		"Ceil":  {g: g1(graph.Ceil), f: fixed(math.Ceil)},
		"Round": {g: g1(roundEven), f: fixed(math.RoundToEven)},
		"Sin":   {g: g1(graph.Sin), f: fixed(math.Sin)},
		"Cos":   {g: g1(graph.Cos), f: fixed(math.Cos)},
		"Tan":   {g: g1(func(x *graph.Node) *graph.Node { return graph.Div(graph.Sin(x), graph.Cos(x)) }), f: fixed(math.Tan)},
		"Asin":  {f: fixed(math.Asin)},
		"Acos":  {f: fixed(math.Acos)},
		"Atan":  {f: fixed(math.Atan)},
		"Sinh": {g: g1(func(x *graph.Node) *graph.Node {
			return graph.MulScalar(graph.Sub(graph.Exp(x), graph.Exp(graph.Neg(x))), 0.5)
		}), f: fixed(math.Sinh)},
		"Cosh": {g: g1(func(x *graph.Node) *graph.Node {
			return graph.MulScalar(graph.Add(graph.Exp(x), graph.Exp(graph.Neg(x))), 0.5)
		}), f: fixed(math.Cosh)},
		"Asinh":      {f: fixed(math.Asinh)},
		"Acosh":      {f: fixed(math.Acosh)},
		"Atanh":      {f: fixed(math.Atanh)},
		"Tanh":       {g: g1(graph.Tanh), f: fixed(math.Tanh)},
		"Sigmoid":    {g: g1(graph.Logistic), f: fixed(sigmoid)},
		"Erf":        {g: g1(graph.Erf), f: fixed(math.Erf)},
		"Reciprocal": {g: g1(graph.Reciprocal), f: fixed(func(v float64) float64 { return 1 / v })},
		"Relu": {g: g1(func(x *graph.Node) *graph.Node { return graph.Max(x, scalarLike(x, 0)) }), f: fixed(func(v float64) float64 { return math.Max(v, 0) }), intOK: true, i: func(v int64) int64 {
			if v < 0 {
				return 0
			}
			return v
		}},
		"Softplus": {g: g1(softplusNode), f: fixed(softplus)},
		"Softsign": {g: g1(func(x *graph.Node) *graph.Node { return graph.Div(x, graph.OnePlus(graph.Abs(x))) }), f: fixed(func(v float64) float64 { return v / (1 + math.Abs(v)) })},
		"Mish": {g: g1(func(x *graph.Node) *graph.Node {
			return graph.Mul(x, graph.Tanh(softplusNode(x)))
		}), f: fixed(func(v float64) float64 { return v * math.Tanh(softplus(v)) })},
		"LeakyRelu": {g: func(c *lctx, x *graph.Node) *graph.Node {
			a := float64(c.AFloat("alpha", 0.01))
			return graph.Where(graph.LessThan(x, scalarLike(x, 0)), graph.MulScalar(x, a), x)
		}, f: func(c *lctx) func(float64) float64 {
			a := float64(c.AFloat("alpha", 0.01))
			return func(v float64) float64 {
				if v < 0 {
					return a * v
				}
				return v
			}
		}},
		"Elu": {g: func(c *lctx, x *graph.Node) *graph.Node {
			a := float64(c.AFloat("alpha", 1))
			return graph.Where(graph.LessThan(x, scalarLike(x, 0)), graph.MulScalar(graph.Expm1(x), a), x)
		}, f: func(c *lctx) func(float64) float64 {
			a := float64(c.AFloat("alpha", 1))
			return func(v float64) float64 {
				if v < 0 {
					return a * math.Expm1(v)
				}
				return v
			}
		}},
		"Celu": {f: func(c *lctx) func(float64) float64 {
			a := float64(c.AFloat("alpha", 1))
			return func(v float64) float64 { return math.Max(0, v) + math.Min(0, a*math.Expm1(v/a)) }
		}},
		"Selu": {g: func(c *lctx, x *graph.Node) *graph.Node {
			a := float64(c.AFloat("alpha", 1.67326319217681884765625))
			gm := float64(c.AFloat("gamma", 1.05070102214813232421875))
			return graph.MulScalar(graph.Where(graph.LessThan(x, scalarLike(x, 0)), graph.MulScalar(graph.Expm1(x), a), x), gm)
		}, f: func(c *lctx) func(float64) float64 {
			a := float64(c.AFloat("alpha", 1.67326319217681884765625))
			gm := float64(c.AFloat("gamma", 1.05070102214813232421875))
			return func(v float64) float64 {
				if v <= 0 {
					return gm * a * math.Expm1(v)
				}
				return gm * v
			}
		}},
		"ThresholdedRelu": {f: func(c *lctx) func(float64) float64 {
			a := float64(c.AFloat("alpha", 1))
			return func(v float64) float64 {
				if v > a {
					return v
				}
				return 0
			}
		}},
		"HardSigmoid": {g: func(c *lctx, x *graph.Node) *graph.Node {
			a, b := float64(c.AFloat("alpha", 0.2)), float64(c.AFloat("beta", 0.5))
			return graph.ClipScalar(graph.AddScalar(graph.MulScalar(x, a), b), 0, 1)
		}, f: func(c *lctx) func(float64) float64 {
			a, b := float64(c.AFloat("alpha", 0.2)), float64(c.AFloat("beta", 0.5))
			return func(v float64) float64 { return math.Max(0, math.Min(1, a*v+b)) }
		}},
		"HardSwish": {g: g1(func(x *graph.Node) *graph.Node {
			return graph.Mul(x, graph.ClipScalar(graph.AddScalar(graph.MulScalar(x, 1.0/6), 0.5), 0, 1))
		}), f: fixed(func(v float64) float64 { return v * math.Max(0, math.Min(1, v/6+0.5)) })},
		"Gelu": {g: func(c *lctx, x *graph.Node) *graph.Node {
			if c.AStr("approximate", "none") == "tanh" {
				inner := graph.MulScalar(graph.Add(x, graph.MulScalar(graph.Mul(x, graph.Mul(x, x)), 0.044715)), math.Sqrt(2/math.Pi))
				return graph.Mul(graph.MulScalar(x, 0.5), graph.OnePlus(graph.Tanh(inner)))
			}
			return graph.Mul(graph.MulScalar(x, 0.5), graph.OnePlus(graph.Erf(graph.MulScalar(x, 1/math.Sqrt2))))
		}, f: func(c *lctx) func(float64) float64 {
			if c.AStr("approximate", "none") == "tanh" {
				return func(v float64) float64 {
					return 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
				}
			}
			return func(v float64) float64 { return 0.5 * v * (1 + math.Erf(v/math.Sqrt2)) }
		}},
	}
	for op, d := range defs {
		d := d
		if d.g != nil {
			r.lower(func(c *lctx) error {
				dt := c.DT(0)
				if !isFloatType(dt) && !(d.intOK && isIntType(dt)) {
					return errUseHost
				}
				c.Out(0, d.g(c, c.X(0)), dt)
				return nil
			}, op)
		}
		r.host(func(c *lctx) error {
			h, err := c.H(0)
			if err != nil {
				return err
			}
			if isIntType(h.dt) && d.i != nil {
				v := h.i64()
				for k := range v {
					v[k] = d.i(v[k])
				}
				c.OutH(0, fromI64(h.dt, h.shape, v))
				return nil
			}
			if !isFloatType(h.dt) {
				return fmt.Errorf("type %v is not supported", h.dt)
			}
			f := d.f(c)
			v := h.f64()
			for k := range v {
				v[k] = f(v[k])
			}
			c.OutH(0, fromF64(h.dt, h.shape, v))
			return nil
		}, op)
	}
	r.lower(lowerIsNaN, "IsNaN")
	r.lower(lowerIsInf, "IsInf")
	r.lower(lowerPRelu, "PRelu")
	r.lower(lowerClip, "Clip")
	r.host(hostClip, "Clip")
	r.lower(lowerCast, "Cast", "CastLike")
	r.host(hostCast, "Cast", "CastLike")
	r.lower(func(c *lctx) error { c.Out(0, c.X(0), c.DT(0)); return nil }, "Identity")
	r.impl("", "Identity").host = func(c *lctx) error {
		c.OutSlot(0, c.ins[0])
		return nil
	}
	r.impl("", "Identity").preferHost = true
	r.host(hostBitCast, "BitCast")
	r.host(hostShrink, "Shrink")
	r.host(hostSwish, "Swish")
	r.host(hostSwiGLU, "SwiGLU")
}

// softplus is log(1+e^v) without overflow: e^v is infinite above 709
// (88 in float32) where softplus(v) is v (ONNX Runtime computes it so).
func softplus(v float64) float64 {
	return math.Max(v, 0) + math.Log1p(math.Exp(-math.Abs(v)))
}

// softplusNode is softplus on GoMLX nodes (GoMLX's own Softplus gives -Inf
// for -Inf, not 0).
func softplusNode(x *graph.Node) *graph.Node {
	return graph.Add(graph.Max(x, scalarLike(x, 0)), graph.Log1p(graph.Exp(graph.Neg(graph.Abs(x)))))
}

// signNaN is Sign with NaN kept (GoMLX's Sign gives 0 for NaN; the spec
// and ONNX Runtime give NaN).
func signNaN(x *graph.Node) *graph.Node {
	if !x.DType().IsFloat() {
		return graph.Sign(x)
	}
	return graph.Where(graph.IsNaN(x), x, graph.Sign(x))
}

func sgn(v float64) float64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return v
}

// roundEven rounds half to even (GoMLX Round rounds half away from zero).
func roundEven(x *graph.Node) *graph.Node {
	r := graph.Round(x)
	frac := graph.Sub(x, graph.Floor(x))
	half := graph.Equal(frac, scalarLike(x, 0.5))
	return graph.Where(half, graph.MulScalar(graph.Round(graph.MulScalar(x, 0.5)), 2), r)
}

func lowerIsNaN(c *lctx) error {
	if !isFloatType(c.DT(0)) {
		return errUseHost
	}
	c.Out(0, graph.IsNaN(c.X(0)), canonical.Bool)
	return nil
}

func lowerIsInf(c *lctx) error {
	if !isFloatType(c.DT(0)) {
		return errUseHost
	}
	x := c.X(0)
	pos, neg := c.AInt("detect_positive", 1) == 1, c.AInt("detect_negative", 1) == 1
	inf := graph.LogicalAnd(graph.LogicalNot(graph.IsFinite(x)), graph.LogicalNot(graph.IsNaN(x)))
	zero := scalarLike(x, 0)
	switch {
	case pos && !neg:
		inf = graph.LogicalAnd(inf, graph.GreaterThan(x, zero))
	case neg && !pos:
		inf = graph.LogicalAnd(inf, graph.LessThan(x, zero))
	case !pos && !neg:
		inf = graph.LogicalAnd(inf, graph.NotEqual(x, x))
	}
	c.Out(0, inf, canonical.Bool)
	return nil
}

func lowerPRelu(c *lctx) error {
	dt := c.DT(0)
	slope := c.X(1)
	xsh, ssh := c.Shape(0), c.Shape(1)
	if _, err := bcastShape(xsh, ssh); err != nil && len(ssh) == 1 && len(xsh) > 1 && ssh[0] == xsh[1] {
		// opset < 7 models: a per-channel slope along axis 1
		slope = channelVec(slope, len(xsh))
	}
	xs := bcastNodes(c.X(0), slope)
	c.Out(0, graph.Where(graph.LessThan(xs[0], scalarLike(xs[0], 0)), graph.Mul(xs[0], xs[1]), xs[0]), dt)
	return nil
}

// clipDefaults are Clip's bounds when min or max is not given: the
// lowest and the largest finite value of dt (numeric_limits<T>::lowest()
// and max(), as the spec and ONNX Runtime have them: ±Inf becomes the
// largest finite value), ±Inf (no bound) for the integer types.
func clipDefaults(dt canonical.DataType) (lo, hi float64) {
	switch dt {
	case canonical.Float:
		return -math.MaxFloat32, math.MaxFloat32
	case canonical.Double:
		return -math.MaxFloat64, math.MaxFloat64
	case canonical.Float16:
		return -65504, 65504
	case canonical.BFloat16:
		return -3.3895313892515355e38, 3.3895313892515355e38
	}
	return math.Inf(-1), math.Inf(1)
}

func lowerClip(c *lctx) error {
	dt := c.DT(0)
	if _, ok := gomlxDType(dt); !ok {
		return errUseHost
	}
	x := c.X(0)
	lo, hi := clipDefaults(dt)
	if c.ver < 11 {
		lo, hi = float64(c.AFloat("min", float32(lo))), float64(c.AFloat("max", float32(hi)))
	}
	if c.Has(1) && c.ver >= 11 {
		x = graph.Max(x, graph.ConvertDType(c.X(1), x.DType()))
	} else if !math.IsInf(lo, -1) {
		x = graph.Max(x, scalarLike(x, lo))
	}
	if c.Has(2) && c.ver >= 11 {
		x = graph.Min(x, graph.ConvertDType(c.X(2), x.DType()))
	} else if !math.IsInf(hi, 1) {
		x = graph.Min(x, scalarLike(x, hi))
	}
	c.Out(0, x, dt)
	return nil
}

func hostClip(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	lo, hi := clipDefaults(h.dt)
	if c.ver < 11 {
		lo, hi = float64(c.AFloat("min", float32(lo))), float64(c.AFloat("max", float32(hi)))
	} else {
		if c.Has(1) {
			m, err := c.H(1)
			if err != nil {
				return err
			}
			lo = m.f64()[0]
		}
		if c.Has(2) {
			m, err := c.H(2)
			if err != nil {
				return err
			}
			hi = m.f64()[0]
		}
	}
	v := h.f64()
	for k := range v {
		// min > max gives max (the spec, ONNX Runtime); NaN stays NaN
		v[k] = math.Min(hi, math.Max(lo, v[k]))
	}
	if isIntType(h.dt) {
		iv := make([]int64, len(v))
		for k := range v {
			iv[k] = int64(v[k])
		}
		c.OutH(0, fromI64(h.dt, h.shape, iv))
		return nil
	}
	c.OutH(0, fromF64(h.dt, h.shape, v))
	return nil
}

func castTarget(c *lctx) canonical.DataType {
	if c.n.OpType == "CastLike" {
		return c.DT(1)
	}
	return canonical.DataType(c.AInt("to", 0))
}

func lowerCast(c *lctx) error {
	from, to := c.DT(0), castTarget(c)
	_, ok1 := gomlxDType(from)
	_, ok2 := gomlxDType(to)
	if !ok1 || !ok2 || storageOf(to) == kF32 && to != canonical.Float || storageOf(from) == kF32 && from != canonical.Float && !isFloatType(to) ||
		to == canonical.Int4 || to == canonical.Uint4 || to == canonical.Int2 || to == canonical.Uint2 {
		return errUseHost
	}
	x := c.X(0)
	if isFloatType(from) && isIntType(to) {
		// ONNX casts truncate toward zero; out-of-range is undefined.
		x = graph.ConvertDType(x, gdt(to))
	} else {
		x = graph.ConvertDType(x, gdt(to))
	}
	c.Out(0, x, to)
	return nil
}

func hostCast(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	to := castTarget(c)
	sat := c.AInt("saturate", 1) == 1
	out, err := castH(h, to, sat, c.AStr("round_mode", "up"))
	if err != nil {
		return err
	}
	c.OutH(0, out)
	return nil
}

// castH converts a host tensor to another type, as ONNX Cast does.
func castH(h *htensor, to canonical.DataType, saturate bool, roundMode string) (*htensor, error) {
	if h.dt == to {
		return h, nil
	}
	if to == canonical.String {
		out := newH(to, h.shape)
		s := out.data.([]string)
		switch {
		case isFloatType(h.dt):
			for k, v := range h.f64() {
				s[k] = formatFloat(v, h.dt)
			}
		case h.dt == canonical.Bool:
			for k, v := range h.data.([]bool) {
				if v {
					s[k] = "1"
				} else {
					s[k] = "0"
				}
			}
		default:
			for k, v := range h.i64() {
				s[k] = strconv.FormatInt(v, 10)
			}
		}
		return out, nil
	}
	if h.dt == canonical.String {
		src := h.data.([]string)
		v := make([]float64, len(src))
		for k, s := range src {
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil {
				switch strings.ToLower(strings.TrimSpace(s)) {
				case "inf", "+inf", "infinity", "+infinity":
					f = math.Inf(1)
				case "-inf", "-infinity":
					f = math.Inf(-1)
				case "nan", "+nan", "-nan":
					f = math.NaN()
				default:
					return nil, fmt.Errorf("cannot cast %q to %v", s, to)
				}
			}
			v[k] = f
		}
		return castF64(v, h.shape, to, saturate, roundMode), nil
	}
	if isIntType(h.dt) || h.dt == canonical.Bool {
		if (isIntType(to) || to == canonical.Bool) && canonical.ElemBits(to) >= 8 {
			return fromI64(to, h.shape, h.i64()), nil
		}
	}
	return castF64(h.f64(), h.shape, to, saturate, roundMode), nil
}

func castF64(v []float64, shape []int, to canonical.DataType, saturate bool, roundMode string) *htensor {
	switch to {
	case canonical.Float8E4M3FN, canonical.Float8E4M3FNUZ, canonical.Float8E5M2, canonical.Float8E5M2FNUZ:
		out := newH(to, shape)
		tab := f8Table(to)
		s := out.data.([]float32)
		for k, x := range v {
			s[k] = tab[f8Encode(to, float32(x), saturate)]
		}
		return out
	case canonical.Int4, canonical.Uint4, canonical.Int2, canonical.Uint2:
		// integers keep their low bits (two's complement), as int8 casts do
		iv := make([]int64, len(v))
		for k, x := range v {
			w := int64(x)
			switch to {
			case canonical.Int4:
				w = int64(int8(uint8(w)<<4) >> 4)
			case canonical.Uint4:
				w &= 0xF
			case canonical.Int2:
				w = int64(int8(uint8(w)<<6) >> 6)
			default:
				w &= 0x3
			}
			iv[k] = w
		}
		return fromI64(to, shape, iv)
	case canonical.Float8E8M0:
		out := newH(to, shape)
		s := out.data.([]float32)
		for k, x := range v {
			s[k] = f8Decode(to, e8m0Encode(x, saturate, roundMode))
		}
		return out
	case canonical.Bool:
		out := newH(to, shape)
		for k, x := range v {
			out.data.([]bool)[k] = x != 0
		}
		return out
	}
	if to == canonical.Float16 || to == canonical.BFloat16 || to == canonical.Float {
		// round once from float64
		out := newH(to, shape)
		s := out.data.([]float32)
		for k, x := range v {
			s[k] = float32(x)
		}
		out.roundToType()
		return out
	}
	return fromF64(to, shape, v)
}

func formatFloat(v float64, dt canonical.DataType) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "INF"
	case math.IsInf(v, -1):
		return "-INF"
	}
	bits := 32
	if dt == canonical.Double {
		bits = 64
	}
	s := strconv.FormatFloat(v, 'g', -1, bits)
	// numpy-like exponent format: 1e+20 stays, "1e-05" style
	if i := strings.IndexAny(s, "e"); i >= 0 {
		mant, exp := s[:i], s[i+1:]
		sign := "+"
		if exp[0] == '-' || exp[0] == '+' {
			if exp[0] == '-' {
				sign = "-"
			}
			exp = exp[1:]
		}
		if len(exp) < 2 {
			exp = "0" + exp
		}
		s = mant + "e" + sign + exp
	}
	return s
}

// e8m0Encode converts x to a FLOAT8E8M0 code (a power of two).
func e8m0Encode(x float64, saturate bool, mode string) uint8 {
	if math.IsNaN(x) {
		return 0xFF
	}
	if math.IsInf(x, 0) {
		if saturate {
			return 0xFE
		}
		return 0xFF
	}
	if x <= 0 {
		if saturate {
			return 0
		}
		return 0xFF
	}
	fr, e := math.Frexp(x) // x = fr * 2^e, fr in [0.5,1)
	e--                    // x = (2fr) * 2^e, 2fr in [1,2)
	m := 2 * fr
	if m != 1 {
		switch mode {
		case "up":
			e++
		case "nearest":
			if m >= 1.5 {
				e++
			}
		}
	}
	code := e + 127
	if code < 0 || code > 254 {
		if !saturate {
			return 0xFF
		}
		if code < 0 {
			return 0
		}
		return 0xFE
	}
	return uint8(code)
}

// hostBitCast reinterprets the little-endian bytes as another type of the
// same bit width.
func hostBitCast(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	to := canonical.DataType(c.AInt("to", 0))
	if canonical.ElemBits(to) != canonical.ElemBits(h.dt) || to == canonical.String || h.dt == canonical.String {
		return fmt.Errorf("BitCast from %v to %v: bit widths differ", h.dt, to)
	}
	t, err := h.toCanonical("")
	if err != nil {
		return err
	}
	b, err := t.Bytes()
	if err != nil {
		return err
	}
	out, err := fromCanonical(canonical.NewTensor("", to, t.Dims, b))
	if err != nil {
		return err
	}
	c.OutH(0, out)
	return nil
}

func hostShrink(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	l, b := float64(c.AFloat("lambd", 0.5)), float64(c.AFloat("bias", 0))
	v := h.f64()
	for k, x := range v {
		switch {
		case x < -l:
			v[k] = x + b
		case x > l:
			v[k] = x - b
		default:
			v[k] = 0
		}
	}
	c.OutH(0, fromF64(h.dt, h.shape, v))
	return nil
}

// hostSwiGLU is SwiGLU-28: Swish_alpha(A) * B, A and B of one shape (the
// operator does not broadcast).
func hostSwiGLU(c *lctx) error {
	ah, err := c.H(0)
	if err != nil {
		return err
	}
	bh, err := c.H(1)
	if err != nil {
		return err
	}
	if !shapeEq(ah.shape, bh.shape) {
		return fmt.Errorf("SwiGLU inputs A %v and B %v must have the same shape (no broadcasting)", ah.shape, bh.shape)
	}
	a := float64(c.AFloat("alpha", 1))
	v, w := ah.f64(), bh.f64()
	for k, x := range v {
		v[k] = x / (1 + math.Exp(-a*x)) * w[k]
	}
	c.OutH(0, fromF64(ah.dt, ah.shape, v))
	return nil
}

func hostSwish(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	a := float64(c.AFloat("alpha", 1))
	v := h.f64()
	for k, x := range v {
		v[k] = x / (1 + math.Exp(-a*x))
	}
	c.OutH(0, fromF64(h.dt, h.shape, v))
	return nil
}
