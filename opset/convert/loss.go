package convert

import (
	"github.com/onnxconv/onnxconv/canonical"
)

// nllLoss emits NegativeLogLikelihoodLoss over log-probabilities x
// [N, C, d...] and class indices t [N, d...], following the operator's
// definition: the picked log-probability (a one-hot product summed over
// C), weighted by weight[t] and zero where t equals ignore_index, then
// reduced (none, sum, or mean = sum(loss)/sum(weights)).
func nllLoss(b *builder, x, t, weight *canonical.Value, reduction string, ignore *canonical.Attribute) (*canonical.Value, error) {
	xs, ok := shapeOf(x)
	if !ok || len(xs) < 2 {
		return nil, needShapes("the input's shape is known", "the loss needs the number of classes (dim 1 of the input)")
	}
	if b.to < 9 {
		return nil, blocked("target opset 9 or later", "the expansion of the loss uses OneHot and Where")
	}
	tdt := elemType(t)
	if tdt == canonical.Undefined {
		tdt = canonical.Int64
	}
	idx := t
	var mask *canonical.Value
	if ignore != nil {
		keep := b.op("Not", []*canonical.Value{b.op("Equal", []*canonical.Value{t, b.typed(tdt, float64(ignore.I))})})
		idx = b.op("Where", []*canonical.Value{keep, t, b.typed(tdt, 0)})
		mask = b.op("Cast", []*canonical.Value{keep}, canonical.IntAttr("to", int64(b.dataType())))
	}
	oh := b.op("OneHot", []*canonical.Value{idx, b.constI(nil, xs[1]), b.constF([]int64{2}, 0, 1)}, canonical.IntAttr("axis", 1))
	picked := b.reduce("ReduceSum", b.op("Mul", []*canonical.Value{oh, x}), []int64{1}, false)
	loss := b.op("Neg", []*canonical.Value{picked})
	w := mask
	if weight != nil {
		wt := b.op("Gather", []*canonical.Value{weight, idx}, canonical.IntAttr("axis", 0))
		if w != nil {
			wt = b.op("Mul", []*canonical.Value{wt, w})
		}
		w = wt
	}
	if w != nil {
		loss = b.op("Mul", []*canonical.Value{loss, w})
	}
	switch reduction {
	case "none":
		return loss, nil
	case "sum":
		return b.reduceAll("ReduceSum", loss), nil
	case "mean", "":
		if w == nil {
			return b.reduceAll("ReduceMean", loss), nil
		}
		return b.op("Div", []*canonical.Value{b.reduceAll("ReduceSum", loss), b.reduceAll("ReduceSum", w)}), nil
	}
	return nil, blocked("", "unknown reduction %q", reduction)
}

func expandNLL(sc *stepCtx, to int) error {
	n := sc.n
	b := newBuilder(sc, to)
	loss, err := nllLoss(b, n.Input(0), n.Input(1), n.Input(2), n.AttrString("reduction", "mean"), n.Attr("ignore_index"))
	if err != nil {
		return err
	}
	return b.finish(loss)
}

// expandSCE: SoftmaxCrossEntropyLoss is NegativeLogLikelihoodLoss of
// LogSoftmax over axis 1 (moved last and back for inputs of rank > 2, as
// LogSoftmax before 13 coerces to 2-D).
func expandSCE(sc *stepCtx, to int) error {
	n := sc.n
	x := n.Input(0)
	r, ok := rankOf(x)
	if !ok || r < 2 {
		return needShapes("the input's shape is known", "SoftmaxCrossEntropyLoss needs the scores' rank to expand")
	}
	b := newBuilder(sc, to)
	var logp *canonical.Value
	if r == 2 {
		logp = b.op("LogSoftmax", []*canonical.Value{x}, canonical.IntAttr("axis", 1))
	} else {
		perm := make([]int64, r)
		for i := range perm {
			perm[i] = int64(i)
		}
		perm[1], perm[r-1] = perm[r-1], perm[1] // its own inverse
		t := b.op("Transpose", []*canonical.Value{x}, canonical.IntsAttr("perm", perm...))
		ls := b.op("LogSoftmax", []*canonical.Value{t}, canonical.IntAttr("axis", int64(r-1)))
		logp = b.op("Transpose", []*canonical.Value{ls}, canonical.IntsAttr("perm", perm...))
	}
	// nllLoss needs the scores' shape on log_prob: it is the same.
	logp.Type = x.Type
	loss, err := nllLoss(b, logp, n.Input(1), n.Input(2), n.AttrString("reduction", "mean"), n.Attr("ignore_index"))
	if err != nil {
		return err
	}
	outs := []*canonical.Value{loss}
	if n.Output(1) != nil {
		outs = append(outs, b.op("Identity", []*canonical.Value{logp}))
	}
	return b.finish(outs...)
}
