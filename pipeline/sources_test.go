package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
)

// expectedRefusals are the fixtures (folder/file) convert refuses with an
// *importers.UnsupportedOpsError, and why; any other refusal fails the
// test, and so does one of these converting.
var expectedRefusals = map[string]string{
	"text/text.cbm": "CatBoost text features",
}

// convert --verify compares every tree and scikit-learn fixture with the
// importer's direct Go predictor (computing the parsed source, not the
// graph): each conversion is verified against it and equivalent.
func TestConvertVerifiesAgainstPredictors(t *testing.T) {
	var files []string
	for _, pattern := range []string{
		"../fixtures/xgboost/*.json",
		"../fixtures/xgboost/*.ubj",
		"../fixtures/sklearn/*.p4.pkl",
		"../../shared/models/lightgbm/*/*.txt",
		"../../shared/models/catboost/*/*/*.cbm",
	} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	reg := builtin.Registry()
	dir := t.TempDir()
	verified := map[string]int{}
	for _, in := range files {
		base := filepath.Base(in)
		if base == "manifest.json" || strings.HasPrefix(base, "refused_") {
			continue
		}
		if strings.Contains(in, "ctr_nonmean_byte_identity") {
			// Written by a Rust port, not CatBoost: it splits on a
			// categorical feature it does not declare, so CatBoost cannot
			// load it either (importers/catboost tests the refusal).
			continue
		}
		imp, conf, err := reg.Detect(in)
		if err != nil || conf < 0.5 {
			continue // data files beside the models (LightGBM's .txt inputs)
		}
		format := imp.Describe().FormatName()
		t.Run(format+"/"+base, func(t *testing.T) {
			res, err := Convert(context.Background(), in, filepath.Join(dir, base+".onnx"), Options{Env: builtins(), Verify: &VerifyOptions{}})
			var ue *importers.UnsupportedOpsError
			why, refusal := expectedRefusals[filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(in)), base))]
			switch {
			case refusal && errors.As(err, &ue):
				t.Logf("refused as expected (%s): %v", why, err)
				return
			case refusal:
				t.Fatalf("expected a refusal (%s) naming the unsupported operator, got err = %v: update expectedRefusals", why, err)
			case err != nil:
				t.Fatal(err)
			}
			if !res.Verified || !res.Equivalent || !strings.Contains(res.Conversion.Reference, "predictor") {
				t.Fatalf("verified %v, equivalent %v, reference %q, not verified %q", res.Verified, res.Equivalent, res.Conversion.Reference, res.Conversion.NotVerified)
			}
			verified[format]++
		})
	}
	for _, f := range []string{"xgboost", "sklearn", "lightgbm", "catboost"} {
		if verified[f] == 0 {
			t.Errorf("no %s fixture was verified against its predictor", f)
		}
	}
	t.Logf("verified against the Go predictors: %v", verified)
	_ = os.Remove(dir)
}
