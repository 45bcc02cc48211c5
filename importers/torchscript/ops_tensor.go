package torchscript

import (
	"fmt"
	"slices"

	"github.com/onnxconv/onnxconv/canonical"
	fts "github.com/onnxconv/onnxconv/formats/torchscript"
)

func intsOf(v value) ([]int64, bool) {
	var items []value
	switch x := v.(type) {
	case *list:
		items = x.items
	case *tuple:
		items = x.items
	case int64:
		return []int64{x}, true
	default:
		return nil, false
	}
	out := make([]int64, len(items))
	for i, it := range items {
		n, ok := it.(int64)
		if !ok {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}

func rep(v []int64, n int) []int64 {
	if len(v) == 1 && n > 1 {
		out := make([]int64, n)
		for i := range out {
			out[i] = v[0]
		}
		return out
	}
	return v
}

func (c *conv) out(op string, base string, in []string, dt canonical.DataType, dims []int64, attrs ...*canonical.Attribute) *tensor {
	n := c.b.Op(op, base, in, attrs...)
	return &tensor{name: n, dt: dt, dims: dims}
}

// atenArith converts aten::add, aten::sub, aten::mul, aten::div,
// aten::true_divide, aten::rsub, aten::pow, aten::maximum, aten::minimum,
// aten::floor_divide, aten::remainder, aten::fmod.
func (c *conv) atenArith(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, y := call.arg(0, "self"), call.arg(1, "other")
	if name == "rsub" {
		x, y = y, x
	}
	tx, ty, err := c.operands(p, x, y)
	if err != nil {
		return nil, err
	}
	if (name == "add" || name == "sub" || name == "rsub") && len(args) > 2 {
		if a, ok := num(args[2]); ok && a != 1 {
			s, _ := c.constOf(a, ty.dt)
			ty = c.out("Mul", "alpha", []string{ty.name, s.name}, ty.dt, ty.dims)
		}
	}
	if (name == "div" || name == "true_divide") && !isFloat(tx.dt) {
		tx, ty = c.cast(tx, canonical.Float), c.cast(ty, canonical.Float)
	}
	dims, ok := broadcast(tx.dims, ty.dims)
	if !ok {
		return nil, c.errAt(p, "%s of shapes %v and %v", name, tx.dims, ty.dims)
	}
	onnxOp := map[string]string{"add": "Add", "sub": "Sub", "rsub": "Sub", "mul": "Mul", "div": "Div", "true_divide": "Div",
		"pow": "Pow", "maximum": "Max", "minimum": "Min", "floor_divide": "Div", "remainder": "Mod", "fmod": "Mod"}[name]
	if onnxOp == "" {
		return nil, nil
	}
	if name == "div" {
		if m, ok := kw["rounding_mode"].(string); ok && m != "" {
			return nil, nil
		}
	}
	var attrs []*canonical.Attribute
	if name == "fmod" || name == "remainder" && isFloat(tx.dt) {
		attrs = append(attrs, canonical.IntAttr("fmod", 1))
		if name == "remainder" {
			return nil, nil
		}
	}
	return c.out(onnxOp, name, []string{tx.name, ty.name}, tx.dt, dims, attrs...), nil
}

// atenCompare converts aten::eq, aten::ne, aten::lt, aten::gt, aten::le,
// aten::ge, aten::__and__, aten::__or__, aten::logical_and,
// aten::logical_or, aten::__xor__, aten::bitwise_and, aten::bitwise_or.
func (c *conv) atenCompare(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	tx, ty, err := c.operands(p, call.arg(0, "self"), call.arg(1, "other"))
	if err != nil {
		return nil, err
	}
	dims, ok := broadcast(tx.dims, ty.dims)
	if !ok {
		return nil, c.errAt(p, "%s of shapes %v and %v", name, tx.dims, ty.dims)
	}
	m := map[string]string{"eq": "Equal", "lt": "Less", "gt": "Greater", "le": "LessOrEqual", "ge": "GreaterOrEqual",
		"__and__": "And", "logical_and": "And", "bitwise_and": "And", "__or__": "Or", "logical_or": "Or", "bitwise_or": "Or", "__xor__": "Xor", "ne": "Equal"}
	if m[name] == "And" || m[name] == "Or" || m[name] == "Xor" {
		if tx.dt != canonical.Bool {
			return nil, nil
		}
	}
	r := c.out(m[name], name, []string{tx.name, ty.name}, canonical.Bool, dims)
	if name == "ne" {
		r = c.out("Not", "ne", []string{r.name}, canonical.Bool, dims)
	}
	return r, nil
}

// atenUnary converts aten::neg, aten::relu, aten::sigmoid, aten::tanh,
// aten::exp, aten::log, aten::sqrt, aten::abs, aten::floor, aten::ceil,
// aten::sin, aten::cos, aten::reciprocal, aten::rsqrt, aten::hardswish,
// aten::hardsigmoid, aten::erf, aten::sign, aten::round, aten::__not__,
// aten::logical_not, aten::bitwise_not, aten::silu, aten::softplus,
// aten::elu, aten::selu, aten::log_sigmoid, aten::mish, aten::relu6,
// aten::square, aten::log1p.
func (c *conv) atenUnary(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	m := map[string]string{"neg": "Neg", "relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "log": "Log", "sqrt": "Sqrt",
		"abs": "Abs", "floor": "Floor", "ceil": "Ceil", "sin": "Sin", "cos": "Cos", "reciprocal": "Reciprocal", "hardswish": "HardSwish",
		"erf": "Erf", "sign": "Sign", "round": "Round", "__not__": "Not", "logical_not": "Not", "bitwise_not": "Not", "softplus": "Softplus",
		"elu": "Elu", "selu": "Selu"}
	switch name {
	case "rsqrt":
		s := c.out("Sqrt", "sqrt", []string{x.name}, x.dt, x.dims)
		return c.out("Reciprocal", "rsqrt", []string{s.name}, x.dt, x.dims), nil
	case "hardsigmoid":
		return c.out("HardSigmoid", "hardsigmoid", []string{x.name}, x.dt, x.dims, canonical.FloatAttr("alpha", 1.0/6)), nil
	case "silu":
		s := c.out("Sigmoid", "sigmoid", []string{x.name}, x.dt, x.dims)
		return c.out("Mul", "silu", []string{x.name, s.name}, x.dt, x.dims), nil
	case "relu6":
		lo, _ := c.constOf(0.0, x.dt)
		hi, _ := c.constOf(6.0, x.dt)
		return c.out("Clip", "relu6", []string{x.name, lo.name, hi.name}, x.dt, x.dims), nil
	case "square":
		return c.out("Mul", "square", []string{x.name, x.name}, x.dt, x.dims), nil
	case "log_sigmoid", "mish", "log1p":
		return nil, nil
	}
	if (name == "__not__" || name == "bitwise_not" || name == "logical_not") && x.dt != canonical.Bool {
		return nil, nil
	}
	return c.out(m[name], name, []string{x.name}, x.dt, x.dims), nil
}

// atenGelu converts aten::gelu.
func (c *conv) atenGelu(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	approx, _ := call.arg(1, "approximate").(string)
	// erf form: 0.5 x (1 + erf(x / sqrt 2)); tanh form as torch
	half, _ := c.constOf(0.5, x.dt)
	one, _ := c.constOf(1.0, x.dt)
	var inner *tensor
	if approx == "tanh" {
		k, _ := c.constOf(0.7978845608028654, x.dt)
		a, _ := c.constOf(0.044715, x.dt)
		x3 := c.out("Mul", "x2", []string{x.name, x.name}, x.dt, x.dims)
		x3 = c.out("Mul", "x3", []string{x3.name, x.name}, x.dt, x.dims)
		t := c.out("Mul", "ax3", []string{a.name, x3.name}, x.dt, x.dims)
		t = c.out("Add", "inner", []string{x.name, t.name}, x.dt, x.dims)
		t = c.out("Mul", "inner", []string{k.name, t.name}, x.dt, x.dims)
		inner = c.out("Tanh", "tanh", []string{t.name}, x.dt, x.dims)
	} else {
		r, _ := c.constOf(0.7071067811865476, x.dt)
		t := c.out("Mul", "xs", []string{x.name, r.name}, x.dt, x.dims)
		inner = c.out("Erf", "erf", []string{t.name}, x.dt, x.dims)
	}
	t := c.out("Add", "g1", []string{inner.name, one.name}, x.dt, x.dims)
	t = c.out("Mul", "g2", []string{x.name, t.name}, x.dt, x.dims)
	return c.out("Mul", "gelu", []string{t.name, half.name}, x.dt, x.dims), nil
}

// atenLeakyRelu converts aten::leaky_relu.
func (c *conv) atenLeakyRelu(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	a, _ := num(call.arg(1, "negative_slope"))
	if call.arg(1, "negative_slope") == nil {
		a = 0.01
	}
	return c.out("LeakyRelu", name, []string{x.name}, x.dt, x.dims, canonical.FloatAttr("alpha", float32(a))), nil
}

// atenClamp converts aten::hardtanh, aten::clamp, aten::clip.
func (c *conv) atenClamp(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	lo, hi := call.arg(1, "min"), call.arg(2, "max")
	if name == "hardtanh" {
		if lo == nil {
			lo = -1.0
		}
		if hi == nil {
			hi = 1.0
		}
	}
	in := []string{x.name, "", ""}
	for i, v := range []value{lo, hi} {
		if v == nil {
			continue
		}
		t, err := c.constOf(v, x.dt)
		if err != nil {
			return nil, c.errAt(p, "%s: %v", name, err)
		}
		in[i+1] = t.name
	}
	for len(in) > 1 && in[len(in)-1] == "" {
		in = in[:len(in)-1]
	}
	return c.out("Clip", name, in, x.dt, x.dims), nil
}

// atenDropout converts aten::dropout, aten::feature_dropout,
// aten::alpha_dropout, aten::dropout1d, aten::dropout2d.
func (c *conv) atenDropout(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "input")
	if err != nil {
		return nil, err
	}
	if train, _ := call.arg(2, "train").(bool); train {
		c.warn("a dropout called in training mode is converted as in eval mode (identity)")
	}
	return x, nil
}

// atenSoftmax converts aten::softmax, aten::log_softmax.
func (c *conv) atenSoftmax(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	d, _ := call.arg(1, "dim").(int64)
	ax, err := c.axis(p, d, x.rank())
	if err != nil {
		return nil, err
	}
	if dtv, ok := call.arg(2, "dtype").(int64); ok {
		if dt, ok := scalarTypes[dtv]; ok {
			x = c.cast(x, dt)
		}
	}
	op := "Softmax"
	if name == "log_softmax" {
		op = "LogSoftmax"
	}
	return c.out(op, name, []string{x.name}, x.dt, x.dims, canonical.IntAttr("axis", int64(ax))), nil
}

// atenBatchNorm converts aten::batch_norm.
func (c *conv) atenBatchNorm(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "input")
	if err != nil {
		return nil, err
	}
	w, _ := call.arg(1, "weight").(*tensor)
	bias, _ := call.arg(2, "bias").(*tensor)
	mean, _ := call.arg(3, "running_mean").(*tensor)
	vr, _ := call.arg(4, "running_var").(*tensor)
	eps, _ := num(call.arg(7, "eps"))
	if mean == nil || vr == nil || x.rank() < 2 {
		return nil, nil
	}
	ch := x.dims[1]
	if w == nil {
		w, _ = c.constOf(&list{items: repeatF(1, ch)}, x.dt)
	}
	if bias == nil {
		bias, _ = c.constOf(&list{items: repeatF(0, ch)}, x.dt)
	}
	return c.out("BatchNormalization", "bn", []string{x.name, w.name, bias.name, mean.name, vr.name}, x.dt, x.dims, canonical.FloatAttr("epsilon", float32(eps))), nil
}

// atenLayerNorm converts aten::layer_norm.
func (c *conv) atenLayerNorm(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "input")
	if err != nil {
		return nil, err
	}
	shape, ok := intsOf(call.arg(1, "normalized_shape"))
	if !ok {
		return nil, c.errAt(p, "layer_norm: normalized_shape is not a list of ints")
	}
	w, _ := call.arg(2, "weight").(*tensor)
	bias, _ := call.arg(3, "bias").(*tensor)
	eps, _ := num(call.arg(4, "eps"))
	if w == nil {
		w, _ = c.constOf(&list{items: repeatF(1, prod(shape))}, x.dt)
		w = c.reshape(w, shape)
	}
	in := []string{x.name, w.name}
	if bias != nil {
		in = append(in, bias.name)
	}
	return c.out("LayerNormalization", "ln", in, x.dt, x.dims, canonical.IntAttr("axis", int64(x.rank()-len(shape))), canonical.FloatAttr("epsilon", float32(eps))), nil
}

// atenLinear converts aten::linear.
func (c *conv) atenLinear(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "input")
	if err != nil {
		return nil, err
	}
	w, err := call.tens(1, "weight")
	if err != nil {
		return nil, err
	}
	wt := c.out("Transpose", "wt", []string{w.name}, w.dt, []int64{w.dims[1], w.dims[0]}, canonical.IntsAttr("perm", []int64{1, 0}...))
	dims := append(slices.Clone(x.dims[:x.rank()-1]), w.dims[0])
	y := c.out("MatMul", "linear", []string{x.name, wt.name}, x.dt, dims)
	if b, ok := call.arg(2, "bias").(*tensor); ok {
		y = c.out("Add", "linear", []string{y.name, b.name}, x.dt, dims)
	}
	return y, nil
}

// atenAddmm converts aten::addmm.
func (c *conv) atenAddmm(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	bias, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	x, err := call.tens(1, "mat1")
	if err != nil {
		return nil, err
	}
	w, err := call.tens(2, "mat2")
	if err != nil {
		return nil, err
	}
	beta, _ := num(orDefault(call.arg(3, "beta"), 1.0))
	alpha, _ := num(orDefault(call.arg(4, "alpha"), 1.0))
	return c.out("Gemm", "addmm", []string{x.name, w.name, bias.name}, x.dt, []int64{x.dims[0], w.dims[1]},
		canonical.FloatAttr("alpha", float32(alpha)), canonical.FloatAttr("beta", float32(beta))), nil
}

// atenMatmul converts aten::matmul, aten::mm, aten::bmm.
func (c *conv) atenMatmul(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	y, err := call.tens(1, "other")
	if err != nil {
		return nil, err
	}
	dims, ok := matmulDims(x.dims, y.dims)
	if !ok {
		return nil, c.errAt(p, "%s of shapes %v and %v", name, x.dims, y.dims)
	}
	return c.out("MatMul", name, []string{x.name, y.name}, x.dt, dims), nil
}

// atenBaddbmm converts aten::baddbmm.
func (c *conv) atenBaddbmm(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	b, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	x, err := call.tens(1, "batch1")
	if err != nil {
		return nil, err
	}
	y, err := call.tens(2, "batch2")
	if err != nil {
		return nil, err
	}
	dims, _ := matmulDims(x.dims, y.dims)
	m := c.out("MatMul", name, []string{x.name, y.name}, x.dt, dims)
	if a, _ := num(orDefault(call.arg(4, "alpha"), 1.0)); a != 1 {
		s, _ := c.constOf(a, x.dt)
		m = c.out("Mul", "alpha", []string{m.name, s.name}, x.dt, dims)
	}
	bb := b
	if be, _ := num(orDefault(call.arg(3, "beta"), 1.0)); be != 1 {
		s, _ := c.constOf(be, x.dt)
		bb = c.out("Mul", "beta", []string{b.name, s.name}, x.dt, b.dims)
	}
	out, _ := broadcast(bb.dims, dims)
	return c.out("Add", name, []string{bb.name, m.name}, x.dt, out), nil
}

// atenAdaptivePool converts aten::adaptive_avg_pool1d,
// aten::adaptive_avg_pool2d, aten::adaptive_avg_pool3d,
// aten::adaptive_max_pool2d.
func (c *conv) atenAdaptivePool(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	size, ok := intsOf(call.arg(1, "output_size"))
	nd := x.rank() - 2
	if !ok {
		return nil, nil
	}
	size = rep(size, nd)
	all1 := true
	for _, s := range size {
		all1 = all1 && s == 1
	}
	dims := slices.Clone(x.dims)
	for i := 0; i < nd; i++ {
		dims[2+i] = 1
	}
	if all1 {
		op := "GlobalAveragePool"
		if name == "adaptive_max_pool2d" {
			op = "GlobalMaxPool"
		}
		return c.out(op, name, []string{x.name}, x.dt, dims), nil
	}
	// output size dividing the input: a plain pool
	var k []int64
	for i := 0; i < nd; i++ {
		if size[i] <= 0 || x.dims[2+i]%size[i] != 0 {
			return nil, nil
		}
		k = append(k, x.dims[2+i]/size[i])
		dims[2+i] = size[i]
	}
	if name == "adaptive_max_pool2d" {
		return nil, nil
	}
	return c.out("AveragePool", name, []string{x.name}, x.dt, dims, canonical.IntsAttr("kernel_shape", k...), canonical.IntsAttr("strides", k...)), nil
}

// atenReduce converts aten::mean, aten::sum, aten::amax, aten::amin,
// aten::prod.
func (c *conv) atenReduce(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	var axes []int64
	if v := call.arg(1, "dim"); v != nil {
		d, ok := intsOf(v)
		if !ok {
			return nil, c.errAt(p, "%s: dim is %s", name, describe(v))
		}
		axes = d
	}
	keep, _ := call.arg(2, "keepdim").(bool)
	if dtv, ok := kw["dtype"].(int64); ok {
		if dt, ok := scalarTypes[dtv]; ok {
			x = c.cast(x, dt)
		}
	}
	if len(axes) == 0 { // no dim or an empty list: every axis
		for i := range x.dims {
			axes = append(axes, int64(i))
		}
	}
	var norm []int64
	for _, a := range axes {
		ax, err := c.axis(p, a, x.rank())
		if err != nil {
			return nil, err
		}
		norm = append(norm, int64(ax))
	}
	var dims []int64
	for i, d := range x.dims {
		if slices.Contains(norm, int64(i)) {
			if keep {
				dims = append(dims, 1)
			}
			continue
		}
		dims = append(dims, d)
	}
	op := map[string]string{"mean": "ReduceMean", "sum": "ReduceSum", "amax": "ReduceMax", "amin": "ReduceMin", "prod": "ReduceProd"}[name]
	k := int64(0)
	if keep {
		k = 1
	}
	if op == "ReduceSum" {
		ax := c.b.Ints("axes", norm...)
		return c.out(op, name, []string{x.name, ax}, x.dt, dims, canonical.IntAttr("keepdims", k)), nil
	}
	return c.out(op, name, []string{x.name}, x.dt, dims, canonical.IntsAttr("axes", norm...), canonical.IntAttr("keepdims", k)), nil
}

// atenCat converts aten::cat, aten::concat, aten::stack.
func (c *conv) atenCat(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	l, ok := call.arg(0, "tensors").(*list)
	if !ok {
		if t, ok2 := call.arg(0, "tensors").(*tuple); ok2 {
			l = &list{items: t.items}
		} else {
			return nil, c.errAt(p, "%s of %s", name, describe(call.arg(0, "tensors")))
		}
	}
	d, _ := call.arg(1, "dim").(int64)
	var ts []*tensor
	for _, it := range l.items {
		t, ok := it.(*tensor)
		if !ok {
			return nil, c.errAt(p, "%s of %s", name, describe(it))
		}
		ts = append(ts, t)
	}
	if len(ts) == 0 {
		return nil, c.errAt(p, "%s of no tensors", name)
	}
	rank := ts[0].rank()
	if name == "stack" {
		rank++
	}
	ax, err := c.axis(p, d, rank)
	if err != nil {
		return nil, err
	}
	var in []string
	dims := slices.Clone(ts[0].dims)
	if name == "stack" {
		dims = slices.Insert(dims, ax, int64(0))
	}
	for _, t := range ts {
		t = c.cast(t, ts[0].dt)
		if name == "stack" {
			t = c.unsqueeze(t, ax)
		}
		in = append(in, t.name)
		if name == "stack" {
			dims[ax]++
		}
	}
	if name != "stack" {
		dims[ax] = 0
		for _, t := range ts {
			dims[ax] += t.dims[ax]
		}
	}
	return c.out("Concat", name, in, ts[0].dt, dims, canonical.IntAttr("axis", int64(ax))), nil
}

// atenView converts aten::view, aten::reshape, aten::_reshape_alias.
func (c *conv) atenView(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	shape, ok := intsOf(call.arg(1, "size"))
	if !ok {
		return nil, c.errAt(p, "%s to %s, not a list of ints", name, describe(call.arg(1, "size")))
	}
	r, err := c.reshapeChecked(p, x, shape)
	return r, err
}

// atenViewAs converts aten::view_as, aten::reshape_as, aten::expand_as.
func (c *conv) atenViewAs(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	o, err := call.tens(1, "other")
	if err != nil {
		return nil, err
	}
	if name == "expand_as" {
		return c.tensorOp(p, "expand", []value{x, dimsList(o.dims)}, nil)
	}
	return c.reshapeChecked(p, x, o.dims)
}

// atenFlatten converts aten::flatten.
func (c *conv) atenFlatten(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	s := call.intArg(1, "start_dim", 0)
	e := call.intArg(2, "end_dim", -1)
	if x.rank() == 0 {
		return c.reshape(x, []int64{1}), nil
	}
	sa, err := c.axis(p, s, x.rank())
	if err != nil {
		return nil, err
	}
	ea, err := c.axis(p, e, x.rank())
	if err != nil {
		return nil, err
	}
	var shape []int64
	shape = append(shape, x.dims[:sa]...)
	shape = append(shape, prod(x.dims[sa:ea+1]))
	shape = append(shape, x.dims[ea+1:]...)
	return c.reshape(x, shape), nil
}

// atenUnflatten converts aten::unflatten.
func (c *conv) atenUnflatten(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	d := call.intArg(1, "dim", 0)
	sizes, ok := intsOf(call.arg(2, "sizes"))
	if !ok {
		return nil, nil
	}
	ax, err := c.axis(p, d, x.rank())
	if err != nil {
		return nil, err
	}
	shape := slices.Clone(x.dims[:ax])
	shape = append(shape, sizes...)
	shape = append(shape, x.dims[ax+1:]...)
	return c.reshapeChecked(p, x, shape)
}

// atenSqueeze converts aten::squeeze.
func (c *conv) atenSqueeze(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	var shape []int64
	if d, ok := call.arg(1, "dim").(int64); ok {
		ax, err := c.axis(p, d, x.rank())
		if err != nil {
			return nil, err
		}
		shape = slices.Clone(x.dims)
		if x.dims[ax] == 1 {
			shape = slices.Delete(shape, ax, ax+1)
		}
	} else {
		for _, d := range x.dims {
			if d != 1 {
				shape = append(shape, d)
			}
		}
	}
	return c.reshape(x, shape), nil
}

// atenUnsqueeze converts aten::unsqueeze.
func (c *conv) atenUnsqueeze(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	d := call.intArg(1, "dim", 0)
	ax, err := c.axis(p, d, x.rank()+1)
	if err != nil {
		return nil, err
	}
	return c.unsqueeze(x, ax), nil
}

// atenPermute converts aten::permute.
func (c *conv) atenPermute(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	perm, ok := intsOf(call.arg(1, "dims"))
	if !ok || len(perm) != x.rank() {
		return nil, c.errAt(p, "permute of rank %d by %s", x.rank(), describe(call.arg(1, "dims")))
	}
	return c.transpose(p, x, perm)
}

// atenTranspose converts aten::transpose, aten::swapaxes.
func (c *conv) atenTranspose(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	a, err := c.axis(p, call.intArg(1, "dim0", 0), x.rank())
	if err != nil {
		return nil, err
	}
	b, err := c.axis(p, call.intArg(2, "dim1", 0), x.rank())
	if err != nil {
		return nil, err
	}
	perm := make([]int64, x.rank())
	for i := range perm {
		perm[i] = int64(i)
	}
	perm[a], perm[b] = perm[b], perm[a]
	return c.transpose(p, x, perm)
}

// atenT converts aten::t, aten::numpy_T.
func (c *conv) atenT(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	if x.rank() < 2 {
		return x, nil
	}
	perm := make([]int64, x.rank())
	for i := range perm {
		perm[i] = int64(x.rank() - 1 - i)
	}
	return c.transpose(p, x, perm)
}

// atenIdentity converts aten::contiguous, aten::clone, aten::detach,
// aten::alias, prim::data.
func (c *conv) atenIdentity(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	return call.tens(0, "self")
}

// atenTo converts aten::to, aten::type_as, aten::float, aten::double,
// aten::long, aten::int, aten::half, aten::bool.
func (c *conv) atenTo(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	dt := x.dt
	switch name {
	case "float":
		dt = canonical.Float
	case "double":
		dt = canonical.Double
	case "long":
		dt = canonical.Int64
	case "int":
		dt = canonical.Int32
	case "half":
		dt = canonical.Float16
	case "bool":
		dt = canonical.Bool
	case "type_as":
		o, err := call.tens(1, "other")
		if err != nil {
			return nil, err
		}
		dt = o.dt
	default:
		for _, v := range append(args[1:], kw["dtype"]) {
			if n, ok := v.(int64); ok {
				if d, ok := scalarTypes[n]; ok {
					dt = d
					break
				}
			}
			if o, ok := v.(*tensor); ok {
				dt = o.dt
				break
			}
		}
	}
	return c.cast(x, dt), nil
}

// atenSlice converts aten::slice.
func (c *conv) atenSlice(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, ok := call.arg(0, "self").(*tensor)
	if !ok {
		return nil, nil
	}
	d := call.intArg(1, "dim", 0)
	ax, err := c.axis(p, d, x.rank())
	if err != nil {
		return nil, err
	}
	n := x.dims[ax]
	lo, hi, st := int64(0), n, int64(1)
	if v, ok := call.arg(2, "start").(int64); ok {
		lo = v
	}
	if v, ok := call.arg(3, "end").(int64); ok {
		hi = v
	}
	if v, ok := call.arg(4, "step").(int64); ok {
		st = v
	}
	if st <= 0 {
		return nil, c.errAt(p, "slice step %d", st)
	}
	lo, hi = clampRange(lo, hi, n)
	if lo == 0 && hi == n && st == 1 {
		return x, nil
	}
	dims := slices.Clone(x.dims)
	dims[ax] = (hi - lo + st - 1) / st
	in := []string{x.name, c.b.Ints("starts", lo), c.b.Ints("ends", hi), c.b.Ints("axes", int64(ax)), c.b.Ints("steps", st)}
	return c.out("Slice", "slice", in, x.dt, dims), nil
}

// atenSelect converts aten::select.
func (c *conv) atenSelect(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	ax, err := c.axis(p, call.intArg(1, "dim", 0), x.rank())
	if err != nil {
		return nil, err
	}
	i := call.intArg(2, "index", 0)
	if i < 0 {
		i += x.dims[ax]
	}
	if i < 0 || i >= x.dims[ax] {
		return nil, c.errAt(p, "select index %d out of range %d", i, x.dims[ax])
	}
	dims := slices.Delete(slices.Clone(x.dims), ax, ax+1)
	return c.out("Gather", "select", []string{x.name, c.b.I64("i", nil, []int64{i})}, x.dt, dims, canonical.IntAttr("axis", int64(ax))), nil
}

// atenGetitem converts aten::__getitem__.
func (c *conv) atenGetitem(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	// x[i] on a tensor
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	if i, ok := call.arg(1, "").(int64); ok {
		return c.tensorOp(p, "select", []value{x, int64(0), i}, nil)
	}
	return nil, nil
}

// atenExpand converts aten::expand.
func (c *conv) atenExpand(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	size, ok := intsOf(call.arg(1, "size"))
	if !ok {
		return nil, nil
	}
	off := len(size) - x.rank()
	for i := range size {
		if size[i] == -1 && i >= off {
			size[i] = x.dims[i-off]
		}
	}
	dims, ok := broadcast(x.dims, size)
	if !ok {
		return nil, c.errAt(p, "expand %v to %v", x.dims, size)
	}
	return c.out("Expand", "expand", []string{x.name, c.b.Ints("shape", size...)}, x.dt, dims), nil
}

// atenFill converts aten::zeros, aten::ones, aten::full, aten::zeros_like,
// aten::ones_like, aten::full_like, aten::new_zeros, aten::new_ones.
func (c *conv) atenFill(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	var shape []int64
	dt := canonical.Float
	var fill float64
	switch name {
	case "zeros_like", "ones_like", "full_like":
		x, err := call.tens(0, "self")
		if err != nil {
			return nil, err
		}
		shape, dt = x.dims, x.dt
		if name == "full_like" {
			fill, _ = num(call.arg(1, "fill_value"))
		}
	case "new_zeros", "new_ones":
		x, err := call.tens(0, "self")
		if err != nil {
			return nil, err
		}
		dt = x.dt
		s, ok := intsOf(call.arg(1, "size"))
		if !ok {
			return nil, nil
		}
		shape = s
	default:
		s, ok := intsOf(call.arg(0, "size"))
		if !ok {
			return nil, c.errAt(p, "%s of size %s", name, describe(call.arg(0, "size")))
		}
		shape = s
		if name == "full" {
			fill, _ = num(call.arg(1, "fill_value"))
		}
	}
	if n, ok := kw["dtype"].(int64); ok {
		if d, ok := scalarTypes[n]; ok {
			dt = d
		}
	}
	if name == "ones" || name == "ones_like" || name == "new_ones" {
		fill = 1
	}
	for _, d := range shape {
		if d < 0 {
			return nil, c.errAt(p, "%s of negative size", name)
		}
	}
	if prod(shape) > 1<<26 {
		return nil, c.errAt(p, "%s of %d elements", name, prod(shape))
	}
	v, err := c.constOf(fill, dt)
	if err != nil {
		return nil, err
	}
	return c.out("Expand", name, []string{v.name, c.b.Ints("shape", shape...)}, dt, shape), nil
}

// atenStft converts aten::stft.
func (c *conv) atenStft(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	return c.stft(p, args, kw)
}

// atenLstmCell converts aten::lstm_cell.
func (c *conv) atenLstmCell(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	return c.lstmCell(p, args)
}

// atenAtan2 converts aten::atan2.
func (c *conv) atenAtan2(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	y, x, err := c.operands(p, call.arg(0, "self"), call.arg(1, "other"))
	if err != nil {
		return nil, err
	}
	return c.atan2(y, x), nil
}

// atenEmbedding converts aten::embedding.
func (c *conv) atenEmbedding(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	w, err := call.tens(0, "weight")
	if err != nil {
		return nil, err
	}
	idx, err := call.tens(1, "indices")
	if err != nil {
		return nil, err
	}
	dims := append(slices.Clone(idx.dims), w.dims[1:]...)
	return c.out("Gather", "embedding", []string{w.name, idx.name}, w.dt, dims, canonical.IntAttr("axis", 0)), nil
}

// atenWhere converts aten::where.
func (c *conv) atenWhere(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	cond, err := call.tens(0, "condition")
	if err != nil {
		return nil, err
	}
	x, y, err := c.operands(p, call.arg(1, "self"), call.arg(2, "other"))
	if err != nil {
		return nil, err
	}
	d1, _ := broadcast(x.dims, y.dims)
	dims, _ := broadcast(cond.dims, d1)
	return c.out("Where", "where", []string{c.toBool(cond), x.name, y.name}, x.dt, dims), nil
}

// atenMaskedFill converts aten::masked_fill.
func (c *conv) atenMaskedFill(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "self")
	if err != nil {
		return nil, err
	}
	m, err := call.tens(1, "mask")
	if err != nil {
		return nil, err
	}
	v, err := c.constOf(call.arg(2, "value"), x.dt)
	if err != nil {
		if t, ok := call.arg(2, "value").(*tensor); ok {
			v = c.cast(t, x.dt)
		} else {
			return nil, c.errAt(p, "masked_fill value %s", describe(call.arg(2, "value")))
		}
	}
	dims, _ := broadcast(x.dims, m.dims)
	return c.out("Where", "masked_fill", []string{c.toBool(m), v.name, x.name}, x.dt, dims), nil
}

// atenPad converts aten::pad, aten::constant_pad_nd, aten::reflection_pad1d,
// aten::reflection_pad2d, aten::replication_pad1d, aten::replication_pad2d.
func (c *conv) atenPad(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	call := c.callOf(p, name, args, kw)
	x, err := call.tens(0, "input")
	if err != nil {
		return nil, err
	}
	pads, ok := intsOf(call.arg(1, "pad"))
	if !ok || len(pads)%2 != 0 || len(pads)/2 > x.rank() {
		return nil, c.errAt(p, "%s of %s", name, describe(call.arg(1, "pad")))
	}
	mode := "constant"
	switch {
	case name == "pad":
		if m, ok := call.arg(2, "mode").(string); ok {
			mode = m
		}
	case name[:3] == "ref":
		mode = "reflect"
	case name[:3] == "rep":
		mode = "edge"
	}
	if mode == "replicate" {
		mode = "edge"
	}
	r := x.rank()
	on := make([]int64, 2*r)
	dims := slices.Clone(x.dims)
	for i := 0; i < len(pads)/2; i++ {
		ax := r - 1 - i
		on[ax], on[r+ax] = pads[2*i], pads[2*i+1]
		dims[ax] += pads[2*i] + pads[2*i+1]
	}
	in := []string{x.name, c.b.Ints("pads", on...)}
	if mode == "constant" {
		v := call.arg(3, "value")
		if name == "constant_pad_nd" {
			v = call.arg(2, "value")
		}
		if v == nil {
			v = 0.0
		}
		cv, err := c.constOf(v, x.dt)
		if err != nil {
			return nil, c.errAt(p, "pad value: %v", err)
		}
		in = append(in, cv.name)
	}
	return c.out("Pad", name, in, x.dt, dims, canonical.StringAttr("mode", mode)), nil
}

func orDefault(v, d value) value {
	if v == nil {
		return d
	}
	return v
}

func repeatF(v float64, n int64) []value {
	out := make([]value, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func dimsList(d []int64) *list {
	l := &list{}
	for _, x := range d {
		l.items = append(l.items, x)
	}
	return l
}

func prod(d []int64) int64 {
	n := int64(1)
	for _, x := range d {
		n *= x
	}
	return n
}

func matmulDims(a, b []int64) ([]int64, bool) {
	if len(a) == 0 || len(b) == 0 {
		return nil, false
	}
	if len(b) == 1 {
		if a[len(a)-1] != b[0] {
			return nil, false
		}
		return slices.Clone(a[:len(a)-1]), true
	}
	if len(a) == 1 {
		if a[0] != b[len(b)-2] {
			return nil, false
		}
		out := slices.Clone(b[:len(b)-2])
		return append(out, b[len(b)-1]), true
	}
	if a[len(a)-1] != b[len(b)-2] {
		return nil, false
	}
	batch, ok := broadcast(a[:len(a)-2], b[:len(b)-2])
	if !ok {
		return nil, false
	}
	return append(batch, a[len(a)-2], b[len(b)-1]), true
}

func (c *conv) reshape(x *tensor, shape []int64) *tensor {
	if equalDims(x.dims, shape) {
		return x
	}
	return c.out("Reshape", "reshape", []string{x.name, c.b.Ints("shape", shape...)}, x.dt, slices.Clone(shape))
}

func (c *conv) reshapeChecked(p fts.Pos, x *tensor, shape []int64) (*tensor, error) {
	shape = slices.Clone(shape)
	n := prod(x.dims)
	known, neg := int64(1), -1
	for i, d := range shape {
		if d == -1 {
			if neg >= 0 {
				return nil, c.errAt(p, "reshape to %v: two -1", shape)
			}
			neg = i
			continue
		}
		if d < 0 {
			return nil, c.errAt(p, "reshape to %v", shape)
		}
		known *= d
	}
	if neg >= 0 {
		if known == 0 || n%known != 0 {
			return nil, c.errAt(p, "reshape %v to %v", x.dims, shape)
		}
		shape[neg] = n / known
	} else if known != n {
		return nil, c.errAt(p, "reshape %v to %v", x.dims, shape)
	}
	return c.reshape(x, shape), nil
}

func (c *conv) unsqueeze(x *tensor, ax int) *tensor {
	dims := slices.Insert(slices.Clone(x.dims), ax, int64(1))
	return c.reshape(x, dims)
}

func (c *conv) transpose(p fts.Pos, x *tensor, perm []int64) (*tensor, error) {
	dims := make([]int64, len(perm))
	ident := true
	for i, a := range perm {
		ax, err := c.axis(p, a, x.rank())
		if err != nil {
			return nil, err
		}
		perm[i] = int64(ax)
		dims[i] = x.dims[ax]
		ident = ident && ax == i
	}
	if ident {
		return x, nil
	}
	return c.out("Transpose", "transpose", []string{x.name}, x.dt, dims, canonical.IntsAttr("perm", perm...)), nil
}

func (c *conv) convolution(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	if len(args) < 3 {
		return nil, c.errAt(p, "%s takes input, weight and bias", name)
	}
	x, ok := args[0].(*tensor)
	w, ok2 := args[1].(*tensor)
	if !ok || !ok2 || len(args) < 7 && name == "_convolution" {
		return nil, c.errAt(p, "%s: input and weight must be tensors", name)
	}
	nd := x.rank() - 2
	get := func(i int, k string, def int64) []int64 {
		var v value
		if i < len(args) {
			v = args[i]
		} else {
			v = kw[k]
		}
		if s, ok := v.(string); ok {
			_ = s
			return nil
		}
		r, ok := intsOf(v)
		if !ok {
			r = []int64{def}
		}
		return rep(r, nd)
	}
	stride, pad, dil := get(3, "stride", 1), get(4, "padding", 0), get(5, "dilation", 1)
	groups := int64(1)
	if name == "_convolution" {
		if t, _ := args[6].(bool); t {
			// transposed: conv_transposeNd(input, weight, bias, stride, padding, output_padding, groups, dilation)
			var outPad, groups value
			if len(args) > 8 {
				outPad, groups = args[7], args[8]
			}
			return c.atenConvTranspose(p, fmt.Sprintf("conv_transpose%dd", nd), []value{x, w, args[2], args[3], args[4], outPad, groups, args[5]}, nil)
		}
		if g, ok := args[8].(int64); ok {
			groups = g
		}
	} else {
		gi := 6
		if gi < len(args) {
			groups, _ = args[gi].(int64)
		} else if g, ok := kw["groups"].(int64); ok {
			groups = g
		}
		if groups == 0 {
			groups = 1
		}
		if _, same := args[4].(string); same && len(args) > 4 {
			if s := args[4].(string); s == "same" {
				// symmetric "same" padding for odd kernels
				pad = make([]int64, nd)
				for i := 0; i < nd; i++ {
					k := (w.dims[2+i]-1)*dil[i] + 1
					if k%2 == 0 {
						return nil, nil
					}
					pad[i] = k / 2
				}
			} else {
				pad = rep([]int64{0}, nd)
			}
		}
	}
	if pad == nil {
		return nil, nil
	}
	dims := []int64{x.dims[0], w.dims[0]}
	for i := 0; i < nd; i++ {
		k := (w.dims[2+i]-1)*dil[i] + 1
		dims = append(dims, (x.dims[2+i]+2*pad[i]-k)/stride[i]+1)
	}
	in := []string{x.name, w.name}
	if b, ok := args[2].(*tensor); ok {
		in = append(in, b.name)
	}
	return c.out("Conv", "conv", in, x.dt, dims, canonical.IntsAttr("kernel_shape", w.dims[2:]...), canonical.IntsAttr("strides", stride...),
		canonical.IntsAttr("pads", append(slices.Clone(pad), pad...)...), canonical.IntsAttr("dilations", dil...), canonical.IntAttr("group", groups)), nil
}

func (c *conv) pool(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	if len(args) < 2 {
		return nil, c.errAt(p, "%s takes an input and a kernel size", name)
	}
	x, ok := args[0].(*tensor)
	if !ok {
		return nil, c.errAt(p, "%s of %s", name, describe(args[0]))
	}
	nd := x.rank() - 2
	get := func(i int, def []int64) []int64 {
		if i >= len(args) {
			return def
		}
		r, ok := intsOf(args[i])
		if !ok || len(r) == 0 {
			return def
		}
		return rep(r, nd)
	}
	k := get(1, nil)
	if k == nil {
		return nil, c.errAt(p, "%s without a kernel size", name)
	}
	stride := get(2, k)
	pad := get(3, rep([]int64{0}, nd))
	isMax := name[:3] == "max"
	dil := rep([]int64{1}, nd)
	ceilIdx, countIdx := 5, 5
	if isMax {
		dil = get(4, dil)
	} else {
		ceilIdx, countIdx = 4, 5
	}
	ceil := false
	if ceilIdx < len(args) {
		ceil, _ = args[ceilIdx].(bool)
	}
	countPad := true
	if !isMax && countIdx < len(args) {
		countPad, _ = args[countIdx].(bool)
	}
	if !isMax && len(args) > 6 && args[6] != nil {
		return nil, nil // divisor_override
	}
	dims := slices.Clone(x.dims)
	for i := 0; i < nd; i++ {
		eff := (k[i]-1)*dil[i] + 1
		num := x.dims[2+i] + 2*pad[i] - eff
		o := num/stride[i] + 1
		if ceil {
			o = (num+stride[i]-1)/stride[i] + 1
			if (o-1)*stride[i] >= x.dims[2+i]+pad[i] {
				o--
			}
		}
		dims[2+i] = o
	}
	c64 := int64(0)
	if ceil {
		c64 = 1
	}
	attrs := []*canonical.Attribute{canonical.IntsAttr("kernel_shape", k...), canonical.IntsAttr("strides", stride...), canonical.IntsAttr("pads", append(slices.Clone(pad), pad...)...), canonical.IntAttr("ceil_mode", c64)}
	op := "MaxPool"
	if isMax {
		attrs = append(attrs, canonical.IntsAttr("dilations", dil...))
	} else {
		op = "AveragePool"
		cp := int64(0)
		if countPad {
			cp = 1
		}
		attrs = append(attrs, canonical.IntAttr("count_include_pad", cp))
	}
	return c.out(op, name, []string{x.name}, x.dt, dims, attrs...), nil
}

func (c *conv) split(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	if len(args) < 1 || name != "unbind" && len(args) < 2 {
		return nil, c.errAt(p, "%s: missing arguments", name)
	}
	x, ok := args[0].(*tensor)
	if !ok {
		return nil, c.errAt(p, "%s of %s", name, describe(args[0]))
	}
	var d int64
	var sizes []int64
	switch name {
	case "unbind":
		if len(args) > 1 {
			d, _ = args[1].(int64)
		}
	case "chunk":
		n, _ := args[1].(int64)
		if len(args) > 2 {
			d, _ = args[2].(int64)
		}
		ax, err := c.axis(p, d, x.rank())
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return nil, c.errAt(p, "chunk into %d", n)
		}
		each := (x.dims[ax] + n - 1) / n
		for rest := x.dims[ax]; rest > 0; rest -= each {
			sizes = append(sizes, min(each, rest))
		}
	default:
		if len(args) > 2 {
			d, _ = args[2].(int64)
		} else if v, ok := kw["dim"].(int64); ok {
			d = v
		}
		ax, err := c.axis(p, d, x.rank())
		if err != nil {
			return nil, err
		}
		if s, ok := args[1].(int64); ok {
			if s <= 0 {
				return nil, c.errAt(p, "split size %d", s)
			}
			for rest := x.dims[ax]; rest > 0; rest -= s {
				sizes = append(sizes, min(s, rest))
			}
		} else if s, ok := intsOf(args[1]); ok {
			sizes = s
		} else {
			return nil, nil
		}
	}
	ax, err := c.axis(p, d, x.rank())
	if err != nil {
		return nil, err
	}
	if name == "unbind" {
		for i := int64(0); i < x.dims[ax]; i++ {
			sizes = append(sizes, 1)
		}
	}
	if prod(sizes) < 0 || len(sizes) > 1<<16 {
		return nil, c.errAt(p, "%s into %d parts", name, len(sizes))
	}
	// one Slice per part (rather than Split: every exporter has Slice)
	var outs []string
	start := int64(0)
	for _, n := range sizes {
		outs = append(outs, c.b.Op("Slice", name, []string{x.name, c.b.Ints("starts", start), c.b.Ints("ends", start+n), c.b.Ints("axes", int64(ax))}))
		start += n
	}
	res := &list{}
	for i, o := range outs {
		dims := slices.Clone(x.dims)
		dims[ax] = sizes[i]
		t := &tensor{name: o, dt: x.dt, dims: dims}
		if name == "unbind" {
			t = c.reshape(t, slices.Delete(slices.Clone(dims), ax, ax+1))
		}
		res.items = append(res.items, t)
	}
	if name == "unbind" || name == "split" || name == "split_with_sizes" || name == "chunk" {
		return res, nil
	}
	return &tuple{items: res.items}, nil
}
