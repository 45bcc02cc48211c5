package sklearn_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/importers/sklearn"
)

// readP0 reads a protocol 0 fixture with text replaced (protocol 0 has
// no length fields, so renaming an attribute is a text edit).
func readP0(t *testing.T, name string, repl ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(repl); i += 2 {
		if !bytes.Contains(b, []byte(repl[i])) {
			t.Fatalf("%s holds no %q", name, repl[i])
		}
		b = bytes.ReplaceAll(b, []byte(repl[i]), []byte(repl[i+1]))
	}
	return b
}

// TestOlderFeatureCount: the input width is read from n_features_ when a
// file has it instead of n_features_in_ (trees and ensembles before
// scikit-learn 1.0 kept only n_features_), and the model still gives
// scikit-learn's predictions.
func TestOlderFeatureCount(t *testing.T) {
	for _, name := range []string{"decision_tree_classifier", "random_forest_regressor", "isolation_forest"} {
		data := readP0(t, name+".p0.pkl", "Vn_features_in_\n", "Vn_features_\n")
		m, err := sklearn.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		x := readNpy(t, name+".X.npy")
		outs, err := m.Run(inputTensor(x))
		if err != nil {
			t.Fatal(err)
		}
		compare(t, name+" "+outs[0].Name, outs[0], readNpy(t, name+".predict.npy"), true)
	}
}

// TestWidthFromFittedArrays: transformers of releases before 0.24 kept no
// n_features_in_ (nor any count): the width is that of their fitted
// per-feature arrays, and the models still give scikit-learn's outputs.
func TestWidthFromFittedArrays(t *testing.T) {
	for _, c := range []struct{ name, out string }{
		{"standard_scaler", "transform"}, {"minmax_scaler", "transform"}, {"maxabs_scaler", "transform"},
		{"robust_scaler", "transform"}, {"simple_imputer_mean", "transform"}, {"one_hot_encoder", "transform"},
		{"ordinal_encoder", "transform"}, {"pipeline_scaler_logreg", "predict_proba"},
	} {
		data := readP0(t, c.name+".p0.pkl", "Vn_features_in_\n", "Vold_unused_count\n")
		m, err := sklearn.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		outs, err := m.Run(inputTensor(readNpy(t, c.name+".X.npy")))
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		if c.out == "predict_proba" {
			i = 1
		}
		compare(t, c.name+" "+outs[i].Name, outs[i], readNpy(t, c.name+"."+c.out+".npy"), false)
	}
}

// TestUnknownLayoutNamesVersion: an attribute that fits no known layout is
// refused naming it and the scikit-learn version the file records.
func TestUnknownLayoutNamesVersion(t *testing.T) {
	data := readP0(t, "normalizer_l2.p0.pkl", "Vn_features_in_\n", "Vn_features_zz_\n", "V1.2.1\n", "V0.19.1\n")
	_, err := sklearn.Parse(data)
	var ae *sklearn.AttributeError
	if !errors.As(err, &ae) {
		t.Fatalf("want an AttributeError, got %v", err)
	}
	if ae.Field != "n_features_in_" || ae.Version != "0.19.1" {
		t.Errorf("field %q version %q", ae.Field, ae.Version)
	}
	if !strings.Contains(err.Error(), "scikit-learn 0.19.1") || !strings.Contains(err.Error(), "n_features_in_") {
		t.Errorf("message %q", err)
	}
	// Without a recorded version (before 0.18), the message says so.
	data = readP0(t, "normalizer_l2.p0.pkl", "Vn_features_in_\n", "Vn_features_zz_\n", "V_sklearn_version\n", "V_sklearn_versiox\n")
	_, err = sklearn.Parse(data)
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "no scikit-learn version") {
		t.Errorf("got %v", err)
	}
}

// TestOldJoblibArrayWrapper: a pickle naming joblib < 0.10's
// NDArrayWrapper (an array in a separate file) is refused with the fix.
func TestOldJoblibArrayWrapper(t *testing.T) {
	data := []byte("ccopy_reg\n_reconstructor\np0\n(cjoblib.numpy_pickle\nNDArrayWrapper\np1\nc__builtin__\nobject\np2\nNtp3\nRp4\n.")
	if sklearn.New().Detect("m.pkl", data) < 0.5 {
		t.Errorf("a protocol 0 pickle is not detected")
	}
	_, err := sklearn.Parse(data)
	var oe *sklearn.OldJoblibArrayError
	if !errors.As(err, &oe) || !strings.Contains(err.Error(), "dump it again") {
		t.Fatalf("got %v", err)
	}
}
