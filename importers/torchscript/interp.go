package torchscript

import (
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	"github.com/onnxconv/onnxconv/formats/pickle"
	fts "github.com/onnxconv/onnxconv/formats/torchscript"
	"github.com/onnxconv/onnxconv/importers"
)

// Limits of the walk over the source, so that code that recurses or loops
// is an error, not a hang.
const (
	maxCallDepth = 200
	maxSteps     = 5_000_000
)

// CodeError is TorchScript source the importer cannot convert: where,
// and why.
type CodeError struct {
	File string
	Pos  fts.Pos
	Msg  string
}

func (e *CodeError) Error() string {
	if e.Pos.File != "" {
		return fmt.Sprintf("%s: %s:%d: %s", e.File, e.Pos.File, e.Pos.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// poison stands for the result of an op that is not mapped: the walk
// goes on so that every unmapped op is listed at once.
type poison struct{}

type flow int

const (
	flowNormal flow = iota
	flowReturn
	flowBreak
	flowContinue
	flowRaise
)

type conv struct {
	file   string
	a      *fts.Archive
	b      *build.Builder
	unsup  *importers.UnsupportedOpsError
	aten   map[string]atenOp
	py     map[string]pyBuiltin
	depth  int
	steps  int
	inits  map[*fts.TensorRef]*tensor
	warns  []string
	warned map[string]bool
	// track records the module attributes the method assigns.
	track    bool
	assigned []assignment
	// calls counts the calls of each submodule's forward made by the
	// walked method itself, and sources records the submodule call each
	// ONNX value is the result of (canonical.MetaSourceTensors: the error
	// map asks libtorch for it).
	calls   map[string]int
	sources map[string]canonical.SourceTensor
}

// assignment is a module attribute assigned by the walked method.
type assignment struct {
	obj  *object
	name string
}

type frame struct {
	vars map[string]value
}

func (c *conv) errAt(p fts.Pos, format string, a ...any) error {
	return &CodeError{File: c.file, Pos: p, Msg: fmt.Sprintf(format, a...)}
}

func (c *conv) warn(s string) {
	if !c.warned[s] {
		c.warned[s] = true
		c.warns = append(c.warns, s)
	}
}

func (c *conv) step(p fts.Pos) error {
	c.steps++
	if c.steps > maxSteps {
		return c.errAt(p, "more than %d statements walked (a loop too long to unroll?)", maxSteps)
	}
	return nil
}

// execBlock runs stmts; it returns how the block ended and the returned
// value.
func (c *conv) execBlock(f *frame, stmts []fts.Stmt) (flow, value, error) {
	for _, s := range stmts {
		fl, v, err := c.exec(f, s)
		if err != nil || fl != flowNormal {
			return fl, v, err
		}
	}
	return flowNormal, nil, nil
}

func (c *conv) exec(f *frame, s fts.Stmt) (flow, value, error) {
	p := fts.PosOf(s)
	if err := c.step(p); err != nil {
		return 0, nil, err
	}
	switch s := s.(type) {
	case *fts.Assign:
		v, err := c.eval(f, s.Value)
		if err != nil {
			return 0, nil, err
		}
		return flowNormal, nil, c.assign(f, s.Target, v)
	case *fts.AugAssign:
		cur, err := c.eval(f, s.Target)
		if err != nil {
			return 0, nil, err
		}
		y, err := c.eval(f, s.Value)
		if err != nil {
			return 0, nil, err
		}
		v, err := c.binary(p, s.Op, cur, y)
		if err != nil {
			return 0, nil, err
		}
		return flowNormal, nil, c.assign(f, s.Target, v)
	case *fts.ExprStmt:
		if call, ok := s.X.(*fts.Call); ok && dotted(call.Fn) == "ops.prim.RaiseException" {
			return flowRaise, nil, nil
		}
		_, err := c.eval(f, s.X)
		return flowNormal, nil, err
	case *fts.Raise:
		return flowRaise, nil, nil
	case *fts.Assert:
		return flowNormal, nil, nil
	case *fts.Simple:
		switch s.Word {
		case "break":
			return flowBreak, nil, nil
		case "continue":
			return flowContinue, nil, nil
		}
		return flowNormal, nil, nil
	case *fts.Return:
		if s.Value == nil {
			return flowReturn, nil, nil
		}
		v, err := c.eval(f, s.Value)
		return flowReturn, v, err
	case *fts.If:
		return c.execIf(f, s)
	case *fts.For:
		return c.execFor(f, s)
	case *fts.While:
		for {
			cv, err := c.eval(f, s.Cond)
			if err != nil {
				return 0, nil, err
			}
			b, ok := truth(cv)
			if !ok {
				c.unsup.Add("prim::Loop", fmt.Sprintf("%s:%d", p.File, p.Line), "a while loop on a tensor condition (ONNX Loop) is not mapped yet")
				return flowNormal, nil, nil
			}
			if !b {
				return flowNormal, nil, nil
			}
			fl, v, err := c.execBlock(f, s.Body)
			if err != nil || fl == flowReturn || fl == flowRaise {
				return fl, v, err
			}
			if fl == flowBreak {
				return flowNormal, nil, nil
			}
		}
	case *fts.With:
		return c.execBlock(f, s.Body)
	case *fts.Import, *fts.AnnDecl:
		return flowNormal, nil, nil
	case *fts.Def, *fts.ClassDef:
		return 0, nil, c.errAt(p, "nested definitions are not read")
	}
	return 0, nil, c.errAt(p, "statement %T is not read", s)
}

func (c *conv) assign(f *frame, target fts.Expr, v value) error {
	switch t := target.(type) {
	case *fts.Name:
		f.vars[t.ID] = v
		return nil
	case *fts.Tuple:
		items, err := c.unpack(fts.PosOf(t), v, len(t.Elts))
		if err != nil {
			return err
		}
		for i, e := range t.Elts {
			if err := c.assign(f, e, items[i]); err != nil {
				return err
			}
		}
		return nil
	case *fts.List:
		return c.assign(f, &fts.Tuple{P: t.P, Elts: t.Elts}, v)
	case *fts.Attr:
		x, err := c.eval(f, t.X)
		if err != nil {
			return err
		}
		o, ok := x.(*object)
		if !ok {
			return c.errAt(t.P, "assignment to attribute %s of %s", t.Name, describe(x))
		}
		o.attrs[t.Name] = v
		if c.track {
			seen := false
			for _, a := range c.assigned {
				seen = seen || a.obj == o && a.name == t.Name
			}
			if !seen {
				c.assigned = append(c.assigned, assignment{obj: o, name: t.Name})
			}
		}
		return nil
	case *fts.Subscript:
		x, err := c.eval(f, t.X)
		if err != nil {
			return err
		}
		idx, err := c.eval(f, t.Index)
		if err != nil {
			return err
		}
		if l, ok := x.(*list); ok {
			i, ok := idx.(int64)
			if !ok {
				return c.errAt(t.P, "list index %s", describe(idx))
			}
			if i < 0 {
				i += int64(len(l.items))
			}
			if i < 0 || i >= int64(len(l.items)) {
				return c.errAt(t.P, "list index %d out of range", i)
			}
			l.items[i] = v
			return nil
		}
		c.unsup.Add("aten::index_put_", fmt.Sprintf("%s:%d", t.P.File, t.P.Line), "assignment into a tensor is not mapped")
		return nil
	}
	return c.errAt(fts.PosOf(target), "cannot assign to %T", target)
}

func (c *conv) unpack(p fts.Pos, v value, n int) ([]value, error) {
	switch v := v.(type) {
	case *tuple:
		if len(v.items) == n {
			return v.items, nil
		}
	case *list:
		if len(v.items) == n {
			return v.items, nil
		}
	case poison:
		out := make([]value, n)
		for i := range out {
			out[i] = poison{}
		}
		return out, nil
	}
	return nil, c.errAt(p, "cannot unpack %s into %d values", describe(v), n)
}

// truth is the Python truth of a value known when converting.
func truth(v value) (bool, bool) {
	switch v := v.(type) {
	case bool:
		return v, true
	case int64:
		return v != 0, true
	case float64:
		return v != 0, true
	case nil:
		return false, true
	case string:
		return v != "", true
	case *list:
		return len(v.items) > 0, true
	case *tuple:
		return len(v.items) > 0, true
	case *object, device:
		return true, true
	}
	return false, false
}

func (c *conv) execIf(f *frame, s *fts.If) (flow, value, error) {
	cv, err := c.eval(f, s.Cond)
	if err != nil {
		return 0, nil, err
	}
	if _, ok := cv.(poison); ok {
		return c.execBlock(f, s.Body)
	}
	if b, ok := truth(cv); ok {
		if b {
			return c.execBlock(f, s.Body)
		}
		return c.execBlock(f, s.Else)
	}
	t, ok := cv.(*tensor)
	if !ok {
		return 0, nil, c.errAt(s.P, "if on %s", describe(cv))
	}
	return c.tensorIf(f, s, t)
}

// tensorIf makes an ONNX If of a condition computed by the graph. Both
// branches are walked; variables they assign become the If's outputs. A
// branch that raises is taken to be unreachable (the model's own input
// check): the other branch is inlined, with a warning.
func (c *conv) tensorIf(f *frame, s *fts.If, cond *tensor) (flow, value, error) {
	outer := c.b
	before := maps.Clone(f.vars)
	run := func(body []fts.Stmt) (*build.Builder, map[string]value, flow, value, error) {
		sb := outer.Sub()
		c.b = sb
		f.vars = maps.Clone(before)
		fl, v, err := c.execBlock(f, body)
		c.b = outer
		return sb, f.vars, fl, v, err
	}
	bt, vt, ft, rt, err := run(s.Body)
	if err != nil {
		return 0, nil, err
	}
	be, ve, fe, re, err := run(s.Else)
	if err != nil {
		return 0, nil, err
	}
	if ft == flowRaise || fe == flowRaise {
		if ft == flowRaise && fe == flowRaise {
			return flowRaise, nil, nil
		}
		c.warn(fmt.Sprintf("%s:%d: a branch that raises an exception was dropped (the input is taken to be valid)", s.P.File, s.P.Line))
		keep, vars, fl, rv := bt, vt, ft, rt
		if ft == flowRaise {
			keep, vars, fl, rv = be, ve, fe, re
		}
		outer.Splice(keep)
		f.vars = vars
		return fl, rv, nil
	}
	if ft != flowNormal || fe != flowNormal {
		if ft == flowReturn && fe == flowReturn {
			// both return: merge the returned values as one output set
			vt = map[string]value{"\x00ret": rt}
			ve = map[string]value{"\x00ret": re}
			before = map[string]value{}
		} else {
			return 0, nil, c.errAt(s.P, "a return, break or continue in one branch of an if on a tensor is not mapped")
		}
	}
	var names []string
	var outT, outE []string
	var results []*tensor
	merged := maps.Clone(before)
	for name, a := range vt {
		bv, ok := ve[name]
		if !ok {
			continue
		}
		if same(a, bv) {
			merged[name] = a
			continue
		}
		ta, ok1 := c.asTensor(a)
		tb, ok2 := c.asTensor(bv)
		if !ok1 || !ok2 {
			if _, p := a.(poison); p {
				merged[name] = a
				continue
			}
			if _, p := bv.(poison); p {
				merged[name] = bv
				continue
			}
			return 0, nil, c.errAt(s.P, "the branches of an if on a tensor give %s different values (%s, %s) that are not tensors", name, describe(a), describe(bv))
		}
		if ta.dt != tb.dt || !equalDims(ta.dims, tb.dims) {
			return 0, nil, c.errAt(s.P, "the branches of an if on a tensor give %s tensors of different types (%s, %s)", name, describe(ta), describe(tb))
		}
		names = append(names, name)
		outT = append(outT, ta.name)
		outE = append(outE, tb.name)
		results = append(results, ta)
	}
	sortTogether(names, outT, outE, results)
	mk := func(sb *build.Builder, outs []string, branch string) *canonical.Graph {
		var vis []build.Info
		for i, o := range outs {
			id := sb.Op("Identity", names[i]+"_"+branch, []string{o})
			vis = append(vis, build.TensorInfo(id, results[i].dt, results[i].dims, false))
		}
		return sb.Graph(branch, nil, vis)
	}
	gt := mk(bt, outT, "then")
	ge := mk(be, outE, "else")
	cb := c.toBool(cond)
	var outs []string
	for _, n := range names {
		outs = append(outs, outer.Fresh(strings.TrimPrefix(n, "\x00")+"_if"))
	}
	if len(outs) == 0 {
		f.vars = merged
		return flowNormal, nil, nil
	}
	outer.Node("If", []string{cb}, outs, canonical.GraphAttr("then_branch", gt), canonical.GraphAttr("else_branch", ge))
	for i, n := range names {
		merged[n] = &tensor{name: outs[i], dt: results[i].dt, dims: results[i].dims}
	}
	if rv, ok := merged["\x00ret"]; ok {
		return flowReturn, rv, nil
	}
	f.vars = merged
	return flowNormal, nil, nil
}

func sortTogether(names, a, b []string, r []*tensor) {
	for i := 1; i < len(names); i++ {
		for j := i; j > 0 && names[j] < names[j-1]; j-- {
			names[j], names[j-1] = names[j-1], names[j]
			a[j], a[j-1] = a[j-1], a[j]
			b[j], b[j-1] = b[j-1], b[j]
			r[j], r[j-1] = r[j-1], r[j]
		}
	}
}

func same(a, b value) bool {
	switch x := a.(type) {
	case *tensor:
		y, ok := b.(*tensor)
		return ok && x.name == y.name
	case *list, *tuple, *object:
		return a == b
	}
	return a == b // the remaining values are comparable: numbers, strings, names, pointers
}

func equalDims(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (c *conv) execFor(f *frame, s *fts.For) (flow, value, error) {
	it, err := c.eval(f, s.Iter)
	if err != nil {
		return 0, nil, err
	}
	var items []value
	switch it := it.(type) {
	case *list:
		items = append(items, it.items...)
	case *tuple:
		items = it.items
	case *rangeVal:
		if n := rangeLen(it); it.step == 1 && it.start == 0 {
			if done, err := c.tryLoop(f, s, n); err != nil || done {
				return flowNormal, nil, err
			}
		}
		for i := it.start; (it.step > 0 && i < it.stop) || (it.step < 0 && i > it.stop); i += it.step {
			if len(items) > maxSteps {
				return 0, nil, c.errAt(s.P, "a loop of more than %d iterations", maxSteps)
			}
			items = append(items, i)
		}
	case *tensor:
		c.unsup.Add("prim::Loop", fmt.Sprintf("%s:%d", s.P.File, s.P.Line), "a for loop over a tensor or with a trip count computed by the graph (ONNX Loop) is not mapped yet")
		return flowNormal, nil, nil
	default:
		return 0, nil, c.errAt(s.P, "for over %s", describe(it))
	}
	for _, x := range items {
		if err := c.assign(f, s.Target, x); err != nil {
			return 0, nil, err
		}
		fl, v, err := c.execBlock(f, s.Body)
		if err != nil || fl == flowReturn || fl == flowRaise {
			return fl, v, err
		}
		if fl == flowBreak {
			break
		}
	}
	return flowNormal, nil, nil
}

type rangeVal struct{ start, stop, step int64 }

func rangeLen(r *rangeVal) int64 {
	switch {
	case r.step > 0 && r.start < r.stop:
		return (r.stop - r.start + r.step - 1) / r.step
	case r.step < 0 && r.start > r.stop:
		return (r.start - r.stop - r.step - 1) / -r.step
	}
	return 0
}

// dotted returns "a.b.c" for a chain of names and attributes, else "".
func dotted(e fts.Expr) string {
	switch e := e.(type) {
	case *fts.Name:
		return e.ID
	case *fts.Attr:
		x := dotted(e.X)
		if x == "" {
			return ""
		}
		return x + "." + e.Name
	}
	return ""
}

func (c *conv) eval(f *frame, e fts.Expr) (value, error) {
	switch e := e.(type) {
	case *fts.Const:
		return e.Val, nil
	case *fts.Name:
		if v, ok := f.vars[e.ID]; ok {
			return v, nil
		}
		switch e.ID {
		case "torch", "ops", "__torch__", "CONSTANTS", "math", "builtins":
			return builtin{name: e.ID}, nil
		}
		return builtin{name: e.ID}, nil
	case *fts.Attr:
		x, err := c.eval(f, e.X)
		if err != nil {
			return nil, err
		}
		return c.attr(e.P, x, e.Name)
	case *fts.Call:
		return c.evalCall(f, e)
	case *fts.Tuple:
		items, err := c.evalAll(f, e.Elts)
		return &tuple{items: items}, err
	case *fts.List:
		items, err := c.evalAll(f, e.Elts)
		return &list{items: items}, err
	case *fts.Subscript:
		x, err := c.eval(f, e.X)
		if err != nil {
			return nil, err
		}
		if b, ok := x.(builtin); ok {
			return b, nil // a type: List[int], Optional[Tensor], __annotations__["0"]
		}
		return c.subscript(f, e, x)
	case *fts.Unary:
		x, err := c.eval(f, e.X)
		if err != nil {
			return nil, err
		}
		switch e.Op {
		case "-":
			return c.op(e.P, "neg", []value{x}, nil)
		case "+":
			return x, nil
		case "not":
			return c.op(e.P, "__not__", []value{x}, nil)
		}
		return c.op(e.P, "bitwise_not", []value{x}, nil)
	case *fts.Binary:
		x, err := c.eval(f, e.X)
		if err != nil {
			return nil, err
		}
		if e.Op == "and" || e.Op == "or" {
			b, ok := truth(x)
			if !ok {
				return nil, c.errAt(e.P, "%q on a tensor", e.Op)
			}
			if (e.Op == "and") != b {
				return x, nil
			}
			return c.eval(f, e.Y)
		}
		y, err := c.eval(f, e.Y)
		if err != nil {
			return nil, err
		}
		return c.binary(e.P, e.Op, x, y)
	case *fts.Cond:
		cv, err := c.eval(f, e.C)
		if err != nil {
			return nil, err
		}
		b, ok := truth(cv)
		if !ok {
			return nil, c.errAt(e.P, "a conditional expression on a tensor is not mapped")
		}
		if b {
			return c.eval(f, e.A)
		}
		return c.eval(f, e.B)
	case *fts.Dict:
		return nil, c.errAt(e.P, "dict values are not read")
	case *fts.Slice:
		return nil, c.errAt(e.P, "a slice outside a subscript")
	}
	return nil, c.errAt(fts.PosOf(e), "expression %T is not read", e)
}

func (c *conv) binary(p fts.Pos, op string, x, y value) (value, error) {
	names := map[string]string{"+": "add", "-": "sub", "*": "mul", "/": "div", "//": "floordiv", "%": "remainder",
		"**": "pow", "==": "eq", "!=": "ne", "<": "lt", ">": "gt", "<=": "le", ">=": "ge", "is": "__is__",
		"is not": "__isnot__", "in": "__contains__", "&": "__and__", "|": "__or__", "^": "__xor__", "@": "matmul"}
	if op == "in" || op == "not in" {
		v, err := c.op(p, "__contains__", []value{y, x}, nil)
		if err != nil || op == "in" {
			return v, err
		}
		return c.op(p, "__not__", []value{v}, nil)
	}
	n, ok := names[op]
	if !ok {
		return nil, c.errAt(p, "operator %s is not read", op)
	}
	return c.op(p, n, []value{x, y}, nil)
}

func (c *conv) evalAll(f *frame, es []fts.Expr) ([]value, error) {
	out := make([]value, len(es))
	for i, x := range es {
		v, err := c.eval(f, x)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (c *conv) subscript(f *frame, e *fts.Subscript, x value) (value, error) {
	if sl, ok := e.Index.(*fts.Slice); ok {
		var lo, hi, st value
		var err error
		if sl.Lo != nil {
			if lo, err = c.eval(f, sl.Lo); err != nil {
				return nil, err
			}
		}
		if sl.Hi != nil {
			if hi, err = c.eval(f, sl.Hi); err != nil {
				return nil, err
			}
		}
		if sl.Step != nil {
			if st, err = c.eval(f, sl.Step); err != nil {
				return nil, err
			}
		}
		return c.op(e.P, "slice", []value{x, int64(0), lo, hi, st}, nil)
	}
	idx, err := c.eval(f, e.Index)
	if err != nil {
		return nil, err
	}
	return c.op(e.P, "__getitem__", []value{x, idx}, nil)
}

func (c *conv) evalCall(f *frame, e *fts.Call) (value, error) {
	name := dotted(e.Fn)
	if _, local := f.vars[strings.SplitN(name, ".", 2)[0]]; local {
		name = ""
	}
	switch name {
	case "annotate", "unchecked_cast":
		if len(e.Args) != 2 {
			return nil, c.errAt(e.P, "%s takes 2 arguments", name)
		}
		return c.eval(f, e.Args[1])
	case "uninitialized":
		return uninitialized{}, nil
	}
	args, err := c.evalAll(f, e.Args)
	if err != nil {
		return nil, err
	}
	kw := map[string]value{}
	for _, k := range e.Kw {
		v, err := c.eval(f, k.Value)
		if err != nil {
			return nil, err
		}
		kw[k.Name] = v
	}
	switch {
	case name == "getattr":
		if len(args) < 2 {
			return nil, c.errAt(e.P, "getattr takes 2 arguments")
		}
		s, ok := args[1].(string)
		if !ok {
			return nil, c.errAt(e.P, "getattr with a name that is not a string")
		}
		return c.attr(e.P, args[0], s)
	case strings.HasPrefix(name, "__torch__."):
		if strings.HasSuffix(name, ".__new__") {
			return &object{qual: strings.TrimSuffix(name, ".__new__"), attrs: map[string]value{}}, nil
		}
		if d, ok := c.a.Funcs[name]; ok {
			return c.invoke(e.P, d, nil, args, kw)
		}
		if _, ok := c.a.Classes[name]; ok {
			// a NamedTuple-like constructor (PackedSequence): a tuple
			return &tuple{items: args}, nil
		}
		return nil, c.errAt(e.P, "%s is not defined in the archive", name)
	case strings.HasPrefix(name, "torch.") || strings.HasPrefix(name, "ops.") || (name != "" && !strings.Contains(name, ".")):
		return c.op(e.P, opName(name), args, kw)
	}
	fn, err := c.eval(f, e.Fn)
	if err != nil {
		return nil, err
	}
	return c.call(e.P, fn, args, kw)
}

// opName normalizes torch.x, ops.aten.x and builtins to the op table's
// names: "x" for aten ops, "prim::x" for ops.prim.x, "builtins::x".
func opName(name string) string {
	switch {
	case strings.HasPrefix(name, "torch.nn.functional."):
		return strings.TrimPrefix(name, "torch.nn.functional.")
	case strings.HasPrefix(name, "torch."):
		return strings.TrimPrefix(name, "torch.")
	case strings.HasPrefix(name, "ops.aten."):
		return strings.TrimPrefix(name, "ops.aten.")
	case strings.HasPrefix(name, "ops.prim."):
		return "prim::" + strings.TrimPrefix(name, "ops.prim.")
	case strings.HasPrefix(name, "ops."):
		return strings.TrimPrefix(name, "ops.")
	}
	return "builtins::" + name
}

func (c *conv) call(p fts.Pos, fn value, args []value, kw map[string]value) (value, error) {
	switch fn := fn.(type) {
	case *boundMethod:
		switch o := fn.obj.(type) {
		case *object:
			return c.callMethod(p, o, fn.name, args, kw)
		case *list:
			return c.listMethod(p, o, fn.name, args)
		case *tensor, poison:
			return c.op(p, fn.name, append([]value{fn.obj}, args...), kw)
		}
		return nil, c.errAt(p, "method %s of %s", fn.name, describe(fn.obj))
	case *funcRef:
		return c.invoke(p, fn.def, nil, args, kw)
	case builtin:
		return c.op(p, opName(fn.name), args, kw)
	case poison:
		return poison{}, nil
	}
	return nil, c.errAt(p, "calling %s", describe(fn))
}

func (c *conv) listMethod(p fts.Pos, l *list, name string, args []value) (value, error) {
	switch name {
	case "append":
		if len(args) != 1 {
			return nil, c.errAt(p, "append takes one argument")
		}
		if len(l.items) > maxSteps {
			return nil, c.errAt(p, "a list longer than %d", maxSteps)
		}
		l.items = append(l.items, args[0])
		return nil, nil
	case "insert":
		return nil, c.errAt(p, "list.insert is not read")
	}
	return nil, c.errAt(p, "list method %s is not read", name)
}

func (c *conv) callMethod(p fts.Pos, o *object, name string, args []value, kw map[string]value) (value, error) {
	cls, err := c.classOf(p, o)
	if err != nil {
		return nil, err
	}
	for _, m := range cls.Methods {
		if m.Name != name {
			continue
		}
		// A submodule's forward called by the walked method itself
		// (depth 1): its result is a value libtorch can hand out.
		top := c.depth == 1 && name == "forward" && o.path != ""
		v, err := c.invoke(p, m, o, args, kw)
		if err == nil && top {
			c.recordCall(o, v)
		}
		return v, err
	}
	return nil, c.errAt(p, "%s has no method %s", o.qual, name)
}

func (c *conv) classOf(p fts.Pos, o *object) (*fts.ClassDef, error) {
	if o.cls != nil {
		return o.cls, nil
	}
	cls, ok := c.a.Classes[o.qual]
	if !ok {
		return nil, c.errAt(p, "class %s is not defined in the archive's code", o.qual)
	}
	o.cls = cls
	return cls, nil
}

// invoke inlines def: its parameters bound to args (self first for a
// method), its body walked in a frame of its own.
func (c *conv) invoke(p fts.Pos, def *fts.Def, self value, args []value, kw map[string]value) (value, error) {
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > maxCallDepth {
		return nil, c.errAt(p, "calls nested deeper than %d (recursion?)", maxCallDepth)
	}
	f := &frame{vars: map[string]value{}}
	params := def.Params
	if self != nil {
		if len(params) == 0 {
			return nil, c.errAt(def.P, "method %s has no self", def.Name)
		}
		f.vars[params[0].Name] = self
		params = params[1:]
	}
	if len(args) > len(params) {
		return nil, c.errAt(p, "%s takes %d arguments, %d given", def.Name, len(params), len(args))
	}
	for i, prm := range params {
		switch {
		case i < len(args):
			f.vars[prm.Name] = args[i]
		case kw[prm.Name] != nil:
			f.vars[prm.Name] = kw[prm.Name]
		case prm.Default != nil:
			v, err := c.eval(&frame{vars: map[string]value{}}, prm.Default)
			if err != nil {
				return nil, err
			}
			f.vars[prm.Name] = v
		default:
			if _, ok := kw[prm.Name]; ok {
				f.vars[prm.Name] = nil
				continue
			}
			return nil, c.errAt(p, "%s: argument %s missing", def.Name, prm.Name)
		}
	}
	fl, v, err := c.execBlock(f, def.Body)
	if err != nil {
		return nil, err
	}
	if fl == flowRaise {
		return nil, c.errAt(def.P, "%s raises an exception for these inputs (its input checks fail: check the input shapes)", def.Name)
	}
	return v, nil
}

// attr is x.name.
func (c *conv) attr(p fts.Pos, x value, name string) (value, error) {
	switch x := x.(type) {
	case builtin:
		if x.name == "CONSTANTS" && strings.HasPrefix(name, "c") {
			var i int
			if _, err := fmt.Sscanf(name, "c%d", &i); err != nil || i < 0 || i >= len(c.a.Constants) {
				return nil, c.errAt(p, "no constant %s", name)
			}
			return c.fromPickle(p, c.a.Constants[i], "const."+name)
		}
		full := x.name + "." + name
		if d, ok := c.a.Funcs[full]; ok {
			return &funcRef{qual: full, def: d}, nil
		}
		return builtin{name: full}, nil
	case *object:
		if v, ok := x.attrs[name]; ok {
			return v, nil
		}
		if x.state != nil {
			if raw, ok := x.state.Get(name); ok {
				path := name
				if x.path != "" {
					path = x.path + "." + name
				}
				v, err := c.fromPickle(p, raw, path)
				if err != nil {
					return nil, err
				}
				x.attrs[name] = v
				return v, nil
			}
		}
		cls, err := c.classOf(p, x)
		if err != nil {
			return nil, err
		}
		for _, fd := range cls.Fields {
			if fd.Name == name && fd.Value != nil {
				v, err := c.eval(&frame{vars: map[string]value{}}, fd.Value)
				if err != nil {
					return nil, err
				}
				x.attrs[name] = v
				return v, nil
			}
		}
		for _, m := range cls.Methods {
			if m.Name == name {
				return &boundMethod{obj: x, name: name}, nil
			}
		}
		return nil, c.errAt(p, "%s has no attribute %s", x.qual, name)
	case *tensor, *list, poison:
		switch name {
		case "shape":
			return c.op(p, "size", []value{x}, nil)
		case "dtype":
			return c.op(p, "prim::dtype", []value{x}, nil)
		case "device":
			return device("cpu"), nil
		case "T":
			return c.op(p, "numpy_T", []value{x}, nil)
		}
		return &boundMethod{obj: x, name: name}, nil
	}
	return nil, c.errAt(p, "attribute %s of %s", name, describe(x))
}

// fromPickle turns a value of data.pkl or constants.pkl into a value of
// the walk: tensors become initializers (once each).
func (c *conv) fromPickle(p fts.Pos, v pickle.Value, path string) (value, error) {
	if t := fts.AsTensor(v); t != nil {
		if got, ok := c.inits[t]; ok {
			return got, nil
		}
		ct, err := c.a.Tensor(path, t)
		if err != nil {
			return nil, err
		}
		raw, err := ct.Bytes()
		if err != nil {
			return nil, err
		}
		if len(ct.Dims) == 0 && len(raw) <= 8 {
			// a 0-d constant behaves as a number
			if s, ok := scalarOf(ct.DataType, raw); ok {
				return s, nil
			}
		}
		name := c.b.Init(path, ct.DataType, ct.Dims, raw)
		tv := &tensor{name: name, dt: ct.DataType, dims: ct.Dims}
		c.inits[t] = tv
		return tv, nil
	}
	switch v := v.(type) {
	case nil, bool, int64, float64, string:
		return v, nil
	case *pickle.Object:
		g := v.Class()
		if g != nil && strings.HasPrefix(g.Module, "__torch__") {
			o := &object{qual: g.Module + "." + g.Name, state: v.Attrs(), attrs: map[string]value{}, path: path}
			if o.state == nil && len(v.ListItems) == 0 {
				o.state = &pickle.Dict{}
			}
			return o, nil
		}
		if g != nil && g.Module == "torch.jit._pickle" {
			if len(v.Args) == 1 {
				return c.fromPickle(p, v.Args[0], path)
			}
		}
		if g != nil && g.Module == "collections" {
			return nil, nil
		}
		return nil, c.errAt(p, "attribute %s is %s, which is not read", path, pickle.Describe(v))
	case *pickle.List:
		out := &list{}
		for i, x := range v.Items {
			y, err := c.fromPickle(p, x, fmt.Sprintf("%s.%d", path, i))
			if err != nil {
				return nil, err
			}
			out.items = append(out.items, y)
		}
		return out, nil
	case *pickle.Tuple:
		out := &tuple{}
		for i, x := range v.Items {
			y, err := c.fromPickle(p, x, fmt.Sprintf("%s.%d", path, i))
			if err != nil {
				return nil, err
			}
			out.items = append(out.items, y)
		}
		return out, nil
	}
	return nil, c.errAt(p, "attribute %s is %s, which is not read", path, pickle.Describe(v))
}

func scalarOf(dt canonical.DataType, raw []byte) (value, bool) {
	le := func(n int) uint64 {
		var u uint64
		for i := n - 1; i >= 0; i-- {
			u = u<<8 | uint64(raw[i])
		}
		return u
	}
	switch dt {
	case canonical.Int64:
		return int64(le(8)), true
	case canonical.Int32:
		return int64(int32(le(4))), true
	case canonical.Float:
		return float64(math.Float32frombits(uint32(le(4)))), true
	case canonical.Double:
		return math.Float64frombits(le(8)), true
	case canonical.Bool:
		return raw[0] != 0, true
	}
	return nil, false
}

// recordCall records the result of the next call of submodule o's forward
// by the walked method as source tensor "PATH:K" (the K-th call, from 0;
// libtorch.RunCapture's key) of its ONNX value, the first call that
// yields a value.
func (c *conv) recordCall(o *object, v value) {
	if c.calls == nil {
		c.calls, c.sources = map[string]int{}, map[string]canonical.SourceTensor{}
	}
	k := c.calls[o.path]
	c.calls[o.path]++
	t, ok := v.(*tensor)
	if !ok {
		return
	}
	if _, seen := c.sources[t.name]; !seen {
		c.sources[t.name] = canonical.SourceTensor{Tensor: o.path + ":" + strconv.Itoa(k), Op: o.qual[strings.LastIndex(o.qual, ".")+1:]}
	}
}
