package executor

import (
	"fmt"
	"math"
	"strings"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// RNN, GRU and LSTM (opsets 7 to 22): lowered to GoMLX unrolled over the
// static sequence length; a float64 host kernel folds constants and runs
// the cases the lowering leaves out (a reverse direction with variable
// sequence lengths, empty sequences).

func registerRNN(r registry) {
	for _, k := range []string{"RNN", "GRU", "LSTM"} {
		kind := k
		r.lower(func(c *lctx) error { return rnnLower(c, kind) }, kind)
		r.host(func(c *lctx) error { return rnnRun(c, kind) }, kind)
	}
}

type rnnAct struct {
	name        string
	alpha, beta float64
}

func (a rnnAct) f(x float64) float64 {
	switch a.name {
	case "relu":
		return math.Max(x, 0)
	case "tanh":
		return math.Tanh(x)
	case "sigmoid":
		return 1 / (1 + math.Exp(-x))
	case "affine":
		return a.alpha*x + a.beta
	case "leakyrelu":
		if x < 0 {
			return a.alpha * x
		}
		return x
	case "thresholdedrelu":
		if x > a.alpha {
			return x
		}
		return 0
	case "scaledtanh":
		return a.alpha * math.Tanh(a.beta*x)
	case "hardsigmoid":
		return math.Max(0, math.Min(1, a.alpha*x+a.beta))
	case "elu":
		if x < 0 {
			return a.alpha * (math.Exp(x) - 1)
		}
		return x
	case "softsign":
		return x / (1 + math.Abs(x))
	case "softplus":
		return math.Log1p(math.Exp(x))
	}
	return x
}

// rnnActs parses activations/activation_alpha/activation_beta: alphas
// and betas are consumed in order by the functions that take them.
func rnnActs(c *lctx, defaults []string, dirs int) ([]rnnAct, error) {
	names := c.n.AttrStrings("activations", nil)
	if len(names) == 0 {
		for d := 0; d < dirs; d++ {
			names = append(names, defaults...)
		}
	}
	if len(names) == len(defaults) && dirs == 2 {
		names = append(names, names...)
	}
	if len(names) != len(defaults)*dirs {
		return nil, fmt.Errorf("%d activations given, expected %d", len(names), len(defaults)*dirs)
	}
	alphas, betas := c.AFloats("activation_alpha", nil), c.AFloats("activation_beta", nil)
	var out []rnnAct
	for _, n := range names {
		a := rnnAct{name: strings.ToLower(n)}
		var da, db float64
		usesA, usesB := true, false
		switch a.name {
		case "relu", "tanh", "sigmoid", "softsign", "softplus":
			usesA = false
		case "affine":
			da, usesB = 1, true
		case "leakyrelu":
			da = 0.01
		case "thresholdedrelu", "elu":
			da = 1
		case "scaledtanh":
			da, db, usesB = 1, 1, true
		case "hardsigmoid":
			da, db, usesB = 0.2, 0.5, true
		default:
			return nil, fmt.Errorf("unknown activation %q", n)
		}
		a.alpha, a.beta = da, db
		if usesA && len(alphas) > 0 {
			a.alpha, alphas = float64(alphas[0]), alphas[1:]
		}
		if usesB && len(betas) > 0 {
			a.beta, betas = float64(betas[0]), betas[1:]
		}
		out = append(out, a)
	}
	return out, nil
}

// rnnOptional returns input i as float64 values, or nil when absent.
func rnnOptional(c *lctx, i int) ([]float64, []int, error) {
	if !c.Has(i) {
		return nil, nil, nil
	}
	h, err := c.H(i)
	if err != nil {
		return nil, nil, err
	}
	if h.size() == 0 {
		return nil, nil, nil
	}
	return h.f64(), h.shape, nil
}

// rnnSpec is what RNN, GRU and LSTM read from attributes and shapes.
type rnnSpec struct {
	kind                 string
	G, H                 int // gates, hidden size
	layout               int
	seq, batch, in, dirs int
	dir                  string
	acts                 []rnnAct // per direction: len(defaults) each
	nAct                 int
	clip                 float64
	hasClip              bool
	lbr, inputForget     bool
	stateShape, yShape   []int
}

func rnnParse(c *lctx, kind string) (*rnnSpec, error) {
	xs, ws, rs := c.Shape(0), c.Shape(1), c.Shape(2)
	if len(xs) != 3 || len(ws) != 3 || len(rs) != 3 {
		return nil, fmt.Errorf("%s: X, W and R must have rank 3 (got %v, %v, %v)", kind, xs, ws, rs)
	}
	sp := &rnnSpec{kind: kind, G: map[string]int{"RNN": 1, "GRU": 3, "LSTM": 4}[kind]}
	if c.ver >= 14 {
		sp.layout = int(c.AInt("layout", 0))
	}
	sp.seq, sp.batch, sp.in = xs[0], xs[1], xs[2]
	if sp.layout == 1 {
		sp.seq, sp.batch = xs[1], xs[0]
	}
	sp.dirs = 1
	sp.dir = c.AStr("direction", "forward")
	switch sp.dir {
	case "forward", "reverse":
	case "bidirectional":
		sp.dirs = 2
	default:
		return nil, fmt.Errorf("%s: unknown direction %q", kind, sp.dir)
	}
	G := sp.G
	H := int(c.AInt("hidden_size", int64(rs[2])))
	sp.H = H
	if ws[0] != sp.dirs || ws[1] != G*H || ws[2] != sp.in {
		return nil, fmt.Errorf("%s: W has shape %v, expected [%d, %d, %d]", kind, ws, sp.dirs, G*H, sp.in)
	}
	if rs[0] != sp.dirs || rs[1] != G*H || rs[2] != H {
		return nil, fmt.Errorf("%s: R has shape %v, expected [%d, %d, %d]", kind, rs, sp.dirs, G*H, H)
	}
	defaults := map[string][]string{"RNN": {"Tanh"}, "GRU": {"Sigmoid", "Tanh"}, "LSTM": {"Sigmoid", "Tanh", "Tanh"}}[kind]
	sp.nAct = len(defaults)
	acts, err := rnnActs(c, defaults, sp.dirs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	sp.acts = acts
	sp.clip = math.Inf(1)
	if c.HasAttr("clip") {
		sp.clip, sp.hasClip = float64(c.AFloat("clip", 0)), true
	}
	sp.lbr = kind == "GRU" && c.AInt("linear_before_reset", 0) != 0
	sp.inputForget = kind == "LSTM" && c.AInt("input_forget", 0) != 0
	sp.stateShape = []int{sp.dirs, sp.batch, H}
	sp.yShape = []int{sp.seq, sp.dirs, sp.batch, H}
	if sp.layout == 1 {
		sp.stateShape = []int{sp.batch, sp.dirs, H}
		sp.yShape = []int{sp.batch, sp.seq, sp.dirs, H}
	}
	// Optional inputs: shapes.
	check := func(i int, name string, want []int) error {
		if !c.Has(i) || numel(c.Shape(i)) == 0 {
			return nil
		}
		if !shapeEq(c.Shape(i), want) {
			return fmt.Errorf("%s: %s has shape %v, expected %v", kind, name, c.Shape(i), want)
		}
		return nil
	}
	if err := check(3, "B", []int{sp.dirs, 2 * G * H}); err != nil {
		return nil, err
	}
	if err := check(4, "sequence_lens", []int{sp.batch}); err != nil {
		return nil, err
	}
	if err := check(5, "initial_h", sp.stateShape); err != nil {
		return nil, err
	}
	if kind == "LSTM" {
		if err := check(6, "initial_c", sp.stateShape); err != nil {
			return nil, err
		}
		if err := check(7, "P", []int{sp.dirs, 3 * H}); err != nil {
			return nil, err
		}
	}
	return sp, nil
}

// rnnLens returns sequence_lens (nil when absent), checked against seq.
func rnnLens(c *lctx, sp *rnnSpec) ([]int64, error) {
	if !c.Has(4) || numel(c.Shape(4)) == 0 {
		return nil, nil
	}
	lens, err := c.Ints(4)
	if err != nil {
		return nil, err
	}
	for b, l := range lens {
		if l < 0 || l > int64(sp.seq) {
			return nil, fmt.Errorf("%s: sequence_lens[%d] = %d out of range [0, %d]", sp.kind, b, l, sp.seq)
		}
	}
	return lens, nil
}

func rnnRun(c *lctx, kind string) error {
	sp, err := rnnParse(c, kind)
	if err != nil {
		return err
	}
	xh, err := c.H(0)
	if err != nil {
		return err
	}
	wh, err := c.H(1)
	if err != nil {
		return err
	}
	rh, err := c.H(2)
	if err != nil {
		return err
	}
	G, H, layout, seq, batch, in, dirs, dir := sp.G, sp.H, sp.layout, sp.seq, sp.batch, sp.in, sp.dirs, sp.dir
	acts, clip, lbr, inputForget := sp.acts, sp.clip, sp.lbr, sp.inputForget
	stateShape, yShape := sp.stateShape, sp.yShape
	B, _, err := rnnOptional(c, 3)
	if err != nil {
		return err
	}
	lens, err := rnnLens(c, sp)
	if err != nil {
		return err
	}
	stateIdx := func(d, b, j int) int {
		if layout == 1 {
			return (b*dirs+d)*H + j
		}
		return (d*batch+b)*H + j
	}
	H0, _, err := rnnOptional(c, 5)
	if err != nil {
		return err
	}
	var C0, P []float64
	if kind == "LSTM" {
		if C0, _, err = rnnOptional(c, 6); err != nil {
			return err
		}
		if P, _, err = rnnOptional(c, 7); err != nil {
			return err
		}
	}
	X, W, R := xh.f64(), wh.f64(), rh.f64()
	xAt := func(t, b int) []float64 {
		if layout == 1 {
			return X[(b*seq+t)*in : (b*seq+t+1)*in]
		}
		return X[(t*batch+b)*in : (t*batch+b+1)*in]
	}
	yIdx := func(t, d, b, j int) int {
		if layout == 1 {
			return ((b*seq+t)*dirs+d)*H + j
		}
		return ((t*dirs+d)*batch+b)*H + j
	}
	Y := make([]float64, seq*dirs*batch*H)
	Yh := make([]float64, dirs*batch*H)
	Yc := make([]float64, dirs*batch*H)
	clipf := func(v float64) float64 { return math.Max(-clip, math.Min(clip, v)) }
	xw := make([]float64, G*H)
	hr := make([]float64, G*H)
	h := make([]float64, H)
	cs := make([]float64, H)
	nh := make([]float64, H)
	rh2 := make([]float64, H)
	for d := 0; d < dirs; d++ {
		reverse := dir == "reverse" || d == 1
		nA := sp.nAct
		act := acts[d*nA : (d+1)*nA]
		Wd := W[d*G*H*in : (d+1)*G*H*in]
		Rd := R[d*G*H*H : (d+1)*G*H*H]
		var Wb, Rb, Pd []float64
		if B != nil {
			Wb = B[d*2*G*H : d*2*G*H+G*H]
			Rb = B[d*2*G*H+G*H : (d+1)*2*G*H]
		}
		if P != nil {
			Pd = P[d*3*H : (d+1)*3*H]
		}
		for b := 0; b < batch; b++ {
			L := seq
			if lens != nil {
				if lens[b] < 0 || lens[b] > int64(seq) {
					return fmt.Errorf("%s: sequence_lens[%d] = %d out of range [0, %d]", kind, b, lens[b], seq)
				}
				L = int(lens[b])
			}
			for j := 0; j < H; j++ {
				h[j], cs[j] = 0, 0
				if H0 != nil {
					h[j] = H0[stateIdx(d, b, j)]
				}
				if C0 != nil {
					cs[j] = C0[stateIdx(d, b, j)]
				}
			}
			for k := 0; k < L; k++ {
				t := k
				if reverse {
					t = L - 1 - k
				}
				xt := xAt(t, b)
				for g := 0; g < G*H; g++ {
					s := 0.0
					wr := Wd[g*in : (g+1)*in]
					for i, v := range xt {
						s += v * wr[i]
					}
					if Wb != nil {
						s += Wb[g]
					}
					xw[g] = s
					s = 0
					rr := Rd[g*H : (g+1)*H]
					for i, v := range h {
						s += v * rr[i]
					}
					if Rb != nil {
						s += Rb[g]
					}
					hr[g] = s
				}
				switch kind {
				case "RNN":
					for j := 0; j < H; j++ {
						nh[j] = act[0].f(clipf(xw[j] + hr[j]))
					}
				case "GRU":
					// gates z, r, h
					for j := 0; j < H; j++ {
						rh2[j] = act[0].f(clipf(xw[H+j] + hr[H+j])) // r
					}
					for j := 0; j < H; j++ {
						z := act[0].f(clipf(xw[j] + hr[j]))
						var pre float64
						if lbr {
							pre = xw[2*H+j] + rh2[j]*hr[2*H+j]
						} else {
							s := 0.0
							rr := Rd[(2*H+j)*H : (2*H+j+1)*H]
							for i := 0; i < H; i++ {
								s += rh2[i] * h[i] * rr[i]
							}
							if Rb != nil {
								s += Rb[2*H+j]
							}
							pre = xw[2*H+j] + s
						}
						hh := act[1].f(clipf(pre))
						nh[j] = (1-z)*hh + z*h[j]
					}
				case "LSTM":
					// gates i, o, f, c; peepholes i, o, f
					for j := 0; j < H; j++ {
						pi, po, pf := 0.0, 0.0, 0.0
						if Pd != nil {
							pi, po, pf = Pd[j], Pd[H+j], Pd[2*H+j]
						}
						ig := act[0].f(clipf(xw[j] + hr[j] + pi*cs[j]))
						fg := act[0].f(clipf(xw[2*H+j] + hr[2*H+j] + pf*cs[j]))
						if inputForget {
							fg = 1 - ig
						}
						cc := act[1].f(clipf(xw[3*H+j] + hr[3*H+j]))
						cn := fg*cs[j] + ig*cc
						og := act[0].f(clipf(xw[H+j] + hr[H+j] + po*cn))
						cs[j] = cn
						nh[j] = og * act[2].f(cn)
					}
				}
				copy(h, nh)
				for j := 0; j < H; j++ {
					Y[yIdx(t, d, b, j)] = h[j]
				}
			}
			for j := 0; j < H; j++ {
				Yh[stateIdx(d, b, j)] = h[j]
				Yc[stateIdx(d, b, j)] = cs[j]
			}
		}
	}
	c.OutH(0, fromF64(xh.dt, yShape, Y))
	c.OutH(1, fromF64(xh.dt, stateShape, Yh))
	if kind == "LSTM" {
		c.OutH(2, fromF64(xh.dt, stateShape, Yc))
	}
	return nil
}

// rnnLowerAct applies an activation to a GoMLX node.
func rnnLowerAct(a rnnAct, x *graph.Node) *graph.Node {
	zero := scalarLike(x, 0)
	switch a.name {
	case "relu":
		return graph.Max(x, zero)
	case "tanh":
		return graph.Tanh(x)
	case "sigmoid":
		return graph.Sigmoid(x)
	case "affine":
		return graph.Add(graph.Mul(x, scalarLike(x, a.alpha)), scalarLike(x, a.beta))
	case "leakyrelu":
		return graph.Where(graph.LessThan(x, zero), graph.Mul(x, scalarLike(x, a.alpha)), x)
	case "thresholdedrelu":
		return graph.Where(graph.GreaterThan(x, scalarLike(x, a.alpha)), x, graph.ZerosLike(x))
	case "scaledtanh":
		return graph.Mul(scalarLike(x, a.alpha), graph.Tanh(graph.Mul(x, scalarLike(x, a.beta))))
	case "hardsigmoid":
		return graph.ClipScalar(graph.Add(graph.Mul(x, scalarLike(x, a.alpha)), scalarLike(x, a.beta)), 0, 1)
	case "elu":
		em1 := graph.Sub(graph.Exp(x), scalarLike(x, 1))
		return graph.Where(graph.LessThan(x, zero), graph.Mul(em1, scalarLike(x, a.alpha)), x)
	case "softsign":
		return graph.Div(x, graph.Add(graph.Abs(x), scalarLike(x, 1)))
	case "softplus":
		return graph.Softplus(x)
	}
	return x
}

// rnnLower unrolls RNN, GRU or LSTM over the static sequence length.
// Variable sequence lengths are masked for the forward direction; a
// reverse direction with variable lengths runs on the host.
func rnnLower(c *lctx, kind string) error {
	dt := c.DT(0)
	if !isFloatType(dt) {
		return errUseHost
	}
	sp, err := rnnParse(c, kind)
	if err != nil {
		return err
	}
	if sp.seq == 0 || sp.batch == 0 {
		return errUseHost
	}
	lens, err := rnnLens(c, sp)
	if err != nil {
		return err
	}
	uniform := true
	for _, l := range lens {
		if int(l) != sp.seq {
			uniform = false
		}
	}
	if !uniform && sp.dir != "forward" {
		return errUseHost
	}
	G, H, S, N := sp.G, sp.H, sp.seq, sp.batch
	x := c.X(0)
	if sp.layout == 1 {
		x = graph.TransposeAllDims(x, 1, 0, 2) // [seq, batch, in]
	}
	w, r := c.X(1), c.X(2)
	opt := func(i int) *graph.Node {
		if !c.Has(i) || numel(c.Shape(i)) == 0 {
			return nil
		}
		return c.X(i)
	}
	b, h0, c0, p := opt(3), opt(5), (*graph.Node)(nil), (*graph.Node)(nil)
	if kind == "LSTM" {
		c0, p = opt(6), opt(7)
	}
	if sp.layout == 1 {
		if h0 != nil {
			h0 = graph.TransposeAllDims(h0, 1, 0, 2)
		}
		if c0 != nil {
			c0 = graph.TransposeAllDims(c0, 1, 0, 2)
		}
	}
	// mask[t] is [N, 1]: 1 where step t is inside the sequence.
	var masks []*graph.Node
	if !uniform {
		for t := 0; t < S; t++ {
			m := make([]bool, N)
			for bi, l := range lens {
				m[bi] = int64(t) < l
			}
			masks = append(masks, graph.Reshape(graph.Const(x.Graph(), m), N, 1))
		}
	}
	clip := func(v *graph.Node) *graph.Node {
		if sp.hasClip {
			return graph.ClipScalar(v, -sp.clip, sp.clip)
		}
		return v
	}
	gate := func(v *graph.Node, g int) *graph.Node {
		return graph.Slice(v, graph.AxisRange(), graph.AxisRange(g*H, (g+1)*H))
	}
	var ys, yhs, ycs []*graph.Node
	for d := 0; d < sp.dirs; d++ {
		reverse := sp.dir == "reverse" || d == 1
		act := sp.acts[d*sp.nAct : (d+1)*sp.nAct]
		wd := graph.Reshape(graph.Slice(w, graph.AxisElem(d)), G*H, sp.in)
		rd := graph.Reshape(graph.Slice(r, graph.AxisElem(d)), G*H, H)
		// x·Wᵀ for every step at once: [S, N, G*H]
		xw := graph.DotGeneral(x, []int{2}, nil, wd, []int{1}, nil)
		var rbh *graph.Node // GRU linear_before_reset: Rb of the h gate stays inside
		if b != nil {
			bd := graph.Reshape(graph.Slice(b, graph.AxisElem(d)), 2*G*H)
			wb := graph.Slice(bd, graph.AxisRange(0, G*H))
			rb := graph.Slice(bd, graph.AxisRange(G*H, 2*G*H))
			if sp.lbr {
				rbh = graph.Slice(rb, graph.AxisRange(2*H, 3*H))
				rb = graph.Concatenate([]*graph.Node{graph.Slice(rb, graph.AxisRange(0, 2*H)), graph.ZerosLike(rbh)}, 0)
			}
			xw = graph.Add(xw, bcastTo(graph.Add(wb, rb), []int{S, N, G * H}))
		}
		var pi, po, pf *graph.Node
		if p != nil {
			pd := graph.Reshape(graph.Slice(p, graph.AxisElem(d)), 1, 3*H)
			pi, po, pf = bcastTo(gate(pd, 0), []int{N, H}), bcastTo(gate(pd, 1), []int{N, H}), bcastTo(gate(pd, 2), []int{N, H})
		}
		var h, cs *graph.Node
		if h0 != nil {
			h = graph.Reshape(graph.Slice(h0, graph.AxisElem(d)), N, H)
		} else {
			h = graph.Zeros(x.Graph(), shapes.Make(x.DType(), N, H))
		}
		if kind == "LSTM" {
			if c0 != nil {
				cs = graph.Reshape(graph.Slice(c0, graph.AxisElem(d)), N, H)
			} else {
				cs = graph.ZerosLike(h)
			}
		}
		outs := make([]*graph.Node, S)
		for k := 0; k < S; k++ {
			t := k
			if reverse {
				t = S - 1 - k
			}
			xt := graph.Reshape(graph.Slice(xw, graph.AxisElem(t)), N, G*H)
			hr := graph.DotGeneral(h, []int{1}, nil, rd, []int{1}, nil) // [N, G*H]
			var nh, nc *graph.Node
			switch kind {
			case "RNN":
				nh = rnnLowerAct(act[0], clip(graph.Add(xt, hr)))
			case "GRU":
				z := rnnLowerAct(act[0], clip(graph.Add(gate(xt, 0), gate(hr, 0))))
				rg := rnnLowerAct(act[0], clip(graph.Add(gate(xt, 1), gate(hr, 1))))
				var pre *graph.Node
				if sp.lbr {
					hh := gate(hr, 2)
					if rbh != nil {
						hh = graph.Add(hh, bcastTo(rbh, []int{N, H}))
					}
					pre = graph.Add(gate(xt, 2), graph.Mul(rg, hh))
				} else {
					rh := graph.Slice(rd, graph.AxisRange(2*H, 3*H)) // [H, H]
					pre = graph.Add(gate(xt, 2), graph.DotGeneral(graph.Mul(rg, h), []int{1}, nil, rh, []int{1}, nil))
				}
				hh := rnnLowerAct(act[1], clip(pre))
				nh = graph.Add(graph.Mul(graph.OneMinus(z), hh), graph.Mul(z, h))
			case "LSTM":
				ipre, fpre := graph.Add(gate(xt, 0), gate(hr, 0)), graph.Add(gate(xt, 2), gate(hr, 2))
				if pi != nil {
					ipre = graph.Add(ipre, graph.Mul(pi, cs))
					fpre = graph.Add(fpre, graph.Mul(pf, cs))
				}
				ig := rnnLowerAct(act[0], clip(ipre))
				fg := rnnLowerAct(act[0], clip(fpre))
				if sp.inputForget {
					fg = graph.OneMinus(ig)
				}
				cc := rnnLowerAct(act[1], clip(graph.Add(gate(xt, 3), gate(hr, 3))))
				nc = graph.Add(graph.Mul(fg, cs), graph.Mul(ig, cc))
				opre := graph.Add(gate(xt, 1), gate(hr, 1))
				if po != nil {
					opre = graph.Add(opre, graph.Mul(po, nc))
				}
				og := rnnLowerAct(act[0], clip(opre))
				nh = graph.Mul(og, rnnLowerAct(act[2], nc))
			}
			if masks != nil {
				m := graph.BroadcastToDims(masks[t], N, H)
				outs[t] = graph.Where(m, nh, graph.ZerosLike(nh))
				nh = graph.Where(m, nh, h)
				if nc != nil {
					nc = graph.Where(m, nc, cs)
				}
			} else {
				outs[t] = nh
			}
			h, cs = nh, nc
		}
		ys = append(ys, graph.Stack(outs, 0)) // [S, N, H]
		yhs = append(yhs, h)
		if kind == "LSTM" {
			ycs = append(ycs, cs)
		}
	}
	y := graph.Stack(ys, 1) // [S, dirs, N, H]
	yh := graph.Stack(yhs, 0)
	if sp.layout == 1 {
		y = graph.TransposeAllDims(y, 2, 0, 1, 3)
		yh = graph.TransposeAllDims(yh, 1, 0, 2)
	}
	if c.HasOut(0) {
		c.Out(0, y, dt)
	}
	if c.HasOut(1) {
		c.Out(1, yh, dt)
	}
	if kind == "LSTM" && c.HasOut(2) {
		yc := graph.Stack(ycs, 0)
		if sp.layout == 1 {
			yc = graph.TransposeAllDims(yc, 1, 0, 2)
		}
		c.Out(2, yc, dt)
	}
	return nil
}
