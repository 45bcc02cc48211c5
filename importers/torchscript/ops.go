package torchscript

import (
	"fmt"
	"math"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	fts "github.com/onnxconv/onnxconv/formats/torchscript"
)

// op applies the TorchScript builtin name (aten op "conv2d", "prim::x",
// "builtins::x") to args: folded when every argument is known when
// converting, else mapped to ONNX nodes.
func (c *conv) op(p fts.Pos, name string, args []value, kw map[string]value) (value, error) {
	if !strings.HasSuffix(name, "__") {
		name = strings.TrimSuffix(name, "_") // in-place variants (relu_, add_) compute the same
	}
	poisoned := false
	for _, a := range args {
		if isPoison(a) {
			poisoned = true
		}
	}
	for _, a := range kw {
		if _, ok := a.(poison); ok {
			poisoned = true
		}
	}
	if poisoned {
		// after an unmapped op: list this one too when it is not mapped
		if c.aten[name] == nil && !strings.Contains(name, "::") && !strings.HasPrefix(name, "__") {
			c.unsup.Add("aten::"+name, fmt.Sprintf("%s:%d", p.File, p.Line), "")
		}
		return poison{}, nil
	}
	if name == "" {
		name = "_"
	}
	if v, done, err := c.pyOp(p, name, args, kw); done || err != nil {
		return v, err
	}
	v, err := c.tensorOp(p, name, args, kw)
	if err != nil {
		return nil, err
	}
	if v == nil {
		node := fmt.Sprintf("%s:%d", p.File, p.Line)
		full := name
		if !strings.Contains(full, "::") {
			full = "aten::" + full
		}
		c.unsup.Add(full, node, "")
		return poison{}, nil
	}
	return v, nil
}

func hasTensor(args []value) bool {
	for _, a := range args {
		switch x := a.(type) {
		case *tensor:
			return true
		case *list:
			if hasTensor(x.items) {
				return true
			}
		case *tuple:
			if hasTensor(x.items) {
				return true
			}
		}
	}
	return false
}

func num(v value) (float64, bool) {
	switch v := v.(type) {
	case int64:
		return float64(v), true
	case float64:
		return v, true
	case bool:
		if v {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

func isInt(v value) bool {
	switch v.(type) {
	case int64, bool:
		return true
	}
	return false
}

func toInt(v value) int64 {
	switch v := v.(type) {
	case int64:
		return v
	case bool:
		if v {
			return 1
		}
	case float64:
		return int64(v)
	}
	return 0
}

// pyOp folds ops on values known when converting: the Python builtins
// and TorchScript primitives of the registry (pyOps), then arithmetic.
func (c *conv) pyOp(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	if f := c.py[name]; f != nil {
		return f(c, p, name, args, kw)
	}
	return c.pyFold(p, name, args, kw)
}

// pyFold folds the arithmetic, comparisons and math functions of values
// known when converting: numbers, lists and complex numbers.
func (c *conv) pyFold(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	if l, ok := call.pos(0).(*list); ok && len(args) == 2 && !hasTensor(args) {
		switch name {
		case "mul":
			n, ok := call.pos(1).(int64)
			if !ok || n*int64(len(l.items)) > maxSteps {
				return nil, true, c.errAt(p, "list repeated %s times", describe(call.pos(1)))
			}
			out := &list{}
			for i := int64(0); i < n; i++ {
				out.items = append(out.items, l.items...)
			}
			return out, true, nil
		case "add":
			m, ok := call.pos(1).(*list)
			if !ok {
				return nil, true, c.errAt(p, "list + %s", describe(call.pos(1)))
			}
			return &list{items: append(append([]value{}, l.items...), m.items...)}, true, nil
		}
	}
	if z, ok := call.pos(0).(*complexT); ok {
		switch name {
		case "abs":
			return c.complexAbs(z), true, nil
		case "view_as_real":
			return c.complexAsReal(p, z)
		case "real":
			return z.re, true, nil
		case "imag":
			return z.im, true, nil
		}
		return nil, true, c.errAt(p, "%s of a complex tensor is not mapped (abs, real, imag and view_as_real are)", name)
	}
	if hasTensor(args) {
		return nil, false, nil
	}
	// arithmetic and comparisons of numbers
	if len(args) == 1 || (len(args) == 2 && name != "pow" || name == "pow") {
		x, okx := num(call.pos(0))
		if !okx {
			if name == "eq" || name == "ne" {
				eq := pyEqual(call.pos(0), call.pos(1))
				if s, ok := call.pos(0).(string); ok {
					t, _ := call.pos(1).(string)
					eq = s == t
				}
				if a, ok := call.pos(0).(device); ok {
					b, _ := call.pos(1).(device)
					eq = a == b
				}
				return eq == (name == "eq"), true, nil
			}
			return nil, false, nil
		}
		if len(args) == 1 {
			switch name {
			case "neg":
				if isInt(call.pos(0)) {
					return -toInt(call.pos(0)), true, nil
				}
				return -x, true, nil
			case "builtins::abs", "abs":
				if isInt(call.pos(0)) {
					v := toInt(call.pos(0))
					if v < 0 {
						v = -v
					}
					return v, true, nil
				}
				return math.Abs(x), true, nil
			case "sqrt", "math.sqrt":
				return math.Sqrt(x), true, nil
			case "floor", "math.floor":
				return int64(math.Floor(x)), true, nil
			case "ceil", "math.ceil":
				return int64(math.Ceil(x)), true, nil
			}
			return nil, false, nil
		}
		y, oky := num(call.pos(1))
		if !oky {
			return nil, false, nil
		}
		ints := isInt(call.pos(0)) && isInt(call.pos(1))
		xi, yi := toInt(call.pos(0)), toInt(call.pos(1))
		switch name {
		case "eq":
			return x == y, true, nil
		case "ne":
			return x != y, true, nil
		case "lt":
			return x < y, true, nil
		case "gt":
			return x > y, true, nil
		case "le":
			return x <= y, true, nil
		case "ge":
			return x >= y, true, nil
		case "add":
			if ints {
				return xi + yi, true, nil
			}
			return x + y, true, nil
		case "sub":
			if ints {
				return xi - yi, true, nil
			}
			return x - y, true, nil
		case "mul":
			if ints {
				return xi * yi, true, nil
			}
			return x * y, true, nil
		case "div", "true_divide":
			if y == 0 {
				return nil, true, c.errAt(p, "division by zero")
			}
			return x / y, true, nil
		case "floordiv", "floor_divide":
			if y == 0 {
				return nil, true, c.errAt(p, "division by zero")
			}
			if ints {
				q := xi / yi
				if (xi%yi != 0) && ((xi < 0) != (yi < 0)) {
					q--
				}
				return q, true, nil
			}
			return math.Floor(x / y), true, nil
		case "remainder", "fmod":
			if y == 0 {
				return nil, true, c.errAt(p, "modulo by zero")
			}
			if ints {
				r := xi % yi
				if r != 0 && (r < 0) != (yi < 0) {
					r += yi
				}
				return r, true, nil
			}
			return x - math.Floor(x/y)*y, true, nil
		case "pow":
			if ints && yi >= 0 {
				return int64(math.Pow(x, y)), true, nil
			}
			return math.Pow(x, y), true, nil
		case "__and__":
			return xi & yi, true, nil
		case "__or__":
			return xi | yi, true, nil
		case "builtins::min":
			return math.Min(x, y), true, nil
		}
	}
	return nil, false, nil
}

// pyIs folds __is__, __isnot__.
func (c *conv) pyIs(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	_, n0 := call.pos(0).(uninitialized)
	eq := same(call.pos(0), call.pos(1)) || (call.pos(0) == nil && call.pos(1) == nil) || n0 && call.pos(1) == nil
	return eq == (name == "__is__"), true, nil
}

// pyNot folds __not__; what it does not fold goes on to pyFold.
func (c *conv) pyNot(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	b, ok := truth(call.pos(0))
	if ok {
		return !b, true, nil
	}
	return c.pyFold(p, name, args, kw)
}

// pyDtype folds prim::dtype; what it does not fold goes on to pyFold.
func (c *conv) pyDtype(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	if t, ok := call.pos(0).(*tensor); ok {
		return scalarTypeOf(t.dt), true, nil
	}
	return c.pyFold(p, name, args, kw)
}

// pyDevice folds prim::device.
func (c *conv) pyDevice(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	return device("cpu"), true, nil
}

// pyPassthrough folds prim::NumToTensor, prim::unchecked_unwrap_optional,
// _unwrap_optional, jit._unwrap_optional, prim::unchecked_cast, detach,
// contiguous, clone, requires_grad, prim::data; what it does not fold goes
// on to pyFold.
func (c *conv) pyPassthrough(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	if _, ok := call.pos(0).(*tensor); ok || name == "prim::NumToTensor" || name == "_unwrap_optional" || name == "prim::unchecked_unwrap_optional" || name == "jit._unwrap_optional" {
		return call.pos(0), true, nil
	}
	return c.pyFold(p, name, args, kw)
}

// pyFalse folds is_grad_enabled, prim::requires_grad.
func (c *conv) pyFalse(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	// The walk takes the autograd path: nn.TransformerEncoderLayer's
	// composite ops rather than its fused inference kernel (the same
	// math, which torch picks only under no_grad).
	return true, true, nil
}

// pyAppend folds append; what it does not fold goes on to pyFold.
func (c *conv) pyAppend(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	if l, ok := call.pos(0).(*list); ok {
		v, err := c.listMethod(p, l, "append", args[1:])
		return v, true, err
	}
	return c.pyFold(p, name, args, kw)
}

// pyFind folds find; what it does not fold goes on to pyFold.
func (c *conv) pyFind(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	if s, ok := call.pos(0).(string); ok {
		sub, _ := call.pos(1).(string)
		return int64(strings.Index(s, sub)), true, nil
	}
	return c.pyFold(p, name, args, kw)
}

// pyAllAny folds all, any; what it does not fold goes on to pyFold.
func (c *conv) pyAllAny(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	if l, ok := call.pos(0).(*list); ok && !hasTensor(l.items) {
		all := name == "all"
		for _, it := range l.items {
			b, _ := truth(it)
			if name == "all" && !b {
				return false, true, nil
			}
			if name == "any" && b {
				return true, true, nil
			}
		}
		return all, true, nil
	}
	return c.pyFold(p, name, args, kw)
}

// pyWarn folds warn, prim::warn, builtins::print, _assert.
func (c *conv) pyWarn(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	return nil, true, nil
}

// pyTrue folds is_scripting, jit.is_scripting.
func (c *conv) pyTrue(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	return true, true, nil
}

// pyTracing folds jit.is_tracing, _C._get_tracing_state.
func (c *conv) pyTracing(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	return false, true, nil
}

// pyIsDevice folds prim::is_cuda, is_cuda, prim::is_nested, prim::is_sparse,
// prim::is_mkldnn, prim::is_quantized, prim::is_meta.
func (c *conv) pyIsDevice(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	return false, true, nil
}

// pyNoTorchFunction folds is_autocast_enabled, overrides.has_torch_function,
// _C._has_torch_function.
func (c *conv) pyNoTorchFunction(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	return false, true, nil
}

// pyDim folds dim, prim::dim; what it does not fold goes on to pyFold.
func (c *conv) pyDim(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	if t, ok := call.pos(0).(*tensor); ok {
		return int64(t.rank()), true, nil
	}
	return c.pyFold(p, name, args, kw)
}

// pySize folds size, builtins::size; what it does not fold goes on to
// pyFold.
func (c *conv) pySize(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	if t, ok := call.pos(0).(*tensor); ok {
		if len(args) >= 2 {
			d, ok := call.pos(1).(int64)
			if !ok {
				return nil, true, c.errAt(p, "size of a dim that is not an int")
			}
			ax, err := c.axis(p, d, t.rank())
			if err != nil {
				return nil, true, err
			}
			return t.dims[ax], true, nil
		}
		l := &list{}
		for _, d := range t.dims {
			l.items = append(l.items, d)
		}
		return l, true, nil
	}
	return c.pyFold(p, name, args, kw)
}

// pyNumel folds numel; what it does not fold goes on to pyFold.
func (c *conv) pyNumel(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	if t, ok := call.pos(0).(*tensor); ok {
		n := int64(1)
		for _, d := range t.dims {
			n *= d
		}
		return n, true, nil
	}
	return c.pyFold(p, name, args, kw)
}

// pyLen folds len, builtins::len; what it does not fold goes on to pyFold.
func (c *conv) pyLen(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	switch x := call.pos(0).(type) {
	case *list:
		return int64(len(x.items)), true, nil
	case *tuple:
		return int64(len(x.items)), true, nil
	case string:
		return int64(len(x)), true, nil
	case *tensor:
		if x.rank() == 0 {
			return nil, true, c.errAt(p, "len of a 0-d tensor")
		}
		return x.dims[0], true, nil
	}
	return c.pyFold(p, name, args, kw)
}

// pyStr folds builtins::str, str.
func (c *conv) pyStr(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	if d, ok := call.pos(0).(device); ok {
		return string(d), true, nil
	}
	if s, ok := call.pos(0).(string); ok {
		return s, true, nil
	}
	return "", true, nil
}

// pyFormat folds format.
func (c *conv) pyFormat(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	return "", true, nil
}

// pyList folds list, builtins::list; what it does not fold goes on to
// pyFold.
func (c *conv) pyList(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	switch x := call.pos(0).(type) {
	case *list:
		return &list{items: append([]value{}, x.items...)}, true, nil
	case *tuple:
		return &list{items: append([]value{}, x.items...)}, true, nil
	}
	return c.pyFold(p, name, args, kw)
}

// pyRange folds builtins::range.
func (c *conv) pyRange(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	r := &rangeVal{step: 1}
	switch len(args) {
	case 1:
		r.stop = toInt(call.pos(0))
	case 2, 3:
		r.start, r.stop = toInt(call.pos(0)), toInt(call.pos(1))
		if len(args) == 3 {
			r.step = toInt(call.pos(2))
		}
	}
	for _, a := range args {
		if !isInt(a) {
			if _, ok := a.(*tensor); ok {
				return nil, false, nil
			}
			return nil, true, c.errAt(p, "range of %s", describe(a))
		}
	}
	if r.step == 0 {
		return nil, true, c.errAt(p, "range with step 0")
	}
	return r, true, nil
}

// pyRangeLength folds __range_length.
func (c *conv) pyRangeLength(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	lo, hi, st := toInt(call.pos(0)), toInt(call.pos(1)), toInt(call.pos(2))
	if st == 0 {
		return nil, true, c.errAt(p, "range with step 0")
	}
	n := int64(0)
	if st > 0 && lo < hi {
		n = (hi - lo + st - 1) / st
	} else if st < 0 && lo > hi {
		n = (lo - hi - st - 1) / (-st)
	}
	return n, true, nil
}

// pyDeriveIndex folds __derive_index.
func (c *conv) pyDeriveIndex(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	return toInt(call.pos(1)) + toInt(call.pos(0))*toInt(call.pos(2)), true, nil
}

// pyContains folds __contains__.
func (c *conv) pyContains(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	var items []value
	switch x := call.pos(0).(type) {
	case *list:
		items = x.items
	case *tuple:
		items = x.items
	case string:
		s, _ := call.pos(1).(string)
		return strings.Contains(x, s), true, nil
	default:
		return nil, false, nil
	}
	for _, it := range items {
		if same(it, call.pos(1)) {
			return true, true, nil
		}
		if a, ok := num(it); ok {
			if b, ok := num(call.pos(1)); ok && a == b {
				return true, true, nil
			}
		}
	}
	return false, true, nil
}

// pyGetitem folds __getitem__; what it does not fold goes on to pyFold.
func (c *conv) pyGetitem(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	switch x := call.pos(0).(type) {
	case *list, *tuple:
		var items []value
		if l, ok := x.(*list); ok {
			items = l.items
		} else {
			items = x.(*tuple).items
		}
		i, ok := call.pos(1).(int64)
		if !ok {
			return nil, true, c.errAt(p, "index %s of a list", describe(call.pos(1)))
		}
		if i < 0 {
			i += int64(len(items))
		}
		if i < 0 || i >= int64(len(items)) {
			return nil, true, c.errAt(p, "index %d out of range (%d items)", i, len(items))
		}
		return items[i], true, nil
	}
	return c.pyFold(p, name, args, kw)
}

// pySlice folds slice; what it does not fold goes on to pyFold.
func (c *conv) pySlice(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	if l, ok := call.pos(0).(*list); ok {
		n := int64(len(l.items))
		lo, hi, st := int64(0), n, int64(1)
		if len(args) > 1 && call.pos(1) != nil {
			lo = toInt(call.pos(1))
		}
		if len(args) > 2 && call.pos(2) != nil {
			hi = toInt(call.pos(2))
		}
		if len(args) > 3 && call.pos(3) != nil {
			st = toInt(call.pos(3))
		}
		lo, hi = clampRange(lo, hi, n)
		out := &list{}
		for i := lo; i < hi && st > 0; i += st {
			out.items = append(out.items, l.items[i])
		}
		return out, true, nil
	}
	return c.pyFold(p, name, args, kw)
}

// pyConvert folds builtins::int, Int, IntImplicit, ScalarImplicit,
// builtins::float, Float, FloatImplicit, builtins::bool, Bool.
func (c *conv) pyConvert(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	x := call.pos(0)
	if t, ok := x.(*tensor); ok {
		if strings.Contains(name, "bool") || name == "Bool" {
			return t, true, nil // a condition computed by the graph
		}
		return nil, true, c.errAt(p, "%s of a tensor computed by the graph (%s) is not mapped", name, describe(t))
	}
	n, ok := num(x)
	if !ok {
		return nil, true, c.errAt(p, "%s of %s", name, describe(x))
	}
	switch {
	case strings.Contains(strings.ToLower(name), "int"):
		return int64(n), true, nil
	case strings.Contains(strings.ToLower(name), "bool"):
		return n != 0, true, nil
	}
	return n, true, nil
}

// pyMinMax folds builtins::min, builtins::max.
func (c *conv) pyMinMax(p fts.Pos, name string, args []value, kw map[string]value) (value, bool, error) {
	call := c.callOf(p, name, args, kw)
	var best value
	items := args
	if len(args) == 1 {
		if l, ok := call.pos(0).(*list); ok {
			items = l.items
		}
	}
	for _, it := range items {
		n, ok := num(it)
		if !ok {
			return nil, false, nil
		}
		b, _ := num(best)
		if best == nil || (name == "builtins::min") == (n < b) {
			best = it
		}
	}
	return best, true, nil
}

func clampRange(lo, hi, n int64) (int64, int64) {
	if lo < 0 {
		lo += n
	}
	if hi < 0 {
		hi += n
	}
	lo = max(0, min(lo, n))
	hi = max(0, min(hi, n))
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

func (c *conv) axis(p fts.Pos, d int64, rank int) (int, error) {
	if d < 0 {
		d += int64(rank)
	}
	if d < 0 || d >= int64(rank) && !(rank == 0 && d == 0) {
		return 0, c.errAt(p, "dim %d out of range for rank %d", d, rank)
	}
	return int(d), nil
}

func (c *conv) asTensor(v value) (*tensor, bool) {
	t, ok := v.(*tensor)
	return t, ok
}

// toBool returns the name of a bool version of t.
func (c *conv) toBool(t *tensor) string {
	if t.dt == canonical.Bool {
		return t.name
	}
	return c.b.Op("Cast", t.name+"_bool", []string{t.name}, canonical.IntAttr("to", int64(canonical.Bool)))
}

func (c *conv) cast(t *tensor, dt canonical.DataType) *tensor {
	if t.dt == dt {
		return t
	}
	n := c.b.Op("Cast", t.name+"_cast", []string{t.name}, canonical.IntAttr("to", int64(dt)))
	return &tensor{name: n, dt: dt, dims: t.dims}
}

// constOf makes a scalar or list of numbers an initializer of dt.
func (c *conv) constOf(v value, dt canonical.DataType) (*tensor, error) {
	var vals []float64
	var dims []int64
	switch x := v.(type) {
	case *list:
		for _, it := range x.items {
			n, ok := num(it)
			if !ok {
				return nil, fmt.Errorf("list element %s is not a number", describe(it))
			}
			vals = append(vals, n)
		}
		dims = []int64{int64(len(vals))}
	default:
		n, ok := num(v)
		if !ok {
			return nil, fmt.Errorf("%s is not a number", describe(v))
		}
		vals = []float64{n}
	}
	var name string
	switch dt {
	case canonical.Float:
		f := make([]float32, len(vals))
		for i, x := range vals {
			f[i] = float32(x)
		}
		name = c.b.F32("c", dims, f)
	case canonical.Int64:
		f := make([]int64, len(vals))
		for i, x := range vals {
			f[i] = int64(x)
		}
		name = c.b.I64("c", dims, f)
	default:
		f := make([]float32, len(vals))
		for i, x := range vals {
			f[i] = float32(x)
		}
		n := c.b.F32("c", dims, f)
		name = c.b.Op("Cast", "c", []string{n}, canonical.IntAttr("to", int64(dt)))
	}
	return &tensor{name: name, dt: dt, dims: dims}, nil
}

func broadcast(a, b []int64) ([]int64, bool) {
	n := max(len(a), len(b))
	out := make([]int64, n)
	for i := 0; i < n; i++ {
		x, y := int64(1), int64(1)
		if j := len(a) - n + i; j >= 0 {
			x = a[j]
		}
		if j := len(b) - n + i; j >= 0 {
			y = b[j]
		}
		switch {
		case x == y, y == 1:
			out[i] = x
		case x == 1:
			out[i] = y
		default:
			return nil, false
		}
	}
	return out, true
}

func isFloat(dt canonical.DataType) bool {
	return dt == canonical.Float || dt == canonical.Double || dt == canonical.Float16 || dt == canonical.BFloat16
}

// operands makes two tensors of one dtype from a tensor and a tensor or
// number, as torch promotes them.
func (c *conv) operands(p fts.Pos, x, y value) (*tensor, *tensor, error) {
	tx, okx := x.(*tensor)
	ty, oky := y.(*tensor)
	var err error
	switch {
	case okx && oky:
		if tx.dt != ty.dt {
			dt := promote(tx, ty)
			tx, ty = c.cast(tx, dt), c.cast(ty, dt)
		}
	case okx:
		dt := tx.dt
		if _, f := y.(float64); f && !isFloat(dt) {
			dt = canonical.Float
			tx = c.cast(tx, dt)
		}
		ty, err = c.constOf(y, dt)
	case oky:
		dt := ty.dt
		if _, f := x.(float64); f && !isFloat(dt) {
			dt = canonical.Float
			ty = c.cast(ty, dt)
		}
		tx, err = c.constOf(x, dt)
	default:
		return nil, nil, c.errAt(p, "no tensor among %s, %s", describe(x), describe(y))
	}
	if err != nil {
		return nil, nil, c.errAt(p, "%v", err)
	}
	return tx, ty, nil
}

// promote picks the result dtype of two tensors: a 0-d one takes the
// other's dtype within its kind, as torch does.
func promote(a, b *tensor) canonical.DataType {
	fa, fb := isFloat(a.dt), isFloat(b.dt)
	switch {
	case fa && !fb:
		return a.dt
	case fb && !fa:
		return b.dt
	case len(a.dims) == 0 && len(b.dims) > 0:
		return b.dt
	case len(b.dims) == 0 && len(a.dims) > 0:
		return a.dt
	case a.dt == canonical.Bool:
		return b.dt
	case b.dt == canonical.Bool:
		return a.dt
	}
	if canonical.ElemBits(a.dt) >= canonical.ElemBits(b.dt) {
		return a.dt
	}
	return b.dt
}

func (c *conv) unary(op string, x *tensor, attrs ...any) *tensor {
	var as []*canonical.Attribute
	for _, a := range attrs {
		as = append(as, a.(*canonical.Attribute))
	}
	n := c.b.Op(op, strings.ToLower(op), []string{x.name}, as...)
	return &tensor{name: n, dt: x.dt, dims: x.dims}
}

// pyEqual is Python's == on values known when converting.
func pyEqual(a, b value) bool {
	if x, ok := num(a); ok {
		y, ok := num(b)
		return ok && x == y
	}
	seq := func(v value) ([]value, bool) {
		switch v := v.(type) {
		case *list:
			return v.items, true
		case *tuple:
			return v.items, true
		}
		return nil, false
	}
	if xs, ok := seq(a); ok {
		ys, ok := seq(b)
		if !ok || len(xs) != len(ys) {
			return false
		}
		for i := range xs {
			if !pyEqual(xs[i], ys[i]) {
				return false
			}
		}
		return true
	}
	return same(a, b)
}

// isPoison reports whether v is, or a list or tuple holds, the result of
// an unmapped op.
func isPoison(v value) bool {
	switch v := v.(type) {
	case poison:
		return true
	case *list:
		for _, x := range v.items {
			if isPoison(x) {
				return true
			}
		}
	case *tuple:
		for _, x := range v.items {
			if isPoison(x) {
				return true
			}
		}
	}
	return false
}
