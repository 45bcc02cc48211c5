package tfops

import (
	"errors"
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
)

// mathOps are the elementwise math ops beyond the activations of opTable:
// trig and hyperbolic functions, rounding, predicates, integer division,
// AddN, ClipByValue; opTable merges them in.
func mathOps() map[string]opFunc {
	un := func(op string) opFunc {
		return func(c *converter, n *Node) error {
			return c.ew(n, 1, canonical.Undefined, func(ins []string) string { return c.b.Op(op, n.Name, ins) })
		}
	}
	pred := func(build func(c *converter, n *Node, x string) string) opFunc {
		return func(c *converter, n *Node) error {
			return c.ew(n, 1, canonical.Bool, func(ins []string) string { return build(c, n, ins[0]) })
		}
	}
	return map[string]opFunc{
		"Acos":  un("Acos"),
		"Asin":  un("Asin"),
		"Atan":  un("Atan"),
		"Cos":   un("Cos"),
		"Cosh":  un("Cosh"),
		"Sin":   un("Sin"),
		"Sinh":  un("Sinh"),
		"Tan":   un("Tan"),
		"Asinh": un("Asinh"),
		"Acosh": un("Acosh"),
		"Atanh": un("Atanh"),
		"Erf":   un("Erf"),
		"Sign":  un("Sign"),
		"Round": un("Round"), // both round half to even
		"Expm1": func(c *converter, n *Node) error {
			return c.ew(n, 1, canonical.Undefined, func(ins []string) string {
				return c.b.Op("Sub", n.Name, []string{c.b.Op("Exp", n.Name+"_exp", ins), c.like(1, ins[0])})
			})
		},
		"Log1p": func(c *converter, n *Node) error {
			return c.ew(n, 1, canonical.Undefined, func(ins []string) string {
				return c.b.Op("Log", n.Name, []string{c.b.Op("Add", n.Name+"_1p", []string{ins[0], c.like(1, ins[0])})})
			})
		},
		"IsNan": pred(func(c *converter, n *Node, x string) string { return c.b.Op("IsNaN", n.Name, []string{x}) }),
		"IsInf": pred(func(c *converter, n *Node, x string) string { return c.b.Op("IsInf", n.Name, []string{x}) }),
		"IsFinite": pred(func(c *converter, n *Node, x string) string {
			bad := c.b.Op("Or", n.Name+"_bad", []string{c.b.Op("IsNaN", n.Name+"_nan", []string{x}), c.b.Op("IsInf", n.Name+"_inf", []string{x})})
			return c.b.Op("Not", n.Name, []string{bad})
		}),
		"AddN": func(c *converter, n *Node) error {
			k := dataInputs(n)
			if k < 1 {
				return errors.New("AddN of no values")
			}
			return c.ew(n, k, canonical.Undefined, func(ins []string) string { return c.b.Op("Sum", n.Name, ins) })
		},
		"ClipByValue": func(c *converter, n *Node) error {
			return c.ew(n, 3, canonical.Undefined, func(ins []string) string {
				return c.b.Op("Max", n.Name, []string{c.b.Op("Min", n.Name+"_max", []string{ins[0], ins[2]}), ins[1]})
			})
		},
		"FloorDiv": (*converter).floorDiv,
		"FloorMod": (*converter).floorMod,
		// TF.js runs Mod as tf.mod, whose result takes the divisor's
		// sign (a floor modulo), as FloorMod.
		"Mod": (*converter).floorMod,
		"DivNoNan": func(c *converter, n *Node) error {
			return c.ew(n, 2, canonical.Undefined, func(ins []string) string {
				zero := c.like(0, ins[1])
				isZero := c.b.Op("Equal", n.Name+"_zero", []string{ins[1], zero})
				safe := c.b.Op("Where", n.Name+"_safe", []string{isZero, c.like(1, ins[1]), ins[1]})
				q := c.b.Op("Div", n.Name+"_div", []string{ins[0], safe})
				return c.b.Op("Where", n.Name, []string{isZero, c.b.Op("CastLike", n.Name+"_zeros", []string{zero, q}), q})
			})
		},
		"Atan2": (*converter).atan2,
		"Relu":  un("Relu"),
	}
}

// like is a scalar constant v of the element type of ONNX value x.
func (c *converter) like(v float32, x string) string {
	return c.b.Op("CastLike", "const", []string{c.b.Scalar("scalar", v), x})
}

// ew is an elementwise op of n's first k inputs, in the layout they share
// (NCHW when a 4-D operand is held so), with output type dt (Undefined:
// the first input's).
func (c *converter) ew(n *Node, k int, dt canonical.DataType, build func(ins []string) string) error {
	vs, err := c.inputs(n, k)
	if err != nil {
		return err
	}
	if err := c.emitElementwise(n, vs, build); err != nil {
		return err
	}
	if dt != canonical.Undefined {
		c.vals[n.Name+":0"].dt = dt
	}
	return nil
}

func isInt(dt canonical.DataType) bool {
	switch dt {
	case canonical.Int8, canonical.Int16, canonical.Int32, canonical.Int64, canonical.Uint8, canonical.Uint16, canonical.Uint32, canonical.Uint64:
		return true
	}
	return false
}

// floorMod is x − floor(x/y)·y: ONNX Mod with fmod=0 for integers (the
// result takes the divisor's sign), the formula for floats.
func (c *converter) floorMod(n *Node) error {
	vs, err := c.inputs(n, 2)
	if err != nil {
		return err
	}
	return c.emitElementwise(n, vs, func(ins []string) string {
		if isInt(vs[0].dt) {
			return c.b.Op("Mod", n.Name, ins, canonical.IntAttr("fmod", 0))
		}
		q := c.b.Op("Floor", n.Name+"_floor", []string{c.b.Op("Div", n.Name+"_div", ins)})
		return c.b.Op("Sub", n.Name, []string{ins[0], c.b.Op("Mul", n.Name+"_mul", []string{q, ins[1]})})
	})
}

// floorDiv is floor(x/y): Floor(Div) for floats, (x − floormod(x, y))/y
// (an exact division) for integers.
func (c *converter) floorDiv(n *Node) error {
	vs, err := c.inputs(n, 2)
	if err != nil {
		return err
	}
	return c.emitElementwise(n, vs, func(ins []string) string {
		if isInt(vs[0].dt) {
			m := c.b.Op("Mod", n.Name+"_mod", ins, canonical.IntAttr("fmod", 0))
			return c.b.Op("Div", n.Name, []string{c.b.Op("Sub", n.Name+"_sub", []string{ins[0], m}), ins[1]})
		}
		return c.b.Op("Floor", n.Name, []string{c.b.Op("Div", n.Name+"_div", ins)})
	})
}

// atan2 is Atan2(y, x): atan(y/x), plus π·(y ≥ 0 ? 1 : −1) where x < 0,
// and 0 where both are 0.
func (c *converter) atan2(n *Node) error {
	vs, err := c.inputs(n, 2)
	if err != nil {
		return err
	}
	return c.emitElementwise(n, vs, func(ins []string) string {
		y, x := ins[0], ins[1]
		zero := c.like(0, x)
		base := c.b.Op("Atan", n.Name+"_atan", []string{c.b.Op("Div", n.Name+"_ratio", []string{y, x})})
		pi := c.like(float32(math.Pi), x)
		negPi := c.like(-float32(math.Pi), x)
		turn := c.b.Op("Where", n.Name+"_turn", []string{c.b.Op("GreaterOrEqual", n.Name+"_ypos", []string{y, zero}), pi, negPi})
		xneg := c.b.Op("Less", n.Name+"_xneg", []string{x, zero})
		r := c.b.Op("Add", n.Name+"_sum", []string{base, c.b.Op("Where", n.Name+"_add", []string{xneg, turn, c.b.Op("CastLike", n.Name+"_z", []string{zero, turn})})})
		both := c.b.Op("And", n.Name+"_origin", []string{c.b.Op("Equal", n.Name+"_x0", []string{x, zero}), c.b.Op("Equal", n.Name+"_y0", []string{y, zero})})
		return c.b.Op("Where", n.Name, []string{both, c.b.Op("CastLike", n.Name+"_zr", []string{zero, r}), r})
	})
}

var _ = fmt.Sprintf
