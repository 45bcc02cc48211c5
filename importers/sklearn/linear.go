package sklearn

import (
	"github.com/onnxconv/onnxconv/canonical"
	"math"
)

// Output element kinds.
type outKind int

const (
	outLabels outKind = iota // int64 [N]
	outMatrix                // double [N, cols]
	outVector                // double [N]
)

// output describes one graph output.
type output struct {
	name string
	kind outKind
	cols int
}

// result is one computed output: ints for labels, m for matrices and
// vectors (a vector as an [N,1] matrix).
type result struct {
	ints []int64
	m    *mat
}

// transformer is a step that maps [N, in] to [N, outDim()].
type transformer interface {
	inDim() int
	outDim() int
	transform(x *mat) *mat
	emit(g *graph, x string) string
}

// predictor is a final step with named outputs.
type predictor interface {
	inDim() int
	outputs() []output
	predict(x *mat) []result
	emit(g *graph, x string) []string
}

// probaKind is how a linear classifier turns scores into probabilities.
type probaKind int

const (
	probaNone    probaKind = iota
	probaOvR               // expit, then rows normalised (binary: [1-p, p])
	probaSoftmax           // softmax (binary: of [-d, d])
)

// linearModel is x coef' + intercept: regressors, and the decision
// function of linear classifiers.
type linearModel struct {
	w   *mat // [F, K]
	b   []float64
	nF  int
	cls []int64 // classifiers
	pk  probaKind
	// decision says whether the classifier has decision_function.
	decision bool
}

func readLinear(o *obj) (*linearModel, error) {
	coef, err := o.matrix("coef_")
	if err != nil {
		return nil, err
	}
	b, err := o.vector("intercept_")
	if err != nil {
		return nil, err
	}
	if len(b) == 1 && coef.r > 1 {
		b = repeat(b[0], coef.r)
	}
	if len(b) != coef.r {
		return nil, o.errf("intercept_", "%d values for %d rows of coef_", len(b), coef.r)
	}
	if o.has("n_features_in_") {
		if n, err := o.int("n_features_in_"); err == nil && n != coef.c {
			return nil, o.errf("coef_", "%d columns, but n_features_in_ is %d", coef.c, n)
		}
	}
	return &linearModel{w: coef.transpose(), b: b, nF: coef.c}, nil
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func readLinearRegressor(o *obj) (predictor, error) {
	return readLinear(o)
}

func readLinearClassifier(o *obj) (predictor, error) {
	m, err := readLinear(o)
	if err != nil {
		return nil, err
	}
	if m.cls, err = o.classes("classes_"); err != nil {
		return nil, err
	}
	k := len(m.cls)
	if k == 2 {
		k = 1
	}
	if m.w.c != k {
		return nil, o.errf("coef_", "%d rows for %d classes", m.w.c, len(m.cls))
	}
	m.decision = true
	switch o.class {
	case "LogisticRegression":
		mc := o.strOr("multi_class", "auto")
		solver := o.strOr("solver", "lbfgs")
		ovr := mc == "ovr" || mc == "warn" || (mc == "auto" && (len(m.cls) <= 2 || solver == "liblinear"))
		m.pk = probaSoftmax
		if ovr {
			m.pk = probaOvR
		}
	case "SGDClassifier":
		switch loss := o.strOr("loss", "hinge"); loss {
		case "log_loss", "log":
			m.pk = probaOvR
		case "modified_huber":
			return nil, o.errf("loss", "SGDClassifier(loss=%q) is not supported yet (hinge, log_loss and the losses without predict_proba are)", loss)
		}
	}
	return m, nil
}

func (m *linearModel) inDim() int { return m.nF }

func (m *linearModel) outputs() []output {
	if m.cls == nil {
		return []output{{name: "variable", kind: outMatrix, cols: m.w.c}}
	}
	outs := []output{{name: "label", kind: outLabels}}
	if m.pk != probaNone {
		outs = append(outs, output{name: "probabilities", kind: outMatrix, cols: len(m.cls)})
	}
	if len(m.cls) == 2 {
		outs = append(outs, output{name: "scores", kind: outVector})
	} else {
		outs = append(outs, output{name: "scores", kind: outMatrix, cols: len(m.cls)})
	}
	return outs
}

func (m *linearModel) scores(x *mat) *mat {
	s := mul(x, m.w)
	s.addRow(m.b)
	return s
}

func (m *linearModel) predict(x *mat) []result {
	s := m.scores(x)
	if m.cls == nil {
		return []result{{m: s}}
	}
	labels := make([]int64, x.r)
	if len(m.cls) == 2 {
		for i := range labels {
			if s.d[i] > 0 {
				labels[i] = m.cls[1]
			} else {
				labels[i] = m.cls[0]
			}
		}
	} else {
		for i, j := range argmaxRows(s) {
			labels[i] = m.cls[j]
		}
	}
	out := []result{{ints: labels}}
	if m.pk != probaNone {
		out = append(out, result{m: linearProba(s, m.pk)})
	}
	return append(out, result{m: s})
}

// linearProba is scikit-learn's _predict_proba_lr (OvR) or softmax of the
// scores s [N,K] (K = 1 for binary).
func linearProba(s *mat, pk probaKind) *mat {
	if s.c == 1 {
		p := newMat(s.r, 2)
		for i := 0; i < s.r; i++ {
			if pk == probaSoftmax {
				r := []float64{-s.d[i], s.d[i]}
				softmaxRows(&mat{r: 1, c: 2, d: r})
				copy(p.row(i), r)
			} else {
				e := sigmoid(s.d[i])
				p.d[2*i], p.d[2*i+1] = 1-e, e
			}
		}
		return p
	}
	p := &mat{r: s.r, c: s.c, d: append([]float64(nil), s.d...)}
	if pk == probaSoftmax {
		softmaxRows(p)
		return p
	}
	p.apply(sigmoid)
	for i := 0; i < p.r; i++ {
		r := p.row(i)
		sum := 0.0
		for _, v := range r {
			sum += v
		}
		for j := range r {
			r[j] /= sum
		}
	}
	return p
}

func (m *linearModel) emit(g *graph, x string) []string {
	s := g.affine(x, m.w, m.b)
	if m.cls == nil {
		return []string{s}
	}
	var label string
	if len(m.cls) == 2 {
		label = g.labelPositive(m.cls, s, 0)
	} else {
		label = g.labelArgmax(m.cls, s)
	}
	outs := []string{label}
	if m.pk != probaNone {
		outs = append(outs, g.linearProba(s, len(m.cls) == 2, m.pk))
	}
	if len(m.cls) == 2 {
		return append(outs, g.flatten(s))
	}
	return append(outs, s)
}

func (g *graph) linearProba(s string, binary bool, pk probaKind) string {
	if binary {
		if pk == probaSoftmax {
			neg := g.op("Neg", []string{s})
			return g.op("Softmax", []string{g.op("Concat", []string{neg, s}, canonical.IntAttr("axis", 1))}, canonical.IntAttr("axis", 1))
		}
		return g.twoColumns(g.op("Sigmoid", []string{s}))
	}
	if pk == probaSoftmax {
		return g.op("Softmax", []string{s}, canonical.IntAttr("axis", 1))
	}
	p := g.op("Sigmoid", []string{s})
	return g.op("Div", []string{p, g.sumRows(p)})
}

// checkFinite refuses NaN or infinite parameters (a corrupt model).
func checkFinite(o *obj, field string, v []float64) error {
	for i, f := range v {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return o.errf(field, "value %d is %v", i, f)
		}
	}
	return nil
}
