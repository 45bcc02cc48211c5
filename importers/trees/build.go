package trees

import (
	"errors"
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
)

const mlDomain = "ai.onnx.ml"

// InputName is the graph input: [N, NumFeatures], NaN meaning missing.
const InputName = "input"

// Output names.
const (
	OutputMargin        = "margin"
	OutputPredict       = "predict"
	OutputLabel         = "label"
	OutputProbabilities = "probabilities"
)

// Supported opset ranges.
const (
	MinAIOpset = 9
	MaxAIOpset = 26
	MaxMLOpset = 5
)

// Linear is a linear model (xgboost's gblinear): margin = x' W + Bias with
// missing features as 0. Weights is [NumFeatures, NumTargets] row-major.
type Linear struct {
	Weights []float64
	Bias    []float64
}

// BuildOptions controls Build. The zero value means ml opset 5, ai.onnx
// opset 21 and the predictions as outputs.
type BuildOptions struct {
	// MLOpset 5 (default) uses TreeEnsemble; 1 to 4 TreeEnsembleRegressor
	// (categorical sets become chains of BRANCH_EQ nodes; Double needs 3).
	MLOpset int
	// AIOpset is the ai.onnx opset, MinAIOpset to MaxAIOpset (default 21).
	AIOpset int
	// Raw makes the raw margin the only output ("margin").
	Raw bool
	// GraphName, Domain (of the model) and Doc describe the model;
	// Metadata are its metadata_props, in order.
	GraphName, Domain, Doc string
	Metadata               [][2]string
}

func (o BuildOptions) withDefaults() (BuildOptions, error) {
	if o.MLOpset == 0 {
		o.MLOpset = 5
	}
	if o.AIOpset == 0 {
		o.AIOpset = 21
	}
	if o.MLOpset < 1 || o.MLOpset > MaxMLOpset {
		return o, fmt.Errorf("ai.onnx.ml opset %d not supported: use 1 to %d", o.MLOpset, MaxMLOpset)
	}
	if o.AIOpset < MinAIOpset || o.AIOpset > MaxAIOpset {
		return o, fmt.Errorf("ai.onnx opset %d not supported: use %d to %d", o.AIOpset, MinAIOpset, MaxAIOpset)
	}
	return o, nil
}

// OutputNames lists the outputs Build makes for e (and NewSource
// computes), in order.
func (e *Ensemble) OutputNames(raw bool) []string {
	switch {
	case raw:
		return []string{OutputMargin}
	case e.Objective == Softprob || e.Objective == SoftmaxLabel:
		return []string{OutputPredict, OutputLabel, OutputProbabilities}
	case e.Classifier && (e.Objective == Logistic || e.Objective == Hinge):
		return []string{OutputPredict, OutputLabel, OutputProbabilities}
	}
	return []string{OutputPredict}
}

// Build makes the ONNX model of e: the tree op (or the linear model of
// e.Linear) computing the margin [N, NumTargets], then the objective's
// transform and outputs: "predict" ([N] for one target, else [N, T]), and
// for classifiers "label" (int64 [N]) and "probabilities" ([N, 2] for one
// target, else [N, T]); or "margin" alone when o.Raw.
func Build(e *Ensemble, o BuildOptions) (*canonical.Model, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	if e.Double && o.MLOpset < 3 {
		return nil, fmt.Errorf("%s computes in double precision, which TreeEnsembleRegressor has from ai.onnx.ml opset 3; got ml opset %d", e.Format, o.MLOpset)
	}
	g := &graph{b: build.New(o.AIOpset), double: e.Double}
	T := e.NumTargets
	post := ""
	if !o.Raw {
		switch e.Objective {
		case Logistic:
			post = "Sigmoid"
		case Softprob:
			post = "Softmax"
		}
	}
	scoreName := "scores"
	rawName := scoreName
	if o.Raw {
		scoreName, rawName = "margin_2d", "margin_2d"
	} else if post != "" {
		rawName = "margin_2d"
	}
	opName := e.Format + "_trees"
	switch {
	case e.Linear != nil:
		if len(e.Trees) != 0 {
			return nil, errors.New("a linear model has no trees")
		}
		if err := g.linear(e, e.Linear, rawName); err != nil {
			return nil, err
		}
	default:
		if err := g.margin(e, opName, rawName, o.MLOpset, o.AIOpset); err != nil {
			return nil, err
		}
	}
	elem := g.elem()
	// Declare the tree/linear output type: not every shape inference knows
	// the ai.onnx.ml ops.
	g.b.Declare(build.TensorInfoDims(rawName, elem, "N", T))
	switch post {
	case "Sigmoid":
		in := rawName
		if e.Sigmoid != 0 && e.Sigmoid != 1 {
			k := g.scalar("sigmoid_slope", e.Sigmoid)
			g.add("Mul", "", "sigmoid_slope", []string{rawName, k}, []string{"margin_scaled"})
			in = "margin_scaled"
		}
		g.add("Sigmoid", "", "logistic", []string{in}, []string{scoreName})
	case "Softmax":
		g.add("Softmax", "", "softmax", []string{rawName}, []string{scoreName}, canonical.IntAttr("axis", 1))
	}

	var outputs []build.Info
	// toVector reshapes [N, 1] to [N].
	toVector := func(in, out, name string) build.Info {
		if T == 1 {
			shape := g.init(canonical.Int64Tensor(name+"_shape", []int64{1}, []int64{-1}))
			g.add("Reshape", "", name, []string{in, shape}, []string{out})
			return build.TensorInfoDims(out, elem, "N")
		}
		g.add("Identity", "", name, []string{in}, []string{out})
		return build.TensorInfoDims(out, elem, "N", T)
	}
	// classes makes label and probabilities from p [N, T]: [1-p, p] for one
	// target, p itself for more.
	classes := func(p string) {
		if T == 1 {
			one := g.scalar("one", 1)
			g.add("Sub", "", "negative_class", []string{one, p}, []string{"p_negative"})
			g.add("Concat", "", "probabilities", []string{"p_negative", p}, []string{OutputProbabilities}, canonical.IntAttr("axis", 1))
			g.add("ArgMax", "", "label", []string{OutputProbabilities}, []string{OutputLabel}, canonical.IntAttr("axis", 1), canonical.IntAttr("keepdims", 0))
			outputs = append(outputs, build.TensorInfoDims(OutputLabel, canonical.Int64, "N"),
				build.TensorInfoDims(OutputProbabilities, elem, "N", 2))
			return
		}
		g.add("Identity", "", "probabilities", []string{p}, []string{OutputProbabilities})
		g.add("ArgMax", "", "label", []string{p}, []string{OutputLabel}, canonical.IntAttr("axis", 1), canonical.IntAttr("keepdims", 0))
		outputs = append(outputs, build.TensorInfoDims(OutputLabel, canonical.Int64, "N"),
			build.TensorInfoDims(OutputProbabilities, elem, "N", T))
	}

	switch {
	case o.Raw:
		outputs = append(outputs, toVector(scoreName, OutputMargin, "margin"))
	case e.Objective == Identity:
		outputs = append(outputs, toVector(scoreName, OutputPredict, "predict"))
	case e.Objective == Logistic:
		outputs = append(outputs, toVector(scoreName, OutputPredict, "predict"))
		if e.Classifier {
			classes(scoreName)
		}
	case e.Objective == Exp:
		g.add("Exp", "", "exp", []string{scoreName}, []string{"exp_scores"})
		outputs = append(outputs, toVector("exp_scores", OutputPredict, "predict"))
	case e.Objective == Hinge:
		zero := g.scalar("zero", 0)
		g.add("Greater", "", "hinge", []string{scoreName, zero}, []string{"positive"})
		g.add("Cast", "", "hinge_cast", []string{"positive"}, []string{"hinge_2d"}, canonical.IntAttr("to", int64(elem)))
		outputs = append(outputs, toVector("hinge_2d", OutputPredict, "predict"))
		if e.Classifier {
			classes("hinge_2d")
		}
	case e.Objective == Softprob:
		g.add("Identity", "", "predict", []string{scoreName}, []string{OutputPredict})
		g.add("Identity", "", "probabilities", []string{scoreName}, []string{OutputProbabilities})
		g.add("ArgMax", "", "label", []string{scoreName}, []string{OutputLabel}, canonical.IntAttr("axis", 1), canonical.IntAttr("keepdims", 0))
		outputs = append(outputs, build.TensorInfoDims(OutputPredict, elem, "N", T),
			build.TensorInfoDims(OutputLabel, canonical.Int64, "N"),
			build.TensorInfoDims(OutputProbabilities, elem, "N", T))
	case e.Objective == SoftmaxLabel:
		g.add("ArgMax", "", "label", []string{scoreName}, []string{OutputLabel}, canonical.IntAttr("axis", 1), canonical.IntAttr("keepdims", 0))
		g.add("Cast", "", "predict", []string{OutputLabel}, []string{OutputPredict}, canonical.IntAttr("to", int64(elem)))
		g.add("Softmax", "", "probabilities", []string{scoreName}, []string{OutputProbabilities}, canonical.IntAttr("axis", 1))
		outputs = append(outputs, build.TensorInfoDims(OutputPredict, elem, "N"),
			build.TensorInfoDims(OutputLabel, canonical.Int64, "N"),
			build.TensorInfoDims(OutputProbabilities, elem, "N", T))
	default:
		return nil, fmt.Errorf("unknown objective %d", e.Objective)
	}

	if g.usesML {
		g.b.Import(mlDomain, int64(o.MLOpset))
	}
	name := o.GraphName
	if name == "" {
		name = e.Format
	}
	m, err := g.b.Model(name, []build.Info{build.TensorInfoDims(InputName, elem, "N", e.NumFeatures)}, outputs)
	if err != nil {
		return nil, err
	}
	m.Domain, m.DocString = o.Domain, o.Doc
	for _, kv := range o.Metadata {
		m.MetadataProps = append(m.MetadataProps, canonical.StringPair{Key: kv[0], Value: kv[1]})
	}
	return m, nil
}

// linear builds margin = where(isnan(x), 0, x) @ W + bias + base.
func (g *graph) linear(e *Ensemble, l *Linear, out string) error {
	F, T := e.NumFeatures, e.NumTargets
	if len(l.Weights) != F*T || len(l.Bias) != T {
		return fmt.Errorf("linear model: %d weights and %d biases for %d features and %d targets", len(l.Weights), len(l.Bias), F, T)
	}
	bias := make([]float64, T)
	for t := range bias {
		bias[t] = l.Bias[t]
		if e.Base != nil {
			bias[t] = float64(float32(bias[t]) + float32(e.Base[t]))
			if e.Double {
				bias[t] = l.Bias[t] + e.Base[t]
			}
		}
	}
	wName := g.init(realTensor("weights", []int64{int64(F), int64(T)}, l.Weights, g.double))
	bName := g.init(realTensor("bias", []int64{int64(T)}, bias, g.double))
	zero := g.scalar("missing_as_zero", 0)
	g.add("IsNaN", "", "is_missing", []string{g.in()}, []string{"is_missing"})
	g.add("Where", "", "fill_missing", []string{"is_missing", zero, g.in()}, []string{"input_filled"})
	g.add("MatMul", "", "linear", []string{"input_filled", wName}, []string{"linear_out"})
	g.add("Add", "", "add_bias", []string{"linear_out", bName}, []string{out})
	return nil
}

// allTrees are e's trees followed by the single-leaf trees of its base.
func (e *Ensemble) allTrees() []Tree {
	return append(e.Trees[:len(e.Trees):len(e.Trees)], e.baseTrees()...)
}

// treeEnsemble emits ai.onnx.ml TreeEnsemble (opset 5). Each tree's
// interior nodes keep their order in Nodes, its leaves too.
func (g *graph) treeEnsemble(e *Ensemble, name, out string) {
	var (
		roots, feat, trueIDs, falseIDs, trueLeaf, falseLeaf, missingTrue, leafTarget []int64
		modes                                                                        []uint8
		splits, leafW, membership                                                    []float64
	)
	for _, t := range e.opTrees() {
		interior := make([]int64, len(t.Nodes))
		leafIdx := make([]int64, len(t.Nodes))
		if t.Nodes[0].Leaf { // a tree that is a single leaf
			l := int64(len(leafW))
			leafTarget, leafW = append(leafTarget, int64(t.Target)), append(leafW, t.Nodes[0].Value)
			roots = append(roots, int64(len(modes)))
			feat, modes, splits = append(feat, 0), append(modes, uint8(LT)), append(splits, 0)
			trueIDs, falseIDs = append(trueIDs, l), append(falseIDs, l)
			trueLeaf, falseLeaf = append(trueLeaf, 1), append(falseLeaf, 1)
			missingTrue = append(missingTrue, 0)
			continue
		}
		k := int64(len(modes))
		roots = append(roots, k)
		for i := range t.Nodes {
			if !t.Nodes[i].Leaf {
				interior[i] = k
				k++
			}
		}
		for i := range t.Nodes {
			if t.Nodes[i].Leaf {
				leafIdx[i] = int64(len(leafW))
				leafTarget, leafW = append(leafTarget, int64(t.Target)), append(leafW, t.Nodes[i].Value)
			}
		}
		ref := func(c int) (int64, int64) {
			if t.Nodes[c].Leaf {
				return leafIdx[c], 1
			}
			return interior[c], 0
		}
		for i := range t.Nodes {
			nd := &t.Nodes[i]
			if nd.Leaf {
				continue
			}
			tr, tl := ref(nd.True)
			fa, fl := ref(nd.False)
			feat = append(feat, int64(nd.Feature))
			modes = append(modes, uint8(nd.Mode))
			if nd.Mode == Member {
				splits = append(splits, 0)
				membership = append(membership, nd.Set...)
				membership = append(membership, math.NaN())
			} else {
				splits = append(splits, nd.Threshold)
			}
			trueIDs, trueLeaf = append(trueIDs, tr), append(trueLeaf, tl)
			falseIDs, falseLeaf = append(falseIDs, fa), append(falseLeaf, fl)
			missingTrue = append(missingTrue, b2i(nd.MissingTrue))
		}
	}
	attrs := []*canonical.Attribute{
		canonical.IntAttr("n_targets", int64(e.NumTargets)),
		canonical.IntAttr("aggregate_function", 1), // SUM
		canonical.IntAttr("post_transform", 0),     // NONE
		canonical.IntsAttr("tree_roots", roots...),
		canonical.IntsAttr("nodes_featureids", feat...),
		canonical.TensorAttr("nodes_modes", canonical.NewTensor("nodes_modes", canonical.Uint8, []int64{int64(len(modes))}, modes)),
		canonical.TensorAttr("nodes_splits", realTensor("nodes_splits", []int64{int64(len(splits))}, splits, g.double)),
		canonical.IntsAttr("nodes_truenodeids", trueIDs...),
		canonical.IntsAttr("nodes_trueleafs", trueLeaf...),
		canonical.IntsAttr("nodes_falsenodeids", falseIDs...),
		canonical.IntsAttr("nodes_falseleafs", falseLeaf...),
		canonical.IntsAttr("nodes_missing_value_tracks_true", missingTrue...),
		canonical.IntsAttr("leaf_targetids", leafTarget...),
		canonical.TensorAttr("leaf_weights", realTensor("leaf_weights", []int64{int64(len(leafW))}, leafW, g.double)),
	}
	if len(membership) > 0 {
		attrs = append(attrs, canonical.TensorAttr("membership_values", realTensor("membership_values", []int64{int64(len(membership))}, membership, g.double)))
	}
	// The op runs with post_transform NONE: ONNX Runtime 1.30 ignores
	// LOGISTIC for a single target and gives wrong values for SOFTMAX in
	// TreeEnsemble, against the spec; the transforms are ops of their own.
	g.add("TreeEnsemble", mlDomain, name, []string{g.treeInput()}, []string{out}, attrs...)
}

// expandSets replaces Member nodes with chains of BRANCH_EQ nodes (the
// first in the Member node's place, the others appended), for the ml
// opsets that have no BRANCH_MEMBER. A missing value is equal to no
// category, so it runs down the chain; the last node sends it where the
// Member node did.
func expandSets(t Tree) []Node {
	nodes := append([]Node(nil), t.Nodes...)
	for i := range t.Nodes {
		nd := t.Nodes[i]
		if nd.Leaf || nd.Mode != Member {
			continue
		}
		if len(nd.Set) == 0 { // nothing is a member
			nodes[i] = Node{Feature: nd.Feature, Mode: NEQ, Threshold: math.Inf(1), True: nd.False, False: nd.False}
			if nd.MissingTrue {
				nodes[i].True, nodes[i].MissingTrue = nd.True, true
				nodes[i].Mode = EQ
			}
			continue
		}
		first := len(nodes)
		for k, c := range nd.Set {
			n := Node{Feature: nd.Feature, Mode: EQ, Threshold: c, True: nd.True, False: nd.False}
			if k+1 < len(nd.Set) {
				n.False = first + k // the next test, appended below
			} else {
				n.MissingTrue = nd.MissingTrue
			}
			if k == 0 {
				nodes[i] = n
			} else {
				nodes = append(nodes, n)
			}
		}
	}
	return nodes
}

// treeEnsembleRegressor emits ai.onnx.ml TreeEnsembleRegressor (opsets
// 1-4): the node ids of a tree are its indexes in Nodes. Its output is
// float (ONNX defines no other), so a Double ensemble's margin is rounded
// to float there (about 6e-8 relative).
func (g *graph) treeEnsembleRegressor(e *Ensemble, name, out string) {
	var (
		treeIDs, nodeIDs, feat, trueIDs, falseIDs, missingTrue []int64
		modes                                                  []string
		values, targetW                                        []float64
		tTree, tNode, tID                                      []int64
	)
	for tid, t := range e.opTrees() {
		nodes := expandSets(t)
		for i := range nodes {
			nd := &nodes[i]
			treeIDs = append(treeIDs, int64(tid))
			nodeIDs = append(nodeIDs, int64(i))
			if nd.Leaf {
				feat = append(feat, 0)
				modes = append(modes, "LEAF")
				values = append(values, 0)
				trueIDs, falseIDs = append(trueIDs, 0), append(falseIDs, 0)
				missingTrue = append(missingTrue, 0)
				tTree, tNode, tID = append(tTree, int64(tid)), append(tNode, int64(i)), append(tID, int64(t.Target))
				targetW = append(targetW, nd.Value)
				continue
			}
			feat = append(feat, int64(nd.Feature))
			modes = append(modes, nd.Mode.String())
			values = append(values, nd.Threshold)
			trueIDs, falseIDs = append(trueIDs, int64(nd.True)), append(falseIDs, int64(nd.False))
			missingTrue = append(missingTrue, b2i(nd.MissingTrue))
		}
	}
	attrs := []*canonical.Attribute{
		canonical.IntAttr("n_targets", int64(e.NumTargets)),
		canonical.StringAttr("aggregate_function", "SUM"),
		canonical.StringAttr("post_transform", "NONE"),
		canonical.IntsAttr("nodes_treeids", treeIDs...),
		canonical.IntsAttr("nodes_nodeids", nodeIDs...),
		canonical.IntsAttr("nodes_featureids", feat...),
		canonical.StringsAttr("nodes_modes", modes...),
	}
	if g.double {
		attrs = append(attrs, canonical.TensorAttr("nodes_values_as_tensor", realTensor("nodes_values_as_tensor", []int64{int64(len(values))}, values, true)))
	} else {
		attrs = append(attrs, canonical.FloatsAttr("nodes_values", f32s(values)...))
	}
	attrs = append(attrs,
		canonical.IntsAttr("nodes_truenodeids", trueIDs...),
		canonical.IntsAttr("nodes_falsenodeids", falseIDs...),
		canonical.IntsAttr("nodes_missing_value_tracks_true", missingTrue...),
		canonical.IntsAttr("target_treeids", tTree...),
		canonical.IntsAttr("target_nodeids", tNode...),
		canonical.IntsAttr("target_ids", tID...),
	)
	if g.double {
		attrs = append(attrs, canonical.TensorAttr("target_weights_as_tensor", realTensor("target_weights_as_tensor", []int64{int64(len(targetW))}, targetW, true)))
	} else {
		attrs = append(attrs, canonical.FloatsAttr("target_weights", f32s(targetW)...))
	}
	if !g.double {
		g.add("TreeEnsembleRegressor", mlDomain, name, []string{g.treeInput()}, []string{out}, attrs...)
		return
	}
	// TreeEnsembleRegressor's output is float whatever its input: compare
	// in double, round the sum to float, and cast back.
	g.add("TreeEnsembleRegressor", mlDomain, name, []string{g.treeInput()}, []string{out + "_float"}, attrs...)
	g.add("Cast", "", name+"_to_double", []string{out + "_float"}, []string{out}, canonical.IntAttr("to", int64(canonical.Double)))
}
