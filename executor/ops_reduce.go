package executor

import (
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"

	"github.com/onnxconv/onnxconv/canonical"
)

// Reductions (Reduce*, ArgMax/ArgMin), Softmax family, CumSum.

func registerReduce(r registry) {
	for _, op := range []string{"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
		"ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"} {
		op := op
		r.lower(func(c *lctx) error { return lowerReduce(c, op) }, op)
		r.host(func(c *lctx) error { return hostReduce(c, op) }, op)
	}
	r.lower(func(c *lctx) error { return lowerArg(c, true) }, "ArgMax")
	r.lower(func(c *lctx) error { return lowerArg(c, false) }, "ArgMin")
	r.host(func(c *lctx) error { return hostArg(c, true) }, "ArgMax")
	r.host(func(c *lctx) error { return hostArg(c, false) }, "ArgMin")
	r.lower(func(c *lctx) error { return lowerSoftmax(c, "Softmax") }, "Softmax")
	r.lower(func(c *lctx) error { return lowerSoftmax(c, "LogSoftmax") }, "LogSoftmax")
	r.lower(func(c *lctx) error { return lowerSoftmax(c, "Hardmax") }, "Hardmax")
	r.host(hostCumSum, "CumSum")
	r.host(hostCumSum, "CumProd")
}

// reduceAxes resolves the axes of a Reduce op: an attribute before the
// version in which they became an input (13 for ReduceSum, 18 for the
// others).
func reduceAxes(c *lctx, op string) ([]int, bool, error) {
	from := 18
	if op == "ReduceSum" {
		from = 13
	}
	axes, ok, err := axesArg(c, from, 1)
	if err != nil {
		return nil, false, err
	}
	r := c.Rank(0)
	if !ok || len(axes) == 0 {
		if c.AInt("noop_with_empty_axes", 0) == 1 && c.ver >= from {
			return nil, true, nil
		}
		all := make([]int, r)
		for i := range all {
			all[i] = i
		}
		return all, false, nil
	}
	out := make([]int, len(axes))
	for i, a := range axes {
		ax, err := normAxis(a, r)
		if err != nil {
			return nil, false, err
		}
		out[i] = ax
	}
	return out, false, nil
}

func lowerReduce(c *lctx, op string) error {
	dt := c.DT(0)
	if _, ok := gomlxDType(dt); !ok || dt == canonical.Bool {
		return errUseHost
	}
	axes, noop, err := reduceAxes(c, op)
	if err != nil {
		return err
	}
	x := c.X(0)
	if noop {
		switch op {
		case "ReduceSumSquare":
			x = graph.Mul(x, x)
		case "ReduceL1":
			x = graph.Abs(x)
		case "ReduceL2":
			x = graph.Sqrt(graph.Mul(x, x))
		case "ReduceLogSum":
			x = graph.Log(x)
		case "ReduceLogSumExp":
			x = graph.Log(graph.Exp(x))
		}
		c.Out(0, x, dt)
		return nil
	}
	keep := c.AInt("keepdims", 1) == 1
	var y *graph.Node
	isInt := !x.DType().IsFloat()
	xf := x
	if isInt && op != "ReduceMax" && op != "ReduceMin" {
		xf = graph.ConvertDType(x, dtypes.Float64)
	}
	sh := x.Shape().Dimensions
	empty := false
	for _, a := range axes {
		if sh[a] == 0 {
			empty = true
		}
	}
	if empty && (op == "ReduceMax" || op == "ReduceMin") {
		return errUseHost
	}
	switch op {
	case "ReduceSum":
		y = graph.ReduceSum(xf, axes...)
	case "ReduceMean":
		y = graph.ReduceSum(xf, axes...)
		n := 1
		for _, a := range axes {
			n *= sh[a]
		}
		y = graph.Div(y, scalarLike(y, float64(n)))
	case "ReduceMax":
		y = graph.ReduceMax(xf, axes...)
	case "ReduceMin":
		y = graph.ReduceMin(xf, axes...)
	case "ReduceProd":
		y = graph.ReduceMultiply(xf, axes...)
	case "ReduceSumSquare":
		y = graph.ReduceSum(graph.Mul(xf, xf), axes...)
	case "ReduceL1":
		y = graph.ReduceSum(graph.Abs(xf), axes...)
	case "ReduceL2":
		y = graph.Sqrt(graph.ReduceSum(graph.Mul(xf, xf), axes...))
	case "ReduceLogSum":
		y = graph.Log(graph.ReduceSum(xf, axes...))
	case "ReduceLogSumExp":
		if empty {
			y = graph.Log(graph.ReduceSum(graph.Exp(xf), axes...))
		} else {
			m := graph.StopGradient(graph.ReduceMax(xf, axes...))
			mk := graph.ReduceAndKeep(xf, graph.ReduceMax, axes...)
			y = graph.Add(graph.Log(graph.ReduceSum(graph.Exp(graph.Sub(xf, mk)), axes...)), m)
		}
	}
	if y.DType() != x.DType() {
		if op == "ReduceL2" && isInt {
			y = graph.Floor(y)
		}
		y = graph.ConvertDType(y, x.DType())
	}
	if keep {
		out := append([]int{}, sh...)
		for _, a := range axes {
			out[a] = 1
		}
		y = graph.Reshape(y, out...)
	}
	c.Out(0, y, dt)
	return nil
}

func lowerArg(c *lctx, max bool) error {
	dt := c.DT(0)
	if _, ok := gomlxDType(dt); !ok || c.AInt("select_last_index", 0) == 1 {
		return errUseHost
	}
	r := c.Rank(0)
	ax, err := normAxis(c.AInt("axis", 0), r)
	if err != nil {
		return err
	}
	x := c.X(0)
	var y *graph.Node
	if max {
		y = graph.ArgMax(x, ax, dtypes.Int64)
	} else {
		y = graph.ArgMin(x, ax, dtypes.Int64)
	}
	if c.AInt("keepdims", 1) == 1 {
		out := append([]int{}, x.Shape().Dimensions...)
		out[ax] = 1
		y = graph.Reshape(y, out...)
	}
	c.Out(0, y, canonical.Int64)
	return nil
}

func lowerSoftmax(c *lctx, op string) error {
	dt := c.DT(0)
	if !isFloatType(dt) {
		return errUseHost
	}
	x := c.X(0)
	sh := x.Shape().Dimensions
	r := len(sh)
	if c.ver < 13 {
		ax, err := normAxis(c.AInt("axis", 1), r)
		if err != nil {
			return err
		}
		x2 := graph.Reshape(x, numel(sh[:ax]), numel(sh[ax:]))
		c.Out(0, graph.Reshape(softmaxAxis(x2, 1, op), sh...), dt)
		return nil
	}
	ax, err := normAxis(c.AInt("axis", -1), r)
	if err != nil {
		return err
	}
	c.Out(0, softmaxAxis(x, ax, op), dt)
	return nil
}

func softmaxAxis(x *graph.Node, ax int, op string) *graph.Node {
	m := graph.ReduceAndKeep(x, graph.ReduceMax, ax)
	switch op {
	case "Hardmax":
		am := graph.ArgMax(x, ax, dtypes.Int64)
		io := graph.Iota(x.Graph(), shapesOf(x, dtypes.Int64), ax)
		am = graph.ExpandAxes(am, ax)
		return graph.ConvertDType(graph.Equal(io, graph.BroadcastToDims(am, x.Shape().Dimensions...)), x.DType())
	case "LogSoftmax":
		s := graph.Sub(x, m)
		return graph.Sub(s, graph.Log(graph.ReduceAndKeep(graph.Exp(s), graph.ReduceSum, ax)))
	}
	e := graph.Exp(graph.Sub(x, m))
	return graph.Div(e, graph.ReduceAndKeep(e, graph.ReduceSum, ax))
}

func hostCumSum(c *lctx) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	axv, err := c.Ints(1)
	if err != nil {
		return err
	}
	ax, err := normAxis(axv[0], len(h.shape))
	if err != nil {
		return err
	}
	excl, rev := c.AInt("exclusive", 0) == 1, c.AInt("reverse", 0) == 1
	prod := c.n.OpType == "CumProd"
	st := strides(h.shape)
	n := h.shape[ax]
	v := h.f64()
	out := make([]float64, len(v))
	iv := h.i64()
	outi := make([]int64, len(v))
	isInt := isIntType(h.dt)
	outerShape := append([]int{}, h.shape...)
	outerShape[ax] = 1
	forEachIndex(outerShape, func(o []int) {
		base := 0
		for d, x := range o {
			base += x * st[d]
		}
		acc, acci := 0.0, int64(0)
		if prod {
			acc, acci = 1, 1
		}
		for j := 0; j < n; j++ {
			k := j
			if rev {
				k = n - 1 - j
			}
			p := base + k*st[ax]
			if excl {
				out[p], outi[p] = acc, acci
			}
			if prod {
				acc *= v[p]
				acci *= iv[p]
			} else {
				acc += v[p]
				acci += iv[p]
			}
			if !excl {
				out[p], outi[p] = acc, acci
			}
		}
	})
	if isInt {
		c.OutH(0, fromI64(h.dt, h.shape, outi))
	} else {
		c.OutH(0, fromF64(h.dt, h.shape, out))
	}
	return nil
}

var _ = math.Inf

// hostArg is ArgMax/ArgMin on the host (select_last_index and types
// GoMLX lacks).
func hostArg(c *lctx, max bool) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	ax, err := normAxis(c.AInt("axis", 0), len(h.shape))
	if err != nil {
		return err
	}
	last := c.AInt("select_last_index", 0) == 1
	v := h.f64()
	st := strides(h.shape)
	out := append([]int{}, h.shape...)
	out[ax] = 1
	res := make([]int64, 0, numel(out))
	forEachIndex(out, func(o []int) {
		base := 0
		for d, x := range o {
			base += x * st[d]
		}
		best := 0
		for j := 1; j < h.shape[ax]; j++ {
			x, b := v[base+j*st[ax]], v[base+best*st[ax]]
			if (max && (x > b || last && x == b)) || (!max && (x < b || last && x == b)) {
				best = j
			}
		}
		res = append(res, int64(best))
	})
	if c.AInt("keepdims", 1) == 0 {
		out = append(append([]int{}, h.shape[:ax]...), h.shape[ax+1:]...)
	}
	c.OutH(0, fromI64(canonical.Int64, out, res))
	return nil
}

// hostReduce is the Reduce family on the host, in float64.
func hostReduce(c *lctx, op string) error {
	h, err := c.H(0)
	if err != nil {
		return err
	}
	axes, noop, err := reduceAxes(c, op)
	if err != nil {
		return err
	}
	if noop {
		c.OutH(0, h)
		return nil
	}
	red := map[int]bool{}
	for _, a := range axes {
		red[a] = true
	}
	out := append([]int{}, h.shape...)
	for a := range red {
		out[a] = 1
	}
	init := 0.0
	switch op {
	case "ReduceMax":
		init = math.Inf(-1)
	case "ReduceMin":
		init = math.Inf(1)
	case "ReduceProd":
		init = 1
	}
	acc := make([]float64, numel(out))
	cnt := make([]int, len(acc))
	for i := range acc {
		acc[i] = init
	}
	v := h.f64()
	ost := strides(out)
	k := 0
	forEachIndex(h.shape, func(o []int) {
		f := 0
		for d, x := range o {
			if !red[d] {
				f += x * ost[d]
			}
		}
		x := v[k]
		switch op {
		case "ReduceMax":
			acc[f] = math.Max(acc[f], x)
		case "ReduceMin":
			acc[f] = math.Min(acc[f], x)
		case "ReduceProd":
			acc[f] *= x
		case "ReduceSumSquare", "ReduceL2":
			acc[f] += x * x
		case "ReduceL1":
			acc[f] += math.Abs(x)
		case "ReduceLogSumExp":
			acc[f] += math.Exp(x)
		default:
			acc[f] += x
		}
		cnt[f]++
		k++
	})
	for i := range acc {
		switch op {
		case "ReduceMean":
			acc[i] /= float64(cnt[i])
		case "ReduceL2":
			acc[i] = math.Sqrt(acc[i])
		case "ReduceLogSum", "ReduceLogSumExp":
			acc[i] = math.Log(acc[i])
		}
	}
	if c.AInt("keepdims", 1) == 0 {
		var o2 []int
		for i, d := range h.shape {
			if !red[i] {
				o2 = append(o2, d)
			}
		}
		out = o2
	}
	if h.dt == canonical.Bool || isIntType(h.dt) {
		iv := make([]int64, len(acc))
		for i, x := range acc {
			iv[i] = int64(x)
		}
		c.OutH(0, fromI64(h.dt, out, iv))
		return nil
	}
	c.OutH(0, fromF64(h.dt, out, acc))
	return nil
}
