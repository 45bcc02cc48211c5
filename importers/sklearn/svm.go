package sklearn

import (
	"github.com/onnxconv/onnxconv/canonical"
	"math"
)

// svm is SVC, NuSVC or SVR as libsvm computes them: kernel values of x
// with the support vectors, the one-vs-one decision values
// sum(dual coef * K) - rho per pair of classes, libsvm's votes for the
// label, scikit-learn's ovr transform for decision_function, and with
// probability=True libsvm's probabilities (svm_proba.go).
type svm struct {
	nF     int
	sv     *mat // [S, F]
	kernel string
	gamma  float64
	coef0  float64
	degree float64
	cls    []int64 // nil for SVR
	// start and count of each class's support vectors.
	start, nsv []int
	dual       *mat      // [C-1, S]
	icpt       []float64 // -rho per pair (scikit-learn's _intercept_)
	ovr        bool
	// probA and probB are libsvm's Platt sigmoid per pair (probability=True).
	probA []float64
	probB []float64
}

func readSVM(o *obj) (predictor, error) {
	m := &svm{}
	var err error
	if m.sv, err = o.matrix("support_vectors_"); err != nil {
		return nil, err
	}
	if o.has("_sparse") && o.boolOr("_sparse", false) {
		return nil, o.errf("_sparse", "a model fitted on sparse data is not supported")
	}
	m.nF = m.sv.c
	if m.kernel, err = o.str("kernel"); err != nil {
		return nil, err
	}
	switch m.kernel {
	case "linear", "rbf", "poly", "sigmoid":
	default:
		return nil, o.errf("kernel", "kernel %q is not supported (linear, rbf, poly, sigmoid are)", m.kernel)
	}
	if m.gamma, err = o.float("_gamma"); err != nil {
		return nil, err
	}
	if m.coef0, err = o.float("coef0"); err != nil {
		return nil, err
	}
	if m.degree, err = o.float("degree"); err != nil {
		return nil, err
	}
	if m.dual, err = o.matrix("_dual_coef_"); err != nil {
		return nil, err
	}
	if m.icpt, err = o.vector("_intercept_"); err != nil {
		return nil, err
	}
	if err := checkFinite(o, "support_vectors_", m.sv.d); err != nil {
		return nil, err
	}
	S := m.sv.r
	if m.dual.c != S {
		return nil, o.errf("_dual_coef_", "%d columns for %d support vectors", m.dual.c, S)
	}
	if o.class == "SVR" || o.class == "NuSVR" {
		if m.dual.r != 1 || len(m.icpt) != 1 {
			return nil, o.errf("_dual_coef_", "shape %dx%d with %d intercepts; want one row", m.dual.r, m.dual.c, len(m.icpt))
		}
		return m, nil
	}
	if m.cls, err = o.classes("classes_"); err != nil {
		return nil, err
	}
	C := len(m.cls)
	field := "_n_support"
	if !o.has(field) {
		field = "n_support_"
	}
	ns, err := o.vector(field)
	if err != nil {
		return nil, err
	}
	if len(ns) != C || m.dual.r != C-1 || len(m.icpt) != C*(C-1)/2 {
		return nil, o.errf(field, "%d counts, %d dual rows, %d intercepts for %d classes", len(ns), m.dual.r, len(m.icpt), C)
	}
	total := 0
	for _, n := range ns {
		if n < 0 || n > float64(S) {
			return nil, o.errf(field, "count %g out of range", n)
		}
		m.start = append(m.start, total)
		m.nsv = append(m.nsv, int(n))
		total += int(n)
	}
	if total != S {
		return nil, o.errf(field, "counts sum to %d for %d support vectors", total, S)
	}
	m.ovr = C > 2 && o.strOr("decision_function_shape", "ovr") == "ovr"
	if o.boolOr("break_ties", false) && m.ovr {
		return nil, o.errf("break_ties", "break_ties=True is not supported")
	}
	if o.boolOr("probability", false) {
		if err := m.readProb(o); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *svm) inDim() int { return m.nF }

func (m *svm) pairs() int { return len(m.cls) * (len(m.cls) - 1) / 2 }

func (m *svm) outputs() []output {
	if m.cls == nil {
		return []output{{name: "variable", kind: outMatrix, cols: 1}}
	}
	outs := []output{{name: "label", kind: outLabels}}
	if m.probA != nil {
		outs = append(outs, output{name: "probabilities", kind: outMatrix, cols: len(m.cls)})
	}
	switch {
	case len(m.cls) == 2:
		outs = append(outs, output{name: "scores", kind: outVector})
	case m.ovr:
		outs = append(outs, output{name: "scores", kind: outMatrix, cols: len(m.cls)})
	default:
		outs = append(outs, output{name: "scores", kind: outMatrix, cols: m.pairs()})
	}
	return outs
}

// kernelRow is K(x, sv_s) for every support vector.
func (m *svm) kernelRow(x []float64, out []float64) {
	for s := range out {
		v := m.sv.row(s)
		switch m.kernel {
		case "rbf":
			d := 0.0
			for j, xv := range x {
				t := xv - v[j]
				d += t * t
			}
			out[s] = math.Exp(-m.gamma * d)
		default:
			d := 0.0
			for j, xv := range x {
				d += xv * v[j]
			}
			switch m.kernel {
			case "poly":
				d = math.Pow(m.gamma*d+m.coef0, m.degree)
			case "sigmoid":
				d = math.Tanh(m.gamma*d + m.coef0)
			}
			out[s] = d
		}
	}
}

// coefMat is the [S, P] matrix whose product with the kernel values is
// the pairwise sums: column p = (i, j) holds dual[j-1] on class i's
// vectors and dual[i] on class j's.
func (m *svm) coefMat() *mat {
	S := m.sv.r
	if m.cls == nil {
		return &mat{r: S, c: 1, d: append([]float64(nil), m.dual.d...)}
	}
	C, P := len(m.cls), m.pairs()
	w := newMat(S, P)
	p := 0
	for i := 0; i < C; i++ {
		for j := i + 1; j < C; j++ {
			for s := m.start[i]; s < m.start[i]+m.nsv[i]; s++ {
				w.d[s*P+p] = m.dual.at(j-1, s)
			}
			for s := m.start[j]; s < m.start[j]+m.nsv[j]; s++ {
				w.d[s*P+p] = m.dual.at(i, s)
			}
			p++
		}
	}
	return w
}

func (m *svm) predict(x *mat) []result {
	S := m.sv.r
	k := newMat(x.r, S)
	for i := 0; i < x.r; i++ {
		m.kernelRow(x.row(i), k.row(i))
	}
	dec := mul(k, m.coefMat())
	dec.addRow(m.icpt)
	if m.cls == nil {
		return []result{{m: dec}}
	}
	C, P := len(m.cls), m.pairs()
	labels := make([]int64, x.r)
	for r := 0; r < x.r; r++ {
		votes := make([]int, C)
		p := 0
		for i := 0; i < C; i++ {
			for j := i + 1; j < C; j++ {
				if dec.d[r*P+p] > 0 {
					votes[i]++
				} else {
					votes[j]++
				}
				p++
			}
		}
		best := 0
		for c := range votes {
			if votes[c] > votes[best] {
				best = c
			}
		}
		labels[r] = m.cls[best]
	}
	out := []result{{ints: labels}}
	if m.probA != nil {
		out = append(out, result{m: m.probabilities(dec)})
	}
	switch {
	case C == 2:
		dec.apply(func(v float64) float64 { return -v })
	case m.ovr:
		dec = ovrDecision(dec, C)
	}
	return append(out, result{m: dec})
}

// ovrDecision is scikit-learn's _ovr_decision_function(dec < 0, -dec, C).
func ovrDecision(dec *mat, C int) *mat {
	out := newMat(dec.r, C)
	for r := 0; r < dec.r; r++ {
		votes := make([]float64, C)
		conf := make([]float64, C)
		p := 0
		for i := 0; i < C; i++ {
			for j := i + 1; j < C; j++ {
				d := dec.at(r, p)
				conf[i] -= -d
				conf[j] += -d
				if d < 0 {
					votes[j]++
				} else {
					votes[i]++
				}
				p++
			}
		}
		for c := 0; c < C; c++ {
			out.d[r*C+c] = votes[c] + conf[c]/(3*(math.Abs(conf[c])+1))
		}
	}
	return out
}

func (m *svm) emit(g *graph, x string) []string {
	sv := g.matrix("support_vectors", m.sv)
	var k string
	switch m.kernel {
	case "rbf":
		x3 := g.op("Unsqueeze", []string{x, g.int64s("axes", []int64{1}, []int64{1})})
		d := g.op("Sub", []string{x3, sv})
		s := g.op("ReduceSum", []string{g.op("Mul", []string{d, d}), g.int64s("axes", []int64{1}, []int64{2})}, canonical.IntAttr("keepdims", 0))
		k = g.op("Exp", []string{g.op("Mul", []string{s, g.scalar(-m.gamma)})})
	default:
		k = g.affine(x, m.sv.transpose(), nil)
		switch m.kernel {
		case "poly":
			k = g.op("Pow", []string{g.op("Add", []string{g.op("Mul", []string{k, g.scalar(m.gamma)}), g.scalar(m.coef0)}), g.scalar(m.degree)})
		case "sigmoid":
			k = g.op("Tanh", []string{g.op("Add", []string{g.op("Mul", []string{k, g.scalar(m.gamma)}), g.scalar(m.coef0)})})
		}
	}
	dec := g.affine(k, m.coefMat(), m.icpt)
	if m.cls == nil {
		return []string{dec}
	}
	C, P := len(m.cls), m.pairs()
	// Votes: pair (i, j) votes i when dec > 0, else j.
	pos := g.op("Cast", []string{g.op("Greater", []string{dec, g.scalar(0)})}, canonical.IntAttr("to", 11))
	vi, vj := newMat(P, C), newMat(P, C)
	p := 0
	for i := 0; i < C; i++ {
		for j := i + 1; j < C; j++ {
			vi.d[p*C+i] = 1
			vj.d[p*C+j] = 1
			p++
		}
	}
	// votes = pos vi + (1 - pos) vj
	neg := g.op("Sub", []string{g.scalar(1), pos})
	votes := g.op("Add", []string{g.affine(pos, vi, nil), g.affine(neg, vj, nil)})
	outs := []string{g.labelArgmax(m.cls, votes)}
	if m.probA != nil {
		outs = append(outs, m.emitProbabilities(g, dec))
	}
	switch {
	case C == 2:
		return append(outs, g.flatten(g.op("Neg", []string{dec})))
	case m.ovr:
		// votes for i where dec >= 0 (not dec < 0), confidences -dec.
		ge := g.op("Cast", []string{g.op("Not", []string{g.op("Less", []string{dec, g.scalar(0)})})}, canonical.IntAttr("to", 11))
		ovrVotes := g.op("Add", []string{g.affine(ge, vi, nil), g.affine(g.op("Sub", []string{g.scalar(1), ge}), vj, nil)})
		// conf[i] += dec, conf[j] -= dec
		sgn := newMat(P, C)
		for q := range vi.d {
			sgn.d[q] = vi.d[q] - vj.d[q]
		}
		conf := g.affine(dec, sgn, nil)
		t := g.op("Div", []string{conf, g.op("Mul", []string{g.scalar(3), g.op("Add", []string{g.op("Abs", []string{conf}), g.scalar(1)})})})
		return append(outs, g.op("Add", []string{ovrVotes, t}))
	}
	return append(outs, dec)
}
