package sklearn

import (
	"fmt"
	"github.com/onnxconv/onnxconv/canonical"
	"math"
)

// naiveBayes is GaussianNB or BernoulliNB: a joint log likelihood per
// class, then argmax and normalised exp.
type naiveBayes struct {
	n   int
	cls []int64
	// Gaussian: theta, v [C,F]; base [C] = log prior - 0.5 sum log(2 pi var)
	theta, v *mat
	// Bernoulli: jll = bin(x) w + base, w [F,C]
	w        *mat
	binarize *float64
	base     []float64
}

func readGaussianNB(o *obj) (predictor, error) {
	cls, err := o.classes("classes_")
	if err != nil {
		return nil, err
	}
	theta, err := o.matrix("theta_")
	if err != nil {
		return nil, err
	}
	varField := "var_" // scikit-learn >= 1.0; sigma_ before
	if !o.has(varField) {
		varField = "sigma_"
	}
	v, err := o.matrix(varField)
	if err != nil {
		return nil, err
	}
	prior, err := o.vector("class_prior_")
	if err != nil {
		return nil, err
	}
	C, F := len(cls), theta.c
	if theta.r != C || v.r != C || v.c != F || len(prior) != C {
		return nil, o.errf("theta_", "shapes theta_ %dx%d, %s %dx%d, class_prior_ %d for %d classes", theta.r, theta.c, varField, v.r, v.c, len(prior), C)
	}
	m := &naiveBayes{n: F, cls: cls, theta: theta, v: v, base: make([]float64, C)}
	for i := 0; i < C; i++ {
		s := 0.0
		for _, x := range v.row(i) {
			s += math.Log(2.0 * math.Pi * x)
		}
		m.base[i] = math.Log(prior[i]) + -0.5*s
	}
	return m, nil
}

func readBernoulliNB(o *obj) (predictor, error) {
	cls, err := o.classes("classes_")
	if err != nil {
		return nil, err
	}
	flp, err := o.matrix("feature_log_prob_")
	if err != nil {
		return nil, err
	}
	clp, err := o.vector("class_log_prior_")
	if err != nil {
		return nil, err
	}
	C, F := len(cls), flp.c
	if flp.r != C || len(clp) != C {
		return nil, o.errf("feature_log_prob_", "shape %dx%d for %d classes", flp.r, flp.c, C)
	}
	// jll = X (flp - neg)' + class_log_prior + neg.sum(1), neg = log(1 - exp(flp))
	m := &naiveBayes{n: F, cls: cls, w: newMat(F, C), base: make([]float64, C)}
	for c := 0; c < C; c++ {
		s := 0.0
		for f := 0; f < F; f++ {
			lp := flp.at(c, f)
			neg := math.Log(1 - math.Exp(lp))
			m.w.d[f*C+c] = lp - neg
			s += neg
		}
		m.base[c] = clp[c] + s
	}
	if o.has("binarize") {
		b, err := o.float("binarize")
		if err != nil {
			return nil, err
		}
		m.binarize = &b
	}
	return m, nil
}

func (m *naiveBayes) inDim() int { return m.n }

func (m *naiveBayes) outputs() []output {
	return []output{{name: "label", kind: outLabels}, {name: "probabilities", kind: outMatrix, cols: len(m.cls)}}
}

func (m *naiveBayes) jll(x *mat) *mat {
	C := len(m.cls)
	if m.w != nil {
		xb := x
		if m.binarize != nil {
			xb = &mat{r: x.r, c: x.c, d: make([]float64, len(x.d))}
			for i, v := range x.d {
				if v > *m.binarize {
					xb.d[i] = 1
				}
			}
		}
		j := mul(xb, m.w)
		j.addRow(m.base)
		return j
	}
	j := newMat(x.r, C)
	for i := 0; i < x.r; i++ {
		xr := x.row(i)
		for c := 0; c < C; c++ {
			s := 0.0
			th, vr := m.theta.row(c), m.v.row(c)
			for f, xv := range xr {
				d := xv - th[f]
				s += d * d / vr[f]
			}
			j.d[i*C+c] = m.base[c] - 0.5*s
		}
	}
	return j
}

func (m *naiveBayes) predict(x *mat) []result {
	j := m.jll(x)
	labels := make([]int64, x.r)
	for i, k := range argmaxRows(j) {
		labels[i] = m.cls[k]
	}
	p := newMat(j.r, j.c)
	for i := 0; i < j.r; i++ {
		r := j.row(i)
		mx := math.Inf(-1)
		for _, v := range r {
			mx = math.Max(mx, v)
		}
		s := 0.0
		for _, v := range r {
			s += math.Exp(v - mx)
		}
		lse := mx + math.Log(s)
		for c, v := range r {
			p.d[i*j.c+c] = math.Exp(v - lse)
		}
	}
	return []result{{ints: labels}, {m: p}}
}

func (m *naiveBayes) emit(g *graph, x string) []string {
	var j string
	C := int64(len(m.cls))
	if m.w != nil {
		xb := x
		if m.binarize != nil {
			xb = g.op("Cast", []string{g.op("Greater", []string{x, g.scalar(*m.binarize)})}, canonical.IntAttr("to", 11))
		}
		j = g.affine(xb, m.w, m.base)
	} else {
		// [N,1,F] - [C,F] -> [N,C,F]
		x3 := g.op("Unsqueeze", []string{x, g.int64s("axes", []int64{1}, []int64{1})})
		d := g.op("Sub", []string{x3, g.matrix("theta", m.theta)})
		q := g.op("Div", []string{g.op("Mul", []string{d, d}), g.matrix("var", m.v)})
		s := g.op("ReduceSum", []string{q, g.int64s("axes", []int64{1}, []int64{2})}, canonical.IntAttr("keepdims", 0))
		j = g.op("Sub", []string{g.double("base", []int64{1, C}, m.base), g.op("Mul", []string{g.scalar(0.5), s})})
	}
	label := g.labelArgmax(m.cls, j)
	// exp(jll - logsumexp(jll))
	mx := g.op("ReduceMax", []string{j}, canonical.IntsAttr("axes", 1), canonical.IntAttr("keepdims", 1))
	lse := g.op("Add", []string{mx, g.op("Log", []string{g.sumRows(g.op("Exp", []string{g.op("Sub", []string{j, mx})}))})})
	p := g.op("Exp", []string{g.op("Sub", []string{j, lse})})
	return []string{label, p}
}

// kmeans: label = nearest centre, scores = distances to the centres
// (KMeans.transform), by scikit-learn's expansion
// sqrt(max(|x|^2 - 2 x.c + |c|^2, 0)).
type kmeans struct {
	n  int
	c  *mat // [K,F]
	cc []float64
}

func readKMeans(o *obj) (predictor, error) {
	c, err := o.matrix("cluster_centers_")
	if err != nil {
		return nil, err
	}
	if err := checkFinite(o, "cluster_centers_", c.d); err != nil {
		return nil, err
	}
	m := &kmeans{n: c.c, c: c, cc: make([]float64, c.r)}
	for k := 0; k < c.r; k++ {
		for _, v := range c.row(k) {
			m.cc[k] += v * v
		}
	}
	return m, nil
}

func (m *kmeans) inDim() int { return m.n }

func (m *kmeans) outputs() []output {
	return []output{{name: "label", kind: outLabels}, {name: "scores", kind: outMatrix, cols: m.c.r}}
}

func (m *kmeans) predict(x *mat) []result {
	K := m.c.r
	d := mul(x, m.c.transpose())
	labels := make([]int64, x.r)
	for i := 0; i < x.r; i++ {
		xx := 0.0
		for _, v := range x.row(i) {
			xx += v * v
		}
		r := d.row(i)
		best := 0
		for k := 0; k < K; k++ {
			r[k] = math.Sqrt(math.Max(xx-2*r[k]+m.cc[k], 0))
			if r[k] < r[best] {
				best = k
			}
		}
		labels[i] = int64(best)
	}
	return []result{{ints: labels}, {m: d}}
}

func (m *kmeans) emit(g *graph, x string) []string {
	xx := g.sumRows(g.op("Mul", []string{x, x}))
	xc := g.affine(x, m.c.transpose(), nil)
	sq := g.op("Add", []string{g.op("Sub", []string{xx, g.op("Mul", []string{g.scalar(2), xc})}), g.row("cc", m.cc)})
	d := g.op("Sqrt", []string{g.op("Max", []string{sq, g.scalar(0)})})
	label := g.op("ArgMin", []string{d}, canonical.IntAttr("axis", 1), canonical.IntAttr("keepdims", 0))
	return []string{label, d}
}

// mlp is MLPClassifier or MLPRegressor.
type mlp struct {
	w      []*mat
	b      [][]float64
	act    string
	outAct string
	cls    []int64
}

func readMLP(o *obj) (predictor, error) {
	ws, err := o.get("coefs_")
	if err != nil {
		return nil, err
	}
	bs, err := o.get("intercepts_")
	if err != nil {
		return nil, err
	}
	wl, ok1 := listItems(ws)
	bl, ok2 := listItems(bs)
	if !ok1 || !ok2 || len(wl) != len(bl) || len(wl) == 0 || len(wl) > 1000 {
		return nil, o.errf("coefs_", "expected lists of layer weights and intercepts of the same length")
	}
	m := &mlp{act: o.strOr("activation", "relu"), outAct: o.strOr("out_activation_", "")}
	prev := -1
	for i := range wl {
		wa, err := toArray(wl[i])
		if err != nil || len(wa.Shape) != 2 {
			return nil, o.errf(fmt.Sprintf("coefs_[%d]", i), "expected a 2-D array")
		}
		ba, err := toArray(bl[i])
		if err != nil || len(ba.F) != wa.Shape[1] {
			return nil, o.errf(fmt.Sprintf("intercepts_[%d]", i), "expected %d values", wa.Shape[1])
		}
		if prev >= 0 && wa.Shape[0] != prev {
			return nil, o.errf(fmt.Sprintf("coefs_[%d]", i), "%d inputs after a layer of %d", wa.Shape[0], prev)
		}
		prev = wa.Shape[1]
		m.w = append(m.w, &mat{r: wa.Shape[0], c: wa.Shape[1], d: wa.F})
		m.b = append(m.b, ba.F)
	}
	for _, a := range []string{m.act, m.outAct} {
		switch a {
		case "relu", "tanh", "logistic", "identity", "softmax":
		default:
			return nil, o.errf("activation", "%q not supported", a)
		}
	}
	if o.class == "MLPClassifier" {
		if m.cls, err = o.classes("classes_"); err != nil {
			return nil, err
		}
		want := len(m.cls)
		if want == 2 {
			want = 1
		}
		if prev != want {
			return nil, o.errf("coefs_", "%d outputs for %d classes", prev, len(m.cls))
		}
	}
	return m, nil
}

func listItems(v any) ([]any, bool) { return pickleList(v) }

func (m *mlp) inDim() int { return m.w[0].r }

func (m *mlp) outputs() []output {
	K := m.w[len(m.w)-1].c
	if m.cls == nil {
		return []output{{name: "variable", kind: outMatrix, cols: K}}
	}
	return []output{{name: "label", kind: outLabels}, {name: "probabilities", kind: outMatrix, cols: len(m.cls)}}
}

func activate(a string, x *mat) {
	switch a {
	case "relu":
		x.apply(func(v float64) float64 { return math.Max(v, 0) })
	case "tanh":
		x.apply(math.Tanh)
	case "logistic":
		x.apply(sigmoid)
	case "softmax":
		softmaxRows(x)
	}
}

func (m *mlp) predict(x *mat) []result {
	h := x
	for i := range m.w {
		h = mul(h, m.w[i])
		h.addRow(m.b[i])
		if i < len(m.w)-1 {
			activate(m.act, h)
		} else {
			activate(m.outAct, h)
		}
	}
	if m.cls == nil {
		return []result{{m: h}}
	}
	labels := make([]int64, x.r)
	var p *mat
	if len(m.cls) == 2 {
		p = newMat(h.r, 2)
		for i := 0; i < h.r; i++ {
			p.d[2*i], p.d[2*i+1] = 1-h.d[i], h.d[i]
			if h.d[i] > 0.5 {
				labels[i] = m.cls[1]
			} else {
				labels[i] = m.cls[0]
			}
		}
	} else {
		p = h
		for i, k := range argmaxRows(h) {
			labels[i] = m.cls[k]
		}
	}
	return []result{{ints: labels}, {m: p}}
}

func (g *graph) activation(a, x string) string {
	switch a {
	case "relu":
		return g.op("Relu", []string{x})
	case "tanh":
		return g.op("Tanh", []string{x})
	case "logistic":
		return g.op("Sigmoid", []string{x})
	case "softmax":
		return g.op("Softmax", []string{x}, canonical.IntAttr("axis", 1))
	}
	return x
}

func (m *mlp) emit(g *graph, x string) []string {
	h := x
	for i := range m.w {
		h = g.affine(h, m.w[i], m.b[i])
		if i < len(m.w)-1 {
			h = g.activation(m.act, h)
		} else {
			h = g.activation(m.outAct, h)
		}
	}
	if m.cls == nil {
		return []string{h}
	}
	if len(m.cls) == 2 {
		return []string{g.labelPositive(m.cls, h, 0.5), g.twoColumns(h)}
	}
	return []string{g.labelArgmax(m.cls, h), h}
}
