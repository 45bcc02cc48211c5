package lightgbm

import (
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// FuzzImport: hostile text models and JSON dumps are errors, never a
// panic or a hang. Seeds: a bare tree block with a categorical split, a
// header with a NaN-missing split, and a JSON dump.
func FuzzImport(f *testing.F) {
	f.Add([]byte("Tree=0\nnum_leaves=3\nnum_cat=1\nsplit_feature=1 0\nthreshold=0 756.0\ndecision_type=9 2\nleft_child=-1 -2\nright_child=1 -3\nleaf_value=0.54 0.35 0.38\ncat_boundaries=0 4\ncat_threshold=0 0 0 16\n"))
	f.Add([]byte("tree\nversion=v3\nnum_class=1\nnum_tree_per_iteration=1\nmax_feature_idx=1\nobjective=binary sigmoid:1\n\nTree=0\nnum_leaves=2\nsplit_feature=0\nthreshold=1.5\ndecision_type=10\nleft_child=-1\nright_child=-2\nleaf_value=-1 1\nshrinkage=1\n\nend of trees\n"))
	f.Add([]byte(`{"name":"tree","version":"v3","num_class":1,"num_tree_per_iteration":1,"max_feature_idx":1,"objective":"regression","tree_info":[{"tree_structure":{"split_feature":1,"threshold":"1||3","decision_type":"==","missing_type":"None","left_child":{"leaf_value":1},"right_child":{"leaf_value":2}}}]}`))
	// Real models: a linear-tree model, LightGBM's categorical and
	// single-tree edge cases, a small CLI multiclass model and a JSON dump.
	testpaths.AddFiles(f, "testdata/linear_tree.txt",
		"../../../shared/models/lightgbm/leaves_simple_categorical/model_simple.txt",
		"../../../shared/models/lightgbm/leaves_tiny_trees/*",
		"../../../shared/models/lightgbm/lleaves_tiniest_single_tree/model.txt",
		"../../../shared/models/lightgbm/lleaves_pure_categorical/model.txt",
		"../../../shared/models/lightgbm/leaves_rf_iris/lg_rf_iris.model")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, ml := range []int{3, 5} {
			_, _ = Import(data, Options{MLOpset: ml})
		}
	})
}
