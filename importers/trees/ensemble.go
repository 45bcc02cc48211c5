// Package trees is the tree-ensemble structure shared by the tree-model
// importers (xgboost, lightgbm, catboost): trees of nodes with their split
// modes, missing-value directions, categorical sets and leaf values, the
// objective that turns the summed margin into predictions, a builder to
// ai.onnx.ml TreeEnsemble (ml opset 5) or TreeEnsembleRegressor (ml opsets
// 1 to 4), and one direct Go predictor that walks the same structure (not
// the ONNX graph) for source verification.
//
// An importer parses its format into an Ensemble, checks it with Validate
// and hands it to Build and NewSource; what the framework computes (the
// order of sums, the precision) is decided while making the Ensemble.
package trees

import (
	"errors"
	"fmt"
	"math"
)

// Mode is how an interior node compares the feature value x with its
// threshold; the values are those of TreeEnsemble's nodes_modes. A node
// goes to True when the comparison holds, to False otherwise.
type Mode uint8

// Split modes.
const (
	LEQ    Mode = 0 // x <= threshold
	LT     Mode = 1 // x < threshold
	GTE    Mode = 2 // x >= threshold
	GT     Mode = 3 // x > threshold
	EQ     Mode = 4 // x == threshold
	NEQ    Mode = 5 // x != threshold
	Member Mode = 6 // x is one of Set
)

var modeNames = [...]string{"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ", "BRANCH_MEMBER"}

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Node is one node of a tree: a leaf with a value, or a split.
type Node struct {
	Leaf bool
	// Value is a leaf's contribution to its tree's target.
	Value float64

	Feature   int
	Mode      Mode
	Threshold float64
	// Set holds the categories of a Member split.
	Set []float64
	// MissingTrue sends a missing (NaN) value to True; otherwise it goes
	// to False.
	MissingTrue bool
	// True and False index the tree's Nodes.
	True, False int
	// Linear, on a leaf, makes its output linear in the input (LightGBM's
	// linear_tree); Value is then the output when a feature it uses is NaN.
	Linear *LinearLeaf
}

// Tree is one tree; Nodes[0] is its root. Every node is reached from the
// root exactly once.
type Tree struct {
	Nodes  []Node
	Target int
}

// Objective turns the margin (the sum of the trees plus the base) into the
// predictions.
type Objective int

// Objectives.
const (
	// Identity: predict is the margin (regression, ranking).
	Identity Objective = iota
	// Logistic: predict = sigmoid(Sigmoid * margin), per target.
	Logistic
	// Exp: predict = exp(margin) (poisson, gamma, tweedie).
	Exp
	// Hinge: predict = 1 where margin > 0, else 0.
	Hinge
	// Softprob: predict = softmax(margin) over the targets.
	Softprob
	// SoftmaxLabel: predict = argmax(margin) as a number, probabilities
	// softmax(margin) (xgboost's multi:softmax).
	SoftmaxLabel
)

// Limits on what an Ensemble may hold (far above real models, far below
// what would exhaust memory while building the graph).
const (
	MaxFeatures = 1 << 24
	MaxTargets  = 1 << 16
	MaxNodes    = 1 << 28 // nodes of all trees together
)

// Ensemble is a tree ensemble and what turns its margin into predictions.
type Ensemble struct {
	// Format names the source format ("lightgbm"); it names the ops and
	// the report lines.
	Format      string
	NumFeatures int
	NumTargets  int
	Trees       []Tree
	// Base is added to each target's margin (nil: none).
	Base []float64
	// Objective and Sigmoid (the logistic slope, 0 meaning 1).
	Objective Objective
	Sigmoid   float64
	// Classifier adds the outputs "label" and "probabilities".
	Classifier bool
	// Double makes the model compute in float64 (input, thresholds, leaf
	// weights, outputs), as LightGBM and CatBoost do; otherwise in
	// float32, as XGBoost does.
	Double bool
	// Linear, when set, is the model instead of trees (Trees is empty).
	Linear *Linear
	// FeatureNames, when set, has NumFeatures names (metadata).
	FeatureNames []string
	// Lookups are derived features computed from the input (CatBoost's
	// CTRs); the trees read lookup k as feature NumFeatures+k.
	Lookups []Lookup
}

// StructureError is an Ensemble that is not a set of well-formed trees;
// importers wrap it with the file's name.
type StructureError struct {
	Tree, Node int // -1 when not about one
	Msg        string
}

func (e *StructureError) Error() string {
	switch {
	case e.Tree < 0:
		return e.Msg
	case e.Node < 0:
		return fmt.Sprintf("tree %d: %s", e.Tree, e.Msg)
	}
	return fmt.Sprintf("tree %d node %d: %s", e.Tree, e.Node, e.Msg)
}

func serr(t, n int, format string, a ...any) error {
	return &StructureError{Tree: t, Node: n, Msg: fmt.Sprintf(format, a...)}
}

// Validate checks that e is well formed: counts within limits, every
// child in range and reached once from its root (no cycle, no shared or
// orphan node), features and targets in range, no NaN threshold.
func (e *Ensemble) Validate() error {
	if e == nil {
		return errors.New("no ensemble")
	}
	if e.NumFeatures < 1 || e.NumFeatures > MaxFeatures {
		return serr(-1, -1, "%d features; want 1 to %d", e.NumFeatures, MaxFeatures)
	}
	if e.NumTargets < 1 || e.NumTargets > MaxTargets {
		return serr(-1, -1, "%d targets; want 1 to %d", e.NumTargets, MaxTargets)
	}
	if e.Base != nil && len(e.Base) != e.NumTargets {
		return serr(-1, -1, "%d base values for %d targets", len(e.Base), e.NumTargets)
	}
	if e.FeatureNames != nil && len(e.FeatureNames) != e.NumFeatures {
		return serr(-1, -1, "%d feature names for %d features", len(e.FeatureNames), e.NumFeatures)
	}
	if (e.Objective == Softprob || e.Objective == SoftmaxLabel) && e.NumTargets < 1 {
		return serr(-1, -1, "a softmax objective needs targets")
	}
	if e.Linear != nil {
		if len(e.Trees) != 0 {
			return serr(-1, -1, "a linear model has no trees")
		}
		if len(e.Linear.Weights) != e.NumFeatures*e.NumTargets || len(e.Linear.Bias) != e.NumTargets {
			return serr(-1, -1, "linear model: %d weights and %d biases for %d features and %d targets",
				len(e.Linear.Weights), len(e.Linear.Bias), e.NumFeatures, e.NumTargets)
		}
	}
	if err := e.validateDerived(); err != nil {
		return err
	}
	treeFeatures := e.NumFeatures + len(e.Lookups)
	total := 0
	for ti := range e.Trees {
		t := &e.Trees[ti]
		n := len(t.Nodes)
		if n == 0 {
			return serr(ti, -1, "no nodes")
		}
		total += n
		if total > MaxNodes {
			return serr(ti, -1, "more than %d nodes in all", MaxNodes)
		}
		if t.Target < 0 || t.Target >= e.NumTargets {
			return serr(ti, -1, "target %d out of range [0, %d)", t.Target, e.NumTargets)
		}
		seen := make([]bool, n)
		seen[0] = true
		stack := []int{0}
		reached := 1
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			nd := &t.Nodes[i]
			if nd.Leaf {
				continue
			}
			if nd.Feature < 0 || nd.Feature >= treeFeatures {
				return serr(ti, i, "splits on feature %d; the model has %d features", nd.Feature, treeFeatures)
			}
			if nd.Mode > Member {
				return serr(ti, i, "unknown split mode %d", nd.Mode)
			}
			if nd.Mode != Member && math.IsNaN(nd.Threshold) {
				return serr(ti, i, "threshold is NaN")
			}
			for _, c := range []int{nd.True, nd.False} {
				if c < 0 || c >= n {
					return serr(ti, i, "child %d out of range [0, %d)", c, n)
				}
				if seen[c] {
					return serr(ti, i, "links to node %d a second time (cycle or shared child)", c)
				}
				seen[c] = true
				reached++
				stack = append(stack, c)
			}
		}
		if reached != n {
			return serr(ti, -1, "%d of %d nodes are not reached from the root", n-reached, n)
		}
	}
	return nil
}

// targetsWithTrees reports which targets have at least one tree.
func (e *Ensemble) targetsWithTrees() []bool {
	has := make([]bool, e.NumTargets)
	for i := range e.Trees {
		has[e.Trees[i].Target] = true
	}
	return has
}

// baseTrees are the single-leaf trees that carry Base: one per target
// whose base is not zero or that has no tree (ONNX Runtime drops a target
// no leaf votes for).
func (e *Ensemble) baseTrees() []Tree {
	has := e.targetsWithTrees()
	var out []Tree
	for t := 0; t < e.NumTargets; t++ {
		b := 0.0
		if e.Base != nil {
			b = e.Base[t]
		}
		if b != 0 || !has[t] {
			out = append(out, Tree{Nodes: []Node{{Leaf: true, Value: b}}, Target: t})
		}
	}
	return out
}

// opTrees are the trees the tree op computes: e's trees without linear
// leaves, then single-leaf trees carrying Base (and a zero for each target
// the op would otherwise not vote for).
func (e *Ensemble) opTrees() []Tree {
	var out []Tree
	has := make([]bool, e.NumTargets)
	for i := range e.Trees {
		if !e.Trees[i].isLinear() {
			out = append(out, e.Trees[i])
			has[e.Trees[i].Target] = true
		}
	}
	for t := 0; t < e.NumTargets; t++ {
		b := 0.0
		if e.Base != nil {
			b = e.Base[t]
		}
		if b != 0 || !has[t] {
			out = append(out, Tree{Nodes: []Node{{Leaf: true, Value: b}}, Target: t})
		}
	}
	return out
}

// linearTrees are the indexes of e's trees with linear leaves.
func (e *Ensemble) linearTrees() []int {
	var out []int
	for i := range e.Trees {
		if e.Trees[i].isLinear() {
			out = append(out, i)
		}
	}
	return out
}
