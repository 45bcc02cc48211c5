package catboost

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// FuzzImport: hostile .cbm files and JSON exports are errors, never a
// panic, a hang or a huge allocation. Seeds: JSON exports with an
// oblivious tree (float and one-hot splits), a non-symmetric tree and a
// multi-class model, a CBM1 header with a truncated core, and the small
// real .cbm files of ../shared when present.
func FuzzImport(f *testing.F) {
	f.Add([]byte(`{"features_info":{"float_features":[{"borders":[0.5,1.5],"feature_index":0,"flat_feature_index":0,"nan_value_treatment":"AsTrue"}],"categorical_features":[{"feature_index":0,"flat_feature_index":1,"values":[-1089101368]}]},"model_info":{"params":{"loss_function":{"type":"Logloss"}}},"oblivious_trees":[{"leaf_values":[1,2,3,4],"splits":[{"border":0.5,"float_feature_index":0,"split_type":"FloatFeature"},{"cat_feature_index":0,"value":-1089101368,"split_type":"OneHotFeature"}]}],"scale_and_bias":[1,[0.5]]}`))
	f.Add([]byte(`{"features_info":{"float_features":[{"borders":[0.2],"feature_index":0,"flat_feature_index":0}]},"trees":[{"split":{"border":0.2,"float_feature_index":0,"split_type":"FloatFeature"},"left":{"value":1},"right":{"split":{"border":0.2,"float_feature_index":0,"split_type":"FloatFeature"},"left":{"value":2},"right":{"value":3}}}],"scale_and_bias":[2,[1]]}`))
	f.Add([]byte(`{"features_info":{"float_features":[{"borders":[1],"feature_index":0,"flat_feature_index":0}]},"model_info":{"params":{"loss_function":{"type":"MultiClass"}}},"oblivious_trees":[{"leaf_values":[1,2,3,4,5,6],"splits":[{"border":1,"float_feature_index":0,"split_type":"FloatFeature"}]}],"scale_and_bias":[1,[0,0,0]]}`))
	f.Add([]byte("CBM1\x10\x00\x00\x00\x0c\x00\x00\x00\x00\x00\x06\x00\x08\x00\x04\x00"))
	for _, p := range []string{
		"catboost_rs_oracle/float_only_byte_identity/baseline.cbm",
		"catboost_rs_oracle/ctr_nonmean_byte_identity/baseline.cbm",
		"catboost_rs_oracle/non_symmetric/depthwise_simplest/model.cbm",
	} {
		testpaths.AddFiles(f, filepath.Join("..", "..", "..", "shared", "models", "catboost", p))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, ml := range []int{3, 5} {
			_, _, _ = Import(data, Options{MLOpset: ml})
		}
	})
}

// TestGTThreshold: x > gtThreshold(b) exactly when float32(x) > float32(b),
// for doubles on and around float32 values and their midpoints.
func TestGTThreshold(t *testing.T) {
	borders := []float32{0, -0.5360088, 0.31988770, 1928, 1e-40, -3e38, math.MaxFloat32, 12.999999, 1}
	for _, b := range borders {
		th := gtThreshold(float64(b))
		lo := math.Nextafter32(b, float32(math.Inf(-1)))
		hi := math.Nextafter32(b, float32(math.Inf(1)))
		probes := []float64{float64(b), float64(lo), float64(hi), th, math.Nextafter(th, math.Inf(1)), math.Nextafter(th, math.Inf(-1)),
			(float64(b) + float64(hi)) / 2, (float64(b) + float64(lo)) / 2}
		for _, x := range probes {
			if math.IsInf(x, 0) || math.IsNaN(x) {
				continue
			}
			if got, want := x > th, float32(x) > b; got != want {
				t.Errorf("border %g: x=%.17g: x > %.17g is %v, float32(x) > border is %v", b, x, th, got, want)
			}
		}
	}
}
