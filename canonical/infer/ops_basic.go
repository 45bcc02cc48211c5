package infer

import (
	"math"

	"github.com/onnxconv/onnxconv/canonical"
)

type handler func(c *nctx)

// buildHandlers maps "domain:OpType" to its shape rule.
func buildHandlers() map[string]handler {
	h := map[string]handler{}
	reg := func(f handler, ops ...string) {
		for _, op := range ops {
			h[":"+op] = f
		}
	}
	reg(sameShape, "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Cos", "Cosh",
		"Elu", "Erf", "Exp", "Floor", "HardSigmoid", "HardSwish", "Hardmax", "IsInf", "IsNaN",
		"LeakyRelu", "Log", "LogSoftmax", "LpNormalization", "LRN", "MeanVarianceNormalization",
		"Mish", "Reciprocal", "Relu", "Round", "Selu", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh",
		"Softmax", "Softplus", "Softsign", "Sqrt", "Tan", "Tanh", "ThresholdedRelu", "Celu", "Gelu",
		"Swish", "SwiGLU", "Clip", "Trilu", "CumSum", "CumProd", "ReverseSequence", "InstanceNormalization",
		"GroupNormalization", "RMSNormalization", "RotaryEmbedding", "Scatter", "ScatterElements",
		"ScatterND", "TensorScatter", "BitwiseNot", "RegexFullMatch", "Binarizer", "Dropout",
		"StringNormalizer", "PRelu")
	reg(identity, "Identity")
	reg(neg, "Neg")
	reg(notOp, "Not")
	reg(broadcastOp, "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Equal", "Less", "Greater",
		"LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "BitShift", "BitwiseAnd", "BitwiseOr",
		"BitwiseXor", "Max", "Min", "Sum", "Mean", "Where", "StringConcat")
	reg(cast, "Cast")
	reg(castLike, "CastLike")
	reg(bitCast, "BitCast")
	reg(shapeOp, "Shape")
	reg(sizeOp, "Size")
	reg(reshape, "Reshape")
	reg(flatten, "Flatten")
	reg(squeeze, "Squeeze")
	reg(unsqueeze, "Unsqueeze")
	reg(transpose, "Transpose")
	reg(concat, "Concat")
	reg(split, "Split")
	reg(slice, "Slice")
	reg(gather, "Gather")
	reg(gatherElements, "GatherElements")
	reg(gatherND, "GatherND")
	reg(tile, "Tile")
	reg(expand, "Expand")
	reg(constantOfShape, "ConstantOfShape")
	reg(rangeOp, "Range")
	reg(pad, "Pad")
	reg(resize, "Resize")
	reg(upsample, "Upsample")
	reg(topK, "TopK")
	reg(oneHot, "OneHot")
	reg(depthToSpace, "DepthToSpace")
	reg(spaceToDepth, "SpaceToDepth")
	reg(eyeLike, "EyeLike")
	reg(constant, "Constant")
	reg(nonZero, "NonZero")
	reg(compress, "Compress")
	reg(unique, "Unique")
	reg(centerCropPad, "CenterCropPad")
	reg(randomLike, "RandomUniformLike", "RandomNormalLike", "Bernoulli")
	reg(randomGen, "RandomUniform", "RandomNormal")
	reg(multinomial, "Multinomial")
	registerNN(reg)
	registerCtrl(reg)
	registerMisc(h, reg)
	return h
}

func sameShape(c *nctx) {
	s := c.shp(0)
	for i := range c.out {
		c.setShape(i, s)
	}
	if c.n.OpType == "Dropout" && len(c.out) > 1 {
		c.set(1, canonical.Bool, s)
	}
	unaryConst(c)
}

// unaryConst evaluates a few unary ops on constant inputs.
func unaryConst(c *nctx) {
	v := c.cv(0)
	if v == nil {
		return
	}
	var f func(float64) float64
	switch c.n.OpType {
	case "Ceil":
		f = math.Ceil
	case "Floor":
		f = math.Floor
	case "Round":
		f = math.RoundToEven
	case "Abs":
		f = math.Abs
	case "Sqrt":
		f = math.Sqrt
	case "Relu":
		f = func(x float64) float64 { return math.Max(x, 0) }
	case "Sign":
		f = func(x float64) float64 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return x
		}
	default:
		return
	}
	if v.ints != nil {
		if c.n.OpType == "Abs" || c.n.OpType == "Relu" || c.n.OpType == "Sign" {
			c.setConst(0, elemwiseInts(v.dt, func(d []dim) dim {
				if !d[0].Known {
					return dim{}
				}
				return kd(int64(f(float64(d[0].Value))))
			}, v))
		}
		return
	}
	c.setConst(0, elemwiseFloats(v.dt, func(x []float64) float64 { return f(x[0]) }, v))
}

func identity(c *nctx) {
	if t := c.inType(0); t != nil {
		c.setType(0, t)
	}
	c.setConst(0, c.cv(0))
}

func neg(c *nctx) {
	sameShape(c)
	if v := c.cv(0); v != nil {
		if v.ints != nil {
			c.setConst(0, elemwiseInts(v.dt, func(d []dim) dim { return dimSub(kd(0), d[0]) }, v))
		} else {
			c.setConst(0, elemwiseFloats(v.dt, func(x []float64) float64 { return -x[0] }, v))
		}
	}
}

func notOp(c *nctx) {
	sameShape(c)
	if v := c.cv(0); v != nil && v.ints != nil {
		c.setConst(0, elemwiseInts(canonical.Bool, func(d []dim) dim {
			if !d[0].Known {
				return dim{}
			}
			return kd(b2i(d[0].Value == 0))
		}, v))
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func broadcastOp(c *nctx) {
	var ss []shape
	for i := range c.n.Inputs {
		if c.has(i) {
			ss = append(ss, c.shp(i))
		}
	}
	if msg := broadcastConflict(ss...); msg != "" {
		c.fail("%s", msg)
		return
	}
	c.setShape(0, broadcast(ss...))
	// Constant evaluation.
	var vs []*cval
	for i := range c.n.Inputs {
		v := c.cv(i)
		if v == nil {
			return
		}
		vs = append(vs, v)
	}
	if len(vs) == 0 {
		return
	}
	odt := c.outDT(0)
	op := c.n.OpType
	allInt := true
	for _, v := range vs {
		if v.ints == nil {
			allInt = false
		}
	}
	if op == "Where" {
		if len(vs) != 3 || vs[0].ints == nil {
			return
		}
		if vs[1].ints != nil && vs[2].ints != nil {
			c.setConst(0, elemwiseInts(odt, func(d []dim) dim {
				if !d[0].Known {
					return dim{}
				}
				if d[0].Value != 0 {
					return d[1]
				}
				return d[2]
			}, vs...))
		}
		return
	}
	if allInt {
		var f func(d []dim) dim
		cmp := func(p func(a, b int64) bool) func(d []dim) dim {
			return func(d []dim) dim {
				if d[0].Known && d[1].Known {
					return kd(b2i(p(d[0].Value, d[1].Value)))
				}
				if op == "Equal" && d[0].Param != "" && d[0].Param == d[1].Param {
					return kd(1)
				}
				return dim{}
			}
		}
		switch op {
		case "Add", "Sum":
			f = func(d []dim) dim {
				r := d[0]
				for _, x := range d[1:] {
					r = dimAdd(r, x)
				}
				return r
			}
		case "Sub":
			f = func(d []dim) dim { return dimSub(d[0], d[1]) }
		case "Mul":
			f = func(d []dim) dim { return dimMul(d[0], d[1]) }
		case "Div":
			f = func(d []dim) dim {
				if d[0].Known && d[1].Known && d[1].Value != 0 {
					return kd(d[0].Value / d[1].Value) // integer division truncates
				}
				return dimDiv(d[0], d[1])
			}
		case "Mod":
			f = func(d []dim) dim {
				if d[0].Known && d[1].Known && d[1].Value != 0 {
					m := d[0].Value % d[1].Value
					if c.attrI("fmod", 0) == 0 && m != 0 && (m < 0) != (d[1].Value < 0) {
						m += d[1].Value
					}
					return kd(m)
				}
				return dim{}
			}
		case "Max", "Min":
			f = func(d []dim) dim {
				r := d[0]
				for _, x := range d[1:] {
					if !r.Known || !x.Known {
						return dim{}
					}
					if (op == "Max") == (x.Value > r.Value) {
						r = x
					}
				}
				return r
			}
		case "Equal":
			f = cmp(func(a, b int64) bool { return a == b })
		case "Less":
			f = cmp(func(a, b int64) bool { return a < b })
		case "Greater":
			f = cmp(func(a, b int64) bool { return a > b })
		case "LessOrEqual":
			f = cmp(func(a, b int64) bool { return a <= b })
		case "GreaterOrEqual":
			f = cmp(func(a, b int64) bool { return a >= b })
		case "And":
			f = cmp(func(a, b int64) bool { return a != 0 && b != 0 })
		case "Or":
			f = cmp(func(a, b int64) bool { return a != 0 || b != 0 })
		case "Xor":
			f = cmp(func(a, b int64) bool { return (a != 0) != (b != 0) })
		}
		if f != nil {
			c.setConst(0, elemwiseInts(odt, f, vs...))
		}
		return
	}
	var f func(x []float64) float64
	switch op {
	case "Add", "Sum":
		f = func(x []float64) float64 {
			s := 0.0
			for _, v := range x {
				s += v
			}
			return s
		}
	case "Sub":
		f = func(x []float64) float64 { return x[0] - x[1] }
	case "Mul":
		f = func(x []float64) float64 { return x[0] * x[1] }
	case "Div":
		f = func(x []float64) float64 { return x[0] / x[1] }
	case "Pow":
		f = func(x []float64) float64 { return math.Pow(x[0], x[1]) }
	}
	if f != nil && isFloatType(odt) {
		c.setConst(0, elemwiseFloats(odt, f, vs...))
	}
}

func cast(c *nctx) {
	to := canonical.DataType(c.attrI("to", 0))
	c.set(0, to, c.shp(0))
	c.setConst(0, castConst(c.cv(0), to))
}

func castConst(v *cval, to canonical.DataType) *cval {
	if v == nil {
		return nil
	}
	switch {
	case isIntType(to):
		if v.ints != nil {
			if to == canonical.Bool {
				return elemwiseInts(to, func(d []dim) dim {
					if !d[0].Known {
						return dim{}
					}
					return kd(b2i(d[0].Value != 0))
				}, v)
			}
			return intCval(to, v.shape, v.ints)
		}
		out := make([]dim, len(v.fl))
		for i, f := range v.fl {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil
			}
			if to == canonical.Bool {
				out[i] = kd(b2i(f != 0))
			} else {
				out[i] = kd(int64(f))
			}
		}
		return intCval(to, v.shape, out)
	case isFloatType(to):
		f, ok := v.floats()
		if !ok {
			return nil
		}
		return &cval{dt: to, shape: v.shape, fl: f}
	}
	return nil
}

func castLike(c *nctx) {
	to := c.dt(1)
	c.set(0, to, c.shp(0))
	if to != 0 {
		c.setConst(0, castConst(c.cv(0), to))
	}
}

func bitCast(c *nctx) {
	to := canonical.DataType(c.attrI("to", 0))
	c.set(0, to, c.shp(0))
}

func shapeOp(c *nctx) {
	s := c.shp(0)
	if !s.ranked {
		c.set(0, canonical.Int64, ranked([]dim{{}}))
		return
	}
	r := s.rank()
	start, end := 0, r
	if c.ver >= 15 {
		start = clampAxis(c.attrI("start", 0), r)
		if c.hasAttr("end") {
			end = clampAxis(c.attrI("end", int64(r)), r)
		}
	}
	if end < start {
		end = start
	}
	dims := copyDims(s.dims[start:end])
	c.set(0, canonical.Int64, knownShape([]int64{int64(len(dims))}))
	c.setConst(0, intCval(canonical.Int64, []int64{int64(len(dims))}, dims))
}

func clampAxis(a int64, r int) int {
	if a < 0 {
		a += int64(r)
	}
	if a < 0 {
		a = 0
	}
	if a > int64(r) {
		a = int64(r)
	}
	return int(a)
}

func sizeOp(c *nctx) {
	c.set(0, canonical.Int64, ranked([]dim{}))
	if s := c.shp(0); s.ranked {
		p := prod(s.dims)
		c.setConst(0, intCval(canonical.Int64, []int64{}, []dim{p}))
	}
}

// maxRank bounds the rank of shapes built from shape inputs whose values
// are unknown (a hostile model could claim any length).
const maxRank = 256

// shapeFrom reads a 1-D shape input: the (partial) dims, or only its
// length when the values are unknown.
func (c *nctx) shapeFrom(i int) (shape, bool) {
	if v := c.cv(i); v != nil && v.ints != nil {
		return ranked(copyDims(v.ints)), true
	}
	if v := c.cv(i); v != nil && v.fl != nil {
		k, _ := v.allKnown()
		return knownShape(k), true
	}
	s := c.shp(i)
	if s.ranked && s.rank() == 1 && s.dims[0].Known && s.dims[0].Value >= 0 && s.dims[0].Value <= maxRank {
		return ranked(unknownDims(int(s.dims[0].Value))), false
	}
	return unranked, false
}

func reshape(c *nctx) {
	var target shape
	var known bool
	if c.ver < 5 {
		target, known = knownShape(c.attrInts("shape")), true
	} else {
		target, known = c.shapeFrom(1)
	}
	in := c.shp(0)
	if !target.ranked {
		c.setShape(0, unranked)
		return
	}
	if !known {
		c.setShape(0, target)
		return
	}
	allowzero := c.attrI("allowzero", 0) != 0
	out := make([]dim, len(target.dims))
	neg := -1
	for i, d := range target.dims {
		switch {
		case d.Known && d.Value == 0 && !allowzero:
			if in.ranked && i < in.rank() {
				out[i] = in.dims[i]
			}
		case d.Known && d.Value == -1:
			neg = i
		default:
			out[i] = d
		}
	}
	if neg >= 0 && in.ranked {
		others := append(copyDims(out[:neg]), out[neg+1:]...)
		out[neg] = symbolicQuotient(in.dims, others)
	}
	c.setShape(0, ranked(out))
	if v := c.cv(0); v != nil {
		if ks, ok := (&cval{ints: out}).allKnown(); ok {
			cp := *v
			cp.shape = ks
			c.setConst(0, &cp)
		}
	}
}

func flatten(c *nctx) {
	in := c.shp(0)
	if !in.ranked {
		c.setShape(0, ranked(unknownDims(2)))
		return
	}
	ax := normAxis(c.attrI("axis", 1), in.rank())
	if ax < 0 || ax > in.rank() {
		c.fail("axis %d out of range for rank %d", c.attrI("axis", 1), in.rank())
		return
	}
	c.setShape(0, ranked([]dim{prod(in.dims[:ax]), prod(in.dims[ax:])}))
}

// axesFrom returns axes from an attribute (opset < since) or input i.
func (c *nctx) axesFrom(since, i int) ([]int64, bool, bool) {
	if c.ver < since {
		if c.hasAttr("axes") {
			return c.attrInts("axes"), true, true
		}
		return nil, false, true
	}
	if !c.has(i) {
		return nil, false, true
	}
	a, ok := c.ints(i)
	return a, true, ok
}

func squeeze(c *nctx) {
	in := c.shp(0)
	axes, given, ok := c.axesFrom(13, 1)
	if !ok || !in.ranked {
		c.setShape(0, unranked)
		return
	}
	drop := map[int]bool{}
	if given {
		for _, a := range axes {
			drop[normAxis(a, in.rank())] = true
		}
	} else {
		for i, d := range in.dims {
			if !d.Known {
				c.setShape(0, unranked)
				return
			}
			if d.Value == 1 {
				drop[i] = true
			}
		}
	}
	var out []dim
	for i, d := range in.dims {
		if !drop[i] {
			out = append(out, d)
		}
	}
	if out == nil {
		out = []dim{}
	}
	c.setShape(0, ranked(out))
	c.reshapedConst(out)
}

// reshapedConst passes input 0's constant value through with new dims.
func (c *nctx) reshapedConst(out []dim) {
	if v := c.cv(0); v != nil {
		if ks, ok := (&cval{ints: out}).allKnown(); ok {
			cp := *v
			cp.shape = ks
			c.setConst(0, &cp)
		}
	}
}

func unsqueeze(c *nctx) {
	in := c.shp(0)
	axes, _, ok := c.axesFrom(13, 1)
	if !ok || !in.ranked {
		c.setShape(0, unranked)
		return
	}
	r := in.rank() + len(axes)
	ins := map[int]bool{}
	for _, a := range axes {
		ins[normAxis(a, r)] = true
	}
	out := make([]dim, 0, r)
	k := 0
	for i := 0; i < r; i++ {
		if ins[i] {
			out = append(out, kd(1))
		} else if k < in.rank() {
			out = append(out, in.dims[k])
			k++
		}
	}
	c.setShape(0, ranked(out))
	c.reshapedConst(out)
}

func transpose(c *nctx) {
	in := c.shp(0)
	if !in.ranked {
		c.setShape(0, unranked)
		return
	}
	perm := c.attrInts("perm")
	if perm == nil {
		for i := in.rank() - 1; i >= 0; i-- {
			perm = append(perm, int64(i))
		}
	}
	out := make([]dim, len(perm))
	for i, p := range perm {
		pp := normAxis(p, in.rank())
		if !validAxis(pp, in.rank()) {
			c.fail("perm %v out of range for rank %d", perm, in.rank())
			return
		}
		out[i] = in.dims[pp]
	}
	c.setShape(0, ranked(out))
}

func concat(c *nctx) {
	var ss []shape
	for i := range c.n.Inputs {
		if c.has(i) {
			ss = append(ss, c.shp(i))
		}
	}
	r := -1
	for _, s := range ss {
		if s.ranked {
			r = s.rank()
			break
		}
	}
	if r < 0 {
		c.setShape(0, unranked)
		return
	}
	ax := normAxis(c.attrI("axis", 0), r)
	out := unknownDims(r)
	sum := kd(0)
	for i := range out {
		if i != ax {
			for _, s := range ss {
				if s.ranked && s.rank() == r {
					out[i], _ = mergeDim(out[i], s.dims[i])
				}
			}
		}
	}
	for _, s := range ss {
		if !s.ranked || s.rank() != r || !validAxis(ax, r) {
			sum = dim{}
			break
		}
		sum = dimAdd(sum, s.dims[ax])
	}
	if validAxis(ax, r) {
		out[ax] = sum
	}
	c.setShape(0, ranked(out))
	// Constant 1-D concatenation.
	if r == 1 {
		var all []dim
		var dt canonical.DataType
		for i := range c.n.Inputs {
			v := c.cv(i)
			if v == nil || v.ints == nil {
				return
			}
			dt = v.dt
			all = append(all, v.ints...)
		}
		c.setConst(0, intCval(dt, []int64{int64(len(all))}, all))
	}
}

func split(c *nctx) {
	in := c.shp(0)
	nout := len(c.out)
	if !in.ranked {
		return
	}
	ax := normAxis(c.attrI("axis", 0), in.rank())
	if !validAxis(ax, in.rank()) {
		c.fail("axis out of range")
		return
	}
	var sizes []int64
	if c.ver < 13 {
		sizes = c.attrInts("split")
		if sizes == nil && c.ver >= 2 && c.has(1) {
			sizes, _ = c.ints(1)
		}
	} else if c.has(1) {
		var ok bool
		sizes, ok = c.ints(1)
		if !ok {
			for i := range c.out {
				d := copyDims(in.dims)
				d[ax] = dim{}
				c.setShape(i, ranked(d))
			}
			return
		}
	}
	d := in.dims[ax]
	defer c.splitConst(ax)
	for i := range c.out {
		o := copyDims(in.dims)
		switch {
		case sizes != nil && i < len(sizes):
			o[ax] = kd(sizes[i])
		case sizes != nil:
			o[ax] = dim{}
		case d.Known:
			n := int64(nout)
			if c.ver >= 18 && c.hasAttr("num_outputs") {
				n = c.attrI("num_outputs", n)
			}
			chunk := ceilDiv(d.Value, n)
			if i == nout-1 {
				o[ax] = kd(d.Value - chunk*int64(nout-1))
			} else {
				o[ax] = kd(chunk)
			}
		default:
			o[ax] = dim{}
		}
		c.setShape(i, ranked(o))
	}
}

// sliceDim computes the length of a slice of a dim of size n.
func sliceLen(n, start, end, step int64) int64 {
	if step == 0 {
		return 0
	}
	clamp := func(x, lo, hi int64) int64 {
		if x < lo {
			return lo
		}
		if x > hi {
			return hi
		}
		return x
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	if step > 0 {
		start, end = clamp(start, 0, n), clamp(end, 0, n)
		if end <= start {
			return 0
		}
		return ceilDiv(end-start, step)
	}
	start, end = clamp(start, 0, n-1), clamp(end, -1, n-1)
	if start <= end {
		return 0
	}
	return ceilDiv(start-end, -step)
}

func slice(c *nctx) {
	in := c.shp(0)
	if !in.ranked {
		c.setShape(0, unranked)
		return
	}
	var starts, ends, axes, steps []int64
	if c.ver < 10 {
		starts, ends, axes = c.attrInts("starts"), c.attrInts("ends"), c.attrInts("axes")
	} else {
		var ok1, ok2 bool
		starts, ok1 = c.ints(1)
		ends, ok2 = c.ints(2)
		okA, okS := true, true
		if c.has(3) {
			axes, okA = c.ints(3)
		}
		if c.has(4) {
			steps, okS = c.ints(4)
		}
		if !ok1 || !ok2 || !okA || !okS {
			out := copyDims(in.dims)
			if okA && axes != nil {
				for _, a := range axes {
					if ax := normAxis(a, in.rank()); validAxis(ax, in.rank()) {
						out[ax] = dim{}
					}
				}
			} else {
				out = unknownDims(in.rank())
			}
			c.setShape(0, ranked(out))
			return
		}
	}
	if axes == nil {
		for i := range starts {
			axes = append(axes, int64(i))
		}
	}
	out := copyDims(in.dims)
	type sl struct{ start, end, step int64 }
	per := map[int]sl{}
	for i, a := range axes {
		ax := normAxis(a, in.rank())
		if !validAxis(ax, in.rank()) || i >= len(starts) || i >= len(ends) {
			c.fail("slice axes/starts/ends do not match")
			return
		}
		step := int64(1)
		if i < len(steps) {
			step = steps[i]
		}
		per[ax] = sl{starts[i], ends[i], step}
		d := in.dims[ax]
		switch {
		case d.Known:
			out[ax] = kd(sliceLen(d.Value, starts[i], ends[i], step))
		case starts[i] == 0 && step == 1 && ends[i] >= math.MaxInt32:
			// whole dim
		default:
			out[ax] = dim{}
		}
	}
	c.setShape(0, ranked(out))
	if v := c.cv(0); v != nil && v.ints != nil && len(v.shape) == 1 {
		s, ok := per[0]
		if !ok {
			c.setConst(0, v)
			return
		}
		n := int64(len(v.ints))
		cnt := sliceLen(n, s.start, s.end, s.step)
		st := s.start
		if st < 0 {
			st += n
		}
		if s.step > 0 {
			st = max(min(st, n), 0)
		} else {
			st = max(min(st, n-1), 0)
		}
		var vals []dim
		for k := int64(0); k < cnt; k++ {
			j := st + k*s.step
			if j < 0 || j >= n {
				return
			}
			vals = append(vals, v.ints[j])
		}
		c.setConst(0, intCval(v.dt, []int64{int64(len(vals))}, vals))
	}
}

func gather(c *nctx) {
	data, idx := c.shp(0), c.shp(1)
	if !data.ranked || !idx.ranked {
		c.setShape(0, unranked)
		return
	}
	ax := normAxis(c.attrI("axis", 0), data.rank())
	if !validAxis(ax, data.rank()) {
		c.fail("axis out of range")
		return
	}
	out := copyDims(data.dims[:ax])
	out = append(out, idx.dims...)
	out = append(out, data.dims[ax+1:]...)
	c.setShape(0, ranked(out))
	dv, iv := c.cv(0), c.cv(1)
	if dv != nil && dv.ints != nil && len(dv.shape) == 1 && iv != nil {
		ix, ok := iv.allKnown()
		if !ok {
			return
		}
		n := int64(len(dv.ints))
		vals := make([]dim, len(ix))
		for k, j := range ix {
			if j < 0 {
				j += n
			}
			if j < 0 || j >= n {
				return
			}
			vals[k] = dv.ints[j]
		}
		c.setConst(0, intCval(dv.dt, append([]int64{}, iv.shape...), vals))
	}
}

func gatherElements(c *nctx) { c.setShape(0, c.shp(1)) }

func gatherND(c *nctx) {
	data, idx := c.shp(0), c.shp(1)
	if !data.ranked || !idx.ranked || idx.rank() == 0 {
		c.setShape(0, unranked)
		return
	}
	last := idx.dims[idx.rank()-1]
	b := int(c.attrI("batch_dims", 0))
	if !last.Known {
		c.setShape(0, unranked)
		return
	}
	out := copyDims(idx.dims[:idx.rank()-1])
	if b+int(last.Value) > data.rank() {
		c.fail("indices last dim %d too large", last.Value)
		return
	}
	out = append(out, data.dims[b+int(last.Value):]...)
	c.setShape(0, ranked(out))
}

func tile(c *nctx) {
	in := c.shp(0)
	reps, ok := c.ints(1)
	if !in.ranked {
		c.setShape(0, unranked)
		return
	}
	if !ok || len(reps) != in.rank() {
		c.setShape(0, ranked(unknownDims(in.rank())))
		return
	}
	out := make([]dim, in.rank())
	for i, d := range in.dims {
		out[i] = dimMul(d, kd(reps[i]))
	}
	c.setShape(0, ranked(out))
}

func expand(c *nctx) {
	in := c.shp(0)
	target, _ := c.shapeFrom(1)
	if !target.ranked || !in.ranked {
		c.setShape(0, unranked)
		return
	}
	// An unknown target element broadcasts to the input dim when that
	// dim is not 1; otherwise it stays unknown.
	r := max(in.rank(), target.rank())
	out := make([]dim, r)
	for i := 0; i < r; i++ {
		a, b := kd(1), kd(1)
		if j := i - (r - in.rank()); j >= 0 {
			a = in.dims[j]
		}
		if j := i - (r - target.rank()); j >= 0 {
			b = target.dims[j]
		}
		switch {
		case !b.Known && b.Param == "":
			if a.Known && a.Value != 1 {
				out[i] = a
			} else {
				out[i] = dim{}
			}
		default:
			out[i] = broadcastDim(a, b)
		}
	}
	c.setShape(0, ranked(out))
}

func constantOfShape(c *nctx) {
	dt := canonical.Float
	if a := c.n.Attr("value"); a != nil && a.T != nil {
		dt = a.T.DataType
	}
	s, _ := c.shapeFrom(0)
	c.set(0, dt, s)
	if ks, ok := (&cval{ints: s.dims}).allKnown(); ok && s.ranked {
		n, err := canonical.NumElements(ks)
		if err == nil && n <= 64 && isIntType(dt) {
			var fill int64
			if a := c.n.Attr("value"); a != nil && a.T != nil {
				if v := constFromTensor(a.T); v != nil && v.numel() == 1 {
					if k, ok := v.allKnown(); ok {
						fill = k[0]
					}
				}
			}
			vals := make([]dim, n)
			for i := range vals {
				vals[i] = kd(fill)
			}
			c.setConst(0, intCval(dt, ks, vals))
		}
	}
}

func rangeOp(c *nctx) {
	dt := c.dt(0)
	st, l, d := c.cv(0), c.cv(1), c.cv(2)
	if st == nil || l == nil || d == nil {
		c.set(0, dt, ranked([]dim{{}}))
		return
	}
	sf, ok1 := st.floats()
	lf, ok2 := l.floats()
	df, ok3 := d.floats()
	if !ok1 || !ok2 || !ok3 || len(sf) != 1 || len(lf) != 1 || len(df) != 1 || df[0] == 0 {
		c.set(0, dt, ranked([]dim{{}}))
		return
	}
	n := int64(math.Max(math.Ceil((lf[0]-sf[0])/df[0]), 0))
	c.set(0, dt, knownShape([]int64{n}))
	if isIntType(dt) && n <= maxConstElems {
		vals := make([]dim, n)
		for i := range vals {
			vals[i] = kd(int64(sf[0]) + int64(i)*int64(df[0]))
		}
		c.setConst(0, intCval(dt, []int64{n}, vals))
	}
}

func pad(c *nctx) {
	in := c.shp(0)
	if !in.ranked {
		c.setShape(0, unranked)
		return
	}
	var pads []int64
	ok := true
	if c.ver < 11 {
		pads = c.attrInts("pads")
		if pads == nil {
			pads = c.attrInts("paddings")
		}
	} else {
		pads, ok = c.ints(1)
	}
	r := in.rank()
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	if c.ver >= 18 && c.has(3) {
		a, okA := c.ints(3)
		if !okA {
			c.setShape(0, ranked(unknownDims(r)))
			return
		}
		axes = axes[:0]
		for _, x := range a {
			axes = append(axes, normAxis(x, r))
		}
	}
	if !ok || len(pads) != 2*len(axes) {
		c.setShape(0, ranked(unknownDims(r)))
		return
	}
	out := copyDims(in.dims)
	for i, ax := range axes {
		if !validAxis(ax, r) {
			c.fail("pad axis out of range")
			return
		}
		out[ax] = dimAdd(dimAdd(out[ax], kd(pads[i])), kd(pads[i+len(axes)]))
	}
	c.setShape(0, ranked(out))
}

func resize(c *nctx) {
	in := c.shp(0)
	if !in.ranked {
		c.setShape(0, unranked)
		return
	}
	r := in.rank()
	scalesIdx, sizesIdx := 2, 3
	if c.ver < 11 {
		scalesIdx, sizesIdx = 1, -1
	}
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	if c.ver >= 18 && c.hasAttr("axes") {
		axes = axes[:0]
		for _, a := range c.attrInts("axes") {
			axes = append(axes, normAxis(a, r))
		}
	}
	out := copyDims(in.dims)
	if sizesIdx > 0 && c.has(sizesIdx) {
		if sv := c.cv(sizesIdx); sv != nil && sv.ints != nil && sv.numel() > 0 {
			sizes := sv.ints
			if len(sizes) != len(axes) {
				c.fail("sizes has %d elements for %d axes", len(sizes), len(axes))
				return
			}
			policy := c.attrS("keep_aspect_ratio_policy", "stretch")
			if policy != "stretch" {
				ks, ok := sv.allKnown()
				if !ok {
					c.setShape(0, ranked(unknownDims(r)))
					return
				}
				scale := math.Inf(1)
				if policy == "not_smaller" {
					scale = math.Inf(-1)
				}
				for i, ax := range axes {
					if !in.dims[ax].Known {
						c.setShape(0, ranked(unknownDims(r)))
						return
					}
					s := float64(ks[i]) / float64(in.dims[ax].Value)
					if policy == "not_larger" {
						scale = math.Min(scale, s)
					} else {
						scale = math.Max(scale, s)
					}
				}
				for _, ax := range axes {
					out[ax] = kd(int64(math.Round(scale * float64(in.dims[ax].Value))))
				}
			} else {
				for i, ax := range axes {
					out[ax] = sizes[i]
				}
			}
			c.setShape(0, ranked(out))
			return
		}
	}
	if c.has(scalesIdx) {
		sv := c.cv(scalesIdx)
		sc, ok := sv.floats()
		if ok && len(sc) == len(axes) {
			for i, ax := range axes {
				d := in.dims[ax]
				if d.Known {
					out[ax] = kd(int64(math.Floor(float64(d.Value) * float32Round(sc[i]))))
				} else if sc[i] != 1 {
					out[ax] = dim{}
				}
			}
			c.setShape(0, ranked(out))
			return
		}
	}
	c.setShape(0, ranked(unknownDims(r)))
}

// float32Round keeps the precision the scales were stored with.
func float32Round(f float64) float64 { return float64(float32(f)) }

func upsample(c *nctx) {
	in := c.shp(0)
	var sc []float64
	ok := false
	if c.hasAttr("scales") {
		for _, f := range c.n.AttrFloats("scales", nil) {
			sc = append(sc, float64(f))
		}
		ok = true
	} else if c.has(1) {
		sc, ok = c.cv(1).floats()
	}
	if !in.ranked || !ok || len(sc) != in.rank() {
		c.setShape(0, unranked)
		return
	}
	out := make([]dim, in.rank())
	for i, d := range in.dims {
		if d.Known {
			out[i] = kd(int64(math.Floor(float64(d.Value) * sc[i])))
		} else if sc[i] == 1 {
			out[i] = d
		}
	}
	c.setShape(0, ranked(out))
}

func topK(c *nctx) {
	in := c.shp(0)
	if !in.ranked {
		return
	}
	ax := normAxis(c.attrI("axis", -1), in.rank())
	if !validAxis(ax, in.rank()) {
		c.fail("axis out of range")
		return
	}
	k := dim{}
	if c.ver < 10 {
		k = kd(c.attrI("k", 0))
	} else if v := c.cv(1); v != nil && v.ints != nil && v.numel() == 1 {
		k = v.ints[0]
	}
	out := copyDims(in.dims)
	out[ax] = k
	c.setShape(0, ranked(out))
	c.set(1, canonical.Int64, ranked(copyDims(out)))
}

func oneHot(c *nctx) {
	idx := c.shp(0)
	if !idx.ranked {
		return
	}
	depth := dim{}
	if v := c.cv(1); v != nil {
		if f, ok := v.floats(); ok && len(f) == 1 {
			depth = kd(int64(f[0]))
		}
	}
	r := idx.rank() + 1
	ax := normAxis(c.attrI("axis", -1), r)
	if !validAxis(ax, r) {
		c.fail("axis out of range")
		return
	}
	out := copyDims(idx.dims[:ax])
	out = append(out, depth)
	out = append(out, idx.dims[ax:]...)
	c.set(0, c.dt(2), ranked(out))
}

func depthToSpace(c *nctx) {
	in := c.shp(0)
	b := c.attrI("blocksize", 1)
	if !in.ranked || in.rank() != 4 {
		c.setShape(0, ranked(unknownDims(4)))
		return
	}
	d := in.dims
	c.setShape(0, ranked([]dim{d[0], dimDivExact(d[1], b*b), dimMul(d[2], kd(b)), dimMul(d[3], kd(b))}))
}

func spaceToDepth(c *nctx) {
	in := c.shp(0)
	b := c.attrI("blocksize", 1)
	if !in.ranked || in.rank() != 4 {
		c.setShape(0, ranked(unknownDims(4)))
		return
	}
	d := in.dims
	c.setShape(0, ranked([]dim{d[0], dimMul(d[1], kd(b*b)), dimDivExact(d[2], b), dimDivExact(d[3], b)}))
}

func dimDivExact(a dim, b int64) dim {
	if a.Known && b != 0 {
		return kd(a.Value / b)
	}
	if b == 1 {
		return a
	}
	return dim{}
}

func eyeLike(c *nctx) {
	dt := c.dt(0)
	if c.hasAttr("dtype") {
		dt = canonical.DataType(c.attrI("dtype", 0))
	}
	c.set(0, dt, c.shp(0))
}

func constant(c *nctx) {
	n := c.n
	switch {
	case n.Attr("value") != nil && n.Attr("value").T != nil:
		t := n.Attr("value").T
		c.set(0, t.DataType, knownShape(t.Dims))
		c.setConst(0, constFromTensor(t))
	case n.Attr("value_int") != nil:
		c.set(0, canonical.Int64, ranked([]dim{}))
		c.setConst(0, intCval(canonical.Int64, []int64{}, []dim{kd(n.Attr("value_int").I)}))
	case n.Attr("value_ints") != nil:
		v := n.Attr("value_ints").Ints
		ds := make([]dim, len(v))
		for i, x := range v {
			ds[i] = kd(x)
		}
		c.set(0, canonical.Int64, knownShape([]int64{int64(len(v))}))
		c.setConst(0, intCval(canonical.Int64, []int64{int64(len(v))}, ds))
	case n.Attr("value_float") != nil:
		c.set(0, canonical.Float, ranked([]dim{}))
		c.setConst(0, &cval{dt: canonical.Float, shape: []int64{}, fl: []float64{float64(n.Attr("value_float").F)}})
	case n.Attr("value_floats") != nil:
		v := n.Attr("value_floats").Floats
		fs := make([]float64, len(v))
		for i, x := range v {
			fs[i] = float64(x)
		}
		c.set(0, canonical.Float, knownShape([]int64{int64(len(v))}))
		c.setConst(0, &cval{dt: canonical.Float, shape: []int64{int64(len(v))}, fl: fs})
	case n.Attr("value_string") != nil:
		c.set(0, canonical.String, ranked([]dim{}))
	case n.Attr("value_strings") != nil:
		c.set(0, canonical.String, knownShape([]int64{int64(len(n.Attr("value_strings").Strings))}))
	case n.Attr("sparse_value") != nil && n.Attr("sparse_value").SparseTensor != nil:
		sp := n.Attr("sparse_value").SparseTensor
		c.set(0, canonical.DataType(sp.GetValues().GetDataType()), knownShape(sp.Dims))
	}
}

func nonZero(c *nctx) {
	in := c.shp(0)
	if in.ranked {
		c.set(0, canonical.Int64, ranked([]dim{kd(int64(in.rank())), c.inf.newDim()}))
	} else {
		c.set(0, canonical.Int64, ranked(unknownDims(2)))
	}
}

func compress(c *nctx) {
	in := c.shp(0)
	if !c.hasAttr("axis") {
		c.setShape(0, ranked([]dim{c.inf.newDim()}))
		return
	}
	if !in.ranked {
		return
	}
	ax := normAxis(c.attrI("axis", 0), in.rank())
	if !validAxis(ax, in.rank()) {
		c.fail("axis out of range")
		return
	}
	out := copyDims(in.dims)
	out[ax] = c.inf.newDim()
	c.setShape(0, ranked(out))
}

func unique(c *nctx) {
	in := c.shp(0)
	u := c.inf.newDim()
	if !c.hasAttr("axis") || !in.ranked {
		c.setShape(0, ranked([]dim{u}))
	} else {
		ax := normAxis(c.attrI("axis", 0), in.rank())
		if validAxis(ax, in.rank()) {
			out := copyDims(in.dims)
			out[ax] = u
			c.setShape(0, ranked(out))
		}
	}
	for i := 1; i < 4; i++ {
		if i == 2 {
			n := dim{}
			if in.ranked && !c.hasAttr("axis") {
				n = prod(in.dims)
			} else if in.ranked {
				if ax := normAxis(c.attrI("axis", 0), in.rank()); validAxis(ax, in.rank()) {
					n = in.dims[ax]
				}
			}
			c.set(i, canonical.Int64, ranked([]dim{n}))
			continue
		}
		c.set(i, canonical.Int64, ranked([]dim{u}))
	}
}

func centerCropPad(c *nctx) {
	in := c.shp(0)
	if !in.ranked {
		return
	}
	sv, ok := c.shapeFrom(1)
	axes := c.attrInts("axes")
	if axes == nil {
		for i := 0; i < in.rank(); i++ {
			axes = append(axes, int64(i))
		}
	}
	out := copyDims(in.dims)
	for i, a := range axes {
		ax := normAxis(a, in.rank())
		if !validAxis(ax, in.rank()) {
			c.fail("axis out of range")
			return
		}
		if ok && i < sv.rank() {
			out[ax] = sv.dims[i]
		} else {
			out[ax] = dim{}
		}
	}
	c.setShape(0, ranked(out))
}

func randomLike(c *nctx) {
	dt := c.dt(0)
	if c.hasAttr("dtype") {
		dt = canonical.DataType(c.attrI("dtype", 0))
	}
	c.set(0, dt, c.shp(0))
}

func randomGen(c *nctx) {
	dt := canonical.DataType(c.attrI("dtype", int64(canonical.Float)))
	c.set(0, dt, knownShape(c.attrInts("shape")))
}

func multinomial(c *nctx) {
	in := c.shp(0)
	dt := canonical.DataType(c.attrI("dtype", int64(canonical.Int32)))
	if in.ranked && in.rank() == 2 {
		c.set(0, dt, ranked([]dim{in.dims[0], kd(c.attrI("sample_size", 1))}))
	}
}

// splitConst splits a constant 1-D input along the output shapes.
func (c *nctx) splitConst(ax int) {
	v := c.cv(0)
	if v == nil || v.ints == nil || len(v.shape) != 1 || ax != 0 {
		return
	}
	off := 0
	for i, t := range c.out {
		_, s, ok := tensorOf(t)
		if !ok || !s.ranked || s.rank() != 1 || !s.dims[0].Known {
			return
		}
		n := int(s.dims[0].Value)
		if off+n > len(v.ints) {
			return
		}
		c.setConst(i, intCval(v.dt, []int64{int64(n)}, copyDims(v.ints[off:off+n])))
		off += n
	}
}
