package xgboost

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/version"
)

const (
	mlDomain  = "ai.onnx.ml"
	inputName = "input"
)

// TreeEnsemble (ai.onnx.ml 5) node modes.
const (
	modeLT     = 1
	modeMember = 6
)

type graph struct {
	nodes  []*onnxpb.NodeProto
	inits  []*onnxpb.TensorProto
	usesML bool
}

func (g *graph) add(op, domain, name string, in, out []string, attrs ...*onnxpb.AttributeProto) {
	n := &onnxpb.NodeProto{OpType: proto.String(op), Name: proto.String(name), Input: in, Output: out, Attribute: attrs}
	if domain != "" {
		n.Domain = proto.String(domain)
		g.usesML = true
	}
	g.nodes = append(g.nodes, n)
}

func (g *graph) init(t *onnxpb.TensorProto) string {
	g.inits = append(g.inits, t)
	return t.GetName()
}

func attrType(t onnxpb.AttributeProto_AttributeType) *onnxpb.AttributeProto_AttributeType { return &t }

func aInt(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: attrType(onnxpb.AttributeProto_INT), I: proto.Int64(v)}
}

func aInts(name string, v []int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: attrType(onnxpb.AttributeProto_INTS), Ints: v}
}

func aFloats(name string, v []float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: attrType(onnxpb.AttributeProto_FLOATS), Floats: v}
}

func aString(name, v string) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: attrType(onnxpb.AttributeProto_STRING), S: []byte(v)}
}

func aStrings(name string, v []string) *onnxpb.AttributeProto {
	b := make([][]byte, len(v))
	for i, s := range v {
		b[i] = []byte(s)
	}
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: attrType(onnxpb.AttributeProto_STRINGS), Strings: b}
}

func aTensor(name string, t *onnxpb.TensorProto) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: attrType(onnxpb.AttributeProto_TENSOR), T: t}
}

func dtype(t onnxpb.TensorProto_DataType) *int32 { v := int32(t); return &v }

func floatTensor(name string, dims []int64, v []float32) *onnxpb.TensorProto {
	raw := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(f))
	}
	return &onnxpb.TensorProto{Name: proto.String(name), Dims: dims, DataType: dtype(onnxpb.TensorProto_FLOAT), RawData: raw}
}

func int64Tensor(name string, dims []int64, v []int64) *onnxpb.TensorProto {
	return &onnxpb.TensorProto{Name: proto.String(name), Dims: dims, DataType: dtype(onnxpb.TensorProto_INT64), Int64Data: v}
}

func uint8Tensor(name string, v []uint8) *onnxpb.TensorProto {
	return &onnxpb.TensorProto{Name: proto.String(name), Dims: []int64{int64(len(v))}, DataType: dtype(onnxpb.TensorProto_UINT8), RawData: v}
}

func valueInfo(name string, elem onnxpb.TensorProto_DataType, dims ...any) *onnxpb.ValueInfoProto {
	shape := &onnxpb.TensorShapeProto{}
	for _, d := range dims {
		switch d := d.(type) {
		case string:
			shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: d}})
		case int:
			shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}})
		}
	}
	return &onnxpb.ValueInfoProto{
		Name: proto.String(name),
		Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{
			ElemType: dtype(elem), Shape: shape,
		}}},
	}
}

// irVersion is the lowest IR version that knows both opsets.
func irVersion(ai, ml int) int64 {
	var ir int64
	switch {
	case ai <= 8:
		ir = 3
	case ai == 9:
		ir = 4
	case ai == 10:
		ir = 5
	case ai == 11:
		ir = 6
	case ai <= 14:
		ir = 7
	case ai <= 18:
		ir = 8
	case ai <= 20:
		ir = 9
	case ai <= 22:
		ir = 10
	case ai == 23:
		ir = 11
	case ai == 24:
		ir = 12
	default:
		ir = 13
	}
	if ml >= 5 && ir < 10 { // ai.onnx.ml 5 came with ONNX 1.16 (IR 10)
		ir = 10
	}
	return ir
}

// build turns the decoded model into an ONNX model.
func build(m *model, o Options) (*onnxpb.ModelProto, error) {
	if m.categorical && o.MLOpset < 5 && m.booster != "gblinear" {
		return nil, fmt.Errorf("the model has categorical splits, which need ai.onnx.ml opset 5 (TreeEnsemble BRANCH_MEMBER); got ml opset %d", o.MLOpset)
	}
	g := &graph{}
	T := m.numTargets
	margin := o.Output == OutputMargin

	// post is the transform applied to the margin by a Sigmoid or Softmax op.
	post := "NONE"
	if !margin {
		switch m.obj.transform {
		case tLogistic:
			post = "LOGISTIC"
		case tSoftprob:
			post = "SOFTMAX"
		}
	}
	// The tree ops run with post_transform NONE: ONNX Runtime 1.30 ignores
	// LOGISTIC for a single target (TreeEnsemble and TreeEnsembleRegressor)
	// and gives wrong values for SOFTMAX in TreeEnsemble, against the spec.
	scoreName := "scores"
	rawName := scoreName
	if margin {
		scoreName, rawName = "margin_2d", "margin_2d"
	} else if post != "NONE" {
		rawName = "margin_2d"
	}
	switch {
	case m.booster == "gblinear":
		g.linear(m, rawName)
	case o.MLOpset >= 5:
		g.treeEnsemble(m, rawName)
	default:
		g.treeEnsembleRegressor(m, rawName)
	}
	// Declare the tree/linear output type: not every shape inference knows
	// the ai.onnx.ml ops.
	valueInfos := []*onnxpb.ValueInfoProto{valueInfo(rawName, onnxpb.TensorProto_FLOAT, "N", T)}
	switch post {
	case "LOGISTIC":
		g.add("Sigmoid", "", "logistic", []string{rawName}, []string{scoreName})
	case "SOFTMAX":
		g.add("Softmax", "", "softmax", []string{rawName}, []string{scoreName}, aInt("axis", 1))
	}

	var outputs []*onnxpb.ValueInfoProto
	// toVector reshapes [N, 1] to [N] (what xgboost returns for one target).
	toVector := func(in, out, name string) *onnxpb.ValueInfoProto {
		if T == 1 {
			shape := g.init(int64Tensor(name+"_shape", []int64{1}, []int64{-1}))
			g.add("Reshape", "", name, []string{in, shape}, []string{out})
			return valueInfo(out, onnxpb.TensorProto_FLOAT, "N")
		}
		g.add("Identity", "", name, []string{in}, []string{out})
		return valueInfo(out, onnxpb.TensorProto_FLOAT, "N", T)
	}
	// binaryClasses makes probabilities [1-p, p] and label = argmax from p [N, 1].
	binaryClasses := func(p string) {
		one := g.init(floatTensor("one", nil, []float32{1}))
		g.add("Sub", "", "negative_class", []string{one, p}, []string{"p_negative"})
		g.add("Concat", "", "probabilities", []string{"p_negative", p}, []string{"probabilities"}, aInt("axis", 1))
		g.add("ArgMax", "", "label", []string{"probabilities"}, []string{"label"}, aInt("axis", 1), aInt("keepdims", 0))
		outputs = append(outputs, valueInfo("label", onnxpb.TensorProto_INT64, "N"),
			valueInfo("probabilities", onnxpb.TensorProto_FLOAT, "N", 2))
	}

	switch {
	case margin:
		outputs = append(outputs, toVector(scoreName, "margin", "margin"))
	case m.obj.transform == tIdentity:
		outputs = append(outputs, toVector(scoreName, "predict", "predict"))
	case m.obj.transform == tLogistic:
		outputs = append(outputs, toVector(scoreName, "predict", "predict"))
		if m.obj.classifier && T == 1 {
			binaryClasses(scoreName)
		}
	case m.obj.transform == tExp:
		g.add("Exp", "", "exp", []string{scoreName}, []string{"exp_scores"})
		outputs = append(outputs, toVector("exp_scores", "predict", "predict"))
	case m.obj.transform == tHinge:
		zero := g.init(floatTensor("zero", nil, []float32{0}))
		g.add("Greater", "", "hinge", []string{scoreName, zero}, []string{"positive"})
		g.add("Cast", "", "hinge_cast", []string{"positive"}, []string{"hinge_2d"}, aInt("to", int64(onnxpb.TensorProto_FLOAT)))
		outputs = append(outputs, toVector("hinge_2d", "predict", "predict"))
		if T == 1 {
			binaryClasses("hinge_2d")
		}
	case m.obj.transform == tSoftprob:
		g.add("Identity", "", "predict", []string{scoreName}, []string{"predict"})
		g.add("Identity", "", "probabilities", []string{scoreName}, []string{"probabilities"})
		g.add("ArgMax", "", "label", []string{scoreName}, []string{"label"}, aInt("axis", 1), aInt("keepdims", 0))
		outputs = append(outputs, valueInfo("predict", onnxpb.TensorProto_FLOAT, "N", T),
			valueInfo("label", onnxpb.TensorProto_INT64, "N"),
			valueInfo("probabilities", onnxpb.TensorProto_FLOAT, "N", T))
	case m.obj.transform == tSoftmax:
		g.add("ArgMax", "", "label", []string{scoreName}, []string{"label"}, aInt("axis", 1), aInt("keepdims", 0))
		g.add("Cast", "", "predict", []string{"label"}, []string{"predict"}, aInt("to", int64(onnxpb.TensorProto_FLOAT)))
		g.add("Softmax", "", "probabilities", []string{scoreName}, []string{"probabilities"}, aInt("axis", 1))
		outputs = append(outputs, valueInfo("predict", onnxpb.TensorProto_FLOAT, "N"),
			valueInfo("label", onnxpb.TensorProto_INT64, "N"),
			valueInfo("probabilities", onnxpb.TensorProto_FLOAT, "N", T))
	default:
		return nil, fmt.Errorf("internal: unhandled transform %d", m.obj.transform)
	}

	opsets := []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(int64(o.AIOpset))}}
	mlVersion := 0
	if g.usesML {
		mlVersion = o.MLOpset
		opsets = append(opsets, &onnxpb.OperatorSetIdProto{Domain: proto.String(mlDomain), Version: proto.Int64(int64(o.MLOpset))})
	}
	meta := []*onnxpb.StringStringEntryProto{
		{Key: proto.String("xgboost.objective"), Value: proto.String(m.objective)},
		{Key: proto.String("xgboost.booster"), Value: proto.String(m.booster)},
		{Key: proto.String("xgboost.num_feature"), Value: proto.String(fmt.Sprint(m.numFeature))},
	}
	if m.version != "" {
		meta = append(meta, &onnxpb.StringStringEntryProto{Key: proto.String("xgboost.version"), Value: proto.String(m.version)})
	}
	if m.baseScoreRaw != "" {
		meta = append(meta, &onnxpb.StringStringEntryProto{Key: proto.String("xgboost.base_score"), Value: proto.String(m.baseScoreRaw)})
	}
	for _, l := range []struct {
		key  string
		list []string
	}{{"xgboost.feature_names", m.featureNames}, {"xgboost.feature_types", m.featureTypes}} {
		if l.list != nil {
			b, err := json.Marshal(l.list)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", l.key, err)
			}
			meta = append(meta, &onnxpb.StringStringEntryProto{Key: proto.String(l.key), Value: proto.String(string(b))})
		}
	}
	doc := fmt.Sprintf("XGBoost %s model (objective %s", m.booster, m.objective)
	if m.version != "" {
		doc += ", xgboost " + m.version
	}
	doc += ")"
	return &onnxpb.ModelProto{
		IrVersion:       proto.Int64(irVersion(o.AIOpset, mlVersion)),
		OpsetImport:     opsets,
		ProducerName:    proto.String("onnxconv"),
		ProducerVersion: proto.String(version.Get().Short()),
		Domain:          proto.String("ai.onnxconv.xgboost"),
		DocString:       proto.String(doc),
		MetadataProps:   meta,
		Graph: &onnxpb.GraphProto{
			Name:        proto.String("xgboost_" + m.booster),
			Node:        g.nodes,
			Initializer: g.inits,
			Input:       []*onnxpb.ValueInfoProto{valueInfo(inputName, onnxpb.TensorProto_FLOAT, "N", m.numFeature)},
			Output:      outputs,
			ValueInfo:   valueInfos,
		},
	}, nil
}

// linear builds margin = where(isnan(x), 0, x) @ W + bias + base_margin:
// xgboost's gblinear skips missing entries, which is the same as a zero.
func (g *graph) linear(m *model, out string) {
	F, T := m.numFeature, m.numTargets
	w := make([]float32, F*T)
	copy(w, m.linear[:F*T]) // weights[f*T+t] is already [F, T] row-major
	bias := make([]float32, T)
	for t := range bias {
		bias[t] = m.linear[F*T+t] + m.baseMargin[t]
	}
	wName := g.init(floatTensor("weights", []int64{int64(F), int64(T)}, w))
	bName := g.init(floatTensor("bias", []int64{int64(T)}, bias))
	zero := g.init(floatTensor("missing_as_zero", nil, []float32{0}))
	g.add("IsNaN", "", "is_missing", []string{inputName}, []string{"is_missing"})
	g.add("Where", "", "fill_missing", []string{"is_missing", zero, inputName}, []string{"input_filled"})
	g.add("MatMul", "", "linear", []string{"input_filled", wName}, []string{"linear_out"})
	g.add("Add", "", "add_bias", []string{"linear_out", bName}, []string{out})
}

// leafWeight is a leaf's contribution: dart scales it by weight_drop.
func leafWeight(t *tree, v float32) float32 {
	if t.weight == 1 {
		return v
	}
	return t.weight * v
}

// treeEnsemble emits ai.onnx.ml TreeEnsemble (opset 5). It has no base
// values, so each target's base margin is added to every leaf of that
// target's first tree (exactly one leaf per tree is reached), as xgboost
// starts each sum from the base margin.
func (g *graph) treeEnsemble(m *model, out string) {
	T := m.numTargets
	var (
		roots                            []int64
		feat, trueIDs, falseIDs          []int64
		trueLeaf, falseLeaf, missingTrue []int64
		modes                            []uint8
		splits, membership, leafW        []float32
		leafTarget                       []int64
		seenTarget                       = make([]bool, T)
		addLeaf                          = func(target int, w float32) int64 {
			leafTarget = append(leafTarget, int64(target))
			leafW = append(leafW, w)
			return int64(len(leafW) - 1)
		}
		addLeafOnlyTree = func(target int, w float32) {
			l := addLeaf(target, w)
			roots = append(roots, int64(len(modes)))
			feat = append(feat, 0)
			modes = append(modes, modeLT)
			splits = append(splits, 0)
			trueIDs, falseIDs = append(trueIDs, l), append(falseIDs, l)
			trueLeaf, falseLeaf = append(trueLeaf, 1), append(falseLeaf, 1)
			missingTrue = append(missingTrue, 0)
		}
	)
	for ti := range m.trees {
		t := &m.trees[ti]
		base := float32(0)
		if !seenTarget[t.target] {
			seenTarget[t.target] = true
			base = m.baseMargin[t.target]
		}
		if len(t.nodes) == 1 { // a tree that is a single leaf
			addLeafOnlyTree(t.target, leafWeight(t, t.nodes[0].threshold)+base)
			continue
		}
		// Interior nodes keep their pre-order rank among interior nodes.
		interior := make([]int64, len(t.nodes))
		first := int64(len(modes))
		k := first
		for i := range t.nodes {
			if !t.nodes[i].leaf {
				interior[i] = k
				k++
			}
		}
		roots = append(roots, first)
		leafIdx := make([]int64, len(t.nodes))
		for i := range t.nodes {
			if t.nodes[i].leaf {
				leafIdx[i] = addLeaf(t.target, leafWeight(t, t.nodes[i].threshold)+base)
			}
		}
		ref := func(c int) (int64, int64) {
			if t.nodes[c].leaf {
				return leafIdx[c], 1
			}
			return interior[c], 0
		}
		for i := range t.nodes {
			nd := &t.nodes[i]
			if nd.leaf {
				continue
			}
			l, lLeaf := ref(nd.left)
			r, rLeaf := ref(nd.right)
			feat = append(feat, int64(nd.feature))
			if nd.categorical {
				// xgboost sends the listed categories right, others left.
				modes = append(modes, modeMember)
				splits = append(splits, 0)
				membership = append(membership, nd.categories...)
				membership = append(membership, float32(math.NaN()))
				trueIDs, trueLeaf = append(trueIDs, r), append(trueLeaf, rLeaf)
				falseIDs, falseLeaf = append(falseIDs, l), append(falseLeaf, lLeaf)
				missingTrue = append(missingTrue, b2i(!nd.defaultLeft))
			} else {
				// xgboost goes left when x < split_condition.
				modes = append(modes, modeLT)
				splits = append(splits, nd.threshold)
				trueIDs, trueLeaf = append(trueIDs, l), append(trueLeaf, lLeaf)
				falseIDs, falseLeaf = append(falseIDs, r), append(falseLeaf, rLeaf)
				missingTrue = append(missingTrue, b2i(nd.defaultLeft))
			}
		}
	}
	for t := 0; t < T; t++ {
		if !seenTarget[t] && (m.baseMargin[t] != 0 || len(roots) == 0) {
			addLeafOnlyTree(t, m.baseMargin[t])
		}
	}
	attrs := []*onnxpb.AttributeProto{
		aInt("n_targets", int64(T)),
		aInt("aggregate_function", 1), // SUM
		aInt("post_transform", 0),     // NONE
		aInts("tree_roots", roots),
		aInts("nodes_featureids", feat),
		aTensor("nodes_modes", uint8Tensor("nodes_modes", modes)),
		aTensor("nodes_splits", floatTensor("nodes_splits", []int64{int64(len(splits))}, splits)),
		aInts("nodes_truenodeids", trueIDs),
		aInts("nodes_trueleafs", trueLeaf),
		aInts("nodes_falsenodeids", falseIDs),
		aInts("nodes_falseleafs", falseLeaf),
		aInts("nodes_missing_value_tracks_true", missingTrue),
		aInts("leaf_targetids", leafTarget),
		aTensor("leaf_weights", floatTensor("leaf_weights", []int64{int64(len(leafW))}, leafW)),
	}
	if len(membership) > 0 {
		attrs = append(attrs, aTensor("membership_values", floatTensor("membership_values", []int64{int64(len(membership))}, membership)))
	}
	g.add("TreeEnsemble", mlDomain, "xgboost_trees", []string{inputName}, []string{out}, attrs...)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// treeEnsembleRegressor emits ai.onnx.ml TreeEnsembleRegressor (opsets 1-4).
func (g *graph) treeEnsembleRegressor(m *model, out string) {
	var (
		treeIDs, nodeIDs, feat, trueIDs, falseIDs, missingTrue []int64
		modes                                                  []string
		values, targetW                                        []float32
		tTree, tNode, tID                                      []int64
	)
	addTree := func(tid int64, t *tree, base float32) {
		for i := range t.nodes {
			nd := &t.nodes[i]
			treeIDs = append(treeIDs, tid)
			nodeIDs = append(nodeIDs, int64(i))
			if nd.leaf {
				feat = append(feat, 0)
				modes = append(modes, "LEAF")
				values = append(values, 0)
				trueIDs, falseIDs = append(trueIDs, 0), append(falseIDs, 0)
				missingTrue = append(missingTrue, 0)
				tTree, tNode, tID = append(tTree, tid), append(tNode, int64(i)), append(tID, int64(t.target))
				targetW = append(targetW, leafWeight(t, nd.threshold)+base)
				continue
			}
			feat = append(feat, int64(nd.feature))
			modes = append(modes, "BRANCH_LT")
			values = append(values, nd.threshold)
			trueIDs, falseIDs = append(trueIDs, int64(nd.left)), append(falseIDs, int64(nd.right))
			missingTrue = append(missingTrue, b2i(nd.defaultLeft))
		}
	}
	// The base margins are folded into the leaves of each target's first
	// tree, as for TreeEnsemble: this keeps xgboost's float32 summation
	// order (base first), and ONNX Runtime (1.30) drops base_values of a
	// target that no leaf votes for.
	hasTree := make([]bool, m.numTargets)
	for i := range m.trees {
		t := &m.trees[i]
		base := float32(0)
		if !hasTree[t.target] {
			hasTree[t.target] = true
			base = m.baseMargin[t.target]
		}
		addTree(int64(i), t, base)
	}
	next := int64(len(m.trees))
	for t, ok := range hasTree {
		if !ok {
			addTree(next, &tree{nodes: []node{{leaf: true}}, target: t, weight: 1}, m.baseMargin[t])
			next++
		}
	}
	g.add("TreeEnsembleRegressor", mlDomain, "xgboost_trees", []string{inputName}, []string{out},
		aInt("n_targets", int64(m.numTargets)),
		aString("aggregate_function", "SUM"),
		aString("post_transform", "NONE"),
		aInts("nodes_treeids", treeIDs),
		aInts("nodes_nodeids", nodeIDs),
		aInts("nodes_featureids", feat),
		aStrings("nodes_modes", modes),
		aFloats("nodes_values", values),
		aInts("nodes_truenodeids", trueIDs),
		aInts("nodes_falsenodeids", falseIDs),
		aInts("nodes_missing_value_tracks_true", missingTrue),
		aInts("target_treeids", tTree),
		aInts("target_nodeids", tNode),
		aInts("target_ids", tID),
		aFloats("target_weights", targetW),
	)
}
