package torchscript

import (
	"maps"
	"sort"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	fts "github.com/onnxconv/onnxconv/formats/torchscript"
)

// tryLoop emits a for loop over range(n) as an ONNX Loop when its body
// can be one: the loop variable unused in the body, every variable the
// body assigns a tensor that exists before the loop (a loop-carried
// value keeping its type and shape), no break, continue, return, raise or
// module attribute assignment. It reports false, having changed nothing
// the walk sees, when the loop must be unrolled instead.
func (c *conv) tryLoop(f *frame, s *fts.For, n int64) (bool, error) {
	target, ok := s.Target.(*fts.Name)
	if !ok || n < 1 || usesName(s.Body, target.ID) || !plainBody(s.Body) {
		return false, nil
	}
	assigned := map[string]bool{}
	assignedNames(s.Body, assigned)
	var carried []string
	for name := range assigned {
		t, ok := f.vars[name].(*tensor)
		if !ok || t == nil {
			return false, nil
		}
		carried = append(carried, name)
	}
	sort.Strings(carried)
	if len(carried) == 0 {
		return false, nil
	}
	outer := c.b
	before := maps.Clone(f.vars)
	sb := outer.Sub()
	iter, cond := sb.Fresh("iter"), sb.Fresh("cond")
	bodyIn := []build.Info{build.TensorInfo(iter, canonical.Int64, nil, false), build.TensorInfo(cond, canonical.Bool, nil, false)}
	var initial []string
	for _, name := range carried {
		t := f.vars[name].(*tensor)
		in := sb.Fresh(name + "_in")
		bodyIn = append(bodyIn, build.TensorInfo(in, t.dt, t.dims, false))
		initial = append(initial, t.name)
		f.vars[name] = &tensor{name: in, dt: t.dt, dims: t.dims}
	}
	c.b = sb
	fl, _, err := c.execBlock(f, s.Body)
	c.b = outer
	if err != nil {
		return false, err
	}
	undo := func() (bool, error) {
		f.vars = before
		return false, nil
	}
	if fl != flowNormal {
		return undo()
	}
	for name, v := range f.vars {
		if assigned[name] {
			continue
		}
		if !same(v, before[name]) {
			return undo()
		}
	}
	condOut := sb.Op("Identity", "cond_out", []string{cond})
	bodyOut := []build.Info{build.TensorInfo(condOut, canonical.Bool, nil, false)}
	var results []*tensor
	for _, name := range carried {
		t, ok := f.vars[name].(*tensor)
		b := before[name].(*tensor)
		if !ok || t.dt != b.dt || !equalDims(t.dims, b.dims) {
			return undo()
		}
		o := sb.Op("Identity", name+"_out", []string{t.name})
		bodyOut = append(bodyOut, build.TensorInfo(o, t.dt, t.dims, false))
		results = append(results, b)
	}
	body := sb.Graph("loop_body", bodyIn, bodyOut)
	m := outer.I64("trip_count", nil, []int64{n})
	var outs []string
	for _, name := range carried {
		outs = append(outs, outer.Fresh(name+"_loop"))
	}
	outer.Node("Loop", append([]string{m, ""}, initial...), outs, canonical.GraphAttr("body", body))
	f.vars = before
	for i, name := range carried {
		f.vars[name] = &tensor{name: outs[i], dt: results[i].dt, dims: results[i].dims}
	}
	return true, nil
}

// usesName reports whether id is read anywhere in stmts.
func usesName(stmts []fts.Stmt, id string) bool {
	found := false
	var expr func(e fts.Expr)
	expr = func(e fts.Expr) {
		if found || e == nil {
			return
		}
		switch e := e.(type) {
		case *fts.Name:
			found = e.ID == id
		case *fts.Attr:
			expr(e.X)
		case *fts.Call:
			expr(e.Fn)
			for _, a := range e.Args {
				expr(a)
			}
			for _, k := range e.Kw {
				expr(k.Value)
			}
		case *fts.Subscript:
			expr(e.X)
			expr(e.Index)
		case *fts.Slice:
			expr(e.Lo)
			expr(e.Hi)
			expr(e.Step)
		case *fts.Tuple:
			for _, x := range e.Elts {
				expr(x)
			}
		case *fts.List:
			for _, x := range e.Elts {
				expr(x)
			}
		case *fts.Unary:
			expr(e.X)
		case *fts.Binary:
			expr(e.X)
			expr(e.Y)
		case *fts.Cond:
			expr(e.C)
			expr(e.A)
			expr(e.B)
		case *fts.Dict:
			for i := range e.Keys {
				expr(e.Keys[i])
				expr(e.Values[i])
			}
		}
	}
	walkStmts(stmts, func(s fts.Stmt) {
		switch s := s.(type) {
		case *fts.Assign:
			expr(s.Value)
			if _, ok := s.Target.(*fts.Name); !ok {
				expr(s.Target)
			}
		case *fts.AugAssign:
			expr(s.Target)
			expr(s.Value)
		case *fts.ExprStmt:
			expr(s.X)
		case *fts.If:
			expr(s.Cond)
		case *fts.For:
			expr(s.Iter)
		case *fts.While:
			expr(s.Cond)
		case *fts.With:
			expr(s.Item)
		case *fts.Return:
			expr(s.Value)
		}
	})
	return found
}

// plainBody: no break, continue, return, raise, or attribute assignment.
func plainBody(stmts []fts.Stmt) bool {
	ok := true
	walkStmts(stmts, func(s fts.Stmt) {
		switch s := s.(type) {
		case *fts.Simple:
			ok = ok && s.Word == "pass"
		case *fts.Return, *fts.Raise:
			ok = false
		case *fts.ExprStmt:
			if call, isCall := s.X.(*fts.Call); isCall && dotted(call.Fn) == "ops.prim.RaiseException" {
				ok = false
			}
		case *fts.Assign:
			if _, isName := s.Target.(*fts.Name); !isName {
				if _, isTuple := s.Target.(*fts.Tuple); !isTuple {
					ok = false
				}
			}
		case *fts.AugAssign:
			if _, isName := s.Target.(*fts.Name); !isName {
				ok = false
			}
		}
	})
	return ok
}

// assignedNames collects the names stmts assign.
func assignedNames(stmts []fts.Stmt, out map[string]bool) {
	var target func(e fts.Expr)
	target = func(e fts.Expr) {
		switch e := e.(type) {
		case *fts.Name:
			out[e.ID] = true
		case *fts.Tuple:
			for _, x := range e.Elts {
				target(x)
			}
		case *fts.List:
			for _, x := range e.Elts {
				target(x)
			}
		}
	}
	walkStmts(stmts, func(s fts.Stmt) {
		switch s := s.(type) {
		case *fts.Assign:
			target(s.Target)
		case *fts.AugAssign:
			target(s.Target)
		case *fts.For:
			target(s.Target)
		}
	})
}

func walkStmts(stmts []fts.Stmt, fn func(fts.Stmt)) {
	for _, s := range stmts {
		fn(s)
		switch s := s.(type) {
		case *fts.If:
			walkStmts(s.Body, fn)
			walkStmts(s.Else, fn)
		case *fts.For:
			walkStmts(s.Body, fn)
		case *fts.While:
			walkStmts(s.Body, fn)
		case *fts.With:
			walkStmts(s.Body, fn)
		}
	}
}
