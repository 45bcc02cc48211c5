package xgboost

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"

	"github.com/onnxconv/onnxconv/internal/recovered"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// checkTreeEnsemble verifies the TreeEnsemble invariants ONNX requires:
// equal attribute lengths, every reference in range, every tree acyclic.
func checkTreeEnsemble(n *onnxpb.NodeProto) error {
	get := func(name string) []int64 {
		if a := attr(n, name); a != nil {
			return a.GetInts()
		}
		return nil
	}
	feat, tID, tLeaf, fID, fLeaf := get("nodes_featureids"), get("nodes_truenodeids"), get("nodes_trueleafs"), get("nodes_falsenodeids"), get("nodes_falseleafs")
	miss, roots, targets := get("nodes_missing_value_tracks_true"), get("tree_roots"), get("leaf_targetids")
	nT := attr(n, "n_targets").GetI()
	modes := attr(n, "nodes_modes").GetT().GetRawData()
	splits := floatsOf(attr(n, "nodes_splits").GetT())
	weights := floatsOf(attr(n, "leaf_weights").GetT())
	N := len(feat)
	for _, l := range []int{len(tID), len(tLeaf), len(fID), len(fLeaf), len(miss), len(modes), len(splits)} {
		if l != N {
			return fmt.Errorf("nodes_* lengths differ: %d vs %d", l, N)
		}
	}
	if len(weights) != len(targets) || len(roots) == 0 {
		return fmt.Errorf("%d leaf weights, %d leaf targets, %d roots", len(weights), len(targets), len(roots))
	}
	for _, tg := range targets {
		if tg < 0 || tg >= nT {
			return fmt.Errorf("leaf target %d of %d", tg, nT)
		}
	}
	members := 0
	for _, m := range modes {
		if m == modeMember {
			members++
		}
	}
	if members > 0 && attr(n, "membership_values") == nil {
		return fmt.Errorf("BRANCH_MEMBER without membership_values")
	}
	seen := make([]bool, N)
	for _, r := range roots {
		stack := []int64{r}
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if i < 0 || int(i) >= N || seen[i] {
				return fmt.Errorf("node %d out of range or reached twice", i)
			}
			seen[i] = true
			for _, c := range [][2]int64{{tID[i], tLeaf[i]}, {fID[i], fLeaf[i]}} {
				if c[1] == 1 {
					if c[0] < 0 || int(c[0]) >= len(weights) {
						return fmt.Errorf("leaf %d out of range", c[0])
					}
				} else {
					stack = append(stack, c[0])
				}
			}
		}
	}
	return nil
}

func FuzzImport(f *testing.F) {
	// Real models xgboost wrote (JSON and UBJSON), small ones.
	testpaths.AddFiles(f, "../../fixtures/xgboost/binary_logistic.json", "../../fixtures/xgboost/binary_logistic.ubj",
		"../../fixtures/xgboost/categorical_binary.json", "../../fixtures/xgboost/categorical_onehot.ubj")
	f.Add([]byte(handModel("binary:logistic", "2.5E-1", 1)))
	f.Add([]byte(handCategorical))
	f.Add([]byte(treeModel(tree3("[1,-1,-1]", "[2,-1,-1]", "[0,0,0]"), "[0]")))
	f.Add([]byte("{i\x07learner{i\x09objective{i\x04nameSi\x0fbinary:logistic}}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, o := range []Options{{}, {MLOpset: 3, Output: OutputMargin}} {
			mp, err := importProto(data, o)
			if err != nil {
				if recovered.In(err) {
					t.Fatalf("panic: %v", err)
				}
				if mp != nil {
					t.Fatal("model returned with an error")
				}
				continue
			}
			if _, err := proto.Marshal(mp); err != nil {
				t.Fatalf("marshal: %v", err)
			}
			g := mp.GetGraph()
			if len(g.GetInput()) != 1 || len(g.GetOutput()) == 0 {
				t.Fatalf("inputs %d outputs %d", len(g.GetInput()), len(g.GetOutput()))
			}
			if te := findNode(g, "TreeEnsemble"); te != nil {
				if err := checkTreeEnsemble(te); err != nil {
					t.Fatalf("invalid TreeEnsemble: %v", err)
				}
			}
		}
	})
}

// FuzzLegacy checks that no input makes the legacy binary reader (and the
// ensemble and graph built from what it accepts) panic, hang or allocate
// without bound; the seeds are the legacy fixtures and the hostile ones.
func FuzzLegacy(f *testing.F) {
	testpaths.AddFiles(f, "../../fixtures/xgboost/legacy/*.model", "../../fixtures/hostile/xgboost-legacy/*.model")
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseLegacy(data)
		if err != nil {
			var le *LegacyError
			if !errors.As(err, &le) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if _, err := m.ensemble(); err != nil {
			return
		}
		if _, err := build(m, Options{MLOpset: 5, AIOpset: 21, Output: OutputMargin}); err != nil {
			return
		}
	})
}
