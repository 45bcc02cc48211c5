package xgboost

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/internal/recovered"
)

func treeModel(tree, treeInfo string) string {
	return `{"learner":{"gradient_booster":{"name":"gbtree","model":{"tree_info":` + treeInfo + `,"trees":[` + tree + `]}},
 "learner_model_param":{"base_score":"0","num_feature":"2"},"objective":{"name":"reg:squarederror"}}}`
}

func tree3(left, right, feat string) string {
	return fmt.Sprintf(`{"left_children":%s,"right_children":%s,"split_indices":%s,
 "split_conditions":[0.5,1,2],"default_left":[0,0,0]}`, left, right, feat)
}

func wantErr(t *testing.T, name string, data []byte, substr string) {
	t.Helper()
	_, err := importProto(data, Options{})
	if err == nil {
		t.Errorf("%s: no error", name)
		return
	}
	if recovered.In(err) {
		t.Errorf("%s: panic inside the importer: %v", name, err)
	}
	if !strings.Contains(err.Error(), substr) {
		t.Errorf("%s: error %q does not mention %q", name, err, substr)
	}
}

func TestHostileTrees(t *testing.T) {
	cases := []struct{ name, model, want string }{
		{"child out of range", treeModel(tree3("[1,-1,-1]", "[7,-1,-1]", "[0,0,0]"), "[0]"), "out of range"},
		{"negative child", treeModel(tree3("[1,-1,-1]", "[-5,-1,-1]", "[0,0,0]"), "[0]"), "not an integer in [-1"},
		{"cycle to root", treeModel(tree3("[1,0,-1]", "[2,2,-1]", "[0,0,0]"), "[0]"), "second time"},
		{"shared child", treeModel(tree3("[1,2,-1]", "[2,2,-1]", "[0,0,0]"), "[0]"), "second time"},
		{"self loop", treeModel(tree3("[1,1,-1]", "[2,2,-1]", "[0,0,0]"), "[0]"), "second time"},
		{"same children", treeModel(tree3("[1,-1,-1]", "[1,-1,-1]", "[0,0,0]"), "[0]"), "second time"},
		{"feature out of range", treeModel(tree3("[1,-1,-1]", "[2,-1,-1]", "[9,0,0]"), "[0]"), "feature 9"},
		{"tree_info out of range", treeModel(tree3("[1,-1,-1]", "[2,-1,-1]", "[0,0,0]"), "[3]"), "tree_info"},
		{"tree_info length", treeModel(tree3("[1,-1,-1]", "[2,-1,-1]", "[0,0,0]"), "[0,0]"), "tree_info has 2"},
		{"length mismatch", treeModel(tree3("[1,-1,-1]", "[2,-1]", "[0,0,0]"), "[0]"), "right_children has 2"},
		{"empty tree", treeModel(`{"left_children":[],"right_children":[],"split_indices":[],"split_conditions":[],"default_left":[]}`, "[0]"), "no nodes"},
		{"fractional index", treeModel(tree3("[1.5,-1,-1]", "[2,-1,-1]", "[0,0,0]"), "[0]"), "not an integer"},
		{"category segment", treeModel(`{"left_children":[1,-1,-1],"right_children":[2,-1,-1],"split_indices":[0,0,0],
 "split_conditions":[0,1,2],"default_left":[0,0,0],"split_type":[1,0,0],"categories":[1],"categories_nodes":[0],
 "categories_segments":[0],"categories_sizes":[5]}`, "[0]"), "exceeds categories"},
		{"negative category", treeModel(`{"left_children":[1,-1,-1],"right_children":[2,-1,-1],"split_indices":[0,0,0],
 "split_conditions":[0,1,2],"default_left":[0,0,0],"split_type":[1,0,0],"categories":[-1],"categories_nodes":[0],
 "categories_segments":[0],"categories_sizes":[1]}`, "[0]"), "categories[0]"},
		{"vector leaf", treeModel(`{"left_children":[-1],"right_children":[-1],"split_indices":[0],"split_conditions":[1],
 "default_left":[0],"tree_param":{"size_leaf_vector":"3"}}`, "[0]"), "vector-leaf"},
		{"trees not array", strings.Replace(treeModel("", "[]"), `"trees":[]`, `"trees":{}`, 1), "expected an array"},
		{"unknown objective", strings.Replace(treeModel(tree3("[1,-1,-1]", "[2,-1,-1]", "[0,0,0]"), "[0]"), "reg:squarederror", "reg:nope", 1), "reg:nope"},
		{"unknown booster", strings.Replace(treeModel(tree3("[1,-1,-1]", "[2,-1,-1]", "[0,0,0]"), "[0]"), `"gbtree"`, `"gbforest"`, 1), "gbforest"},
		{"no learner", `{"version":[1,7,4]}`, "learner"},
		{"num_feature zero", strings.Replace(treeModel(tree3("[1,-1,-1]", "[2,-1,-1]", "[0,0,0]"), "[0]"), `"num_feature":"2"`, `"num_feature":"0"`, 1), "num_feature"},
		{"huge num_feature", strings.Replace(treeModel(tree3("[1,-1,-1]", "[2,-1,-1]", "[0,0,0]"), "[0]"), `"num_feature":"2"`, `"num_feature":"99999999999"`, 1), "out of range"},
		{"gblinear weights", `{"learner":{"gradient_booster":{"name":"gblinear","model":{"weights":[1,2]}},
 "learner_model_param":{"base_score":"0","num_feature":"2"},"objective":{"name":"reg:squarederror"}}}`, "weights has 2"},
		{"dart weights", `{"learner":{"gradient_booster":{"name":"dart","weight_drop":[1,1],"gbtree":{"model":{"tree_info":[0],"trees":[` +
			tree3("[1,-1,-1]", "[2,-1,-1]", "[0,0,0]") + `]}}},
 "learner_model_param":{"base_score":"0","num_feature":"2"},"objective":{"name":"reg:squarederror"}}}`, "weight_drop has 2"},
		{"bad base_score", strings.Replace(treeModel(tree3("[1,-1,-1]", "[2,-1,-1]", "[0,0,0]"), "[0]"), `"base_score":"0"`, `"base_score":"[abc]"`, 1), "base_score"},
	}
	for _, c := range cases {
		wantErr(t, c.name, []byte(c.model), c.want)
	}
	// The well-formed version of the same tree imports.
	if _, err := importProto([]byte(treeModel(tree3("[1,-1,-1]", "[2,-1,-1]", "[0,0,0]"), "[0]")), Options{}); err != nil {
		t.Errorf("valid tree: %v", err)
	}
}

func TestHostileEncoding(t *testing.T) {
	cases := []struct{ name, data, want string }{
		{"empty", "", "empty"},
		{"json truncated", `{"learner":{"objective":`, "end of input"},
		{"json truncated key", `{"learner":{"objective"`, "expected ':'"},
		{"json garbage", `{"learner":x}`, "unexpected character"},
		{"json trailing", `{} {}`, "after the top-level"},
		{"json deep", strings.Repeat("[", 100000), "nesting"},
		{"json deep objects", strings.Repeat(`{"a":`, 100000), "nesting"},
		{"json bad string", "{\"a\x01\":1}", "control character"},
		{"json bad escape", `{"a\q":1}`, "bad escape"},
		{"json bad utf8", "{\"\xff\":1}", "UTF-8"},
		{"json bad number", `{"a":-}`, "bad number"},
		{"ubj huge key length", "{L\x7f\xff\xff\xff\xff\xff\xff\xff", "exceeds"},
		{"ubj negative length", "{L\xff\xff\xff\xff\xff\xff\xff\xffab", "negative length"},
		{"ubj huge typed array", "[$d#L\x00\x00\x00\x10\x00\x00\x00\x00\x00", "exceeds"},
		{"ubj huge count", "[#l\x7f\xff\xff\xff", "exceeds"},
		{"ubj huge null array", "[$Z#l\x7f\xff\xff\xff", "exceeds"},
		// Each header claims as many nulls as there are bytes left: the
		// shared budget stops the total growing with the square of the size.
		{"ubj null array amplification", "[N" + strings.Repeat("[$Z#l\x00\x00\x03\x00", 300) + "]", "budget"},
		{"ubj deep", strings.Repeat("[", 100000), "nesting"},
		{"ubj truncated float", "[d\x00\x00", "truncated"},
		{"ubj unknown marker", "[X]", "unknown type marker"},
		{"ubj bad container type", "[$X#i\x01", "bad container element type"},
		{"ubj type without count", "[$d\x00", "without count"},
		{"ubj bad length type", "{d\x00\x00\x00\x00", "expected an integer type"},
		{"ubj unterminated", "{i\x01a[", "truncated"},
	}
	for _, c := range cases {
		wantErr(t, c.name, []byte(c.data), c.want)
	}
}

// TestTruncatedFixtures cuts real models at many lengths: every cut must
// give an error, never a panic or a model.
func TestTruncatedFixtures(t *testing.T) {
	for _, name := range []string{"binary_logistic.json", "binary_logistic.ubj", "categorical_reg.ubj", "gblinear_softprob.ubj"} {
		data := readFixture(t, name)
		for n := 0; n < len(data); n += 1 + n/64 {
			if _, err := importProto(data[:n], Options{}); err == nil {
				t.Errorf("%s cut at %d of %d: no error", name, n, len(data))
			} else if recovered.In(err) {
				t.Errorf("%s cut at %d: %v", name, n, err)
			}
		}
	}
}

// TestMutatedFixtures flips random bytes of real models: the importer may
// accept or reject them, but must not panic.
func TestMutatedFixtures(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, name := range []string{"multi_softprob.ubj", "categorical_reg.ubj", "dart_binary.json"} {
		orig := readFixture(t, name)
		for i := 0; i < 300; i++ {
			data := append([]byte(nil), orig...)
			for k := 0; k < 1+rng.Intn(4); k++ {
				data[rng.Intn(len(data))] = byte(rng.Intn(256))
			}
			if _, err := importProto(data, Options{}); err != nil && recovered.In(err) {
				t.Fatalf("%s mutation %d: %v", name, i, err)
			}
		}
	}
	for i := 0; i < 500; i++ {
		data := make([]byte, 1+rng.Intn(256))
		rng.Read(data)
		data[0] = "{[{"[i%3]
		if _, err := importProto(data, Options{}); err == nil {
			t.Errorf("random bytes %q imported", data)
		} else if recovered.In(err) {
			t.Fatalf("random bytes: %v", err)
		}
	}
}
