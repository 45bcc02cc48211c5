package sklearn

import (
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

// SVC and NuSVC with probability=True: predict_proba is libsvm's
// svm_predict_probability as scikit-learn 1.2 builds it. The decision
// value of each pair (i, j) (libsvm's sign: positive votes for i, which
// is minus scikit-learn's binary decision_function) goes through the
// pair's Platt sigmoid (probA_, probB_), clipped to [1e-7, 1-1e-7], into
// r[i][j] (and r[j][i] = 1 - r[i][j]); then multiclass_probability
// (Wu, Lin and Weng 2004, method 2) couples the pairs iteratively,
// stopping when the largest error is below 0.005/k or after max(100, k)
// iterations. scikit-learn's libsvm does this for two classes too (it
// lacks upstream libsvm's two-class shortcut), so the result differs
// from the pair's sigmoid by up to the tolerance and only the same
// iteration reproduces it. predict does not use the probabilities: the
// label stays libsvm's vote.

// readProb reads the Platt coefficients (_probA/_probB as 1.2 pickles
// them; else probA_/probB_).
func (m *svm) readProb(o *obj) error {
	fa, fb := "_probA", "_probB"
	if !o.has(fa) {
		fa, fb = "probA_", "probB_"
	}
	var err error
	if m.probA, err = o.vector(fa); err != nil {
		return err
	}
	if m.probB, err = o.vector(fb); err != nil {
		return err
	}
	P := m.pairs()
	if len(m.probA) != P || len(m.probB) != P {
		return o.errf(fa, "%d and %d Platt coefficients for %d pairs of classes (probability=True)", len(m.probA), len(m.probB), P)
	}
	if err := checkFinite(o, fa, m.probA); err != nil {
		return err
	}
	return checkFinite(o, fb, m.probB)
}

// probMin is libsvm's min_prob.
const probMin = 1e-7

// sigmoidPredict is libsvm's sigmoid_predict. The conversions keep the
// product rounded on its own (no fused multiply-add), as libsvm's C is
// compiled.
func sigmoidPredict(dec, a, b float64) float64 {
	f := float64(dec*a) + b
	if f >= 0 {
		return math.Exp(-f) / (1.0 + math.Exp(-f))
	}
	return 1.0 / (1 + math.Exp(f))
}

// probMaxIter and probEps are multiclass_probability's max_iter and eps.
func probMaxIter(k int) int { return max(100, k) }

func probEps(k int) float64 { return 0.005 / float64(k) }

// multiclassProbability is libsvm's multiclass_probability, statement
// for statement: r is the k×k matrix of pairwise probabilities, p
// receives the k class probabilities.
func multiclassProbability(k int, r [][]float64, p []float64) {
	maxIter := probMaxIter(k)
	Q := make([][]float64, k)
	Qp := make([]float64, k)
	eps := probEps(k)
	for t := 0; t < k; t++ {
		p[t] = 1.0 / float64(k)
		Q[t] = make([]float64, k)
		Q[t][t] = 0
		for j := 0; j < t; j++ {
			Q[t][t] += float64(r[j][t] * r[j][t])
			Q[t][j] = Q[j][t]
		}
		for j := t + 1; j < k; j++ {
			Q[t][t] += float64(r[j][t] * r[j][t])
			Q[t][j] = -r[j][t] * r[t][j]
		}
	}
	for iter := 0; iter < maxIter; iter++ {
		// stopping condition, recalculate QP, pQP for numerical accuracy
		pQp := 0.0
		for t := 0; t < k; t++ {
			Qp[t] = 0
			for j := 0; j < k; j++ {
				Qp[t] += float64(Q[t][j] * p[j])
			}
			pQp += float64(p[t] * Qp[t])
		}
		maxError := 0.0
		for t := 0; t < k; t++ {
			if e := math.Abs(Qp[t] - pQp); e > maxError {
				maxError = e
			}
		}
		if maxError < eps {
			break
		}
		for t := 0; t < k; t++ {
			diff := (-Qp[t] + pQp) / Q[t][t]
			p[t] += diff
			pQp = (pQp + float64(diff*(float64(diff*Q[t][t])+float64(2*Qp[t])))) / (1 + diff) / (1 + diff)
			for j := 0; j < k; j++ {
				Qp[j] = (Qp[j] + float64(diff*Q[t][j])) / (1 + diff)
				p[j] /= (1 + diff)
			}
		}
	}
}

// probabilities is predict_proba from libsvm's decision values dec
// [N, pairs].
func (m *svm) probabilities(dec *mat) *mat {
	C, P := len(m.cls), m.pairs()
	out := newMat(dec.r, C)
	r := make([][]float64, C)
	for i := range r {
		r[i] = make([]float64, C)
	}
	for n := 0; n < dec.r; n++ {
		q := 0
		for i := 0; i < C; i++ {
			for j := i + 1; j < C; j++ {
				v := math.Min(math.Max(sigmoidPredict(dec.d[n*P+q], m.probA[q], m.probB[q]), probMin), 1-probMin)
				r[i][j], r[j][i] = v, 1-v
				q++
			}
		}
		multiclassProbability(C, r, out.row(n))
	}
	return out
}

// bools adds a BOOL constant.
func (g *graph) bools(base string, dims []int64, v []bool) string {
	raw := make([]byte, len(v))
	for i, b := range v {
		if b {
			raw[i] = 1
		}
	}
	return g.b.ConstNamed(canonical.NewTensor(g.name(base), canonical.Bool, dims, raw))
}

// column is x[:, j] as [N, 1].
func (g *graph) column(x string, j int) string {
	return g.op("Gather", []string{x, g.int64s("col", []int64{1}, []int64{int64(j)})}, canonical.IntAttr("axis", 1))
}

// sumInOrder is ((a0 + a1) + a2) + …, the order of a C loop that starts
// from 0 (0 + a0 is a0).
func (g *graph) sumInOrder(terms []string) string {
	s := terms[0]
	for _, t := range terms[1:] {
		s = g.op("Add", []string{s, t})
	}
	return s
}

// emitProbabilities is probabilities in the graph, in double: the
// pairwise sigmoids and Q vectorised over the rows, then a Loop whose
// body is one iteration of multiclass_probability for every row, with
// k unrolled statement for statement. A per-row mask freezes the rows
// whose stopping test has passed (libsvm's break), and the Loop goes on
// while a row is still iterating, at most max(100, k) times.
func (m *svm) emitProbabilities(g *graph, dec string) string {
	k, P := len(m.cls), m.pairs()
	// r[i][j] = clip(sigmoid_predict(dec, A, B)) for i < j.
	f := g.op("Add", []string{g.op("Mul", []string{dec, g.row("probA", m.probA)}), g.row("probB", m.probB)})
	e := g.op("Exp", []string{g.op("Neg", []string{f})})
	pos := g.op("Div", []string{e, g.op("Add", []string{g.scalar(1), e})})
	neg := g.op("Div", []string{g.scalar(1), g.op("Add", []string{g.scalar(1), g.op("Exp", []string{f})})})
	v := g.op("Where", []string{g.op("GreaterOrEqual", []string{f, g.scalar(0)}), pos, neg})
	v = g.op("Min", []string{g.op("Max", []string{v, g.scalar(probMin)}), g.scalar(1 - probMin)})
	w := g.op("Sub", []string{g.scalar(1), v})
	// pairIdx[i][j] is the column of r[i][j] in [v | w].
	pairIdx := make([][]int64, k)
	for i := range pairIdx {
		pairIdx[i] = make([]int64, k)
	}
	q := 0
	for i := 0; i < k; i++ {
		for j := i + 1; j < k; j++ {
			pairIdx[i][j], pairIdx[j][i] = int64(q), int64(P+q)
			q++
		}
	}
	vw := g.op("Concat", []string{v, w}, canonical.IntAttr("axis", 1))
	sq := g.op("Mul", []string{vw, vw})
	// Q[t][t] = sum over j != t, ascending, of r[j][t]^2: term m of
	// every t at once.
	var terms []string
	for mth := 0; mth < k-1; mth++ {
		idx := make([]int64, k)
		for t := 0; t < k; t++ {
			j := mth
			if j >= t {
				j++
			}
			idx[t] = pairIdx[j][t]
		}
		terms = append(terms, g.op("Gather", []string{sq, g.int64s("idx", []int64{int64(k)}, idx)}, canonical.IntAttr("axis", 1)))
	}
	diag := g.sumInOrder(terms)
	// Q[t][j] = Q[j][t] = -r[j][t] r[t][j] for t < j: -(w v) per pair.
	off := g.op("Neg", []string{g.op("Mul", []string{w, v})})
	dq := g.op("Concat", []string{diag, off}, canonical.IntAttr("axis", 1))
	Q := make([][]string, k)
	for t := 0; t < k; t++ {
		Q[t] = make([]string, k)
		for j := 0; j < k; j++ {
			c := int64(t)
			if j != t {
				c = int64(k) + min(pairIdx[t][j], pairIdx[j][t])
			}
			Q[t][j] = g.op("Gather", []string{dq, g.int64s("idx", []int64{1}, []int64{c})}, canonical.IntAttr("axis", 1))
		}
	}
	// Initial state: p = 1/k, no row done.
	shape := g.op("Shape", []string{dec})
	n1 := g.op("Concat", []string{
		g.op("Slice", []string{shape, g.int64s("start", []int64{1}, []int64{0}), g.int64s("end", []int64{1}, []int64{1})}),
		g.int64s("one", []int64{1}, []int64{1}),
	}, canonical.IntAttr("axis", 0))
	init := make([]float64, k)
	for t := range init {
		init[t] = 1.0 / float64(k)
	}
	p0 := g.op("Expand", []string{g.row("p0", init), n1})
	done0 := g.op("Expand", []string{g.bools("done0", []int64{1, 1}, []bool{false}), n1})

	b := &graph{b: g.b.Sub(), n: g.n, prefix: g.prefix}
	iterIn, condIn, pIn, doneIn := b.name("iter"), b.name("cond"), b.name("p"), b.name("done")
	p := make([]string, k)
	for j := range p {
		p[j] = b.column(pIn, j)
	}
	// Stopping test.
	Qp := make([]string, k)
	var pq []string
	for t := 0; t < k; t++ {
		prods := make([]string, k)
		for j := 0; j < k; j++ {
			prods[j] = b.op("Mul", []string{Q[t][j], p[j]})
		}
		Qp[t] = b.sumInOrder(prods)
		pq = append(pq, b.op("Mul", []string{p[t], Qp[t]}))
	}
	pQp := b.sumInOrder(pq)
	// (a copy: the update below rebinds Qp[j], and the node keeps its slice)
	qpAll := b.op("Concat", append([]string(nil), Qp...), canonical.IntAttr("axis", 1))
	maxErr := b.op("ReduceMax", []string{b.op("Abs", []string{b.op("Sub", []string{qpAll, pQp})})}, canonical.IntsAttr("axes", 1), canonical.IntAttr("keepdims", 1))
	done := b.op("Or", []string{doneIn, b.op("Less", []string{maxErr, b.scalar(probEps(k))})})
	// One iteration of the update.
	one := b.scalar(1)
	for t := 0; t < k; t++ {
		diff := b.op("Div", []string{b.op("Add", []string{b.op("Neg", []string{Qp[t]}), pQp}), Q[t][t]})
		p[t] = b.op("Add", []string{p[t], diff})
		inner := b.op("Add", []string{b.op("Mul", []string{diff, Q[t][t]}), b.op("Mul", []string{b.scalar(2), Qp[t]})})
		opd := b.op("Add", []string{one, diff})
		pQp = b.op("Div", []string{b.op("Div", []string{b.op("Add", []string{pQp, b.op("Mul", []string{diff, inner})}), opd}), opd})
		for j := 0; j < k; j++ {
			Qp[j] = b.op("Div", []string{b.op("Add", []string{Qp[j], b.op("Mul", []string{diff, Q[t][j]})}), opd})
			p[j] = b.op("Div", []string{p[j], opd})
		}
	}
	pNew := b.op("Concat", append([]string(nil), p...), canonical.IntAttr("axis", 1))
	pOut := b.op("Where", []string{done, pIn, pNew})
	doneOut := b.op("Identity", []string{done})
	left := b.op("ReduceSum", []string{b.op("Cast", []string{b.op("Not", []string{done})}, canonical.IntAttr("to", int64(canonical.Double)))}, canonical.IntAttr("keepdims", 0))
	condOut := b.op("Greater", []string{left, b.scalar(0)})
	// The body's constants go to the main graph (the body reads them
	// from the outer scope, as it reads Q).
	g.n = b.n
	if b.err != nil {
		g.fail(b.err)
	}
	body := b.b.Graph(g.name("multiclass_probability"), []build.Info{
		build.TensorInfoDims(iterIn, canonical.Int64),
		build.TensorInfoDims(condIn, canonical.Bool),
		build.TensorInfoDims(pIn, canonical.Double, "N", k),
		build.TensorInfoDims(doneIn, canonical.Bool, "N", 1),
	}, []build.Info{
		build.TensorInfoDims(condOut, canonical.Bool),
		build.TensorInfoDims(pOut, canonical.Double, "N", k),
		build.TensorInfoDims(doneOut, canonical.Bool, "N", 1),
	})
	loop := g.name("Loop")
	pFinal, doneFinal := loop+"_p", loop+"_done"
	g.b.NodeIn("", "Loop", loop, []string{
		g.int64s("max_iter", nil, []int64{int64(probMaxIter(k))}),
		g.bools("cond", nil, []bool{true}),
		p0, done0,
	}, []string{pFinal, doneFinal}, canonical.GraphAttr("body", body))
	return pFinal
}
