package tfjs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/formats/keras"
)

// kerasCases are the Keras files of ../shared/models made of built-in
// layers, with fixed inputs (2*sin(0.37*i+0.1), i the flat index) and
// what TF.js 4.22.0 computes on them. The values were computed by TF.js
// loading the exported model natively (tf.loadLayersModel on the model.json
// and weights.bin writeKerasAsTFJS writes, weights resolved by TF.js's own
// Keras 3 LAYER/INDEX naming, not by runner.js's setWeights path).
var kerasCases = []struct {
	path  string
	kind  keras.Kind
	shape []int64
	out   string // the output name TF.js and importers/keras give
	dims  []int64
	want  []float32
}{
	{"keras_h5/hls4ml_KERAS_1layer/KERAS_1layer.json", keras.JSONWeights, []int64{2, 10}, "output_sigmoid", []int64{2, 1},
		[]float32{0.7487412691116333, 2.453131014296117e-12}},
	{"keras_h5/hls4ml_KERAS_3layer/KERAS_3layer.json", keras.JSONWeights, []int64{2, 16}, "output_softmax", []int64{2, 5},
		[]float32{4.260365922330707e-32, 2.3120992967418097e-11, 1.4839560515730182e-13, 9.634713070671604e-39, 1,
			1.632091891292844e-26, 9.3544700874304e-9, 1.2399166762766534e-11, 1.2759883032695655e-30, 1}},
	{"keras_h5/hls4ml_KERAS_3layer_batch_norm/KERAS_3layer_batch_norm.json", keras.JSONWeights, []int64{2, 16}, "softmax", []int64{2, 5},
		[]float32{0.1294957548379898, 0.023580849170684814, 2.4009239041333785e-10, 1.0754035350278391e-17, 0.8469234108924866,
			0.11046352982521057, 0.07317006587982178, 1.4729337749486149e-9, 1.7244084146242626e-15, 0.8163663744926453}},
	{"keras_h5/hls4ml_KERAS_conv1d_small/KERAS_conv1d_small.json", keras.JSONWeights, []int64{2, 10, 4}, "output_softmax", []int64{2, 5},
		[]float32{0.2232268750667572, 0.1746874302625656, 0.18861980736255646, 0.2001500427722931, 0.21331584453582764,
			0.3113372325897217, 0.12524789571762085, 0.11134777218103409, 0.11855150759220123, 0.33351561427116394}},
	{"keras_h5/hls4ml_KERAS_conv2d_model/KERAS_conv2d_model.json", keras.JSONWeights, []int64{2, 8, 8, 1}, "dense_1", []int64{2, 10},
		[]float32{0.027104830369353294, 0.08237972855567932, 0.13062074780464172, 0.046192143112421036, 0.0175706185400486,
			0.07001062482595444, 0.11439939588308334, 0.2295219600200653, 0.18666495382785797, 0.09553496539592743,
			0.1377931535243988, 0.008766377344727516, 0.1084262803196907, 0.02835073694586754, 0.07824653387069702,
			0.05423682555556297, 0.2614477276802063, 0.014250355772674084, 0.269943505525589, 0.03853853419423103}},
	{"keras_v3/flownet_25-06_model/model.keras", keras.KerasV3, []int64{2, 4}, "dense_3", []int64{2, 2},
		[]float32{0.797913134098053, -0.7888540625572205, 0.516728401184082, -1.9063268899917603}},
}

func sinInput(shape []int64) []float32 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(2 * math.Sin(0.37*float64(i)+0.1))
	}
	return v
}

// nearAbs compares with an absolute floor for saturated softmax outputs.
func nearAbs(t *testing.T, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d values, want %d", len(got), len(want))
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > 1e-6+1e-5*math.Abs(float64(want[i])) {
			t.Errorf("[%d] = %g, want %g", i, got[i], want[i])
		}
	}
}

// A Keras file (.keras zip, architecture JSON with its weights .h5 beside
// it) runs as a TF.js layers model: TF.js computes what it computes on the
// same architecture and weights loaded natively, the outputs carry the
// names importers/keras gives the ONNX outputs (checked there: its
// TestEveryModelMatchesTFJS), and the exported model
// lives in a private temporary folder that is gone after the run.
func TestRunKeras(t *testing.T) {
	e := env(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for _, c := range kerasCases {
		t.Run(c.path, func(t *testing.T) {
			path := filepath.Join(shared, c.path)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := Run(ctx, e, path, []*onnxpb.TensorProto{f32("x", c.shape, sinInput(c.shape)...)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Kind != "layers-model" || res.Keras != string(c.kind) || res.Version != PackageVersion {
				t.Errorf("result %+v", res)
			}
			if len(res.Outputs) != 1 {
				t.Fatalf("%d outputs", len(res.Outputs))
			}
			o := res.Outputs[0]
			if o.GetName() != c.out || fmt.Sprint(o.GetDims()) != fmt.Sprint(c.dims) {
				t.Errorf("output %s %v, want %s %v", o.GetName(), o.GetDims(), c.out, c.dims)
			}
			nearAbs(t, values(o), c.want)
		})
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// A Keras file with custom layers (QKeras, HGQ) is refused as the importer
// refuses it, before node starts: a *KerasError wrapping formats/keras's
// *keras.CustomLayerError.
func TestRunKerasCustomLayers(t *testing.T) {
	e := Env{Node: "/nonexistent/node", Modules: t.TempDir()}
	for _, p := range []string{
		"keras_h5/hls4ml_hgq_jet_classifier/hgq_jet_classifier.h5",
		"keras_h5/hls4ml_qkeras_3layer/qkeras_3layer.json",
		"keras_v3/hls4ml_qkeras_v3_3layer/qkeras-v3_3layer.keras",
	} {
		_, err := Run(context.Background(), e, filepath.Join(shared, p), nil)
		var ke *KerasError
		var ce *keras.CustomLayerError
		if !errors.As(err, &ke) || !errors.As(err, &ce) {
			t.Errorf("%s: %v", p, err)
		}
	}
	// Keras weights alone: the importer says to give the architecture JSON.
	_, err := Run(context.Background(), e, filepath.Join(shared, "keras_h5/hls4ml_KERAS_3layer/KERAS_3layer_weights.h5"), nil)
	var ke *KerasError
	if !errors.As(err, &ke) {
		t.Errorf("weights alone: %v", err)
	}
}
