package sklearn

import (
	"math"

	"github.com/onnxconv/onnxconv/canonical"
)

// knn is KNeighborsClassifier/Regressor with the euclidean metric: the
// k nearest training points (squared distances summed over the
// features), then the share of each class among them (label: the first
// class with the most), or the mean target. With weights="distance" each
// neighbour counts 1/distance; a row with a neighbour at distance 0
// counts those neighbours only, each 1 (scikit-learn's _get_weights).
type knn struct {
	fit      *mat // [M, F]
	k        int
	distance bool
	cls      []int64
	yIdx     []int     // classifier: class index per training point
	y        []float64 // regressor
}

func readKNN(o *obj) (predictor, error) {
	m := &knn{}
	var err error
	if m.fit, err = o.matrix("_fit_X"); err != nil {
		return nil, err
	}
	if err := checkFinite(o, "_fit_X", m.fit.d); err != nil {
		return nil, err
	}
	if m.k, err = o.int("n_neighbors"); err != nil {
		return nil, err
	}
	if m.k < 1 || m.k > m.fit.r {
		return nil, o.errf("n_neighbors", "%d neighbours for %d training points", m.k, m.fit.r)
	}
	switch w := o.strOr("weights", "uniform"); w {
	case "uniform":
	case "distance":
		m.distance = true
	default:
		return nil, o.errf("weights", "weights=%q is not supported (uniform, distance are)", w)
	}
	metric := o.strOr("effective_metric_", "euclidean")
	if metric == "minkowski" {
		if p, err := o.float("p"); err == nil && p == 2 {
			metric = "euclidean"
		}
	}
	if metric != "euclidean" {
		return nil, o.errf("effective_metric_", "metric %q is not supported (euclidean is)", metric)
	}
	if o.boolOr("outputs_2d_", false) {
		return nil, o.errf("outputs_2d_", "multi-output neighbours are not supported")
	}
	y, err := o.vector("_y")
	if err != nil {
		return nil, err
	}
	if len(y) != m.fit.r {
		return nil, o.errf("_y", "%d targets for %d training points", len(y), m.fit.r)
	}
	if !isClassifier(o.class) {
		m.y = y
		return m, nil
	}
	if m.cls, err = o.classes("classes_"); err != nil {
		return nil, err
	}
	m.yIdx = make([]int, len(y))
	for i, v := range y {
		if v < 0 || v >= float64(len(m.cls)) || v != float64(int(v)) {
			return nil, o.errf("_y", "class index %g out of range", v)
		}
		m.yIdx[i] = int(v)
	}
	return m, nil
}

func (m *knn) inDim() int { return m.fit.c }

func (m *knn) outputs() []output {
	if m.cls == nil {
		return []output{{name: "variable", kind: outMatrix, cols: 1}}
	}
	return []output{{name: "label", kind: outLabels}, {name: "probabilities", kind: outMatrix, cols: len(m.cls)}}
}

// neighbours is the indices of the k nearest training points of x, the
// nearest first (ties: the lower index first).
func (m *knn) neighbours(x []float64) []int {
	M := m.fit.r
	d := make([]float64, M)
	for i := 0; i < M; i++ {
		s := 0.0
		for j, v := range m.fit.row(i) {
			t := x[j] - v
			s += t * t
		}
		d[i] = s
	}
	idx := make([]int, 0, m.k)
	used := make([]bool, M)
	for len(idx) < m.k {
		best := -1
		for i := 0; i < M; i++ {
			if !used[i] && (best < 0 || d[i] < d[best]) {
				best = i
			}
		}
		used[best] = true
		idx = append(idx, best)
	}
	return idx
}

// weights is each neighbour's weight for the row x: 1, or 1/distance
// (distance 0: 1 for those neighbours, 0 for the others).
func (m *knn) weights(x []float64, idx []int) []float64 {
	w := make([]float64, len(idx))
	zero := false
	for n, i := range idx {
		w[n] = 1
		if !m.distance {
			continue
		}
		s := 0.0
		for j, v := range m.fit.row(i) {
			t := x[j] - v
			s += t * t
		}
		w[n] = 1 / math.Sqrt(s)
		if math.IsInf(w[n], 0) {
			zero = true
		}
	}
	if zero {
		for n := range w {
			if math.IsInf(w[n], 0) {
				w[n] = 1
			} else {
				w[n] = 0
			}
		}
	}
	return w
}

func (m *knn) predict(x *mat) []result {
	if m.cls == nil {
		out := newMat(x.r, 1)
		for r := 0; r < x.r; r++ {
			idx := m.neighbours(x.row(r))
			s, sw := 0.0, 0.0
			for n, w := range m.weights(x.row(r), idx) {
				s += m.y[idx[n]] * w
				sw += w
			}
			out.d[r] = s / sw
		}
		return []result{{m: out}}
	}
	C := len(m.cls)
	p := newMat(x.r, C)
	for r := 0; r < x.r; r++ {
		idx := m.neighbours(x.row(r))
		for n, w := range m.weights(x.row(r), idx) {
			p.d[r*C+m.yIdx[idx[n]]] += w
		}
		s := 0.0
		for c := 0; c < C; c++ {
			s += p.d[r*C+c]
		}
		if s == 0 {
			s = 1
		}
		for c := 0; c < C; c++ {
			p.d[r*C+c] /= s
		}
	}
	labels := make([]int64, x.r)
	for i, c := range argmaxRows(p) {
		labels[i] = m.cls[c]
	}
	return []result{{ints: labels}, {m: p}}
}

func (m *knn) emit(g *graph, x string) []string {
	x3 := g.op("Unsqueeze", []string{x, g.int64s("axes", []int64{1}, []int64{1})})
	d := g.op("Sub", []string{x3, g.matrix("fit_X", m.fit)})
	sq := g.op("ReduceSum", []string{g.op("Mul", []string{d, d}), g.int64s("axes", []int64{1}, []int64{2})}, canonical.IntAttr("keepdims", 0))
	kk := g.int64s("k", []int64{1}, []int64{int64(m.k)})
	top := g.name("TopK")
	idx := top + "_indices"
	g.b.NodeIn("", "TopK", top, []string{sq, kk}, []string{top + "_values", idx}, canonical.IntAttr("axis", 1), canonical.IntAttr("largest", 0), canonical.IntAttr("sorted", 1))
	var w string // [N, k] weights, with distance
	if m.distance {
		w = g.op("Div", []string{g.scalar(1), g.op("Sqrt", []string{top + "_values"})})
		inf := g.op("IsInf", []string{w})
		infD := g.op("Cast", []string{inf}, canonical.IntAttr("to", int64(canonical.Double)))
		row := g.op("ReduceMax", []string{infD}, canonical.IntsAttr("axes", 1), canonical.IntAttr("keepdims", 1))
		anyInf := g.op("Greater", []string{row, g.scalar(0)})
		w = g.op("Where", []string{anyInf, infD, w})
	}
	if m.cls == nil {
		y := g.double("y", []int64{int64(len(m.y))}, m.y)
		v := g.op("Gather", []string{y, idx}, canonical.IntAttr("axis", 0))
		if m.distance {
			num := g.sumRows(g.op("Mul", []string{v, w}))
			return []string{g.op("Div", []string{num, g.sumRows(w)})}
		}
		return []string{g.op("ReduceMean", []string{v}, canonical.IntsAttr("axes", 1), canonical.IntAttr("keepdims", 1))}
	}
	C := len(m.cls)
	// One-hot rows of the training classes, gathered: [N, k, C].
	oh := newMat(len(m.yIdx), C)
	for i, c := range m.yIdx {
		oh.d[i*C+c] = 1
	}
	v := g.op("Gather", []string{g.matrix("onehot", oh), idx}, canonical.IntAttr("axis", 0))
	if m.distance {
		// [N, k, C] one-hot rows times [N, k, 1] weights, summed over k,
		// divided by the row sum (0 kept as 1).
		v = g.op("Mul", []string{v, g.op("Unsqueeze", []string{w, g.int64s("axes", []int64{1}, []int64{2})})})
	}
	counts := g.op("ReduceSum", []string{v, g.int64s("axes", []int64{1}, []int64{1})}, canonical.IntAttr("keepdims", 0))
	var p string
	if m.distance {
		s := g.sumRows(counts)
		zero := g.op("Equal", []string{s, g.scalar(0)})
		p = g.op("Div", []string{counts, g.op("Where", []string{zero, g.scalar(1), s})})
	} else {
		p = g.op("Div", []string{counts, g.scalar(float64(m.k))})
	}
	return []string{g.labelArgmax(m.cls, p), p}
}
