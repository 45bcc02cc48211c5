package sklearn_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
	"github.com/onnxconv/onnxconv/importers/sklearn"
	"github.com/onnxconv/onnxconv/importers/trees/treetest"
	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// TestLeavesProtocol0Pickles: real protocol-0 pickles written by
// scikit-learn 0.19.1 (GradientBoostingClassifier with the pre-0.21
// PriorProbabilityEstimator and LogOddsEstimator init), from the test
// data of the Go leaves library (MIT) when ../shared/models/leaves_legacy
// holds it (testdata/sk_*.model, their *_true_predictions.txt, which are
// decision_function, and iris_test.libsvm,
// sk_gradient_boosting_classifier_test.libsvm): detected without a format,
// their scores equal scikit-learn's decision_function to 1e-12.
func TestLeavesProtocol0Pickles(t *testing.T) {
	d := testpaths.Shared(t, "models", "leaves_legacy")
	if _, err := os.Stat(filepath.Join(d, "sk_iris.model")); err != nil {
		t.Skipf("%s has no leaves test data (copy leaves' testdata/sk_*.model, their predictions and .libsvm files there to run this test)", d)
	}
	for _, c := range []struct {
		model, data, pred string
		cols              int
	}{
		{"sk_iris.model", "iris_test.libsvm", "sk_iris_true_predictions.txt", 4},
		{"sk_gradient_boosting_classifier.model", "sk_gradient_boosting_classifier_test.libsvm", "sk_gradient_boosting_classifier_true_predictions.txt", 20},
	} {
		t.Run(c.model, func(t *testing.T) {
			rows := treetest.ReadTable(t, filepath.Join(d, c.data), true, c.cols)
			for i := range rows {
				rows[i] = rows[i][1:] // the label
				for j, v := range rows[i] {
					if math.IsNaN(v) { // svmlight leaves zeros out
						rows[i][j] = 0
					}
				}
			}
			var want []float64
			for _, r := range treetest.ReadTable(t, filepath.Join(d, c.pred), false, 0) {
				want = append(want, r...)
			}
			path := filepath.Join(d, c.model)
			imp := treetest.Detect(t, builtin.Registry(), path, sklearn.Name)
			in := treetest.Input(canonical.Double, rows)
			in.Name = sklearn.InputName
			for who, o := range map[string]treetest.Outputs{"executor": treetest.RunONNX(t, imp, path, importers.Options{}, in), "Go predictor": treetest.RunSource(t, imp, path, importers.Options{}, in)} {
				e := treetest.MaxRelErr(o["scores"].Values, want, 1)
				if e > 1e-12 {
					t.Errorf("%s: scores differ from scikit-learn's decision_function by %.3g", who, e)
				}
				t.Logf("%s scores: %d values, largest difference %.3g", who, len(want), e)
			}
		})
	}
}
