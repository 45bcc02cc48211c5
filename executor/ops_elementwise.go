package executor

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"

	"github.com/onnxconv/onnxconv/canonical"
)

// Elementwise arithmetic, comparison and logic with numpy broadcasting.

func registerElementwise(r registry) {
	type bin struct {
		op string
		g  func(a, b *graph.Node) *graph.Node
		i  func(a, b int64) int64
		f  func(a, b float64) float64
	}
	for _, b := range []bin{
		{"Add", graph.Add, func(a, b int64) int64 { return a + b }, func(a, b float64) float64 { return a + b }},
		{"Sub", graph.Sub, func(a, b int64) int64 { return a - b }, func(a, b float64) float64 { return a - b }},
		{"Mul", graph.Mul, func(a, b int64) int64 { return a * b }, func(a, b float64) float64 { return a * b }},
		{"Div", graph.Div, func(a, b int64) int64 {
			if b == 0 {
				return 0
			}
			return a / b
		}, func(a, b float64) float64 { return a / b }},
	} {
		b := b
		r.lower(lowerBinary(b.g), b.op)
		r.host(hostBinary(b.i, b.f), b.op)
	}
	r.lower(lowerPow, "Pow")
	r.host(hostPow, "Pow")
	r.lower(lowerMod, "Mod")
	r.host(hostMod, "Mod")
	for _, op := range []string{"Max", "Min", "Sum", "Mean"} {
		op := op
		r.lower(func(c *lctx) error { return lowerVariadic(c, op) }, op)
		r.host(func(c *lctx) error { return hostVariadic(c, op) }, op)
	}
	type cmp struct {
		op string
		g  func(a, b *graph.Node) *graph.Node
		f  func(a, b float64) bool
		i  func(a, b int64) bool
	}
	for _, cm := range []cmp{
		{"Equal", graph.Equal, func(a, b float64) bool { return a == b }, func(a, b int64) bool { return a == b }},
		{"Less", graph.LessThan, func(a, b float64) bool { return a < b }, func(a, b int64) bool { return a < b }},
		{"LessOrEqual", graph.LessOrEqual, func(a, b float64) bool { return a <= b }, func(a, b int64) bool { return a <= b }},
		{"Greater", graph.GreaterThan, func(a, b float64) bool { return a > b }, func(a, b int64) bool { return a > b }},
		{"GreaterOrEqual", graph.GreaterOrEqual, func(a, b float64) bool { return a >= b }, func(a, b int64) bool { return a >= b }},
	} {
		cm := cm
		r.lower(func(c *lctx) error {
			if _, ok := gomlxDType(c.DT(0)); !ok {
				return errUseHost
			}
			xs := bcastNodes(c.X(0), c.X(1))
			if c.DT(0) == canonical.Bool {
				if cm.op != "Equal" {
					return errUseHost
				}
				c.Out(0, graph.LogicalNot(graph.LogicalXor(xs[0], xs[1])), canonical.Bool)
				return nil
			}
			c.Out(0, cm.g(xs[0], xs[1]), canonical.Bool)
			return nil
		}, cm.op)
		r.host(hostCompare(cm.f, cm.i, cm.op == "Equal"), cm.op)
	}
	type logic struct {
		op string
		g  func(a, b *graph.Node) *graph.Node
		f  func(a, b bool) bool
	}
	for _, l := range []logic{
		{"And", graph.LogicalAnd, func(a, b bool) bool { return a && b }},
		{"Or", graph.LogicalOr, func(a, b bool) bool { return a || b }},
		{"Xor", graph.LogicalXor, func(a, b bool) bool { return a != b }},
	} {
		l := l
		r.lower(func(c *lctx) error {
			xs := bcastNodes(c.X(0), c.X(1))
			c.Out(0, l.g(xs[0], xs[1]), canonical.Bool)
			return nil
		}, l.op)
		r.host(func(c *lctx) error {
			a, b, out, ia, ib, err := hostPair(c)
			if err != nil {
				return err
			}
			res := newH(canonical.Bool, out)
			x, y, z := a.data.([]bool), b.data.([]bool), res.data.([]bool)
			for k := range z {
				z[k] = l.f(x[ia[k]], y[ib[k]])
			}
			c.OutH(0, res)
			return nil
		}, l.op)
	}
	r.lower(func(c *lctx) error { c.Out(0, graph.LogicalNot(c.X(0)), canonical.Bool); return nil }, "Not")
	r.host(func(c *lctx) error {
		a, err := c.H(0)
		if err != nil {
			return err
		}
		res := newH(canonical.Bool, a.shape)
		for k, v := range a.data.([]bool) {
			res.data.([]bool)[k] = !v
		}
		c.OutH(0, res)
		return nil
	}, "Not")
	for _, b := range []struct {
		op string
		g  func(a, b *graph.Node) *graph.Node
	}{{"BitwiseAnd", graph.BitwiseAnd}, {"BitwiseOr", graph.BitwiseOr}, {"BitwiseXor", graph.BitwiseXor}} {
		r.lower(lowerBinary(b.g), b.op)
	}
	r.lower(func(c *lctx) error { c.Out(0, graph.BitwiseNot(c.X(0)), c.DT(0)); return nil }, "BitwiseNot")
	r.host(hostBitShift, "BitShift")
	r.lower(lowerWhere, "Where")
	r.host(hostWhere, "Where")
}

func lowerBinary(f func(a, b *graph.Node) *graph.Node) func(*lctx) error {
	return func(c *lctx) error {
		dt := c.DT(0)
		if _, ok := gomlxDType(dt); !ok {
			return errUseHost
		}
		xs := bcastNodes(c.X(0), c.X(1))
		c.Out(0, f(xs[0], xs[1]), dt)
		return nil
	}
}

// hostPair reads a binary op's two host inputs, their broadcast output
// shape and, per output element, the index of its element in a and b.
func hostPair(c *lctx) (a, b *htensor, out, ia, ib []int, err error) {
	if a, err = c.H(0); err != nil {
		return
	}
	if b, err = c.H(1); err != nil {
		return
	}
	if out, err = bcastShape(a.shape, b.shape); err != nil {
		return
	}
	return a, b, out, bcastIdx(out, a.shape), bcastIdx(out, b.shape), nil
}

// hostBinary computes an arithmetic op on the host: integers in int64,
// floats in float64.
func hostBinary(fi func(a, b int64) int64, ff func(a, b float64) float64) func(*lctx) error {
	return func(c *lctx) error {
		a, b, out, ia, ib, err := hostPair(c)
		if err != nil {
			return err
		}
		if isIntType(a.dt) {
			x, y := a.i64(), b.i64()
			z := make([]int64, len(ia))
			for k := range z {
				z[k] = fi(x[ia[k]], y[ib[k]])
			}
			c.OutH(0, fromI64(a.dt, out, z))
			return nil
		}
		if !isFloatType(a.dt) {
			return fmt.Errorf("type %v is not supported", a.dt)
		}
		x, y := a.f64(), b.f64()
		z := make([]float64, len(ia))
		for k := range z {
			z[k] = ff(x[ia[k]], y[ib[k]])
		}
		c.OutH(0, fromF64(a.dt, out, z))
		return nil
	}
}

func hostCompare(ff func(a, b float64) bool, fi func(a, b int64) bool, strEq bool) func(*lctx) error {
	return func(c *lctx) error {
		a, b, out, ia, ib, err := hostPair(c)
		if err != nil {
			return err
		}
		res := newH(canonical.Bool, out)
		z := res.data.([]bool)
		switch {
		case a.dt == canonical.String:
			if !strEq {
				return fmt.Errorf("strings only support Equal")
			}
			x, y := a.data.([]string), b.data.([]string)
			for k := range z {
				z[k] = x[ia[k]] == y[ib[k]]
			}
		case isIntType(a.dt) || a.dt == canonical.Bool:
			x, y := a.i64(), b.i64()
			for k := range z {
				z[k] = fi(x[ia[k]], y[ib[k]])
			}
		default:
			x, y := a.f64(), b.f64()
			for k := range z {
				z[k] = ff(x[ia[k]], y[ib[k]])
			}
		}
		c.OutH(0, res)
		return nil
	}
}

func lowerPow(c *lctx) error {
	dt := c.DT(0)
	if !isFloatType(dt) {
		return errUseHost
	}
	// x^2 with a constant exponent (LayerNorm decomposed at opset < 17):
	// x·x is the same correctly rounded square, without simplego's
	// float64 math.Pow per element.
	if s := c.in(1); s.valStatic && s.h != nil && s.h.size() == 1 && len(s.h.shape) <= len(c.Shape(0)) {
		if v := s.h.f64(); v[0] == 2 {
			x := c.X(0)
			c.Out(0, graph.Mul(x, x), dt)
			return nil
		}
	}
	x, y := c.X(0), c.X(1)
	if y.DType() != x.DType() {
		y = graph.ConvertDType(y, x.DType())
	}
	xs := bcastNodes(x, y)
	c.Out(0, graph.Pow(xs[0], xs[1]), dt)
	return nil
}

func hostPow(c *lctx) error {
	a, b, out, ia, ib, err := hostPair(c)
	if err != nil {
		return err
	}
	if isIntType(a.dt) {
		x, y := a.i64(), b.f64()
		z := make([]int64, len(ia))
		for k := range z {
			z[k] = int64(math.Pow(float64(x[ia[k]]), y[ib[k]]))
		}
		c.OutH(0, fromI64(a.dt, out, z))
		return nil
	}
	x, y := a.f64(), b.f64()
	z := make([]float64, len(ia))
	for k := range z {
		z[k] = math.Pow(x[ia[k]], y[ib[k]])
	}
	c.OutH(0, fromF64(a.dt, out, z))
	return nil
}

func lowerMod(c *lctx) error {
	dt := c.DT(0)
	if _, ok := gomlxDType(dt); !ok {
		return errUseHost
	}
	xs := bcastNodes(c.X(0), c.X(1))
	a, b := xs[0], xs[1]
	r := graph.Rem(a, b)
	if c.AInt("fmod", 0) == 1 || dt.String() == "" {
		c.Out(0, r, dt)
		return nil
	}
	if isFloatType(dt) {
		// Python modulo on floats with fmod=0 is not defined by ONNX; it
		// is the same as fmod for the spec's examples.
		return errUseHost
	}
	if a.DType().IsUnsigned() {
		c.Out(0, r, dt)
		return nil
	}
	zero := scalarLike(r, 0)
	// sign of r differs from sign of b and r != 0 -> r + b
	fix := graph.LogicalAnd(graph.NotEqual(r, zero), graph.LogicalXor(graph.LessThan(r, zero), graph.LessThan(b, zero)))
	c.Out(0, graph.Where(fix, graph.Add(r, b), r), dt)
	return nil
}

func hostMod(c *lctx) error {
	fm := c.AInt("fmod", 0) == 1
	return hostBinary(func(a, b int64) int64 {
		if b == 0 {
			return 0
		}
		r := a % b
		if !fm && r != 0 && (r < 0) != (b < 0) {
			r += b
		}
		return r
	}, func(a, b float64) float64 {
		r := math.Mod(a, b)
		if !fm && r != 0 && (r < 0) != (b < 0) {
			r += b
		}
		return r
	})(c)
}

func lowerVariadic(c *lctx, op string) error {
	dt := c.DT(0)
	if _, ok := gomlxDType(dt); !ok {
		return errUseHost
	}
	var xs []*graph.Node
	for i := 0; i < c.NIn(); i++ {
		if c.Has(i) {
			xs = append(xs, c.X(i))
		}
	}
	xs = bcastNodes(xs...)
	acc := xs[0]
	for _, x := range xs[1:] {
		switch op {
		case "Max":
			acc = nanMax(acc, x)
		case "Min":
			acc = nanMin(acc, x)
		default:
			acc = graph.Add(acc, x)
		}
	}
	if op == "Mean" {
		acc = graph.Div(acc, scalarLike(acc, float64(len(xs))))
	}
	c.Out(0, acc, dt)
	return nil
}

// nanMax is Max that propagates NaN (as numpy.maximum does).
func nanMax(a, b *graph.Node) *graph.Node {
	m := graph.Max(a, b)
	if !a.DType().IsFloat() {
		return m
	}
	return graph.Where(graph.IsNaN(a), a, graph.Where(graph.IsNaN(b), b, m))
}

func nanMin(a, b *graph.Node) *graph.Node {
	m := graph.Min(a, b)
	if !a.DType().IsFloat() {
		return m
	}
	return graph.Where(graph.IsNaN(a), a, graph.Where(graph.IsNaN(b), b, m))
}

func hostVariadic(c *lctx, op string) error {
	var hs []*htensor
	var shs [][]int
	for i := 0; i < c.NIn(); i++ {
		if c.Has(i) {
			h, err := c.H(i)
			if err != nil {
				return err
			}
			hs = append(hs, h)
			shs = append(shs, h.shape)
		}
	}
	out, err := bcastShape(shs...)
	if err != nil {
		return err
	}
	n := numel(out)
	acc := make([]float64, n)
	isInt := isIntType(hs[0].dt)
	acci := make([]int64, n)
	for j, h := range hs {
		idx := bcastIdx(out, h.shape)
		if isInt {
			v := h.i64()
			for k := range acci {
				x := v[idx[k]]
				switch {
				case j == 0:
					acci[k] = x
				case op == "Max":
					if x > acci[k] {
						acci[k] = x
					}
				case op == "Min":
					if x < acci[k] {
						acci[k] = x
					}
				default:
					acci[k] += x
				}
			}
			continue
		}
		v := h.f64()
		for k := range acc {
			x := v[idx[k]]
			switch {
			case j == 0:
				acc[k] = x
			case op == "Max":
				if x > acc[k] || math.IsNaN(x) {
					acc[k] = x
				}
			case op == "Min":
				if x < acc[k] || math.IsNaN(x) {
					acc[k] = x
				}
			default:
				acc[k] += x
			}
		}
	}
	if isInt {
		if op == "Mean" {
			for k := range acci {
				acci[k] /= int64(len(hs))
			}
		}
		c.OutH(0, fromI64(hs[0].dt, out, acci))
		return nil
	}
	if op == "Mean" {
		for k := range acc {
			acc[k] /= float64(len(hs))
		}
	}
	c.OutH(0, fromF64(hs[0].dt, out, acc))
	return nil
}

func hostBitShift(c *lctx) error {
	left := c.AStr("direction", "") == "LEFT"
	a, b, out, ia, ib, err := hostPair(c)
	if err != nil {
		return err
	}
	x, y := a.i64(), b.i64()
	z := make([]int64, len(ia))
	bits := uint(canonical.ElemBits(a.dt))
	for k := range z {
		u := uint64(x[ia[k]])
		if bits < 64 {
			u &= (1 << bits) - 1
		}
		s := uint64(y[ib[k]])
		if left {
			u <<= s
		} else {
			u >>= s
		}
		z[k] = int64(u)
	}
	c.OutH(0, fromI64(a.dt, out, z))
	return nil
}

func lowerWhere(c *lctx) error {
	dt := c.DT(1)
	if _, ok := gomlxDType(dt); !ok {
		return errUseHost
	}
	xs := bcastNodes(c.X(0), c.X(1), c.X(2))
	c.Out(0, graph.Where(xs[0], xs[1], xs[2]), dt)
	return nil
}

func hostWhere(c *lctx) error {
	cond, err := c.H(0)
	if err != nil {
		return err
	}
	a, err := c.H(1)
	if err != nil {
		return err
	}
	b, err := c.H(2)
	if err != nil {
		return err
	}
	out, err := bcastShape(cond.shape, a.shape, b.shape)
	if err != nil {
		return err
	}
	ic, ia, ib := bcastIdx(out, cond.shape), bcastIdx(out, a.shape), bcastIdx(out, b.shape)
	cv := cond.data.([]bool)
	idx := make([]int, len(ic))
	// gather from the concatenation of a and b
	na := a.size()
	for k := range idx {
		if cv[ic[k]] {
			idx[k] = ia[k]
		} else {
			idx[k] = na + ib[k]
		}
	}
	all := &htensor{dt: a.dt, data: concatAny([]any{a.data, b.data})}
	c.OutH(0, hTake(all, out, idx))
	return nil
}

var _ = dtypes.Float32
